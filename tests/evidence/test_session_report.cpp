// The session's header: one set of host facts, one way to start a report.
#include <catch2/catch.hpp>

#include "evidence/session_report.h"
#include "host/host_facts.h"

using namespace cudadiag;
using report::json;

namespace {

json two_gpus() {
  return json{{"nvml", {{"available", true}, {"library", "libnvidia-ml.so.1"}}},
              {"driver", {{"version", "580.65.06"}}},
              {"devices", json::array({json{{"index", 0}, {"name", "H100"}, {"uuid", "GPU-a"}},
                                       json{{"index", 1}, {"name", "H100"}, {"uuid", "GPU-b"}}})},
              {"topology", json::array({json{{"a", 0}, {"b", 1}, {"path", "NV18"}}})}};
}

}  // namespace

TEST_CASE("host facts: driver with NVML's status, merged devices, topology in the host section", "[evidence]") {
  const auto f = host::host_facts_from(json{{"hostname", "node"}}, two_gpus());
  CHECK(f.host.hostname == "node");
  REQUIRE(f.host.facts.find("gpu_topology"));
  CHECK(report::to_json(*f.host.facts.find("gpu_topology")) == two_gpus()["topology"]);
  CHECK(f.driver.version == "580.65.06");
  REQUIRE(f.driver.nvml);
  CHECK(f.driver.nvml->available);
  CHECK(f.driver.nvml->library == "libnvidia-ml.so.1");
  REQUIRE(f.devices.size() == 2);
  CHECK(f.devices[1].uuid == "GPU-b");
  CHECK_FALSE(f.devices[1].index);  // a CUDA ordinal: none when only NVML was asked
  // Written back, the sections are what the host modules wrote.
  CHECK(report::to_json(f.driver) ==
        json{{"version", "580.65.06"}, {"nvml", {{"available", true}, {"library", "libnvidia-ml.so.1"}}}});
  CHECK(f.no_gpu_reason.empty());
}

TEST_CASE("host facts: why NVML gives nothing to run on", "[evidence]") {
  CHECK(host::host_facts_from(json::object(), json{{"nvml", {{"available", false}, {"reason", "no libnvidia-ml"}}}})
            .no_gpu_reason == "no NVIDIA driver: no libnvidia-ml");
  CHECK(host::host_facts_from(json::object(), json{{"nvml", {{"available", true}}}, {"devices", json::array()}})
            .no_gpu_reason == "no NVIDIA GPU found by NVML");
  CHECK(host::no_gpu_reason(json::object()) == "no NVIDIA driver: NVML not available");
}

TEST_CASE("a session report starts with tool, invocation, environment and the host facts", "[evidence]") {
  const auto f = host::host_facts_from(json{{"hostname", "node"}}, two_gpus());
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
