#include "cli_common.h"
#include "commands.h"
#include "util/errors.h"

namespace cudadiag::app {

void set_tma_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tma", "(not yet available)");
  cmd->callback([] { throw UsageError("tma: not available in this build"); });
}

}  // namespace cudadiag::app
