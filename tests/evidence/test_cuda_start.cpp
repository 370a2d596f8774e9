#include <catch2/catch.hpp>

#include "evidence/cuda_start.h"

using cudadiag::report::json;

namespace {
// The driver section as a report holds it, from the JSON the host modules write.
std::string driver_too_old(const json& driver) {
  return cudadiag::evidence::driver_too_old(cudadiag::report::driver_info_from_json(driver));
}
}  // namespace

TEST_CASE("driver_too_old names a driver below the CUDA 13 runtime's branch", "[evidence][cuda_start]") {
  const json old_driver{{"version", "550.54.15"}, {"cuda_driver_version", 12040}, {"cuda_runtime_version_built", 13000}};
  const std::string s = driver_too_old(old_driver);
  CHECK(s.find("550.54.15") != std::string::npos);
  CHECK(s.find("CUDA 12.4") != std::string::npos);
  CHECK(s.find("CUDA 13.0 runtime") != std::string::npos);
  CHECK(s.find("driver 580 or newer") != std::string::npos);
}

TEST_CASE("driver_too_old is empty for a 580+ driver, minor versions included", "[evidence][cuda_start]") {
  CHECK(driver_too_old(json{{"version", "580.65.06"}, {"cuda_driver_version", 13000},
                            {"cuda_runtime_version_built", 13000}})
            .empty());
  // Minor version compatibility: a 13.1 runtime on a 13.0 driver starts.
  CHECK(driver_too_old(json{{"version", "580.65.06"}, {"cuda_driver_version", 13000},
                            {"cuda_runtime_version_built", 13010}})
            .empty());
  CHECK(driver_too_old(json{{"version", "590.10"}, {"cuda_runtime_version_built", 13000}}).empty());
}

TEST_CASE("driver_too_old decides from whichever version is known", "[evidence][cuda_start]") {
  // NVML's version string only (the probe could not ask the driver).
  CHECK_FALSE(driver_too_old(json{{"version", "535.183.01"}, {"cuda_runtime_version_built", 13000}}).empty());
  // The driver's CUDA version only (no NVML), from NVML's own field too.
  CHECK_FALSE(driver_too_old(json{{"cuda_driver_version", 12080}, {"cuda_runtime_version_built", 13000}}).empty());
  CHECK_FALSE(driver_too_old(json{{"nvml_cuda_driver_version", 12020}}).empty());
  // Nothing known (no driver at all): no claim about its age.
  CHECK(driver_too_old(json::object()).empty());
  CHECK(driver_too_old(json{{"cuda_driver_version", nullptr}, {"version", "unknown"}}).empty());
}
