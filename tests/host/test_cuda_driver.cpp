// The CUDA driver's device list (host/cuda_driver), the job's binding (host/device_binding)
// and the host facts made of both with NVML (host/host_facts), on a fake libcuda.so.1
// (tests/host/fake_libcuda) loaded by path.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>

#include "host/cuda_driver.h"
#include "host/device_binding.h"
#include "host/host_facts.h"

using namespace cudadiag::host;
using cudadiag::report::json;
namespace report = cudadiag::report;

namespace {

// Sets environment variables for one scope (the fake reads them at cuInit).
using Vars = std::map<std::string, std::string>;

class ScopedEnv {
 public:
  explicit ScopedEnv(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {
    for (const auto& [k, v] : vars_) ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~ScopedEnv() {
    for (const auto& [k, v] : vars_) ::unsetenv(k.c_str());
  }

 private:
  std::map<std::string, std::string> vars_;
};

cuda_driver::Api fake_driver_api() {
  cuda_driver::Api api;
  std::string reason;
#ifdef FAKE_LIBCUDA
  REQUIRE(cuda_driver::load(api, reason, FAKE_LIBCUDA));
#else
  FAIL("built without the fake libcuda");
#endif
  return api;
}

const std::string kUuid0 = "GPU-fa4e0000-0000-0000-0000-000000000000";
const std::string kUuid1 = "GPU-fa4e0000-0000-0000-0000-000000000001";

json no_nvml() {
  return json{{"nvml", {{"available", false}, {"library", "libnvidia-ml.so.1"},
                        {"reason", "libnvidia-ml.so.1: cannot open shared object file: No such file or directory"}}},
              {"driver", json::object()},
              {"devices", json::array()}};
}

DeviceBinding binding_of(std::map<std::string, std::string> env) {
  return device_binding([&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

TEST_CASE("driver: every device with name, UUID, PCI bus id, memory and compute capability", "[driver]") {
  const auto api = fake_driver_api();
  const ScopedEnv env(Vars{{"FAKE_LIBCUDA_GPUS", "2"}});
  const json s = cuda_driver::snapshot(api);
  CHECK(s["available"] == true);
  CHECK(s["status"] == "ok");
  CHECK(s["version"] == 13000);
  REQUIRE(s["devices"].size() == 2);
  CHECK(s["devices"][1]["index"] == 1);
  CHECK(s["devices"][1]["name"] == "Fake GPU 1");
  CHECK(s["devices"][1]["uuid"] == kUuid1);
  CHECK(s["devices"][1]["pci_bus_id"] == "0000:19:00.0");
  CHECK(s["devices"][1]["total_memory_bytes"] == 80ull << 30);
  CHECK(s["devices"][1]["compute_capability"] == "9.0");
}

TEST_CASE("driver: CUDA_VISIBLE_DEVICES as an index or a UUID narrows the list, numbered within it", "[driver]") {
  const auto api = fake_driver_api();
  for (const std::string& cvd : std::vector<std::string>{"1", kUuid1, "GPU-fa4e0000-0000-0000-0000-000000000001,7"}) {
    const ScopedEnv env(Vars{{"FAKE_LIBCUDA_GPUS", "2"}, {"CUDA_VISIBLE_DEVICES", cvd}});
    const json s = cuda_driver::snapshot(api);
    REQUIRE(s["devices"].size() == 1);
    CHECK(s["devices"][0]["index"] == 0);
    CHECK(s["devices"][0]["uuid"] == kUuid1);
  }
}

TEST_CASE("driver: nothing visible, a failing cuInit and a missing library are reasons, not errors", "[driver]") {
  const auto api = fake_driver_api();
  {
    const ScopedEnv env(Vars{{"CUDA_VISIBLE_DEVICES", ""}});
    const json s = cuda_driver::snapshot(api);
    CHECK(s["status"] == "no_device");
    CHECK(s["reason"] == "the CUDA driver sees no GPU");
    CHECK(s["detail"] == "cuInit: CUDA_ERROR_NO_DEVICE (100)");
  }
  {
    const ScopedEnv env(Vars{{"FAKE_LIBCUDA_INIT_ERROR", "999"}});
    const json s = cuda_driver::snapshot(api);
    CHECK(s["status"] == "cuda_error");
    CHECK(s["reason"] == "the CUDA driver could not start (cuInit: CUDA_ERROR_UNKNOWN (999))");
  }
  cuda_driver::Api missing;
  std::string why;
  CHECK_FALSE(cuda_driver::load(missing, why, "libcuda-does-not-exist.so.1"));
  CHECK_THAT(why, Catch::Contains("libcuda-does-not-exist.so.1"));
  const json s = cuda_driver::not_loaded(why);
  CHECK(s["status"] == "no_driver");
  CHECK(s["reason"] == "libcuda.so.1 not found: no NVIDIA driver");
  CHECK(s["detail"] == why);
}

TEST_CASE("binding: CUDA_VISIBLE_DEVICES wins, then Slurm's step and job GPUs, then GPU_DEVICE_ORDINAL", "[binding]") {
  CHECK_FALSE(binding_of({}).restricts());
  auto b = binding_of({{"CUDA_VISIBLE_DEVICES", "2, GPU-ab"}, {"SLURM_STEP_GPUS", "5"}});
  CHECK(b.source == BindingSource::cuda_visible_devices);
  CHECK(b.entries == std::vector<std::string>{"2", "GPU-ab"});
  CHECK(b.describe() == "CUDA_VISIBLE_DEVICES=2, GPU-ab");
  CHECK(binding_env(b).empty());  // already in the environment, in the user's order
  b = binding_of({{"SLURM_JOB_GPUS", "4,5"}, {"SLURM_STEP_GPUS", "5"}});
  CHECK(b.source == BindingSource::slurm_step_gpus);
  CHECK(binding_env(b) == std::map<std::string, std::string>{{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                                                               {"CUDA_VISIBLE_DEVICES", "5"}});
  CHECK(binding_of({{"SLURM_JOB_GPUS", ""}, {"GPU_DEVICE_ORDINAL", "3"}}).source == BindingSource::gpu_device_ordinal);
  b = binding_of({{"CUDA_VISIBLE_DEVICES", ""}});  // set and empty: no device at all
  CHECK(b.restricts());
  CHECK(b.entries.empty());
  CHECK(binding_env(binding_of({})) == std::map<std::string, std::string>{{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});
}

TEST_CASE("binding: a child is narrowed to the job's own entry, never widened to a global index", "[binding]") {
  const auto b = binding_of({{"CUDA_VISIBLE_DEVICES", "3,MIG-6d2f1c4e-aaaa-bbbb-cccc-0123456789ab,GPU-77"}});
  CHECK(narrowed_visible_devices(b, 0, 3, "GPU-33") == "3");
  CHECK(narrowed_visible_devices(b, 1, 3, "GPU-mig-parent") == "MIG-6d2f1c4e-aaaa-bbbb-cccc-0123456789ab");
  CHECK(narrowed_visible_devices(b, 2, 3, "GPU-77ff") == "GPU-77");
  // The driver saw fewer devices than entries (one named nothing): the device's UUID.
  CHECK(narrowed_visible_devices(b, 0, 2, "GPU-33") == "GPU-33");
  CHECK(narrowed_visible_devices(binding_of({}), 1, 2, "GPU-bb") == "GPU-bb");
  CHECK(narrowed_visible_devices(binding_of({}), 1, 2, "") == "1");
}

TEST_CASE("facts: the driver without NVML gives the devices and one note on what is not read", "[facts]") {
  const auto api = fake_driver_api();
  const ScopedEnv env(Vars{{"FAKE_LIBCUDA_GPUS", "2"}});
  const auto f = host_facts_from(json::object(), no_nvml(), cuda_driver::snapshot(api), binding_of({}));
  CHECK(f.no_gpu_reason.empty());
  CHECK(f.gpu_status == report::DriverStatus::ok);
  CHECK(f.nvml_note == "libnvidia-ml.so.1 not found: device health (temperature, ECC, Xid) not read");
  CHECK(report::to_json(f.driver)["nvml"]["reason"] == f.nvml_note);
  CHECK(report::to_json(f.driver)["libcuda"]["available"] == true);
  CHECK(report::to_json(f.driver)["cuda_driver_version_string"] == "13.0");
  CHECK(report::to_json(f.driver)["device_binding"].is_null());
  REQUIRE(f.devices.size() == 2);
  CHECK(report::to_json(f.devices[0])["uuid"] == kUuid0);
  CHECK(report::to_json(f.devices[0])["visible_to_cuda"] == true);
  CHECK(report::to_json(f.devices[0])["nvml"].is_null());
}

TEST_CASE("facts: no driver is said once, in the same words, whatever NVML says", "[facts]") {
  const json nvml_with_gpu{{"nvml", {{"available", true}}},
                           {"driver", {{"version", "580.95.05"}}},
                           {"devices", json::array({json{{"index", 0}, {"uuid", kUuid0}, {"name", "H100"}}})}};
  for (const json& nvml : {no_nvml(), nvml_with_gpu}) {
    const auto f = host_facts_from(json::object(), nvml, cuda_driver::not_loaded("libcuda.so.1: cannot open"), binding_of({}));
    CHECK(f.gpu_status == report::DriverStatus::no_driver);
    CHECK(f.no_gpu_reason == "libcuda.so.1 not found: no NVIDIA driver");
    CHECK(report::to_json(f.driver)["libcuda"]["reason"] == f.no_gpu_reason);
  }
  // A probe child that died says so; a binding that leaves nothing visible is named.
  const json none{{"available", true}, {"status", "no_device"}, {"reason", "the CUDA driver sees no GPU"},
                  {"devices", json::array()}};
  const auto f = host_facts_from(json::object(), no_nvml(), none, binding_of({{"CUDA_VISIBLE_DEVICES", "7"}}));
  CHECK(f.no_gpu_reason == "the CUDA driver sees no GPU (CUDA_VISIBLE_DEVICES=7)");
  CHECK(report::to_json(f.driver)["device_binding"]["source"] == "CUDA_VISIBLE_DEVICES");
}

TEST_CASE("facts: under a binding, NVML's other GPUs are listed but not visible", "[facts]") {
  const auto api = fake_driver_api();
  const ScopedEnv env(Vars{{"FAKE_LIBCUDA_GPUS", "2"}, {"CUDA_VISIBLE_DEVICES", "1"}});
  const json nvml{{"nvml", {{"available", true}}},
                  {"driver", json::object()},
                  {"devices", json::array({json{{"index", 0}, {"uuid", kUuid0}, {"pci_bus_id", "00000000:18:00.0"}},
                                           json{{"index", 1}, {"uuid", kUuid1}, {"pci_bus_id", "00000000:19:00.0"},
                                                {"temperature_c", 40}}})}};
  const auto f = host_facts_from(json::object(), nvml, cuda_driver::snapshot(api), binding_of({{"CUDA_VISIBLE_DEVICES", "1"}}));
  CHECK(f.nvml_note.empty());
  REQUIRE(f.devices.size() == 2);
  CHECK(report::to_json(f.devices[0])["uuid"] == kUuid1);
  CHECK(report::to_json(f.devices[0])["index"] == 0);
  CHECK(report::to_json(f.devices[0])["nvml"]["temperature_c"] == 40);
  CHECK(report::to_json(f.devices[1])["uuid"] == kUuid0);
  CHECK(report::to_json(f.devices[1])["visible_to_cuda"] == false);
  CHECK_FALSE(f.devices[1].index);
}
