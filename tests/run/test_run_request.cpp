#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "run/run_request.h"
#include "tests/support/temp_dir.h"
#include "util/errors.h"

using namespace cudadiag;
using namespace cudadiag::run;

namespace {

// A directory holding an executable `name`, and the parent of a cudadiag binary in it.
struct World {
  test::TempDir bin;
  std::map<std::string, std::string> vars;  // the inherited environment
  std::vector<std::string> names;
  int host_facts_gathered = 0;

  World() { vars["PATH"] = bin.path.string(); }

  std::string executable(const std::string& name) {
    const auto p = bin.path / name;
    std::ofstream(p) << "#!/bin/sh\n";
    ::chmod(p.c_str(), 0755);
    return p.string();
  }
  evidence::Parent parent() {
    evidence::Parent p;
    p.self_exe = (bin.path / "cudadiag").string();
    p.env_names = names;
    p.getenv = [this](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
    p.host_facts = [this] {
      ++host_facts_gathered;
      return host::HostFacts{};
    };
    return p;
  }
};

Args args_for(std::vector<std::string> command) {
  Args a;
  a.command = std::move(command);
  return a;
}

std::string usage_error_of(const Args& a, const evidence::Parent& p, const std::string& work_dir) {
  try {
    (void)resolve_request(a, p, work_dir);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("run request: the command is found on the PATH it will get", "[run_request]") {
  World w;
  const auto tool = w.executable("tool");
  test::TempDir work;
  auto req = resolve_request(args_for({"tool", "--flag"}), w.parent(), work.path.string());
  CHECK(req.session.run.command == std::vector<std::string>{tool, "--flag"});
  CHECK(req.session.command_as_given == std::vector<std::string>{"tool", "--flag"});
  CHECK(req.session.run.work_dir == work.path.string());
  CHECK(w.host_facts_gathered == 1);  // once, for the session and its report

  // --env PATH comes first: the program gets it.
  Args a = args_for({"tool"});
  a.env["PATH"] = "/nonexistent";
  CHECK(usage_error_of(a, w.parent(), work.path.string()) ==
        "run: cannot run the command: 'tool' was not found on PATH (/nonexistent)");
}

TEST_CASE("run request: no command, a missing command and a bad timeout are usage errors", "[run_request]") {
  World w;
  test::TempDir work;
  CHECK(usage_error_of(args_for({}), w.parent(), work.path.string()) ==
        "run: no command given (usage: cudadiag run [options] -- CMD [ARGS...])");
  CHECK(usage_error_of(args_for({"no-such-command-cudadiag"}), w.parent(), work.path.string()) ==
        "run: cannot run the command: 'no-such-command-cudadiag' was not found on PATH (" + w.bin.path.string() +
            ")");
  Args a = args_for({"tool"});
  a.timeout_s = 0;
  CHECK(usage_error_of(a, w.parent(), work.path.string()) == "--timeout: expected a positive number of seconds");
  CHECK(w.host_facts_gathered == 0);  // nothing is looked up for a request that is refused
}

TEST_CASE("run request: --keep-dumps must be a directory", "[run_request]") {
  World w;
  w.executable("tool");
  test::TempDir work;
  Args a = args_for({"tool"});
  a.coredump = true;
  a.keep_dumps = w.executable("not-a-directory");
  CHECK(usage_error_of(a, w.parent(), work.path.string()) ==
        "cannot write " + a.keep_dumps + ": Not a directory");
  a.keep_dumps = work.path.string();
  CHECK(resolve_request(a, w.parent(), work.path.string()).session.keep_dumps == work.path.string());
}

TEST_CASE("run request: contradictory options are usage errors that say why", "[run_request]") {
  World w;
  w.executable("tool");
  test::TempDir work;
  const std::string dir = work.path.string();

  // --keep-dumps with --no-coredump: nothing would ever be kept.
  Args a = args_for({"tool"});
  CHECK(a.coredump);  // dumps are armed by default
  a.keep_dumps = dir;
  CHECK(usage_error_of(a, w.parent(), dir).empty());
  a.coredump = false;
  CHECK(usage_error_of(a, w.parent(), dir) ==
        "--keep-dumps: no GPU core dumps are armed to keep (--no-coredump turns them off): drop one of the two");
  // Dumps armed but the user's own variables set: cudadiag arms none, so it keeps none.
  a.coredump = true;
  w.names = {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION"};
  CHECK(usage_error_of(a, w.parent(), dir) ==
        "--keep-dumps: the GPU core dump variables already set (CUDA_ENABLE_COREDUMP_ON_EXCEPTION) are respected, so "
        "cudadiag arms and reads no dumps of its own: drop --keep-dumps, or unset them");
  w.names.clear();
  CHECK(usage_error_of(a, w.parent(), dir).empty());

  // --sanitize never with the sanitizer rung named in --rungs.
  Args b = args_for({"tool"});
  b.sanitize = SanitizeMode::never;
  b.rungs = {Rung::sanitizer};
  b.rungs_given = true;
  CHECK(usage_error_of(b, w.parent(), dir) ==
        "--sanitize never contradicts --rungs naming the sanitizer rung: leave sanitizer out of --rungs, or drop "
        "--sanitize never");
  b.rungs = {Rung::native, Rung::sanitizer};
  CHECK_FALSE(usage_error_of(b, w.parent(), dir).empty());
  // The default ladder names the sanitizer too, but --sanitize never only drops it there.
  b.rungs = all_rungs();
  b.rungs_given = false;
  CHECK(usage_error_of(b, w.parent(), dir).empty());
  b.rungs = {Rung::native};
  b.rungs_given = true;
  CHECK(usage_error_of(b, w.parent(), dir).empty());
}

TEST_CASE("run request: the interposer is looked for next to the binary", "[run_request]") {
  World w;
  w.executable("tool");
  test::TempDir work;
  auto req = resolve_request(args_for({"tool"}), w.parent(), work.path.string());
  CHECK(req.session.run.interposer_path.empty());
  const auto beside = (w.bin.path / "libcudadiag_fence.so").string();
  CHECK(req.session.run.interposer_missing_reason.rfind("neither " + beside + " nor ", 0) == 0);

  std::ofstream(beside) << "";
  req = resolve_request(args_for({"tool"}), w.parent(), work.path.string());
  CHECK(req.session.run.interposer_path == beside);
  CHECK(req.session.run.interposer_missing_reason.empty());
}

TEST_CASE("run request: the user's core dump variables are kept, from the environment or --env", "[run_request]") {
  World w;
  w.executable("tool");
  test::TempDir work;
  Args a = args_for({"tool"});
  a.coredump = true;
  auto req = resolve_request(a, w.parent(), work.path.string());
  CHECK(req.session.run.user_coredump_vars.empty());
  CHECK(req.session.run.coredump);
  CHECK(req.session.no_disassembler_reason != SessionOptions{}.no_disassembler_reason);  // nvdisasm looked for

  w.names = {"HOME", "CUDA_ENABLE_COREDUMP_ON_EXCEPTION"};
  req = resolve_request(a, w.parent(), work.path.string());
  CHECK(req.session.run.user_coredump_vars == std::vector<std::string>{"CUDA_ENABLE_COREDUMP_ON_EXCEPTION"});
  CHECK(req.session.no_disassembler_reason == SessionOptions{}.no_disassembler_reason);  // the user's dumps

  w.names.clear();
  a.env["CUDA_COREDUMP_FILE"] = "/tmp/x";
  req = resolve_request(a, w.parent(), work.path.string());
  CHECK(req.session.run.user_coredump_vars == std::vector<std::string>{"CUDA_COREDUMP_FILE"});
}

TEST_CASE("run request: compute-sanitizer is looked for only when a sanitizer rung may run", "[run_request]") {
  World w;
  w.executable("tool");
  test::TempDir work;
  Args a = args_for({"tool"});
  a.rungs = {Rung::native, Rung::blocking};
  auto req = resolve_request(a, w.parent(), work.path.string());
  CHECK(req.facts.sanitizer.reason.empty());  // not looked for
  CHECK_FALSE(req.facts.sanitizer.found);

  const auto sanitizer = w.executable("compute-sanitizer");  // first on PATH
  req = resolve_request(a, w.parent(), work.path.string());
  CHECK_FALSE(req.facts.sanitizer.found);  // still not looked for: no sanitizer rung
  CHECK(req.session.run.sanitizer_path.empty());

  a.sanitize = SanitizeMode::always;  // adds the sanitizer rung
  req = resolve_request(a, w.parent(), work.path.string());
  CHECK(req.facts.sanitizer.found);
  CHECK(req.facts.sanitizer.path == sanitizer);
  CHECK(req.session.run.sanitizer_path == sanitizer);

  a.sanitize = SanitizeMode::automatic;
  a.rungs = all_rungs();
  req = resolve_request(a, w.parent(), work.path.string());
  CHECK(req.session.run.sanitizer_path == sanitizer);
}

TEST_CASE("run request: the options reach the ladder and the session typed", "[run_request]") {
  World w;
  w.executable("tool");
  w.vars["LD_PRELOAD"] = "libmine.so";
  test::TempDir work;
  Args a = args_for({"tool"});
  a.rungs = {Rung::native, Rung::fence};
  a.sanitize = SanitizeMode::never;
  a.stop_at_first = true;
  a.repeat = 3;
  a.timeout_s = 2.5;
  a.fence_align = 64;
  a.fence_side = FenceSide::front;
  a.quarantine_mb = 7;
  a.recycle_mb = 0;
  a.no_kernel_log = true;
  a.coredump = false;  // --no-coredump
  a.env["A"] = "1";
  const auto req = resolve_request(a, w.parent(), work.path.string());
  const auto& run = req.session.run;
  CHECK(run.rungs == a.rungs);
  CHECK(run.sanitize == SanitizeMode::never);
  CHECK(run.stop_at_first);
  CHECK(run.repeat == 3);
  CHECK(req.session.timeout == std::chrono::milliseconds(2500));
  CHECK(run.fence_align == 64);
  CHECK(run.fence_side == FenceSide::front);
  CHECK(run.quarantine_mb == std::optional<std::uint64_t>(7));
  CHECK(run.recycle_mb == 0);
  CHECK(req.session.kernel_log.empty());
  CHECK(req.session.env == a.env);
  CHECK(run.user_ld_preload == std::optional<std::string>("libmine.so"));
  CHECK_FALSE(run.coredump);
  CHECK_FALSE(run.rungs_asked);  // --rungs not given, --sanitize never
}

TEST_CASE("run request: the rungs are asked for by --rungs or --sanitize always (a named hang stops no such ladder)",
          "[run_request]") {
  World w;
  w.executable("tool");
  test::TempDir work;
  const std::string dir = work.path.string();
  Args a = args_for({"tool"});
  CHECK_FALSE(resolve_request(a, w.parent(), dir).session.run.rungs_asked);
  a.rungs_given = true;
  CHECK(resolve_request(a, w.parent(), dir).session.run.rungs_asked);
  a.rungs_given = false;
  a.sanitize = SanitizeMode::always;
  CHECK(resolve_request(a, w.parent(), dir).session.run.rungs_asked);
}

TEST_CASE("run request: the ladder is checked before the host is asked", "[run_request]") {
  World w;
  w.executable("tool");
  test::TempDir work;
  Args a = args_for({"tool"});
  a.fence_align = 24;
  CHECK(usage_error_of(a, w.parent(), work.path.string()) ==
        "--fence-align: expected a power of two from 1 to 4096, got 24");
  a.fence_align = 16;
  a.repeat = 20000;
  CHECK(usage_error_of(a, w.parent(), work.path.string()) == "--repeat: expected 1..10000, got 20000");
  CHECK(w.host_facts_gathered == 0);
}

TEST_CASE("run request: the program's LD_PRELOAD is --env's over the inherited one", "[run_request]") {
  World w;
  w.executable("tool");
  w.vars["LD_PRELOAD"] = "libinherited.so";
  test::TempDir work;
  Args a = args_for({"tool"});
  CHECK(resolve_request(a, w.parent(), work.path.string()).session.run.user_ld_preload ==
        std::optional<std::string>("libinherited.so"));
  a.env["LD_PRELOAD"] = "libgiven.so";
  CHECK(resolve_request(a, w.parent(), work.path.string()).session.run.user_ld_preload ==
        std::optional<std::string>("libgiven.so"));
  w.vars.erase("LD_PRELOAD");
  a.env.clear();
  CHECK_FALSE(resolve_request(a, w.parent(), work.path.string()).session.run.user_ld_preload.has_value());
}
