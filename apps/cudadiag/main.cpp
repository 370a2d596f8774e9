// cudadiag: triage CUDA illegal-memory-access failures.
#include <CLI/CLI.hpp>

#include <climits>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <string>
#include <unistd.h>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "util/build_info.h"
#include "util/errors.h"
#include "util/interrupt.h"
#include "util/log.h"
#include "util/printable.h"
#include "util/terminal.h"
#include "util/text_layout.h"

extern char** environ;

namespace {

std::string self_exe_path(const char* argv0) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    buf[n] = '\0';
    return buf;
  }
  return argv0;
}

// CLI11 2.1 answers an unknown first word with "A subcommand is required" and does not
// name it; a user who mistyped a subcommand should see which word was not understood.
const char* unknown_subcommand(CLI::App& cli, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return nullptr;
  const std::string word = argv[1];
  const auto known = cli.get_subcommands([&](const CLI::App* sub) { return sub->check_name(word); });
  return known.empty() ? argv[1] : nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cudadiag;
  // A reader that went away (`cudadiag run ... | head -1`) must not kill the run: writes
  // to it fail with EPIPE instead; logs are then dropped and a report is kept elsewhere
  // (write_report). Children get the default back (runner: posix_spawnattr_setsigdefault).
  std::signal(SIGPIPE, SIG_IGN);
  init_logging(::isatty(STDERR_FILENO) != 0 && !text::no_color_from_env());
  text::set_columns(text::columns_from_env(STDOUT_FILENO));  // every text view and --help

  install_stop_handlers();

  app::set_invocation({std::vector<std::string>(argv, argv + argc), environ, self_exe_path(argv[0])});

  CLI::App cli{"cudadiag: triage CUDA illegal-memory-access failures: your code, a kernel "
               "configuration, or this machine?"};
  cli.set_version_flag("--version", build_info().version + " (" + build_info().git_revision +
                                        ", CUDA " + build_info().cuda_toolkit + ")");
  app::use_help_formatter(cli);
  cli.require_subcommand(1);
  app::set_help_footer(&cli,
                       "Exit codes: 0 ok/healthy, 1 findings, 2 usage or input error, 3 GPU part could not run, "
                       "4 internal error. 'cudadiag COMMAND --help' describes each command.",
                       {"cudadiag repro -o h100-a.json      # judge this host, keep the report",
                        "cudadiag show h100-a.json          # read a saved report"});

  app::set_env_command(cli);
  app::set_schema_command(cli);
  app::set_list_command(cli);
  app::set_index_select_command(cli);
  app::set_fault_command(cli);
  app::set_attention_command(cli);
  app::set_tma_command(cli);
  app::set_repro_command(cli);
  app::set_compare_command(cli);
  app::set_run_command(cli);
  app::set_coredump_command(cli);
  app::set_show_command(cli);
  app::set_docs_command(cli);
  app::set_child_commands(cli);

  if (const char* word = unknown_subcommand(cli, argc, argv)) {
    app::print_usage_error("", std::string("unknown subcommand '") + word + "'; 'cudadiag --help' lists them");
    return kExitUsage;
  }
  // Bad input, from CLI11's parser or a command's own checks: one style (cli_common.h).
  const std::string command = app::subcommand_of(cli, app::invocation().argv);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return cli.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return cli.exit(e);
  } catch (const CLI::ExtrasError& e) {
    // `cudadiag run ls -l`: the program's own words, without the -- that marks them.
    const CLI::App* sub = command.empty() ? nullptr : cli.get_subcommand(command);
    app::print_usage_error(command, std::string(e.what()) + app::run_extras_hint(sub, app::invocation().argv) +
                                        " (see 'cudadiag " + (command.empty() ? "" : command + " ") + "--help')");
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    app::print_usage_error(command, std::string(e.what()) + " (see 'cudadiag " +
                                        (command.empty() ? "" : command + " ") + "--help')");
    return kExitUsage;
  } catch (const UsageError& e) {
    // Messages quote the input (a key, a name, a path): shown inert on the terminal.
    app::print_usage_error(command, e.what());
    return kExitUsage;
  } catch (const EnvironmentError& e) {
    spdlog::error("{}", printable(e.what()));
    return kExitEnvironment;
  } catch (const std::exception& e) {
    spdlog::critical("internal error: {}", printable(e.what()));
    return kExitInternal;
  }
  // Interrupted (SIGINT, SIGTERM, SIGHUP): the report holds what finished; never "done".
  if (stop_requested() && app::exit_code() == kExitOk) return kExitFindings;
  return app::exit_code();
}
