// --redact: identifying values become stable hashes; nothing else changes.
#include <catch2/catch.hpp>

#include "report/redact.h"
#include "report/schema.h"
#include "sample_report.h"

using namespace cudadiag;
using report::json;

namespace {

const std::string kUuid = "GPU-8d2c3b1a-55e6-4f70-9a1b-2c3d4e5f6a7b";

json sample_with_leaks() {
  auto doc = report::to_json(test::sample_report());
  // Identifying values where no field name says so.
  doc["invocation"]["argv"].push_back("--host=gpu-node-17.example.com");
  doc["results"][2]["child"]["stderr"]["text"] =
      "device " + kUuid + " at PCI 0000:3b:00.0 faulted\nNVRM: Xid (PCI:0000:3b:00): 13\n";
  doc["devices"][0]["nvml"] = json{{"uuid", "GPU-8D2C3B1A-55E6-4F70-9A1B-2C3D4E5F6A7B"}, {"serial", "1652123456789"}};
  doc["comparison"] = json{{"by_device", json{{kUuid, "same"}}}};
  return doc;
}

}  // namespace

TEST_CASE("redact_value is stable and distinguishes values", "[redact]") {
  CHECK(report::redact_value("gpu-node-17") == report::redact_value("gpu-node-17"));
  CHECK(report::redact_value("gpu-node-17") != report::redact_value("gpu-node-18"));
  CHECK(report::redact_value("x").rfind("redacted:", 0) == 0);
  CHECK(report::redact_value("x").size() == std::string("redacted:").size() + 8);
}

TEST_CASE("identifying values appear nowhere after redaction", "[redact]") {
  auto doc = sample_with_leaks();
  report::redact(doc);
  const std::string dump = doc.dump();
  CHECK(dump.find("8d2c3b1a") == std::string::npos);
  CHECK(dump.find("8D2C3B1A") == std::string::npos);
  CHECK(dump.find("gpu-node-17") == std::string::npos);
  CHECK(dump.find("1652123456789") == std::string::npos);
  CHECK(dump.find("3b:00") == std::string::npos);
  CHECK(dump.find("3B:00") == std::string::npos);
}

TEST_CASE("named fields become hashes that still pair up", "[redact]") {
  auto doc = sample_with_leaks();
  report::redact(doc);
  const std::string device_hash = report::redact_value("gpu-8d2c3b1a-55e6-4f70-9a1b-2c3d4e5f6a7b");
  CHECK(doc["host"]["hostname"] == report::redact_value("gpu-node-17.example.com"));
  CHECK(doc["devices"][0]["uuid"] == device_hash);
  CHECK(doc["devices"][0]["nvml"]["uuid"] == device_hash);  // upper-case NVML form, same hash
  CHECK(doc["devices"][0]["serial"] == report::redact_value("1652123456789"));
  CHECK(doc["results"][0]["device"] == device_hash);
  CHECK(doc["comparison"]["by_device"].contains(device_hash));
  // NVML, CUDA and kernel-log forms of one PCI id share a hash.
  const std::string pci_hash = doc["devices"][0]["pci_bus_id"].get<std::string>();
  const std::string text = doc["results"][2]["child"]["stderr"]["text"].get<std::string>();
  CHECK(text == "device " + device_hash + " at PCI " + pci_hash + " faulted\nNVRM: Xid (PCI:" + pci_hash + "): 13\n");
  CHECK(doc["results"][2]["xid"][0]["pci"] == pci_hash);
  CHECK(doc["invocation"]["argv"].back() == "--host=" + report::redact_value("gpu-node-17.example.com"));
}

TEST_CASE("identical inputs give identical redacted documents", "[redact]") {
  auto a = sample_with_leaks();
  auto b = sample_with_leaks();
  report::redact(a);
  report::redact(b);
  a["invocation"].erase("started_at");
  b["invocation"].erase("started_at");
  a["invocation"].erase("finished_at");
  b["invocation"].erase("finished_at");
  CHECK(a.dump() == b.dump());
}

TEST_CASE("non-identifying fields are untouched", "[redact]") {
  const auto before = sample_with_leaks();
  auto after = before;
  report::redact(after);
  CHECK(after["tool"] == before["tool"]);
  CHECK(after["environment"] == before["environment"]);
  CHECK(after["summary"] == before["summary"]);
  CHECK(after["verdict"] == before["verdict"]);
  CHECK(after["driver"] == before["driver"]);
  CHECK(after["host"]["os"] == before["host"]["os"]);
  CHECK(after["devices"][0]["name"] == before["devices"][0]["name"]);
  CHECK(after["invocation"]["started_at"] == before["invocation"]["started_at"]);
  CHECK(after["results"][7]["device"] == "host");
  for (size_t i = 0; i < before["results"].size(); ++i) {
    auto a = after["results"][i];
    auto b = before["results"][i];
    a.erase("device");
    b.erase("device");
    if (i == 2) {
      a["child"]["stderr"].erase("text");
      b["child"]["stderr"].erase("text");
      a["xid"][0].erase("pci");
      b["xid"][0].erase("pci");
    }
    INFO("result " << i);
    CHECK(a == b);
  }
}

TEST_CASE("things that only resemble identifiers are kept", "[redact]") {
  json doc{{"host", {{"hostname", nullptr}}},
           {"times", {"2026-01-31T12:34:56.789Z", "12:34:56", "0x7f0000000000-0x7f0000001000"}}};
  const auto before = doc;
  report::redact(doc);
  CHECK(doc == before);
}

TEST_CASE("redacting twice changes nothing more", "[redact]") {
  auto doc = sample_with_leaks();
  report::redact(doc);
  const auto once = doc;
  report::redact(doc);
  CHECK(doc == once);
}

TEST_CASE("a redacted report still validates", "[redact]") {
  auto doc = sample_with_leaks();
  report::redact(doc);
  const auto errors = report::validate_report(doc);
  INFO(json(errors).dump(1));
  CHECK(errors.empty());
}
