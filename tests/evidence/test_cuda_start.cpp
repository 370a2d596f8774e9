#include <catch2/catch.hpp>

#include "evidence/cuda_start.h"
#include "host/cuda_driver.h"
#include "host/host_facts.h"

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

namespace {

using cudadiag::evidence::gpu_unavailable;
namespace host = cudadiag::host;

// A driver snapshot as the `__probe-driver` child gives it, with one GPU.
json driver_with_gpu(int version) {
  return json{{"available", true},
              {"library", "libcuda.so.1"},
              {"status", "ok"},
              {"reason", ""},
              {"version", version},
              {"devices", json::array({json{{"index", 0},
                                            {"name", "NVIDIA H100"},
                                            {"uuid", "GPU-fa4e0000-0000-0000-0000-000000000000"},
                                            {"pci_bus_id", "0000:18:00.0"}}})}};
}

const json kNoNvml{{"nvml", {{"available", false}, {"reason", "libnvidia-ml.so.1: cannot open shared object file"}}}};

host::HostFacts facts_of(json nvml, json driver) {
  return host::host_facts_from(json::object(), std::move(nvml), std::move(driver), host::DeviceBinding{});
}

}  // namespace

TEST_CASE("gpu_unavailable gives the missing driver in the words every command uses", "[evidence][cuda_start]") {
  const auto facts = facts_of(kNoNvml, host::cuda_driver::not_loaded("libcuda.so.1: cannot open shared object file"));
  CHECK(gpu_unavailable(facts) == "libcuda.so.1 not found: no NVIDIA driver");
}

TEST_CASE("gpu_unavailable gives a driver without a device as the driver says it", "[evidence][cuda_start]") {
  json driver = driver_with_gpu(13000);
  driver["status"] = "no_device";
  driver["reason"] = host::cuda_driver::kNoGpuSeen;
  driver["devices"] = json::array();
  CHECK(gpu_unavailable(facts_of(kNoNvml, driver)) == host::cuda_driver::kNoGpuSeen);
}

TEST_CASE("gpu_unavailable calls a libcuda older than the runtime too old, before any CUDA start",
          "[evidence][cuda_start]") {
  const std::string why = gpu_unavailable(facts_of(kNoNvml, driver_with_gpu(12040)));
  CHECK(why.find("CUDA 12.4") != std::string::npos);
  CHECK(why.find("driver 580 or newer") != std::string::npos);
  // With NVML's driver version, the sentence names it.
  const json nvml{{"nvml", {{"available", true}}}, {"driver", {{"version", "550.54.15"}}}};
  CHECK(gpu_unavailable(facts_of(nvml, driver_with_gpu(12040))).find("550.54.15") != std::string::npos);
}

TEST_CASE("gpu_unavailable: NVML missing is a note, and a forward-compatible libcuda starts", "[evidence][cuda_start]") {
  const auto no_nvml = facts_of(kNoNvml, driver_with_gpu(13000));
  CHECK(gpu_unavailable(no_nvml).empty());
  CHECK_FALSE(no_nvml.nvml_note.empty());
  // A 550 kernel module under a CUDA 13 compatibility libcuda: libcuda's version decides.
  const json nvml{{"nvml", {{"available", true}}}, {"driver", {{"version", "550.54.15"}}}};
  CHECK(gpu_unavailable(facts_of(nvml, driver_with_gpu(13000))).empty());
}
