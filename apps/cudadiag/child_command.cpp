// Hidden subcommands run in children: `__run-case` (one or more cases in one CUDA
// context, results on the result fd; suite/case_protocol.h), and the probes
// (child_probe.h).
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "child_families.h"
#include "child_probe.h"
#include "commands.h"
#include "fence/dump_linger.h"
#include "runner/runner.h"
#include "util/exit_codes.h"

namespace cudadiag::app {
namespace {

int result_fd() {
  const char* v = std::getenv(runner::kResultFdEnv);
  return v ? std::atoi(v) : -1;
}

void write_line(int fd, const std::string& line) {
  const std::string data = line + "\n";
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(fd >= 0 ? fd : STDOUT_FILENO, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    off += static_cast<size_t>(n);
  }
}

bool leaves_context_unusable(const report::Result& r) {
  if (r.outcome != report::Outcome::cuda_error || !r.error) return false;
  gpu::CudaFailure f;
  f.code = r.error->code;
  f.driver = r.error->source == taxonomy::ErrorSource::driver;
  return child::is_sticky(f);
}

int run_cases(const std::string& spec_text) {
  const int fd = result_fd();
  suite::ChildRequest req;
  try {
    req = suite::child_request_from_json(report::json::parse(spec_text));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudadiag child: bad request: %s\n", e.what());
    return kExitUsage;
  }
  for (const auto& spec : req.cases) {
    const auto t0 = std::chrono::steady_clock::now();
    report::Result r;
    try {
      r = child::run_case(spec, child::factory_for(spec.family));
    } catch (const gpu::CudaError& e) {
      r.case_id = spec.case_id;
      r.outcome = report::Outcome::cuda_error;
      r.error = child::error_info(e.failure());
    } catch (const std::exception& e) {
      r.case_id = spec.case_id;
      r.outcome = report::Outcome::invalid_config;
      r.reason = e.what();
    }
    if (r.duration_ms == 0.0)
      r.duration_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    write_line(fd, suite::result_line(spec.index, r));
    if (leaves_context_unusable(r)) {
      // The context is unusable: stop here; the parent re-runs the rest elsewhere.
      write_line(fd, suite::done_line(false, "sticky error"));
      fence::linger_if_armed(static_cast<long>(::getpid()));
      return kExitOk;
    }
  }
  write_line(fd, suite::done_line(true));
  // A site run, armed by the parent (suite/site_runs.h; the children that make the
  // verdict never are): a dump may still come (a store's fault, dumped after the
  // synchronize that returned cudaSuccess); the driver aborts this process once it is
  // written, and the parent reads its site into the case's result.
  fence::linger_if_armed(static_cast<long>(::getpid()));
  return kExitOk;
}

}  // namespace

void set_child_commands(CLI::App& app) {
  auto* run = app.add_subcommand(suite::kRunCaseCommand, "");  // empty description: hidden
  run->group("");
  auto spec = std::make_shared<std::string>();
  run->add_option("--spec", *spec, "ChildRequest JSON")->required();
  run->callback([spec] { set_exit_code(run_cases(*spec)); });
  set_probe_command(app);
}

}  // namespace cudadiag::app
