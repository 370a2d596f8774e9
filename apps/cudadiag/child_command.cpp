// Hidden subcommands run in children: `__run-case` (one or more cases in one CUDA
// context, results on the result fd) and `__probe-cuda` (CUDA facts for `env`).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "child_cases.h"
#include "commands.h"
#include "taxonomy/taxonomy.h"
#include "util/exit_codes.h"

namespace cudadiag::app {
namespace {

int result_fd() {
  const char* v = std::getenv(cases::kResultFdEnv);
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

child::json run_one(const cases::CaseSpec& spec) {
  if (spec.kernel == "fault") return child::run_fault_case(spec);
  if (spec.kernel == "index_select") return child::run_index_select_case(spec);
  if (spec.kernel == "attention") return child::run_attention_case(spec);
  if (spec.kernel == "tma") return child::run_tma_case(spec);
  return child::json{{"outcome", "invalid_config"}, {"reason", "unknown kernel '" + spec.kernel + "'"}};
}

bool is_sticky(const child::json& line) {
  if (!line.contains("error") || !line["error"].is_object()) return false;
  const auto& e = line["error"];
  const int code = e.value("code", 0);
  const bool driver = e.value("source", "runtime") == "driver";
  const auto* entry = driver ? taxonomy::find_driver(code) : taxonomy::find_runtime(code);
  return entry ? entry->sticky : true;  // unknown errors: assume the context is gone
}

int run_cases(const std::string& spec_text) {
  const int fd = result_fd();
  cases::ChildRequest req;
  try {
    req = cases::child_request_from_json(child::json::parse(spec_text));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cudadiag child: bad request: %s\n", e.what());
    return kExitUsage;
  }
  for (const auto& spec : req.cases) {
    const auto t0 = std::chrono::steady_clock::now();
    child::json line;
    try {
      line = run_one(spec);
    } catch (const gpu::CudaError& e) {
      line = child::cuda_error_line(e.failure(), nullptr);
    } catch (const std::exception& e) {
      line = child::json{{"outcome", "invalid_config"}, {"reason", e.what()}};
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    child::json out{{"index", spec.index}};
    for (auto& [k, v] : line.items()) out[k] = v;
    if (!out.contains("duration_ms")) out["duration_ms"] = ms;
    write_line(fd, report::dump_json(out));
    if (is_sticky(line)) {
      // The context is unusable: stop here; the parent re-runs the rest elsewhere.
      write_line(fd, child::json{{"done", false}, {"stopped_after", spec.index}, {"reason", "sticky error"}}.dump());
      return kExitOk;
    }
  }
  write_line(fd, child::json{{"done", true}}.dump());
  return kExitOk;
}

}  // namespace

void set_child_commands(CLI::App& app) {
  auto* run = app.add_subcommand(cases::kRunCaseCommand, "");  // empty description: hidden
  run->group("");
  auto spec = std::make_shared<std::string>();
  run->add_option("--spec", *spec, "ChildRequest JSON")->required();
  run->callback([spec] { set_exit_code(run_cases(*spec)); });
}

}  // namespace cudadiag::app
