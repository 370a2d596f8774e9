#include "run/rungs.h"

#include <algorithm>

#include <fmt/format.h>

#include "coredump/arming.h"
#include "fence/dump_linger.h"
#include "profiles/sanitizer_tool.h"
#include "util/errors.h"
#include "util/path_name.h"
#include "util/trim.h"

namespace cudadiag::run {
namespace {

// The variables of ours that the interposer reads: set in the fence rung, removed in
// every other rung so that a value inherited from the parent never leaks in.
constexpr std::string_view kRingVar = "CUDADIAG_RING";
constexpr std::string_view kAlignVar = "CUDADIAG_FENCE_ALIGN";
constexpr std::string_view kSideVar = "CUDADIAG_FENCE_SIDE";
constexpr std::string_view kQuarantineVar = "CUDADIAG_FENCE_QUARANTINE_MB";
constexpr std::string_view kRecycleVar = "CUDADIAG_FENCE_RECYCLE_MB";

// The table of framework switches. Verification says what this project has observed:
// CUDA_LAUNCH_BLOCKING moved the surfacing of every fault reproducer from synchronize to
// launch on the H100 and H200 (README, scripts/gpu-check.sh 20); the PyTorch and JAX/XLA
// switches were observed on an H100 by scripts/device/capture-error-texts.sh (outputs in
// tests/run/data/device_h100_caching_*, checked by test_device_captures.cpp).
// TensorFlow is not installed on the device: documented behaviour only.
constexpr CachingSetting kCaching[] = {
    {"CUDA runtime", "CUDA_LAUNCH_BLOCKING", "1",
     "every launch waits for its kernel: a fault surfaces at the launch of the kernel that "
     "made it, not at a later call",
     Verification::device, "README fault table, scripts/gpu-check.sh 20 (H100, H200)"},
    {"PyTorch", "PYTORCH_NO_CUDA_MEMORY_CACHING", "1",
     "the caching allocator is off: every tensor is its own cudaMalloc, freed at once",
     Verification::device,
     "H100, torch 2.11: memory reserved after freeing a 4 MiB tensor 20971520 bytes by default, 0 with the switch"},
    {"JAX/XLA", "XLA_PYTHON_CLIENT_PREALLOCATE", "false",
     "no preallocation of 75% of device memory at start", Verification::device,
     "H100, jax 0.11.2: XLA's pool 63763906560 bytes by default, 6291456 with the switch (GPU memory used "
     "61369 -> 565 MiB)"},
    {"JAX/XLA", "XLA_PYTHON_CLIENT_ALLOCATOR", "platform",
     "every buffer is allocated on demand and freed when no longer needed, instead of the "
     "BFC pool (slow; meant for debugging)",
     Verification::device,
     "H100, jax 0.11.2: no BFC pool (memory_stats None); a Pallas read 8 GiB out of bounds faults with it and "
     "returns a sum silently under the default pool"},
    {"TensorFlow", "TF_GPU_ALLOCATOR", "cuda_malloc",
     "cudaMalloc/cudaFree per tensor instead of the BFC pool", Verification::documented,
     "TensorFlow GPU allocator options (not installed on the device: cannot be observed there)"},
};

// PYTORCH_CUDA_ALLOC_CONF (and its device-generic successor PYTORCH_ALLOC_CONF) can
// select backend:cudaMallocAsync or expandable_segments:True, which take memory from a
// driver pool or map it with cuMemCreate/cuMemMap: around cudaMalloc, caching off or not.
constexpr std::string_view kUnset[] = {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"};

std::vector<std::string> split(std::string_view s, std::string_view separators) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || separators.find(s[i]) != std::string_view::npos) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

constexpr std::string_view kLaunchBlockingVar = "CUDA_LAUNCH_BLOCKING";

void set_blocking_env(PlannedRun& run) {
  for (const auto& c : kCaching) run.env_set[std::string(c.variable)] = std::string(c.value);
  for (const auto v : kUnset) run.env_unset.emplace_back(v);
}

// The fence rungs' caching off, and CUDA_LAUNCH_BLOCKING only where no site run follows a
// failure: the fence needs each buffer to be its own allocation, not each launch to wait.
// Launch blocking is what makes the newest launch of the ring the faulting one; a site
// run (armed_for_site, blocking again) names the kernel and line from the GPU's own dump
// instead, and a clean program does not pay a wait per launch (tests/programs/gpt_loop.py
// on an H200: its loop up to 1.15x slower fenced with launch blocking than without).
void set_fence_env(PlannedRun& run, bool launch_blocking) {
  set_blocking_env(run);
  if (!launch_blocking) run.env_set.erase(std::string(kLaunchBlockingVar));
}

void unset_fence_env(PlannedRun& run) {
  for (const auto v : {kRingVar, kAlignVar, kSideVar, kQuarantineVar, kRecycleVar}) run.env_unset.emplace_back(v);
}

PlannedRun plan_run(const RunOptions& opts, Rung rung, int repeat_index) {
  PlannedRun run;
  run.rung = rung;
  run.repeat_index = repeat_index;
  std::string suffix = "-";
  suffix += std::to_string(repeat_index);
  switch (rung) {
    case Rung::native:
      unset_fence_env(run);
      run.argv = opts.command;
      break;
    case Rung::blocking:
      set_blocking_env(run);
      unset_fence_env(run);
      run.argv = opts.command;
      break;
    case Rung::fence:
    case Rung::fence_front:
      set_fence_env(run, !wants_site_run(opts, rung));
      run.fence_side = rung == Rung::fence_front ? FenceSide::front : opts.fence_side;
      run.ring_path = opts.work_dir + "/" + to_string(rung) + suffix + ".ring";
      run.env_set[std::string(kRingVar)] = run.ring_path;
      run.env_set[std::string(kAlignVar)] = std::to_string(opts.fence_align);
      run.env_set[std::string(kSideVar)] = run.fence_side == FenceSide::front ? "front" : "back";
      if (opts.quarantine_mb) run.env_set[std::string(kQuarantineVar)] = std::to_string(*opts.quarantine_mb);
      else run.env_unset.emplace_back(kQuarantineVar);
      // Recycling gives up the use-after-free watch: only in the rung guarding the ends,
      // which the fence-front rung's quarantine complements.
      if (rung == Rung::fence && run.fence_side == FenceSide::back && opts.recycle_mb > 0)
        run.env_set[std::string(kRecycleVar)] = std::to_string(opts.recycle_mb);
      else run.env_unset.emplace_back(kRecycleVar);
      run.env_set["LD_PRELOAD"] =
          compose_ld_preload(opts.preload_path.empty() ? opts.interposer_path : opts.preload_path, opts.user_ld_preload);
      run.argv = opts.command;
      break;
    case Rung::sanitizer:
      set_blocking_env(run);
      unset_fence_env(run);
      run.sanitizer_xml = opts.work_dir + "/sanitizer" + suffix + ".xml";
      run.argv = profiles::sanitizer_argv(opts.sanitizer_path, run.sanitizer_xml, opts.sanitizer_padding);
      // No records of API calls that returned an error: a program handles most of them
      // (NCCL probes its own kernels: a hundred cudaErrorNoKernelImageForDevice on
      // cudaFuncGetAttributes), and each one counts against memcheck's print limit, which
      // they exhausted before the faulting kernel's access. The program's own output names
      // an error it did not handle; memory findings and GPU exceptions are still reported.
      run.argv.insert(std::find(run.argv.begin(), run.argv.end(), std::string(kPrintLimitOption)),
                      {std::string(kApiErrorsOption), "no"});
      run.argv.insert(run.argv.end(), opts.command.begin(), opts.command.end());
      break;
  }
  return run;
}

}  // namespace

bool wants_site_run(const RunOptions& opts, Rung rung) {
  return rung != Rung::sanitizer && opts.coredump && opts.user_coredump_vars.empty();
}

PlannedRun armed_for_site(const PlannedRun& run, const RunOptions& opts) {
  PlannedRun armed = run;
  armed.coredump_prefix = fmt::format("core-{}-{}", to_string(run.rung), run.repeat_index);
  for (auto& [name, value] : coredump::arming_env({opts.work_dir, armed.coredump_prefix}, true))
    armed.env_set[name] = value;
  if (!armed.ring_path.empty()) {
    armed.ring_path += ".site";
    armed.env_set[std::string(kRingVar)] = armed.ring_path;
  }
  // A fence rung runs without launch blocking when a site run follows (set_fence_env):
  // the site run blocks again, so that its ring's newest launch is the faulting one too.
  if (is_fence(run.rung)) armed.env_set[std::string(kLaunchBlockingVar)] = "1";
  // A store's dump comes after the program's synchronize, and only while the process
  // lives (fence/dump_linger.h): the interposer holds the program's end for it. On a rung
  // that runs without the interposer, it is preloaded for that alone: no fence, no ring.
  armed.env_set[std::string(fence::kDumpLingerVar)] = std::to_string(fence::kDumpLingerMs);
  const std::string& interposer = opts.preload_path.empty() ? opts.interposer_path : opts.preload_path;
  if (!is_fence(run.rung) && !interposer.empty()) {
    armed.env_set["LD_PRELOAD"] = compose_ld_preload(interposer, opts.user_ld_preload);
    armed.env_set[std::string(kSideVar)] = "none";
    std::erase(armed.env_unset, std::string(kSideVar));
  }
  return armed;
}

const char* to_string(Rung r) {
  switch (r) {
    case Rung::native: return "native";
    case Rung::blocking: return "blocking";
    case Rung::fence: return "fence";
    case Rung::fence_front: return "fence-front";
    case Rung::sanitizer: return "sanitizer";
  }
  return "native";
}

bool is_fence(Rung r) { return r == Rung::fence || r == Rung::fence_front; }

const std::vector<Rung>& all_rungs() {
  static const std::vector<Rung> kAll{Rung::native, Rung::blocking, Rung::fence, Rung::fence_front, Rung::sanitizer};
  return kAll;
}

std::optional<Rung> rung_from_name(std::string_view name) {
  for (const Rung r : all_rungs())
    if (name == to_string(r)) return r;
  return std::nullopt;
}

std::vector<Rung> parse_rungs(std::string_view text) {
  std::vector<Rung> out;
  for (const auto& raw : split(text, ",")) {
    const std::string word(util::trim_blanks(raw));
    if (word.empty()) throw UsageError("--rungs: empty rung name in '" + std::string(text) + "'");
    const auto r = rung_from_name(word);
    if (!r) {
      throw UsageError("--rungs: unknown rung '" + word +
                       "' (known: native, blocking, fence, fence-front, sanitizer)");
    }
    if (std::find(out.begin(), out.end(), *r) != out.end())
      throw UsageError("--rungs: rung '" + word + "' named twice");
    out.push_back(*r);
  }
  std::sort(out.begin(), out.end());  // ladder order
  return out;
}

const char* to_string(SanitizeMode m) {
  switch (m) {
    case SanitizeMode::automatic: return "auto";
    case SanitizeMode::always: return "always";
    case SanitizeMode::never: return "never";
  }
  return "auto";
}

SanitizeMode parse_sanitize_mode(std::string_view text) {
  for (const auto m : {SanitizeMode::automatic, SanitizeMode::always, SanitizeMode::never})
    if (text == to_string(m)) return m;
  throw UsageError("--sanitize: expected auto, always or never, got '" + std::string(text) + "'");
}

const char* to_string(Verification v) {
  return v == Verification::device ? "verified on the device" : "documented only";
}

std::span<const CachingSetting> caching_off_settings() { return kCaching; }

std::span<const std::string_view> caching_unset_variables() { return kUnset; }

void check_run_options(const RunOptions& opts) {
  if (opts.command.empty() || opts.command.front().empty())
    throw UsageError("run: no command given (usage: cudadiag run [options] -- CMD [ARGS...])");
  if (opts.repeat < 1 || opts.repeat > 10000)
    throw UsageError("--repeat: expected 1..10000, got " + std::to_string(opts.repeat));
  const auto a = opts.fence_align;
  if (a == 0 || a > 4096 || (a & (a - 1)) != 0)
    throw UsageError("--fence-align: expected a power of two from 1 to 4096, got " + std::to_string(a));
  if (opts.rungs.empty() && opts.sanitize != SanitizeMode::always)
    throw UsageError("--rungs: no rung to run");
  if (opts.work_dir.empty()) throw UsageError("run: no work directory for the rings and sanitizer files");
}

std::vector<std::string> interposer_candidates(std::string_view executable_path) {
  const auto slash = executable_path.rfind('/');
  const std::string dir = slash == std::string_view::npos ? "." : std::string(executable_path.substr(0, slash));
  const std::string prefix = dir.empty() ? std::string("/") : dir + "/";
  return {prefix + std::string(kInterposerFile), prefix + "../lib/cudadiag/" + std::string(kInterposerFile)};
}

std::string compose_ld_preload(std::string_view ours, const std::optional<std::string>& user) {
  std::string out(ours);
  if (!user) return out;
  const std::string our_name = base_name(ours);
  for (const auto& entry : split(*user, ": ")) {
    if (entry.empty() || entry == ours || base_name(entry) == our_name) continue;
    out += ':';
    out += entry;
  }
  return out;
}

std::vector<RungPlan> plan_rungs(const RunOptions& opts) {
  std::vector<Rung> rungs = opts.rungs;
  if (opts.sanitize == SanitizeMode::always &&
      std::find(rungs.begin(), rungs.end(), Rung::sanitizer) == rungs.end()) {
    rungs.push_back(Rung::sanitizer);
  }
  std::sort(rungs.begin(), rungs.end());
  // --fence-front turns the fence rung around: a fence-front rung would repeat it.
  if (opts.fence_side == FenceSide::front && std::find(rungs.begin(), rungs.end(), Rung::fence) != rungs.end())
    std::erase(rungs, Rung::fence_front);
  std::vector<RungPlan> plans;
  for (const Rung rung : rungs) {
    RungPlan plan;
    plan.rung = rung;
    if (is_fence(rung) && opts.interposer_path.empty()) {
      plan.skip_reason = "the fence interposer was not found" +
                         (opts.interposer_missing_reason.empty() ? std::string() : ": " + opts.interposer_missing_reason);
    } else if (rung == Rung::sanitizer && opts.sanitize == SanitizeMode::never) {
      plan.skip_reason = "--sanitize never";
    } else if (rung == Rung::sanitizer && opts.sanitizer_path.empty()) {
      plan.skip_reason = opts.sanitizer_missing_reason.empty() ? "compute-sanitizer was not found"
                                                               : opts.sanitizer_missing_reason;
    }
    plan.conditional = rung == Rung::sanitizer && opts.sanitize == SanitizeMode::automatic;
    if (plan.skip_reason.empty())
      for (int i = 0; i < opts.repeat; ++i) plan.runs.push_back(plan_run(opts, rung, i));
    plans.push_back(std::move(plan));
  }
  return plans;
}

void limit_memcheck_to_kernel(PlannedRun& run, const std::string& kernel, std::size_t command_size) {
  if (kernel.empty() || run.rung != Rung::sanitizer || run.argv.size() < command_size) return;
  const auto at = run.argv.end() - static_cast<std::ptrdiff_t>(command_size);
  run.argv.insert(at, {"--kernel-name", "kns=" + kernel});
}

bool ladder_continues(bool stop_at_first, std::span<const RunStatus> done, bool rung_complete) {
  if (done.empty()) return true;
  for (const auto& s : done)
    if (!s.started) return false;
  if (!stop_at_first || !rung_complete) return true;
  const Rung last = done.back().rung;
  for (const auto& s : done)
    if (s.rung == last && s.failed) return false;
  return true;
}

bool sanitizer_should_run(SanitizeMode mode, std::span<const RunStatus> earlier) {
  switch (mode) {
    case SanitizeMode::always: return true;
    case SanitizeMode::never: return false;
    case SanitizeMode::automatic: break;
  }
  for (const auto& s : earlier)
    if (s.rung != Rung::sanitizer && s.started && s.failed) return true;
  return false;
}

}  // namespace cudadiag::run
