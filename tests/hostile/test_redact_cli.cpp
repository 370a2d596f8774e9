// `cudadiag run --redact` through the real binary: the values given with --env and the
// host's names (long, short, any letter case) appear nowhere in the report, whether in
// argv, the environment section or the program's own output, and the report says what
// was redacted.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "run_binary.h"
#include "tests/support/unwrap.h"
#include "tests/support/temp_dir.h"

using cudadiag::test::run_binary;
using cudadiag::test::slurp;
using cudadiag::test::TempDir;

namespace {

std::string this_hostname() {
  char name[256] = {};
  REQUIRE(::gethostname(name, sizeof name - 1) == 0);
  return name;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// `word` in `text` in any letter case, not glued to a letter or digit.
bool has_word(const std::string& text, const std::string& word) {
  std::string escaped;
  for (const char c : word) {
    if (!std::isalnum(static_cast<unsigned char>(c))) escaped += '\\';
    escaped += c;
  }
  const std::regex re("(^|[^A-Za-z0-9])" + escaped + "([^A-Za-z0-9]|$)", std::regex::icase);
  return std::regex_search(text, re);
}

}  // namespace

TEST_CASE("run --redact: --env values and the hostnames leave no trace", "[hostile][redact]") {
  TempDir dir;
  const std::string host = this_hostname();
  const std::string short_host = host.substr(0, host.find('.'));
  // The program prints the token and the host's names (as `hostname -s` would, and in
  // upper case) on stdout and stderr, then fails so that its output is kept.
  const std::string script = "echo \"token $HF_TOKEN on " + host + " aka " + short_host + "; " + upper(short_host) +
                             ": loading=$CUDA_MODULE_LOADING\"; echo \"/scratch/" + short_host +
                             "/log HF_TOKEN=$HF_TOKEN\" >&2; exit 1";
  for (const std::string format : {"json", "text", "md"}) {
    const auto out = dir.path / ("report." + format);
    const auto r = run_binary({"run", "--redact", "--format", format, "--rungs", "native", "--env",
                               "HF_TOKEN=hf_abc123XYZ", "--env=CUDA_MODULE_LOADING=ab1", "-o", out.string(), "--", "sh",
                               "-c", script},
                              dir.path);
    const std::string report = slurp(out);
    INFO(format << ": exit " << r.code << "\n" << r.err << "\n" << report);
    CHECK(r.code == 1);  // the program's own failure: inconclusive
    CHECK(report.find("hf_abc123XYZ") == std::string::npos);
    CHECK(upper(report).find("HF_ABC123XYZ") == std::string::npos);
    CHECK(report.find("LOADING=ab1") == std::string::npos);
    CHECK_FALSE(has_word(report, host));
    CHECK_FALSE(has_word(report, short_host));
    CHECK(report.find("redacted:") != std::string::npos);
    if (format == "json") {
      const auto j = nlohmann::json::parse(report);
      CHECK(j["redaction"]["applied"] == true);
      CHECK(j["redaction"]["covers"].back() == "--env values (2)");
      // The program's output is there, scrubbed.
      const std::string dump = j.dump();
      CHECK(dump.find("token redacted:") != std::string::npos);
    } else {
      CHECK(cudadiag::test::unwrapped(report).find(
                "hostname, short hostname, GPU UUIDs, serials, PCI ids, --env values (2)") != std::string::npos);
    }
  }
}
