#include "cli_common.h"
#include "commands.h"
#include "util/errors.h"

namespace cudadiag::app {

void set_attention_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("attention", "(not yet available)");
  cmd->callback([] { throw UsageError("attention: not available in this build"); });
}

}  // namespace cudadiag::app
