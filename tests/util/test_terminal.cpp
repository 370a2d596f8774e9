#include <catch2/catch.hpp>

#include "util/terminal.h"

using namespace cudadiag::text;

TEST_CASE("NO_COLOR turns colour off only when set and not empty") {
  CHECK_FALSE(no_color(nullptr));
  CHECK_FALSE(no_color(""));
  CHECK(no_color("1"));
  CHECK(no_color("0"));  // any non-empty value, even "0" (no-color.org)
}

TEST_CASE("text width: COLUMNS, else the terminal, else 80; clamped") {
  CHECK(columns_for(nullptr, 0) == 80);
  CHECK(columns_for(nullptr, 132) == 132);
  CHECK(columns_for("100", 132) == 100);  // COLUMNS wins over the terminal
  CHECK(columns_for("", 132) == 132);
  CHECK(columns_for("wide", 0) == 80);     // not a number: ignored
  CHECK(columns_for("120x", 0) == 80);
  CHECK(columns_for("0", 0) == 80);
  CHECK(columns_for("20", 0) == kMinColumns);
  CHECK(columns_for("100000", 0) == kMaxColumns);
  CHECK(terminal_width(-1) == 0);
}
