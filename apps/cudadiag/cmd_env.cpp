#include "cli_common.h"
#include "commands.h"
#include "util/errors.h"

namespace cudadiag::app {

void set_env_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("env", "(not yet available)");
  cmd->callback([] { throw UsageError("env: not available in this build"); });
}

}  // namespace cudadiag::app
