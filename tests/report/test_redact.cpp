// --redact: identifying values become tokens under a key; nothing else changes. The
// tokens themselves are tested in test_redact_token.cpp; here one fixed key makes them
// predictable.
#include <catch2/catch.hpp>

#include <cctype>
#include <memory>

#include "report/redact.h"
#include "report/render.h"
#include "report/schema.h"
#include "redaction_keys.h"
#include "sample_report.h"
#include "tests/support/unwrap.h"

using namespace cudadiag;
using report::json;
using namespace cudadiag::test;  // the test key: keyed(), tok(), test_tokens()

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

TEST_CASE("identifying values appear nowhere after redaction", "[redact]") {
  auto doc = sample_with_leaks();
  report::redact(doc, keyed());
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
  report::redact(doc, keyed());
  const std::string device_hash = tok("gpu-8d2c3b1a-55e6-4f70-9a1b-2c3d4e5f6a7b");
  CHECK(doc["host"]["hostname"] == tok("gpu-node-17.example.com"));
  CHECK(doc["devices"][0]["uuid"] == device_hash);
  CHECK(doc["devices"][0]["nvml"]["uuid"] == device_hash);  // upper-case NVML form, same hash
  CHECK(doc["devices"][0]["serial"] == tok("1652123456789"));
  CHECK(doc["results"][0]["device"] == device_hash);
  CHECK(doc["comparison"]["by_device"].contains(device_hash));
  // NVML, CUDA and kernel-log forms of one PCI id share a hash.
  const std::string pci_hash = doc["devices"][0]["pci_bus_id"].get<std::string>();
  const std::string text = doc["results"][2]["child"]["stderr"]["text"].get<std::string>();
  CHECK(text == "device " + device_hash + " at PCI " + pci_hash + " faulted\nNVRM: Xid (PCI:" + pci_hash + "): 13\n");
  CHECK(doc["results"][2]["xid"][0]["pci"] == pci_hash);
  CHECK(doc["invocation"]["argv"].back() == "--host=" + tok("gpu-node-17.example.com"));
}

TEST_CASE("identical inputs give identical redacted documents", "[redact]") {
  auto a = sample_with_leaks();
  auto b = sample_with_leaks();
  report::redact(a, keyed());
  report::redact(b, keyed());
  a["invocation"].erase("started_at");
  b["invocation"].erase("started_at");
  a["invocation"].erase("finished_at");
  b["invocation"].erase("finished_at");
  CHECK(a.dump() == b.dump());
}

TEST_CASE("non-identifying fields are untouched", "[redact]") {
  const auto before = sample_with_leaks();
  auto after = before;
  report::redact(after, keyed());
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
  report::redact(doc, keyed());
  CHECK(doc == before);
}

TEST_CASE("redacting twice changes nothing more", "[redact]") {
  auto doc = sample_with_leaks();
  report::redact(doc, keyed());
  const auto once = doc;
  report::redact(doc, keyed());
  CHECK(doc == once);
}

TEST_CASE("a redacted report still validates", "[redact]") {
  auto doc = sample_with_leaks();
  report::redact(doc, keyed());
  const auto errors = report::validate_report(doc);
  INFO(json(errors).dump(1));
  CHECK(errors.empty());
}

// --- what the report cannot name by itself: run's --env values; hostnames anywhere ---

namespace {

report::RedactionInputs env_inputs() {
  report::RedactionInputs in = keyed();
  in.env = {{"HF_TOKEN", "hf_abc123"}, {"CUDA_MODULE_LOADING", "ab1"}};
  return in;
}

// A `run` report as the program left it: the token in argv, the environment section and
// the program's output; the hostname in output, argv, an Xid line and paths.
report::Report run_report_with_secrets() {
  auto r = test::sample_report();
  r.invocation.argv = std::vector<std::string>({"cudadiag", "run", "--redact", "--env", "HF_TOKEN=hf_abc123",
                                      "--env=CUDA_MODULE_LOADING=ab1", "--", "python", "train.py",
                                      "--log=/scratch/gpu-node-17/run.log"});
  r.environment.set("CUDA_MODULE_LOADING", "ab1");
  auto& child = *r.results[2].child;
  child.stdout_excerpt.text = "token hf_abc123 (HF_ABC123) on GPU-NODE-17, tab1e stays\n";
  child.stderr_excerpt.text = "env: HF_TOKEN=hf_abc123 CUDA_MODULE_LOADING=ab1\n"
                              "[rank0]:gpu-node-17.example.com:1234 listening\n";
  r.results[2].xid[0].message = "Gpu-Node-17: Out Of Range Address";
  r.results[2].details.set("log", "/scratch/gpu-node-17_rank0/out.txt");
  return r;
}

bool contains_ci(std::string hay, std::string needle) {
  for (auto* s : {&hay, &needle})
    for (auto& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return hay.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("run's --env values leave no trace in argv, the environment or the program's output", "[redact]") {
  auto r = run_report_with_secrets();
  report::redact(r, env_inputs());
  const std::string dump = report::to_json(r).dump();
  CHECK_FALSE(contains_ci(dump, "hf_abc123"));
  CHECK_FALSE(contains_ci(dump, "LOADING=ab1"));  // a short value goes as NAME=VALUE
  const auto& argv = r.invocation.argv;
  CHECK(argv[4] == "HF_TOKEN=" + tok("hf_abc123"));
  CHECK(argv[5] == "--env=CUDA_MODULE_LOADING=" + tok("ab1"));
  CHECK(*r.environment.find("CUDA_MODULE_LOADING") == tok("ab1"));
  // A short value is not scrubbed inside ordinary words.
  CHECK(r.results[2].child->stdout_excerpt.text.find("tab1e stays") != std::string::npos);
}

TEST_CASE("the long and the short hostname go in any letter case, wherever they appear", "[redact]") {
  auto r = run_report_with_secrets();
  report::redact(r, env_inputs());
  const std::string dump = report::to_json(r).dump();
  CHECK_FALSE(contains_ci(dump, "gpu-node-17"));
  const std::string short_hash = tok("gpu-node-17");
  CHECK(r.results[2].xid[0].message == short_hash + ": Out Of Range Address");
  CHECK(r.invocation.argv.back() == "--log=/scratch/" + short_hash + "/run.log");
  CHECK(r.results[2].details.string_or("log", "") == "/scratch/" + short_hash + "_rank0/out.txt");
  CHECK(r.results[2].child->stderr_excerpt.text.find(
            "[rank0]:" + tok("gpu-node-17.example.com") + ":1234") != std::string::npos);
  CHECK(r.host.hostname == tok("gpu-node-17.example.com"));
}

TEST_CASE("a short hostname goes as a whole word, ordinary words that hold it stay", "[redact]") {
  auto r = test::sample_report();
  r.host.hostname = "vm";
  r.results[2].child->stderr_excerpt.text = "on vm: VM-3 /tmp/vm/x kvm vmware vm2 Vm\n";
  r.results[2].xid[0].message = "vm";
  r.extra.set("gpu_notes", report::Fields{{"gpu", "vm"}});
  report::redact(r, keyed());
  const std::string h = tok("vm");
  CHECK(r.results[2].child->stderr_excerpt.text ==
        "on " + h + ": " + h + "-3 /tmp/" + h + "/x kvm vmware vm2 " + h + "\n");
  CHECK(r.results[2].xid[0].message == h);
  CHECK(r.extra.fields_of("gpu_notes")->string_or("gpu", "") == h);
}

TEST_CASE("a hostname that is an ordinary word leaves the report's field names alone", "[redact]") {
  auto r = test::sample_report();
  r.host.hostname = "gpu.cluster.example";
  r.results[2].child->stderr_excerpt.text = "running on gpu.cluster.example (gpu)\n";
  report::redact(r, keyed());
  // The "gpu" section is still there and read back; the word went from the text.
  CHECK(r.gpu.ran);
  CHECK(r.results[2].child->stderr_excerpt.text == "running on " + tok("gpu.cluster.example") +
                                                       " (" + tok("gpu") + ")\n");
  CHECK(report::validate_report(report::to_json(r)).empty());
  // Hosts called like an outcome or an allocator: the report still reads back.
  for (const std::string host : {"cuda", "pool.example.org", "ok"}) {
    auto named = test::sample_report();
    named.host.hostname = host;
    REQUIRE_NOTHROW(report::redact(named, keyed()));
    INFO(host);
    CHECK(named.results[2].outcome == report::Outcome::cuda_error);
    CHECK(named.results[0].outcome == report::Outcome::ok);
    CHECK(named.results[0].allocator == profiles::Allocator::pool);
    CHECK(named.results[2].repeats->histogram.count("cuda_error") == 1);
  }
}

TEST_CASE("the report says what was redacted, in JSON, text and Markdown", "[redact]") {
  auto r = run_report_with_secrets();
  CHECK_FALSE(r.redaction);
  CHECK_FALSE(report::to_json(r).contains("redaction"));
  report::redact(r, env_inputs());
  REQUIRE(r.redaction);
  CHECK(r.redaction->applied);
  CHECK(r.redaction->covers == std::vector<std::string>{"hostname", "short hostname", "GPU UUIDs", "serials",
                                                        "PCI ids", "--env values (2)"});
  const auto j = report::to_json(r);
  CHECK(j["redaction"] == json{{"applied", true},
                               {"covers", {"hostname", "short hostname", "GPU UUIDs", "serials", "PCI ids",
                                           "--env values (2)"}},
                               {"mode", "keyed"},
                               {"key_id", test_tokens()->key_id()}});
  const auto errors = report::validate_report(j);
  INFO(json(errors).dump(1));
  CHECK(errors.empty());
  // Read back typed, not as an extra section.
  const auto back = report::report_from_json(j);
  REQUIRE(back.redaction);
  CHECK(back.redaction->covers == r.redaction->covers);
  CHECK(back.redaction->mode == report::RedactionMode::keyed);
  CHECK(back.redaction->key_id == test_tokens()->key_id());
  CHECK_FALSE(back.extra.contains("redaction"));
  const std::string covers = "hostname, short hostname, GPU UUIDs, serials, PCI ids, --env values (2)";
  CHECK(test::unwrapped(report::render(r, report::Format::text)).find("redacted  " + covers) != std::string::npos);
  CHECK(report::render(r, report::Format::md).find("- **Redacted:** " + covers) != std::string::npos);
  // Without --env values the list says nothing of them.
  auto plain = test::sample_report();
  report::redact(plain, keyed());
  REQUIRE(plain.redaction);
  CHECK(plain.redaction->covers.back() == "PCI ids");
}

TEST_CASE("the schema refuses a malformed redaction section", "[redact]") {
  auto j = report::to_json(test::sample_report());
  j["redaction"] = json{{"applied", false}, {"covers", json::array()}};
  CHECK_FALSE(report::validate_report(j).empty());
  j["redaction"] = json{{"applied", true}, {"covers", "hostname"}};
  CHECK_FALSE(report::validate_report(j).empty());
  j["redaction"] = json{{"applied", true}, {"covers", {"hostname"}}};
  CHECK(report::validate_report(j).empty());
  j["redaction"] = json{{"applied", true}, {"covers", {"hostname"}}, {"mode", "hashed"}};
  CHECK_FALSE(report::validate_report(j).empty());
  j["redaction"] = json{{"applied", true}, {"covers", {"hostname"}}, {"mode", "keyed"}, {"key_id", "not hex"}};
  CHECK_FALSE(report::validate_report(j).empty());
  j["redaction"] = json{{"applied", true}, {"covers", {"hostname"}}, {"mode", "keyed"}, {"key_id", "0123456789abcdef"}};
  CHECK(report::validate_report(j).empty());
}
