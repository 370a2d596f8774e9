#include "cli_common.h"
#include "commands.h"
#include "util/errors.h"

namespace cudadiag::app {

void set_compare_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare", "(not yet available)");
  cmd->callback([] { throw UsageError("compare: not available in this build"); });
}

}  // namespace cudadiag::app
