// The report's machine sections and the words of the fault site and coverage as types:
// read at the JSON edge, written back as they were read, redacted member by member.
#include <catch2/catch.hpp>

#include <memory>

#include "report/json_reader.h"
#include "report/redact.h"
#include "report/report.h"
#include "redaction_keys.h"
#include "sample_report.h"
#include "util/errors.h"

using namespace cudadiag;
using report::json;
using namespace cudadiag::test;  // the test key: keyed(), tok(), test_tokens()

namespace {

json env_device() {
  return json{{"index", 0},
              {"name", "NVIDIA H100 80GB HBM3"},
              {"uuid", "GPU-8d2c3b1a-55e6-4f70-9a1b-2c3d4e5f6a7b"},
              {"pci_bus_id", "0000:3b:00.0"},
              {"serial", "1652123456789"},
              {"visible_to_cuda", true},
              {"cuda", {{"compute_capability", "9.0"}, {"pci_bus_id", "0000:3b:00.0"}}},
              {"nvml", {{"uuid", "GPU-8d2c3b1a-55e6-4f70-9a1b-2c3d4e5f6a7b"}, {"ecc_errors", {{"volatile", 0}}}}}};
}

}  // namespace

TEST_CASE("machine sections: typed members out, the rest kept as facts, written back as read", "[report][host]") {
  const json host{{"hostname", "node-a"}, {"os", "Ubuntu 24.04"}, {"kernel", {{"release", "6.8.0"}}}, {"memory_bytes", nullptr}};
  const auto h = report::host_info_from_json(host);
  CHECK(h.hostname == "node-a");
  CHECK(h.facts.contains("kernel"));
  CHECK_FALSE(h.facts.contains("hostname"));
  CHECK(report::to_json(h).dump() == host.dump());

  const auto devices = report::devices_from_json(json::array({env_device(), json{{"name", "NVML only"}, {"cuda", nullptr}}}));
  REQUIRE(devices.size() == 2);
  CHECK(devices[0].index == 0);
  CHECK(devices[0].serial == "1652123456789");
  CHECK(devices[0].visible_to_cuda == true);
  REQUIRE(devices[0].cuda);
  REQUIRE(*devices[0].cuda);
  CHECK((*devices[0].cuda)->string_or("compute_capability", "") == "9.0");
  // null (CUDA does not see it) and absent (nobody asked) stay apart.
  REQUIRE(devices[1].cuda);
  CHECK_FALSE(*devices[1].cuda);
  CHECK_FALSE(devices[1].nvml);
  CHECK(report::to_json(devices).dump() == json::array({env_device(), json{{"name", "NVML only"}, {"cuda", nullptr}}}).dump());

  const json driver{{"version", "580.65.06"}, {"cuda_driver_version", nullptr},
                    {"nvml", {{"available", false}, {"library", "libnvidia-ml.so.1"}, {"reason", "not loaded"}}}};
  const auto d = report::driver_info_from_json(driver);
  CHECK(d.version == "580.65.06");
  REQUIRE(d.nvml);
  CHECK_FALSE(d.nvml->available);
  CHECK(d.nvml->reason == "not loaded");
  CHECK(report::to_json(d).dump() == driver.dump());
}

TEST_CASE("machine sections: a wrong type of a typed member names its place", "[report][host]") {
  auto doc = report::to_json(test::sample_report());
  doc["devices"][0]["index"] = "zero";
  CHECK_THROWS_WITH(report::report_from_json(doc, "r.json"), Catch::Contains("/devices/0/index"));
  doc = report::to_json(test::sample_report());
  doc["environment"]["CUDA_LAUNCH_BLOCKING"] = 1;
  CHECK_THROWS_WITH(report::report_from_json(doc, "r.json"), Catch::Contains("/environment/CUDA_LAUNCH_BLOCKING"));
}

TEST_CASE("environment: set replaces or inserts in name order", "[report][host]") {
  report::Environment e;
  e.vars = {{"CUDA_A", "1"}, {"CUDA_C", "3"}};
  e.set("CUDA_B", "2");
  e.set("CUDA_C", "4");
  REQUIRE(e.vars.size() == 3);
  CHECK(e.vars[1] == report::EnvVar{"CUDA_B", "2"});
  CHECK(*e.find("CUDA_C") == "4");
  CHECK(e.find("CUDA_D") == nullptr);
}

TEST_CASE("redaction of the machine sections: identifying members and the same values in NVML's view", "[report][host][redact]") {
  auto r = test::sample_report();
  r.devices = report::devices_from_json(json::array({env_device()}));
  report::redact(r, keyed());
  const auto& d = r.devices[0];
  CHECK(d.serial == tok("1652123456789"));
  CHECK(d.uuid == tok("gpu-8d2c3b1a-55e6-4f70-9a1b-2c3d4e5f6a7b"));
  CHECK(d.name == "NVIDIA H100 80GB HBM3");
  CHECK((*d.nvml)->string_or("uuid", "") == *d.uuid);
  CHECK((*d.cuda)->string_or("pci_bus_id", "") == *d.pci_bus_id);
  CHECK(r.host.hostname == tok("gpu-node-17.example.com"));
  CHECK(report::to_json(r).dump().find("1652123456789") == std::string::npos);
}

TEST_CASE("fault site and coverage words are enums: unknown words are refused by name", "[report][fault_site]") {
  auto doc = report::to_json(test::sample_report());
  doc["verdict"]["coverage"] = json{{"directions", {"past_end", "sideways"}}, {"seen", json::array()}, {"unseen", json::array()}};
  CHECK_THROWS_WITH(report::report_from_json(doc, "r.json"), Catch::Contains("/verdict/coverage/directions/1"));
  doc["verdict"]["coverage"]["directions"] = {"before_start", "past_end"};
  const auto r = report::report_from_json(doc, "r.json");
  REQUIRE(r.verdict.coverage);
  CHECK(r.verdict.coverage->directions ==
        std::vector<report::GuardedEnd>{report::GuardedEnd::before_start, report::GuardedEnd::past_end});
  CHECK(report::to_json(r)["verdict"]["coverage"]["directions"] == json::array({"before_start", "past_end"}));

  for (const auto& [member, word] : {std::pair{"status", "maybe"}, std::pair{"kind", "peek"}}) {
    json site{{"dump", "d"}, {"dump_bytes", 1}, {"read_ms", 1.0}, {"kept", false},
              {"exception", {{"id", "warp_illegal_address"}, {"name", "Warp Illegal Address"}}},
              {"access", {{"status", "proven"}, {"kind", "read"}}}};
    site["access"][member] = word;
    auto with_site = report::to_json(test::sample_report());
    with_site["results"][0]["fault_sites"] = json::array({site});
    INFO(member);
    CHECK_THROWS_WITH(report::report_from_json(with_site, "r.json"),
                      Catch::Contains(std::string("/results/0/fault_sites/0/access/") + member));
  }
  json site{{"dump", "d"}, {"dump_bytes", 1}, {"read_ms", 1.0}, {"kept", false},
            {"exception", {{"id", "warp_illegal_address"}, {"name", "Warp Illegal Address"}}}};
  auto with_site = report::to_json(test::sample_report());
  with_site["results"][0]["fault_sites"] = json::array({site});
  const auto back = report::report_from_json(with_site, "r.json");
  REQUIRE(back.results[0].fault_sites.size() == 1);
  CHECK(back.results[0].fault_sites[0].exception_id == report::ExceptionKind::warp_illegal_address);
  with_site["results"][0]["fault_sites"][0]["exception"]["id"] = "warp_sneeze";
  CHECK_THROWS_WITH(report::report_from_json(with_site, "r.json"),
                    Catch::Contains("/results/0/fault_sites/0/exception/id"));
}

TEST_CASE("the driver section's statuses and binding are typed and written back as read", "[report][host]") {
  const json driver{{"version", "580.65.06"},
                    {"nvml_cuda_driver_version", 13000},
                    {"nvml", {{"available", false}, {"reason", "libnvidia-ml.so.1 not found: device health (temperature, ECC, Xid) not read"},
                              {"detail", "libnvidia-ml.so.1: cannot open shared object file"}}},
                    {"libcuda", {{"available", true}, {"library", "libcuda.so.1"}, {"status", "ok"}, {"reason", ""},
                                 {"detail", ""}, {"version", 13000}}},
                    {"device_binding", {{"source", "CUDA_VISIBLE_DEVICES"}, {"value", "GPU-8d2c3b1a-55e6-4f70-9a1b-2c3d4e5f6a7b"}}}};
  const auto d = report::driver_info_from_json(driver);
  REQUIRE(d.nvml);
  CHECK(d.nvml->detail == "libnvidia-ml.so.1: cannot open shared object file");
  REQUIRE(d.libcuda);
  CHECK(d.libcuda->status == report::DriverStatus::ok);
  CHECK(d.libcuda->version == 13000);
  REQUIRE(d.device_binding);
  REQUIRE(*d.device_binding);
  CHECK((*d.device_binding)->source == "CUDA_VISIBLE_DEVICES");
  CHECK(d.facts.size() == 1);
  CHECK(report::to_json(d) == driver);

  // A status word cudadiag does not write, or another shape, stays a fact where it was.
  json odd = driver;
  odd["libcuda"]["status"] = "sideways";
  odd["device_binding"] = "CUDA_VISIBLE_DEVICES=0";
  const auto o = report::driver_info_from_json(odd);
  CHECK_FALSE(o.libcuda);
  CHECK_FALSE(o.device_binding);
  const json back = report::to_json(o);
  CHECK(back["libcuda"] == odd["libcuda"]);
  CHECK(back["device_binding"] == odd["device_binding"]);

  // Redacted: a UUID the binding names goes like every other.
  auto r = test::sample_report();
  r.driver = d;
  report::redact(r, keyed());
  CHECK((*r.driver.device_binding)->value == tok("gpu-8d2c3b1a-55e6-4f70-9a1b-2c3d4e5f6a7b"));
}
