// --devices over the GPUs the CUDA driver lets the job use (host::HostFacts: the driver
// probe's list under the job's binding, merged with NVML), and what pins each child.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>

#include "host/host_facts.h"
#include "profiles/profile.h"
#include "suite/device_selection.h"
#include "suite/run_plan.h"
#include "util/errors.h"

using namespace cudadiag;
using report::json;

namespace {

std::string uuid(int i) { return "GPU-" + std::to_string(i); }

// The driver probe's answer with these machine GPUs visible, in this order.
json driver_seeing(const std::vector<int>& machine) {
  json devices = json::array();
  for (size_t i = 0; i < machine.size(); ++i)
    devices.push_back(json{{"index", i}, {"uuid", uuid(machine[i])}, {"name", "NVIDIA H200"}});
  return json{{"available", true}, {"status", machine.empty() ? "no_device" : "ok"}, {"reason", ""}, {"devices", devices}};
}

host::DeviceBinding binding_of(std::map<std::string, std::string> env) {
  return host::device_binding([&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

host::HostFacts facts(const std::vector<int>& machine, const host::DeviceBinding& b = {}) {
  return host::host_facts_from(json::object(), json{{"nvml", {{"available", false}}}}, driver_seeing(machine), b);
}

host::HostFacts eight_gpus() { return facts({0, 1, 2, 3, 4, 5, 6, 7}); }

}  // namespace

TEST_CASE("devices: all, a list, one", "[devices]") {
  std::string why;
  CHECK(suite::select_devices(eight_gpus(), "all", &why).size() == 8);
  const auto two = suite::select_devices(eight_gpus(), "0,1", &why);
  REQUIRE(two.size() == 2);
  CHECK(two[1].uuid == "GPU-1");
  const auto odd = suite::select_devices(eight_gpus(), "7,3,7", &why);  // duplicates once, order kept
  REQUIRE(odd.size() == 2);
  CHECK(odd[0].index == 7);
  CHECK(odd[1].index == 3);
  CHECK(suite::select_devices(eight_gpus(), "0", &why).size() == 1);
}

TEST_CASE("devices: bad lists name what is wrong", "[devices]") {
  std::string why;
  CHECK_THROWS_WITH(suite::select_devices(eight_gpus(), "8", &why), Catch::Contains("no device 8") &&
                                                                        Catch::Contains("indices 0..7"));
  CHECK_THROWS_WITH(suite::select_devices(eight_gpus(), "0,x", &why), Catch::Contains("'x' is not a device index"));
  CHECK_THROWS_WITH(suite::select_devices(eight_gpus(), "-1", &why), Catch::Contains("'-1'"));
  CHECK_THROWS_AS(suite::select_devices(eight_gpus(), ",", &why), UsageError);
}

TEST_CASE("devices: no GPU says the driver's reason; jobs scale with the GPUs and the CPUs", "[devices]") {
  std::string why;
  const json no_driver{{"available", false}, {"status", "no_driver"},
                       {"reason", "libcuda.so.1 not found: no NVIDIA driver"}, {"devices", json::array()}};
  // NVML listing a GPU does not make one usable: the driver decides.
  const auto f = host::host_facts_from(
      json::object(), json{{"nvml", {{"available", true}}}, {"devices", json::array({json{{"uuid", "GPU-0"}}})}},
      no_driver, {});
  CHECK(suite::select_devices(f, "all", &why).empty());
  CHECK(why == "libcuda.so.1 not found: no NVIDIA driver");
  CHECK(suite::default_jobs(1, 16) == 8);
  CHECK(suite::default_jobs(8, 128) == 64);
  CHECK(suite::default_jobs(8, 16) == 16);
  CHECK(suite::default_jobs(0, 2) == 2);
  CHECK(suite::default_jobs(1, 0) == 1);
}

TEST_CASE("devices: under CUDA_VISIBLE_DEVICES the job's devices are numbered within it and children keep its entries",
          "[devices]") {
  const auto profile = profiles::parse_profile("default");
  std::string why;
  // CUDA_VISIBLE_DEVICES=5,GPU-2: the driver sees machine GPUs 5 and 2 as ordinals 0 and 1.
  const auto b = binding_of({{"CUDA_VISIBLE_DEVICES", "5,GPU-2"}});
  const auto targets = suite::select_devices(facts({5, 2}, b), "all", &why);
  REQUIRE(targets.size() == 2);
  CHECK(targets[0].index == 0);
  CHECK(targets[0].uuid == "GPU-5");
  auto env = suite::child_env(profile, 0, targets);
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "5");  // the user's entry, not a global index of ours
  CHECK(env.count("CUDA_DEVICE_ORDER") == 0);    // the user's order gives "5" its meaning
  env = suite::child_env(profile, 1, targets);
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "GPU-2");
  // --devices counts within the visible set.
  const auto second = suite::select_devices(facts({5, 2}, b), "1", &why);
  REQUIRE(second.size() == 1);
  CHECK(suite::child_env(profile, 0, second).at("CUDA_VISIBLE_DEVICES") == "GPU-2");
  CHECK_THROWS_WITH(suite::select_devices(facts({5, 2}, b), "5", &why), Catch::Contains("no device 5"));

  // A MIG instance is named by its own id.
  const auto mig = binding_of({{"CUDA_VISIBLE_DEVICES", "MIG-6d2f1c4e-aaaa-bbbb-cccc-0123456789ab"}});
  const auto m = suite::select_devices(facts({0}, mig), "all", &why);
  REQUIRE(m.size() == 1);
  CHECK(suite::child_env(profile, 0, m).at("CUDA_VISIBLE_DEVICES") == "MIG-6d2f1c4e-aaaa-bbbb-cccc-0123456789ab");
}

TEST_CASE("devices: a Slurm binding pins children by its PCI-order indices; no binding pins by UUID", "[devices]") {
  const auto profile = profiles::parse_profile("default");
  std::string why;
  const auto slurm = binding_of({{"SLURM_STEP_GPUS", "3,6"}});
  const auto targets = suite::select_devices(facts({3, 6}, slurm), "all", &why);
  REQUIRE(targets.size() == 2);
  const auto env = suite::child_env(profile, 1, targets);
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "6");
  CHECK(env.at("CUDA_DEVICE_ORDER") == "PCI_BUS_ID");
  const auto all = suite::select_devices(eight_gpus(), "3", &why);
  REQUIRE(all.size() == 1);
  CHECK(suite::child_env(profile, 0, all).at("CUDA_VISIBLE_DEVICES") == "GPU-3");
  CHECK(suite::child_env(profile, 0, all).at("CUDA_DEVICE_ORDER") == "PCI_BUS_ID");
}

TEST_CASE("devices: a one-case command's child gets a Slurm binding, nothing over CUDA_VISIBLE_DEVICES", "[devices]") {
  const char* saved_cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string cvd = saved_cvd ? saved_cvd : "";
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ::setenv("SLURM_STEP_GPUS", "2", 1);
  CHECK(suite::job_binding_env() ==
        std::map<std::string, std::string>{{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", "2"}});
  ::setenv("CUDA_VISIBLE_DEVICES", "GPU-5", 1);
  CHECK(suite::job_binding_env().empty());
  ::unsetenv("SLURM_STEP_GPUS");
  if (saved_cvd) ::setenv("CUDA_VISIBLE_DEVICES", cvd.c_str(), 1);
  else ::unsetenv("CUDA_VISIBLE_DEVICES");
}
