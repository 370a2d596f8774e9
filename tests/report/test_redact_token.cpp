// Redaction tokens: HMAC-SHA-256 under the site's key, or under a random key per report;
// the key from --redact-key FILE, CUDADIAG_REDACT_KEY_FILE or CUDADIAG_REDACT_KEY.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include "report/redact.h"
#include "report/redact_token.h"
#include "sample_report.h"
#include "util/errors.h"

using namespace cudadiag;
using report::RedactionTokens;

namespace {

const std::string kKey = "0123456789abcdef-site-key";

// The unkeyed 32-bit FNV-1a hash earlier versions wrote ("redacted:c69194c6" for "vm").
std::string fnv_token(const std::string& value) {
  unsigned long long h = 1469598103934665603ULL;
  for (const unsigned char c : value) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "redacted:%08llx", h & 0xffffffffULL);
  return buf;
}

using Env = std::map<std::string, std::string>;
std::function<const char*(const char*)> lookup(const Env& env) {
  return [&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
}

// A key file in a fresh directory, with this content and mode.
std::string key_file(const std::string& content, mode_t mode) {
  char dir[] = "/tmp/cudadiag-key-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/key";
  std::ofstream(path, std::ios::binary) << content;
  REQUIRE(::chmod(path.c_str(), mode) == 0);
  return path;
}

}  // namespace

TEST_CASE("tokens: the same key gives the same token, another key another", "[redact_token]") {
  const auto a = RedactionTokens::keyed(kKey);
  const auto b = RedactionTokens::keyed(kKey);
  const auto c = RedactionTokens::keyed(kKey + "!");
  CHECK(a.token("gpu-node-17") == b.token("gpu-node-17"));
  CHECK(a.token("gpu-node-17") != a.token("gpu-node-18"));
  CHECK(a.token("gpu-node-17") != c.token("gpu-node-17"));
  CHECK(std::regex_match(a.token("x"), std::regex("redacted:[0-9a-f]{16}")));
  CHECK(a.is_keyed());
  CHECK(a.mode() == report::RedactionMode::keyed);
  CHECK(a.key_id() == b.key_id());
  CHECK(a.key_id() != c.key_id());
  CHECK(std::regex_match(a.key_id(), std::regex("[0-9a-f]{16}")));
  // HMAC-SHA-256(key, value), first 64 bits (checked with Python's hmac module).
  CHECK(RedactionTokens::keyed("Jefe").token("what do ya want for nothing?") == "redacted:5bdcc146bf60754e");
}

TEST_CASE("tokens: the token of a hostname is not the unkeyed hash a dictionary reverses", "[redact_token]") {
  CHECK(fnv_token("vm") == "redacted:c69194c6");  // what earlier reports held for this host
  for (const auto& t : {RedactionTokens::keyed(kKey), RedactionTokens::per_report()}) {
    CHECK(t.token("vm") != fnv_token("vm"));
    CHECK(t.token("vm").rfind(fnv_token("vm"), 0) != 0);
  }
}

TEST_CASE("tokens: without a key, each report has its own; one report keeps one token per host", "[redact_token]") {
  const auto one = RedactionTokens::per_report();
  const auto two = RedactionTokens::per_report();
  CHECK(one.token("vm") == one.token("vm"));
  CHECK(one.token("vm") != two.token("vm"));
  CHECK(one.mode() == report::RedactionMode::per_report);
  CHECK(one.key_id().empty());

  // Two redactions without a key: the host differs between the reports, and within one
  // report its every mention has one token.
  auto a = test::sample_report();
  auto b = test::sample_report();
  for (auto* r : {&a, &b}) {
    r->host.hostname = "gpu-node-17";
    r->invocation.argv.push_back("--log=/scratch/gpu-node-17/x");
    report::redact(*r);
  }
  const std::string ta = *a.host.hostname;
  CHECK(ta != *b.host.hostname);
  CHECK(a.invocation.argv.back() == "--log=/scratch/" + ta + "/x");
  REQUIRE(a.redaction);
  CHECK(a.redaction->mode == report::RedactionMode::per_report);
  CHECK(a.redaction->key_id.empty());
}

TEST_CASE("key: --redact-key, then CUDADIAG_REDACT_KEY_FILE, then CUDADIAG_REDACT_KEY, else per report",
          "[redact_token]") {
  const std::string flag_file = key_file(kKey + "\n", 0600);  // the newline of `echo` is not key
  const std::string env_file = key_file("another key, 24 bytes ok", 0640);
  const Env env{{"CUDADIAG_REDACT_KEY_FILE", env_file}, {"CUDADIAG_REDACT_KEY", "a key in the environment"}};
  CHECK(report::redaction_tokens(flag_file, lookup(env))->key_id() == RedactionTokens::keyed(kKey).key_id());
  CHECK(report::redaction_tokens("", lookup(env))->key_id() ==
        RedactionTokens::keyed("another key, 24 bytes ok").key_id());
  const Env only_key{{"CUDADIAG_REDACT_KEY", "a key in the environment"}};
  CHECK(report::redaction_tokens("", lookup(only_key))->key_id() ==
        RedactionTokens::keyed("a key in the environment").key_id());
  CHECK_FALSE(report::redaction_tokens("", lookup({}))->is_keyed());
}

TEST_CASE("key: a missing, empty, short, shared or non-regular key is a usage error naming it", "[redact_token]") {
  const Env none;
  CHECK_THROWS_WITH(report::redaction_tokens("/no/such/key", lookup(none)),
                    Catch::Contains("--redact-key '/no/such/key': cannot read the redaction key"));
  CHECK_THROWS_WITH(report::redaction_tokens(key_file("", 0600), lookup(none)), Catch::Contains("is empty"));
  CHECK_THROWS_WITH(report::redaction_tokens(key_file("\n", 0600), lookup(none)), Catch::Contains("is empty"));
  CHECK_THROWS_WITH(report::redaction_tokens(key_file("short", 0600), lookup(none)),
                    Catch::Contains("has 5 bytes, fewer than 16"));
  CHECK_THROWS_WITH(report::redaction_tokens(key_file(kKey, 0644), lookup(none)),
                    Catch::Contains("readable by every user"));
  CHECK_THROWS_WITH(report::redaction_tokens("/tmp", lookup(none)), Catch::Contains("must be a regular file"));
  CHECK_THROWS_AS(report::redaction_tokens("", lookup({{"CUDADIAG_REDACT_KEY", ""}})), UsageError);
  CHECK_THROWS_WITH(report::redaction_tokens("", lookup({{"CUDADIAG_REDACT_KEY_FILE", "/no/such/key"}})),
                    Catch::Contains("CUDADIAG_REDACT_KEY_FILE '/no/such/key'"));
}
