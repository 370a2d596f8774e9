#pragma once
// One function per subcommand; main() registers them all from one explicit list.
// Each set_<name>_command adds the subcommand, binds an options struct and sets a
// callback that throws cudadiag::UsageError on bad input and records the exit code
// through set_exit_code().
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace cudadiag::app {

void set_env_command(CLI::App& app);
void set_schema_command(CLI::App& app);
void set_list_command(CLI::App& app);
void set_index_select_command(CLI::App& app);
void set_fault_command(CLI::App& app);
void set_attention_command(CLI::App& app);
void set_tma_command(CLI::App& app);
void set_repro_command(CLI::App& app);
void set_compare_command(CLI::App& app);
void set_run_command(CLI::App& app);
void set_coredump_command(CLI::App& app);
void set_show_command(CLI::App& app);
void set_docs_command(CLI::App& app);
// Hidden: the child side of the process model (never called by users).
void set_child_commands(CLI::App& app);

// For a parse error that names unexpected arguments: a hint when they follow `run`'s
// command without `--` (`cudadiag run ls -l`), else "".
std::string run_extras_hint(const CLI::App* command, const std::vector<std::string>& argv);

// The exit code main() returns after the callback ran.
void set_exit_code(int code);
int exit_code();

}  // namespace cudadiag::app
