#include "cli_common.h"
#include "commands.h"
#include "util/errors.h"

namespace cudadiag::app {

void set_fault_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("fault", "(not yet available)");
  cmd->callback([] { throw UsageError("fault: not available in this build"); });
}

}  // namespace cudadiag::app
