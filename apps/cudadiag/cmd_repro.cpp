#include "cli_common.h"
#include "commands.h"
#include "util/errors.h"

namespace cudadiag::app {

void set_repro_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("repro", "(not yet available)");
  cmd->callback([] { throw UsageError("repro: not available in this build"); });
}

}  // namespace cudadiag::app
