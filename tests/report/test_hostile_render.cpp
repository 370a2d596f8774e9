// Outside text in a report: control characters never reach a terminal raw from the
// text or Markdown renderers (JSON escapes them itself), and invalid UTF-8 never costs
// the report (U+FFFD in JSON).
#include <catch2/catch.hpp>

#include <string>

#include "report/render.h"
#include "sample_report.h"

using namespace cudadiag;
using report::Format;
using report::json;

namespace {

bool has_raw_control(const std::string& s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n') || u == 0x7f) return true;
  }
  return s.find("\xc2\x9b") != std::string::npos;
}

report::Report hostile_report() {
  auto r = test::sample_report();
  const std::string evil = std::string("evil\x1b[2J\x1b]0;pwned\x07") + '\0' + "\xc2\x9b" "31m\x7f";
  r.host.hostname = evil;
  r.results[0].case_id = "case" + evil;
  r.results[1].reason = "why" + evil;
  r.results[1].expectation_met = false;
  r.verdict.reasons.push_back("reason" + evil);
  r.extra.set("section" + evil, report::Fields{{"key" + evil, "value" + evil}});
  r.invocation.command = "repro" + evil;
  return r;
}

}  // namespace

TEST_CASE("hostile render: text and Markdown show control characters escaped", "[render][hostile]") {
  const auto r = hostile_report();
  for (const auto format : {Format::text, Format::md}) {
    for (const bool color : {false, true}) {
      if (format == Format::md && color) continue;
      const auto out = report::render(r, format, color);
      INFO("format " << static_cast<int>(format) << " color " << color);
      if (!color) CHECK_FALSE(has_raw_control(out));
      CHECK(out.find("evil\\x1b[2J\\x1b]0;pwned\\x07\\x00\\u009b31m\\x7f") != std::string::npos);
    }
  }
  // With colour on, the only ESC bytes are cudadiag's own SGR sequences.
  const auto colored = report::render(r, Format::text, true);
  CHECK(colored.find("\x1b[2J") == std::string::npos);
  CHECK(colored.find("\x1b]0") == std::string::npos);
}

TEST_CASE("hostile render: text and Markdown show bidi controls escaped", "[render][hostile]") {
  // U+202E (right-to-left override) from the program's output, a kernel name and a case
  // name: shown as \u202e, never as the raw character that reorders the line.
  const std::string rlo = "\xe2\x80\xae";
  auto r = test::sample_report();
  auto& fault = r.results[2];
  fault.case_id = "fault." + rlo + "daer";
  fault.child->stderr_excerpt.text = "done " + rlo + "txt.exe\n";
  fault.launch_log[0].kernel = "kern" + rlo + "lenr";
  fault.error->last_kernel = "kern" + rlo + "lenr";
  r.verdict.reasons.push_back("reason " + rlo + "\xe2\x81\xa6isolate\xe2\x81\xa9 \xe2\x80\x8f\xd8\x9c");
  for (const auto format : {Format::text, Format::md}) {
    const auto out = report::render(r, format, false);
    INFO("format " << static_cast<int>(format) << "\n" << out);
    for (const char* raw : {"\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x81\xa9", "\xe2\x80\x8f", "\xd8\x9c"})
      CHECK(out.find(raw) == std::string::npos);
    CHECK(out.find("done \\u202etxt.exe") != std::string::npos);
    CHECK(out.find("kern\\u202elenr") != std::string::npos);
    CHECK(out.find("fault.\\u202edaer") != std::string::npos);
    CHECK(out.find("reason \\u202e\\u2066isolate\\u2069 \\u200f\\u061c") != std::string::npos);
  }
}

TEST_CASE("hostile render: JSON keeps the text, escaped by JSON itself", "[render][hostile]") {
  const auto out = report::render(hostile_report(), Format::json);
  // JSON escapes every C0 control; DEL and C1 are valid JSON text and stay as they are.
  for (const char c : out) CHECK_FALSE((static_cast<unsigned char>(c) < 0x20 && c != '\n'));
  CHECK(json::parse(out)["host"]["hostname"].get<std::string>().find("\x1b[2J") != std::string::npos);
  CHECK(out.find("\\u001b[2J") != std::string::npos);
}

TEST_CASE("hostile render: invalid UTF-8 becomes U+FFFD instead of losing the report", "[render][hostile]") {
  auto r = test::sample_report();
  r.environment.set("CUDA_X", "a\xff");
  r.invocation.argv = {"cudadiag", "-o", "caf\xe9.json"};
  report::XidLine x;
  x.process = "py\xc3\x28thon";
  r.results[0].xid = {x};
  r.results[0].sanitizer = report::SanitizerFindings{"memcheck", std::nullopt, "\xed\xa0\x80 surrogate"};
  std::string out;
  REQUIRE_NOTHROW(out = report::render(r, Format::json));
  const auto back = json::parse(out);
  CHECK(back["environment"]["CUDA_X"] == "a\xef\xbf\xbd");
  CHECK(back["invocation"]["argv"][2] == "caf\xef\xbf\xbd.json");
  // The text renderers show it escaped.
  for (const auto format : {Format::text, Format::md}) {
    std::string text;
    REQUIRE_NOTHROW(text = report::render(r, format));
  }
  CHECK(report::dump_json(json("\xff")) == "\"\xef\xbf\xbd\"");
}
