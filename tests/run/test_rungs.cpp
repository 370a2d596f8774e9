#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "run/preload_path.h"
#include "coredump/arming.h"
#include "run/rungs.h"
#include "util/errors.h"

using namespace cudadiag::run;
using cudadiag::UsageError;

namespace {

RunOptions base_options() {
  RunOptions o;
  o.command = {"python3", "train.py", "--steps", "3"};
  o.interposer_path = "/opt/cudadiag/bin/libcudadiag_fence.so";
  o.sanitizer_path = "/usr/local/cuda/bin/compute-sanitizer";
  o.work_dir = "/tmp/cd-run";
  return o;
}

const RungPlan& plan_of(const std::vector<RungPlan>& plans, Rung r) {
  const auto it = std::find_if(plans.begin(), plans.end(), [&](const RungPlan& p) { return p.rung == r; });
  REQUIRE(it != plans.end());
  return *it;
}

bool unsets(const PlannedRun& run, const std::string& var) {
  return std::find(run.env_unset.begin(), run.env_unset.end(), var) != run.env_unset.end();
}

}  // namespace

TEST_CASE("rung names parse once, in ladder order") {
  CHECK(parse_rungs("native,blocking,fence") == std::vector<Rung>{Rung::native, Rung::blocking, Rung::fence});
  CHECK(parse_rungs("fence, native") == std::vector<Rung>{Rung::native, Rung::fence});
  CHECK(parse_rungs("sanitizer") == std::vector<Rung>{Rung::sanitizer});
  for (const Rung r : all_rungs()) CHECK(rung_from_name(to_string(r)) == r);
  CHECK_FALSE(rung_from_name("Native"));
}

TEST_CASE("bad --rungs lists name the flag and the word") {
  try {
    parse_rungs("native,fenced");
    FAIL("no exception");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("--rungs") != std::string::npos);
    CHECK(std::string(e.what()).find("'fenced'") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_rungs("native,,fence"), UsageError);
  CHECK_THROWS_AS(parse_rungs(""), UsageError);
  CHECK_THROWS_AS(parse_rungs("fence,fence"), UsageError);
}

TEST_CASE("sanitize modes: auto, always, never") {
  CHECK(parse_sanitize_mode("auto") == SanitizeMode::automatic);
  CHECK(parse_sanitize_mode("always") == SanitizeMode::always);
  CHECK(parse_sanitize_mode("never") == SanitizeMode::never);
  CHECK_THROWS_WITH(parse_sanitize_mode("sometimes"), Catch::Contains("--sanitize"));
}

TEST_CASE("the caching table: one row per switch, each marked verified or documented") {
  const auto table = caching_off_settings();
  REQUIRE(table.size() >= 5);
  bool torch = false, xla_alloc = false, xla_prealloc = false, tf = false, blocking = false;
  for (const auto& c : table) {
    CHECK_FALSE(c.framework.empty());
    CHECK_FALSE(c.effect.empty());
    CHECK_FALSE(c.evidence.empty());
    // Observed on the device (tests/run/data/device_h100_caching_*).
    if (c.variable == "PYTORCH_NO_CUDA_MEMORY_CACHING") torch = c.value == "1" && c.verified == Verification::device;
    if (c.variable == "XLA_PYTHON_CLIENT_ALLOCATOR")
      xla_alloc = c.value == "platform" && c.verified == Verification::device;
    if (c.variable == "XLA_PYTHON_CLIENT_PREALLOCATE")
      xla_prealloc = c.value == "false" && c.verified == Verification::device;
    if (c.variable == "TF_GPU_ALLOCATOR") tf = c.value == "cuda_malloc" && c.verified == Verification::documented;
    if (c.variable == "CUDA_LAUNCH_BLOCKING") blocking = c.verified == Verification::device;
  }
  CHECK(torch);
  CHECK(xla_alloc);
  CHECK(xla_prealloc);
  CHECK(tf);
  CHECK(blocking);
  CHECK(std::string(to_string(Verification::documented)) == "documented only");
}

TEST_CASE("plan: every rung's environment, argv and files") {
  const auto plans = plan_rungs(base_options());
  REQUIRE(plans.size() == 5);
  CHECK(plans[0].rung == Rung::native);
  CHECK(plans[3].rung == Rung::fence_front);
  CHECK(plans[4].rung == Rung::sanitizer);
  CHECK(plans[4].conditional);  // --sanitize auto

  const auto& native = plan_of(plans, Rung::native).runs.at(0);
  CHECK(native.argv == base_options().command);
  // Only the GPU core dump's variables (test_coredump_run.cpp): the program as given otherwise.
  for (const auto& [name, value] : native.env_set) CHECK(cudadiag::coredump::is_coredump_variable(name));
  CHECK(unsets(native, "CUDADIAG_RING"));  // a value inherited from the parent never leaks in

  const auto& blocking = plan_of(plans, Rung::blocking).runs.at(0);
  CHECK(blocking.argv == base_options().command);
  for (const auto& c : caching_off_settings()) CHECK(blocking.env_set.at(std::string(c.variable)) == c.value);
  CHECK(unsets(blocking, "PYTORCH_CUDA_ALLOC_CONF"));
  CHECK(blocking.env_set.count("LD_PRELOAD") == 0);

  const auto& fence = plan_of(plans, Rung::fence).runs.at(0);
  CHECK(fence.argv == base_options().command);
  // No launch blocking: a failure's site run names the kernel (test_coredump_run.cpp).
  CHECK(fence.env_set.count("CUDA_LAUNCH_BLOCKING") == 0);
  CHECK_FALSE(unsets(fence, "CUDA_LAUNCH_BLOCKING"));  // the program's own setting, as natively
  CHECK(fence.env_set.at("PYTORCH_NO_CUDA_MEMORY_CACHING") == "1");
  CHECK(fence.env_set.at("LD_PRELOAD") == "/opt/cudadiag/bin/libcudadiag_fence.so");
  CHECK(fence.env_set.at("CUDADIAG_FENCE_ALIGN") == "16");
  CHECK(fence.env_set.at("CUDADIAG_FENCE_SIDE") == "back");
  CHECK(fence.ring_path == "/tmp/cd-run/fence-0.ring");
  CHECK(fence.env_set.at("CUDADIAG_RING") == fence.ring_path);
  CHECK(fence.env_set.count("CUDADIAG_FENCE_QUARANTINE_MB") == 0);
  CHECK(unsets(fence, "CUDADIAG_FENCE_QUARANTINE_MB"));
  // The rung guarding the ends recycles freed buffers; the fence-front rung keeps the quarantine.
  CHECK(fence.env_set.at("CUDADIAG_FENCE_RECYCLE_MB") == "4096");

  // The default ladder guards the other end too, in one more run of its own.
  const auto& front = plan_of(plans, Rung::fence_front).runs.at(0);
  CHECK(front.argv == base_options().command);
  CHECK(front.env_set.at("CUDADIAG_FENCE_SIDE") == "front");
  CHECK(front.fence_side == FenceSide::front);
  CHECK(fence.fence_side == FenceSide::back);
  CHECK(front.env_set.at("LD_PRELOAD") == fence.env_set.at("LD_PRELOAD"));
  CHECK(front.env_set.count("CUDA_LAUNCH_BLOCKING") == 0);
  CHECK(front.ring_path == "/tmp/cd-run/fence-front-0.ring");
  CHECK(front.env_set.at("CUDADIAG_RING") == front.ring_path);
  CHECK(front.env_set.count("CUDADIAG_FENCE_RECYCLE_MB") == 0);
  CHECK(unsets(front, "CUDADIAG_FENCE_RECYCLE_MB"));
  CHECK(unsets(native, "CUDADIAG_FENCE_RECYCLE_MB"));

  const auto& san = plan_of(plans, Rung::sanitizer).runs.at(0);
  CHECK(san.sanitizer_xml == "/tmp/cd-run/sanitizer-0.xml");
  REQUIRE(san.argv.size() > base_options().command.size());
  CHECK(san.argv.front() == "/usr/local/cuda/bin/compute-sanitizer");
  CHECK(std::find(san.argv.begin(), san.argv.end(), "--padding") != san.argv.end());
  CHECK(std::vector<std::string>(san.argv.end() - 4, san.argv.end()) == base_options().command);
  // API error records do not count against the print limit: memcheck writes none.
  const auto api = std::find(san.argv.begin(), san.argv.end(), "--report-api-errors");
  REQUIRE(api != san.argv.end());
  REQUIRE(api + 1 != san.argv.end());
  CHECK(*(api + 1) == "no");
  const auto limit = std::find(san.argv.begin(), san.argv.end(), "--print-limit");
  REQUIRE(limit != san.argv.end());
  CHECK(api < limit);  // the tool's options, before the print limit and the command
  CHECK(san.env_set.at("CUDA_LAUNCH_BLOCKING") == "1");
  CHECK(san.env_set.count("LD_PRELOAD") == 0);
}

TEST_CASE("plan: fence options, repeats and per-repeat files") {
  auto o = base_options();
  o.repeat = 3;
  o.fence_align = 256;
  o.fence_side = cudadiag::run::FenceSide::front;
  o.quarantine_mb = 512;
  o.rungs = {Rung::fence};
  o.sanitize = SanitizeMode::never;
  const auto plans = plan_rungs(o);
  REQUIRE(plans.size() == 1);  // never does not add the sanitizer
  const auto& runs = plans[0].runs;
  REQUIRE(runs.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(runs[static_cast<size_t>(i)].repeat_index == i);
    CHECK(runs[static_cast<size_t>(i)].ring_path == "/tmp/cd-run/fence-" + std::to_string(i) + ".ring");
  }
  CHECK(runs[0].env_set.at("CUDADIAG_FENCE_ALIGN") == "256");
  CHECK(runs[0].env_set.at("CUDADIAG_FENCE_SIDE") == "front");
  CHECK(runs[0].env_set.at("CUDADIAG_FENCE_QUARANTINE_MB") == "512");
  // Turned around, the fence rung is the one that watches use after free: no recycling.
  CHECK(unsets(runs[0], "CUDADIAG_FENCE_RECYCLE_MB"));
}

TEST_CASE("plan: --fence-recycle-mb sets the fence rung's recycling, 0 turns it off") {
  auto o = base_options();
  o.recycle_mb = 64;
  CHECK(plan_of(plan_rungs(o), Rung::fence).runs.at(0).env_set.at("CUDADIAG_FENCE_RECYCLE_MB") == "64");
  o.recycle_mb = 0;
  const auto plans = plan_rungs(o);
  const auto& fence = plan_of(plans, Rung::fence).runs.at(0);
  CHECK(fence.env_set.count("CUDADIAG_FENCE_RECYCLE_MB") == 0);
  CHECK(unsets(fence, "CUDADIAG_FENCE_RECYCLE_MB"));
}

TEST_CASE("plan: --fence-front turns the fence rung around and drops the fence-front rung") {
  auto o = base_options();
  o.fence_side = FenceSide::front;
  auto plans = plan_rungs(o);
  REQUIRE(plans.size() == 4);
  CHECK(plan_of(plans, Rung::fence).runs.at(0).env_set.at("CUDADIAG_FENCE_SIDE") == "front");
  CHECK(std::none_of(plans.begin(), plans.end(), [](const RungPlan& p) { return p.rung == Rung::fence_front; }));
  // Asked for by name, the fence-front rung runs alone.
  o = base_options();
  o.rungs = parse_rungs("native,fence-front");
  plans = plan_rungs(o);
  REQUIRE(plans.size() == 2);
  CHECK(plans[1].rung == Rung::fence_front);
  CHECK(is_fence(Rung::fence_front));
  CHECK_FALSE(is_fence(Rung::blocking));
  CHECK(std::string(to_string(Rung::fence_front)) == "fence-front");
}

TEST_CASE("plan: memcheck limited to one kernel takes --kernel-name kns= before the command") {
  const auto plans = plan_rungs(base_options());
  PlannedRun san = plan_of(plans, Rung::sanitizer).runs.at(0);
  const auto before = san.argv;
  limit_memcheck_to_kernel(san, "fill_bytes", base_options().command.size());
  REQUIRE(san.argv.size() == before.size() + 2);
  const auto at = san.argv.end() - static_cast<std::ptrdiff_t>(base_options().command.size());
  CHECK(*(at - 2) == "--kernel-name");
  CHECK(*(at - 1) == "kns=fill_bytes");
  CHECK(std::vector<std::string>(at, san.argv.end()) == base_options().command);
  // Not a sanitizer run, or no kernel: unchanged.
  PlannedRun native = plan_of(plans, Rung::native).runs.at(0);
  limit_memcheck_to_kernel(native, "fill_bytes", base_options().command.size());
  CHECK(native.argv == base_options().command);
}

TEST_CASE("plan: --sanitize always adds the rung; never and missing tools skip with a reason") {
  auto o = base_options();
  o.rungs = {Rung::native};
  o.sanitize = SanitizeMode::always;
  auto plans = plan_rungs(o);
  REQUIRE(plans.size() == 2);
  CHECK(plans[1].rung == Rung::sanitizer);
  CHECK_FALSE(plans[1].conditional);
  CHECK(plans[1].runs.size() == 1);

  o = base_options();
  o.sanitize = SanitizeMode::never;
  plans = plan_rungs(o);
  CHECK(plan_of(plans, Rung::sanitizer).skip_reason == "--sanitize never");
  CHECK(plan_of(plans, Rung::sanitizer).runs.empty());

  o = base_options();
  o.sanitizer_path.clear();
  o.sanitizer_missing_reason = "compute-sanitizer not found (searched PATH)";
  o.interposer_path.clear();
  o.interposer_missing_reason = "no /opt/cudadiag/bin/libcudadiag_fence.so";
  plans = plan_rungs(o);
  CHECK(plan_of(plans, Rung::sanitizer).skip_reason.find("not found") != std::string::npos);
  CHECK(plan_of(plans, Rung::fence).skip_reason.find("/opt/cudadiag/bin/libcudadiag_fence.so") != std::string::npos);
  CHECK(plan_of(plans, Rung::fence).runs.empty());
  CHECK(plan_of(plans, Rung::native).runs.size() == 1);
}

TEST_CASE("LD_PRELOAD: ours first, the user's kept, no duplicate") {
  const std::string ours = "/opt/cd/libcudadiag_fence.so";
  CHECK(compose_ld_preload(ours, std::nullopt) == ours);
  CHECK(compose_ld_preload(ours, std::string("")) == ours);
  CHECK(compose_ld_preload(ours, std::string("/usr/lib/libjemalloc.so")) == ours + ":/usr/lib/libjemalloc.so");
  CHECK(compose_ld_preload(ours, std::string("liba.so libb.so")) == ours + ":liba.so:libb.so");
  CHECK(compose_ld_preload(ours, std::string("liba.so:/old/libcudadiag_fence.so::libb.so")) ==
        ours + ":liba.so:libb.so");

  auto o = base_options();
  o.user_ld_preload = "/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4";
  const auto plans = plan_rungs(o);
  CHECK(plan_of(plans, Rung::fence).runs[0].env_set.at("LD_PRELOAD") ==
        "/opt/cudadiag/bin/libcudadiag_fence.so:/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4");
  // Other rungs leave the user's LD_PRELOAD alone (inherited, neither set nor unset).
  CHECK_FALSE(unsets(plan_of(plans, Rung::native).runs[0], "LD_PRELOAD"));
}

TEST_CASE("the interposer is looked for next to the binary, then in an installed prefix's lib/cudadiag") {
  using V = std::vector<std::string>;
  CHECK(interposer_candidates("/opt/cudadiag/bin/cudadiag") ==
        V{"/opt/cudadiag/bin/libcudadiag_fence.so", "/opt/cudadiag/bin/../lib/cudadiag/libcudadiag_fence.so"});
  CHECK(interposer_candidates("cudadiag") == V{"./libcudadiag_fence.so", "./../lib/cudadiag/libcudadiag_fence.so"});
  CHECK(interposer_candidates("/cudadiag").front() == "/libcudadiag_fence.so");
}

TEST_CASE("option checks name the flag") {
  auto o = base_options();
  CHECK_NOTHROW(check_run_options(o));
  o.command.clear();
  CHECK_THROWS_WITH(check_run_options(o), Catch::Contains("no command"));
  o = base_options();
  o.repeat = 0;
  CHECK_THROWS_WITH(check_run_options(o), Catch::Contains("--repeat"));
  o = base_options();
  o.fence_align = 24;
  CHECK_THROWS_WITH(check_run_options(o), Catch::Contains("--fence-align"));
  o.fence_align = 8192;
  CHECK_THROWS_WITH(check_run_options(o), Catch::Contains("--fence-align"));
  o.fence_align = 1;
  CHECK_NOTHROW(check_run_options(o));
  o.work_dir.clear();
  CHECK_THROWS_AS(check_run_options(o), UsageError);
}

TEST_CASE("ladder: stop at first completes the failing rung, then stops") {
  std::vector<RunStatus> done{{Rung::native, true, false}, {Rung::native, true, true}};
  CHECK(ladder_continues(true, done, false));   // the rung's other repeats still run
  CHECK_FALSE(ladder_continues(true, done, true));
  CHECK(ladder_continues(false, done, true));   // without --stop-at-first every rung runs
  done = {{Rung::native, true, false}, {Rung::blocking, true, false}};
  CHECK(ladder_continues(true, done, true));
  done = {{Rung::native, false, false}};        // did not start: nothing later can
  CHECK_FALSE(ladder_continues(false, done, false));
  CHECK(ladder_continues(true, {}, true));
}

TEST_CASE("ladder: the sanitizer under auto runs only after a failure") {
  const std::vector<RunStatus> clean{{Rung::native, true, false}, {Rung::fence, true, false}};
  const std::vector<RunStatus> failed{{Rung::native, true, false}, {Rung::fence, true, true}};
  CHECK_FALSE(sanitizer_should_run(SanitizeMode::automatic, clean));
  CHECK(sanitizer_should_run(SanitizeMode::automatic, failed));
  CHECK(sanitizer_should_run(SanitizeMode::always, clean));
  CHECK_FALSE(sanitizer_should_run(SanitizeMode::never, failed));
  const std::vector<RunStatus> not_started{{Rung::native, false, true}};
  CHECK_FALSE(sanitizer_should_run(SanitizeMode::automatic, not_started));
}

TEST_CASE("an interposer under a path with a space or a colon is preloaded through a link at a safe path") {
  CHECK(preload_safe("/opt/cudadiag/bin/libcudadiag_fence.so"));
  CHECK_FALSE(preload_safe("/opt/my tools/bin/libcudadiag_fence.so"));
  CHECK_FALSE(preload_safe("/opt/a:b/libcudadiag_fence.so"));
  CHECK_FALSE(preload_safe(""));

  const auto scratch = std::filesystem::temp_directory_path() / ("cd-preload-test-" + std::to_string(::getpid()));
  const auto install = scratch / "opt dir:x";
  std::filesystem::create_directories(install);
  const std::string lib = (install / "libcudadiag_fence.so").string();
  std::ofstream(lib) << "not really a library";
  {
    // A safe scratch directory holds the link.
    const PreloadPath p(lib, scratch.string());
    CHECK(p.linked());
    CHECK(p.path() == (scratch / "libcudadiag_fence.so").string());
    CHECK(preload_safe(p.path()));
    CHECK(std::filesystem::read_symlink(p.path()) == lib);

    auto o = base_options();
    o.rungs = {Rung::fence};
    o.interposer_path = lib;
    o.preload_path = p.path();
    const auto plans = plan_rungs(o);
    CHECK(plans[0].runs[0].env_set.at("LD_PRELOAD") == p.path());
  }
  CHECK_FALSE(std::filesystem::exists(scratch / "libcudadiag_fence.so"));
  {
    // A scratch directory that is not safe itself: a private one under /tmp, removed after.
    const PreloadPath p(lib, install.string());
    CHECK(p.path().rfind("/tmp/cudadiag-preload-", 0) == 0);
    CHECK(preload_safe(p.path()));
    const auto dir = std::filesystem::path(p.path()).parent_path();
    CHECK((std::filesystem::status(dir).permissions() & std::filesystem::perms::all) ==
          std::filesystem::perms::owner_all);
  }
  {
    const PreloadPath same("/opt/cd/libcudadiag_fence.so", scratch.string());
    CHECK_FALSE(same.linked());
    CHECK(same.path() == "/opt/cd/libcudadiag_fence.so");
  }
  std::filesystem::remove_all(scratch);
}
