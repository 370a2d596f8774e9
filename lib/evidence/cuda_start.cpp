#include "evidence/cuda_start.h"

#include <charconv>

#include "util/build_info.h"

namespace cudadiag::evidence {

bool cuda_could_not_start(taxonomy::ErrorClass error_class) {
  return error_class == taxonomy::ErrorClass::no_device || error_class == taxonomy::ErrorClass::driver_mismatch;
}

bool cuda_could_not_start(const report::Result& r) {
  return r.outcome == report::Outcome::cuda_error && r.error && cuda_could_not_start(r.error->error_class);
}

namespace {

int int_field(const report::DriverInfo& d, const char* key) {
  const long long v = d.facts.int_or(key, 0);
  return v > 0 && v < (1LL << 31) ? static_cast<int>(v) : 0;
}

// "550.54.15" -> 550; 0 when it does not start with a number.
int driver_branch(const report::DriverInfo& driver) {
  if (!driver.version) return 0;
  const std::string& s = *driver.version;
  int branch = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), branch);
  if (ec != std::errc{} || end == s.data()) return 0;
  return branch;
}

// The CUDA runtime cudadiag carries, as 13000 for 13.0: the probe's number, else the
// toolkit the build used ("13.0.88").
int runtime_built(const report::DriverInfo& driver) {
  if (const int v = int_field(driver, "cuda_runtime_version_built"); v > 0) return v;
  const std::string& t = build_info().cuda_toolkit;
  int major = 0;
  int minor = 0;
  const char* end = t.data() + t.size();
  auto r = std::from_chars(t.data(), end, major);
  if (r.ec != std::errc{}) return 0;
  if (r.ptr < end && *r.ptr == '.') std::from_chars(r.ptr + 1, end, minor);
  return major * 1000 + minor * 10;
}

std::string cuda_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace

std::string driver_too_old(const report::DriverInfo& driver) {
  const int runtime = runtime_built(driver);
  if (runtime <= 0) return "";
  int supports = int_field(driver, "cuda_driver_version");
  if (supports <= 0) supports = int_field(driver, "nvml_cuda_driver_version");
  const int branch = driver_branch(driver);
  const bool old_cuda = supports > 0 && supports / 1000 < runtime / 1000;
  const bool old_branch = branch > 0 && runtime / 1000 >= 13 && branch < kMinimumDriverBranch;
  if (!old_cuda && !old_branch) return "";
  std::string installed = "the NVIDIA driver";
  if (branch > 0) installed += " " + *driver.version;
  if (supports > 0) installed += " (CUDA " + cuda_string(supports) + ")";
  return installed + " is older than cudadiag's CUDA " + cuda_string(runtime) + " runtime needs: CUDA " +
         std::to_string(runtime / 1000) + ".x needs driver " + std::to_string(kMinimumDriverBranch) +
         " or newer; update the driver";
}

std::string gpu_unavailable(const host::HostFacts& facts) {
  if (!facts.no_gpu_reason.empty()) return facts.no_gpu_reason;
  // libcuda's version alone decides (NVML's branch is the kernel module's, which a
  // forward-compatibility libcuda may sit on); the sentence names both.
  const auto v = facts.cuda_driver.find("version");
  const int libcuda = v != facts.cuda_driver.end() && v->is_number_integer() ? v->get<int>() : 0;
  if (libcuda <= 0) return "";
  report::DriverInfo only_libcuda;
  only_libcuda.facts.set("cuda_driver_version", report::value_from_json(report::json(libcuda)));
  if (driver_too_old(only_libcuda).empty()) return "";
  report::DriverInfo driver = facts.driver;
  driver.facts.set("cuda_driver_version", report::value_from_json(report::json(libcuda)));
  return driver_too_old(driver);
}

}  // namespace cudadiag::evidence
