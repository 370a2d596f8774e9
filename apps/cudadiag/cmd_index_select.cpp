#include "cli_common.h"
#include "commands.h"
#include "util/errors.h"

namespace cudadiag::app {

void set_index_select_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("index-select", "(not yet available)");
  cmd->callback([] { throw UsageError("index-select: not available in this build"); });
}

}  // namespace cudadiag::app
