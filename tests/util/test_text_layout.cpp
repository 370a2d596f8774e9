#include <catch2/catch.hpp>

#include "util/text_layout.h"

using namespace cudadiag::text;

namespace {
std::size_t widest(const std::string& text) {
  std::size_t w = 0, start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    w = std::max(w, display_width(text.substr(start, nl - start)));
    start = nl + 1;
  }
  return w;
}
}  // namespace

TEST_CASE("display_width counts columns, not bytes", "[text_layout]") {
  CHECK(display_width("abc") == 3);
  CHECK(display_width("✓ ok") == 4);                 // U+2713: one column, three bytes
  CHECK(display_width("日本") == 4);                  // wide
  CHECK(display_width("e\xCC\x81") == 1);             // e + combining acute
  CHECK(display_width("\033[31mred\033[0m") == 3);    // colour sequences take no room
  CHECK(display_width("\xff\xfe") == 2);              // invalid bytes: one column each
}

TEST_CASE("wrap breaks at spaces only: a word wider than the line stays whole on its own line", "[text_layout]") {
  const auto lines = wrap("the quick brown fox jumps over the lazy dog", 10);
  REQUIRE(lines == std::vector<std::string>{"the quick", "brown fox", "jumps over", "the lazy", "dog"});
  CHECK(wrap("/a/very/long/path/without/spaces", 10) == std::vector<std::string>{"/a/very/long/path/without/spaces"});
  CHECK(wrap("in /a/very/long/path/without/spaces here", 10) ==
        std::vector<std::string>{"in", "/a/very/long/path/without/spaces", "here"});
  CHECK(wrap("one\ntwo", 80) == std::vector<std::string>{"one", "two"});
  CHECK(wrap("", 80) == std::vector<std::string>{""});
}

TEST_CASE("hanging indents continuation lines under the text", "[text_layout]") {
  const std::string text(200, 'x');
  const std::string words = "a kernel loaded or stored through an address it does not own (out of bounds, freed, "
                            "or another device's memory)";
  const std::string out = hanging("  meaning  ", words, 40);
  CHECK(widest(out) <= 40);
  CHECK(out.rfind("  meaning  a kernel", 0) == 0);
  CHECK(out.find("\n           ") != std::string::npos);  // under the text's first column
  CHECK(hanging("  - ", text) == "  - " + text + "\n");  // one word: whole, past the width
  // A prefix wider than the line leaves room for: the text goes below it.
  const std::string wide_label(70, 'l');
  const std::string below = hanging("  " + wide_label + "  ", words);
  CHECK(widest(below) <= kColumns);
  CHECK(below.find(wide_label + "\n      a kernel") != std::string::npos);
}

TEST_CASE("labelled prints nothing for an empty value", "[text_layout]") {
  CHECK(labelled("  ", "line", 12, "").empty());
  CHECK(labelled("  ", "line", 12, "  ").empty());
  CHECK(labelled("  ", "line", 6, "a.cu:6") == "  line    a.cu:6\n");
}

TEST_CASE("abbreviate marks a cut cell and keeps whole code points", "[text_layout]") {
  CHECK(abbreviate("cudaErrorIllegalAddress", 10) == "cudaError~");
  CHECK(abbreviate("short", 10) == "short");
  CHECK(abbreviate("✓✓✓✓", 3) == "✓✓~");
  CHECK(display_width(abbreviate("日本語日本語", 5)) <= 5);
}

TEST_CASE("fit_columns shrinks the widest columns to fit", "[text_layout]") {
  const auto w = fit_columns({40, 10, 60, 7}, {4, 7, 8, 7}, 2, 80);
  std::size_t total = 6;
  for (auto x : w) total += x;
  CHECK(total == 80);
  CHECK(w[1] == 10);  // narrow columns keep their width
  CHECK(w[3] == 7);
  CHECK(fit_columns({5, 5}, {5, 5}, 2, 80) == std::vector<std::size_t>{5, 5});
  // Minimums win over the total.
  CHECK(fit_columns({50, 50}, {50, 50}, 2, 80) == std::vector<std::size_t>{50, 50});
}

TEST_CASE("wrap keeps the spacing of words that stay on one line", "[text_layout]") {
  CHECK(wrap("cudadiag show a.json      # the text", 80) == std::vector<std::string>{"cudadiag show a.json      # the text"});
  CHECK(wrap("aaaa      bbbb", 8) == std::vector<std::string>{"aaaa", "bbbb"});
}

TEST_CASE("the layout width is the one set, 80 until then", "[text_layout]") {
  CHECK(columns() == kColumns);
  const std::string words = "a kernel loaded or stored through an address it does not own (out of bounds, freed, "
                            "or another device's memory)";
  set_columns(120);
  CHECK(hanging("  - ", words) == "  - " + words + "\n");  // one line at 120 columns
  set_columns(40);
  CHECK(widest(hanging("  - ", words)) <= 40);
  set_columns(kColumns);
  CHECK(widest(hanging("  - ", words)) <= kColumns);
  CHECK(widest(hanging("  - ", words)) > 40);
}
