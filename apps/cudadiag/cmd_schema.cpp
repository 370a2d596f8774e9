#include "cli_common.h"
#include "commands.h"
#include "util/errors.h"

namespace cudadiag::app {

void set_schema_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("schema", "(not yet available)");
  cmd->callback([] { throw UsageError("schema: not available in this build"); });
}

}  // namespace cudadiag::app
