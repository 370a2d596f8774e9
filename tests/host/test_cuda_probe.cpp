#include <catch2/catch.hpp>

#include "host/cuda_probe.h"

using namespace cudadiag::host;
using cudadiag::report::json;
namespace report = cudadiag::report;

TEST_CASE("version numbers as CUDA prints them") {
  CHECK(cuda_version_string(13000) == "13.0");
  CHECK(cuda_version_string(12080) == "12.8");
  CHECK(cuda_version_string(11040) == "11.4");
  CHECK(cuda_version_string(0) == "");
}

TEST_CASE("no driver: cudaGetDeviceCount returns cudaErrorInsufficientDriver") {
  const json probe{{"runtime_version_compiled", 13000},
                   {"runtime_version_loaded", 13000},
                   {"driver_version", 0},
                   {"device_count", 0},
                   {"device_count_error",
                    {{"code", 35}, {"name", "cudaErrorInsufficientDriver"}, {"message", "CUDA driver version is insufficient for CUDA runtime version"}, {"api_call", "cudaGetDeviceCount"}}},
                   {"devices", json::array()}};
  const auto s = summarize_probe(probe);
  CHECK_FALSE(s.ran);
  CHECK(s.status == report::DriverStatus::no_driver);
  CHECK(s.reason.find("cudaGetDeviceCount returned cudaErrorInsufficientDriver (35)") != std::string::npos);
  CHECK(s.reason.find("next:") != std::string::npos);
  CHECK(s.driver["cuda_driver_version"].is_null());
  CHECK(s.driver["cuda_runtime_version_built_string"] == "13.0");
  CHECK(s.devices.is_null());
}

TEST_CASE("driver but no device: cudaErrorNoDevice") {
  const json probe{{"driver_version", 13000},
                   {"device_count", 0},
                   {"device_count_error", {{"code", 100}, {"name", "cudaErrorNoDevice"}}}};
  const auto s = summarize_probe(probe);
  CHECK_FALSE(s.ran);
  CHECK(s.status == report::DriverStatus::no_device);
  CHECK(s.driver["cuda_driver_version_string"] == "13.0");
}

TEST_CASE("another error is a cuda_error, not a missing GPU") {
  const json probe{{"device_count", 0}, {"device_count_error", {{"code", 999}, {"name", "cudaErrorUnknown"}}}};
  const auto s = summarize_probe(probe);
  CHECK_FALSE(s.ran);
  CHECK(s.status == report::DriverStatus::cuda_error);
}

TEST_CASE("devices seen: ok, with the devices passed through") {
  const json probe{{"driver_version", 13000},
                   {"device_count", 2},
                   {"devices", json::array({json{{"index", 0}}, json{{"index", 1}}})}};
  const auto s = summarize_probe(probe);
  CHECK(s.ran);
  CHECK(s.status == report::DriverStatus::ok);
  CHECK(s.reason == "2 CUDA devices visible");
  CHECK(s.devices.size() == 2);
}

TEST_CASE("malformed probe answers are probe_failed") {
  CHECK(summarize_probe(json::array()).status == report::DriverStatus::probe_failed);
  CHECK(summarize_probe(json{{"driver_version", 1}}).status == report::DriverStatus::probe_failed);
  CHECK_FALSE(summarize_probe(nullptr).ran);
}

TEST_CASE("health findings from NVML counters") {
  const json healthy = json::array({json{{"index", 0}, {"pci_bus_id", "0000:3b:00.0"},
                                         {"nvml", {{"ecc_errors", {{"volatile", {{"corrected", 3}, {"uncorrected", 0}}}}},
                                                   {"remapped_rows", {{"pending", false}, {"failure", false}}}}}}});
  CHECK(device_health_findings(report::devices_from_json(healthy)).empty());
  const json sick = json::array({json{{"index", 1}, {"pci_bus_id", "0000:86:00.0"},
                                      {"nvml", {{"ecc_errors", {{"volatile", {{"corrected", 0}, {"uncorrected", 2ULL}}}}},
                                                {"remapped_rows", {{"pending", true}, {"failure", true}}}}}},
                                 json{{"pci_bus_id", "0000:af:00.0"}, {"nvml", nullptr}}});
  const auto f = device_health_findings(report::devices_from_json(sick));
  REQUIRE(f.size() == 3);
  CHECK(f[0].find("device 1 (0000:86:00.0): 2 uncorrectable ECC errors") == 0);
  CHECK(f[1].find("row remapping failed") != std::string::npos);
  CHECK(f[2].find("pending") != std::string::npos);
}

TEST_CASE("no-GPU codes are told apart from other errors") {
  using report::DriverStatus;
  CHECK(gpu_unavailable_status(35) == DriverStatus::no_driver);
  CHECK(gpu_unavailable_status(34) == DriverStatus::no_driver);
  CHECK(gpu_unavailable_status(803) == DriverStatus::no_driver);
  CHECK(gpu_unavailable_status(100) == DriverStatus::no_device);
  CHECK(gpu_unavailable_status(46) == DriverStatus::no_device);
  CHECK_FALSE(gpu_unavailable_status(700));
  CHECK_FALSE(gpu_unavailable_status(0));
}

TEST_CASE("the env verdict of a probe is its status, word for word") {
  for (const auto& c : report::kDriverStatuses) {
    INFO(c.name);
    CHECK(report::to_string(verdict_of(c.value)) == c.name);
  }
}
