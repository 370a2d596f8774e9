#include "cli_common.h"
#include "commands.h"
#include "util/errors.h"

namespace cudadiag::app {

void set_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "(not yet available)");
  cmd->callback([] { throw UsageError("list: not available in this build"); });
}

}  // namespace cudadiag::app
