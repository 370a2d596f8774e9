// The session's header: one set of host facts, one way to start a report.
#include <catch2/catch.hpp>

#include "evidence/session_report.h"
#include "host/host_facts.h"

#include <string>
#include <vector>

using namespace cudadiag;
using report::json;

namespace {

// The driver probe's answer: these UUIDs visible, in this order.
json driver_seeing(std::vector<std::string> uuids) {
  json devices = json::array();
  for (size_t i = 0; i < uuids.size(); ++i) devices.push_back(json{{"index", i}, {"uuid", uuids[i]}});
  return json{{"available", true}, {"status", uuids.empty() ? "no_device" : "ok"},
              {"reason", uuids.empty() ? "the CUDA driver sees no GPU" : ""}, {"devices", devices}};
}

json two_gpus() {
  return json{{"nvml", {{"available", true}, {"library", "libnvidia-ml.so.1"}}},
              {"driver", {{"version", "580.65.06"}}},
              {"devices", json::array({json{{"index", 0}, {"name", "H100"}, {"uuid", "GPU-a"}},
                                       json{{"index", 1}, {"name", "H100"}, {"uuid", "GPU-b"}}})},
              {"topology", json::array({json{{"a", 0}, {"b", 1}, {"path", "NV18"}}})}};
}

}  // namespace

TEST_CASE("host facts: driver with NVML's status, merged devices, topology in the host section", "[evidence]") {
  const auto f = host::host_facts_from(json{{"hostname", "node"}}, two_gpus(), driver_seeing({"GPU-a", "GPU-b"}), {});
  CHECK(f.host.hostname == "node");
  REQUIRE(f.host.facts.find("gpu_topology"));
  CHECK(report::to_json(*f.host.facts.find("gpu_topology")) == two_gpus()["topology"]);
  CHECK(f.driver.version == "580.65.06");
  REQUIRE(f.driver.nvml);
  CHECK(f.driver.nvml->available);
  CHECK(f.driver.nvml->library == "libnvidia-ml.so.1");
  REQUIRE(f.driver.libcuda);
  CHECK(f.driver.libcuda->status == report::DriverStatus::ok);
  CHECK_FALSE(f.driver.libcuda->version);
  REQUIRE(f.driver.device_binding);
  CHECK_FALSE(*f.driver.device_binding);  // no variable restricts the devices
  REQUIRE(f.devices.size() == 2);
  CHECK(f.devices[1].uuid == "GPU-b");
  CHECK(f.devices[1].index == 1);  // the CUDA driver's ordinal
  // Written back, the sections are what the host modules wrote.
  CHECK(report::to_json(f.driver) ==
        json{{"version", "580.65.06"},
             {"nvml", {{"available", true}, {"library", "libnvidia-ml.so.1"}}},
             {"libcuda",
              {{"available", true}, {"library", ""}, {"status", "ok"}, {"reason", ""}, {"detail", ""}, {"version", nullptr}}},
             {"device_binding", nullptr}});
  CHECK(f.no_gpu_reason.empty());
}

TEST_CASE("host facts: the driver decides whether there is a GPU to run on, NVML only adds a note", "[evidence]") {
  const json no_nvml{{"nvml", {{"available", false}, {"reason", "libnvidia-ml.so.1: cannot open shared object file"}}}};
  const auto seen = host::host_facts_from(json::object(), no_nvml, driver_seeing({"GPU-a"}), {});
  CHECK(seen.no_gpu_reason.empty());
  CHECK(seen.nvml_note == "libnvidia-ml.so.1 not found: device health (temperature, ECC, Xid) not read");
  const auto none = host::host_facts_from(json::object(), two_gpus(), driver_seeing({}), {});
  CHECK(none.no_gpu_reason == "the CUDA driver sees no GPU");
  CHECK(none.gpu_status == report::DriverStatus::no_device);
  CHECK(none.devices.size() == 2);  // NVML's GPUs are listed, none visible
  CHECK(none.devices[0].visible_to_cuda == false);
  CHECK(host::host_facts_from(json::object(), two_gpus(), json{{"status", "probe_failed"}, {"reason", "the CUDA driver probe child did not answer within 60 s"}}, {})
            .no_gpu_reason == "the CUDA driver probe child did not answer within 60 s");
}

TEST_CASE("a session report starts with tool, invocation, environment and the host facts", "[evidence]") {
  const auto f = host::host_facts_from(json{{"hostname", "node"}}, two_gpus(), driver_seeing({"GPU-a", "GPU-b"}), {});
  char a[] = "CUDA_LAUNCH_BLOCKING=1";
  char b[] = "HOME=/root";
  char* envp[] = {a, b, nullptr};
  const auto r = evidence::start_session_report({{"cudadiag", "run", "--", "x"}, "run", envp, &f});
  CHECK(r.tool.name == "cudadiag");
  CHECK(r.invocation.command == "run");
  CHECK(r.invocation.argv.size() == 4);
  CHECK(report::to_json(r.environment) == json{{"CUDA_LAUNCH_BLOCKING", "1"}});
  CHECK(r.host == f.host);
  CHECK(r.driver == f.driver);
  CHECK(r.devices == f.devices);
  CHECK_FALSE(r.gpu.ran);
  CHECK(r.gpu.reason == "not attempted");

  const auto bare = evidence::start_session_report({{"cudadiag", "compare"}, "compare"});
  CHECK(bare.environment.empty());
  CHECK(bare.host.empty());
  CHECK(bare.devices.empty());
}

TEST_CASE("the sanitizer lookup has one shape", "[evidence]") {
  CHECK(evidence::sanitizer_json(true, "/usr/local/cuda/bin/compute-sanitizer", "") ==
        json{{"found", true}, {"path", "/usr/local/cuda/bin/compute-sanitizer"}, {"reason", ""}});
  CHECK(evidence::sanitizer_json(false, "", "not on PATH") ==
        json{{"found", false}, {"path", nullptr}, {"reason", "not on PATH"}});
}
