// printable(): outside text made inert for a terminal, everything else kept.
#include <catch2/catch.hpp>

#include <string>

#include "util/printable.h"

using cudadiag::printable;

TEST_CASE("printable: C0, DEL and C1 controls are shown escaped", "[printable]") {
  CHECK(printable("a\x1b[2Jb") == "a\\x1b[2Jb");
  CHECK(printable(std::string("x\0y", 3)) == "x\\x00y");
  CHECK(printable("tab\there\nnl\r") == "tab\\x09here\\x0anl\\x0d");
  CHECK(printable("del\x7f") == "del\\x7f");
  CHECK(printable("csi\xc2\x9b" "31m") == "csi\\u009b31m");
  CHECK(printable("\xc2\x80\xc2\x9f") == "\\u0080\\u009f");
}

TEST_CASE("printable: valid UTF-8 is kept, invalid bytes are shown", "[printable]") {
  CHECK(printable("plain ASCII, 1.0 ~!") == "plain ASCII, 1.0 ~!");
  CHECK(printable("≠ ✓ — é \xc2\xa0 \xf0\x9f\x98\x80") == "≠ ✓ — é \xc2\xa0 \xf0\x9f\x98\x80");
  CHECK(printable("caf\xe9") == "caf\\xe9");                 // Latin-1
  CHECK(printable("\x9b" "31m") == "\\x9b31m");              // a raw 8-bit CSI
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");              // overlong
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");     // a surrogate
  CHECK(printable("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  CHECK(printable("\xe2\x82") == "\\xe2\\x82");              // truncated sequence
  CHECK(printable("") == "");
}

TEST_CASE("printable: bidirectional formatting characters are shown escaped", "[printable]") {
  // U+202E (RLO) would show "gnp.exe" as "exe.png" reversed on a terminal.
  CHECK(printable("a\xe2\x80\xae" "gnp.exe") == "a\\u202egnp.exe");
  CHECK(printable("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad") == "\\u202a\\u202b\\u202c\\u202d");
  CHECK(printable("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9") == "\\u2066\\u2067\\u2068\\u2069");
  CHECK(printable("\xe2\x80\x8e\xe2\x80\x8f") == "\\u200e\\u200f");
  CHECK(printable("\xd8\x9c") == "\\u061c");
  // Their neighbours are ordinary text and stay as they are.
  CHECK(printable("\xe2\x80\x8d\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xd8\x9b") ==
        "\xe2\x80\x8d\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xd8\x9b");
}
