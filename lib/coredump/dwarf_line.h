#pragma once
// A bounded decoder of DWARF line programs (.debug_line, versions 2 to 4, as ptxas writes
// them into a cubin built with -lineinfo): the address -> file:line rows. Decoding stops
// at the first malformed byte; what was decoded before it is kept.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coredump/bytes.h"

namespace cudadiag::coredump {

struct SourceLine {
  std::string file;  // as the compiler recorded it (directory joined when relative)
  std::uint32_t line = 0;
};

struct LineRow {
  std::uint64_t address = 0;
  std::uint32_t file = 0;  // index into LineTable::files (1-based as in DWARF, 0 unused)
  std::uint32_t line = 0;
  bool end_sequence = false;
};

struct LineTable {
  std::vector<std::string> files;  // files[0] is empty
  std::vector<LineRow> rows;
};

struct DecodedLines {
  std::vector<LineTable> tables;
  std::string error;  // why decoding stopped early; empty when the section decoded whole
};

DecodedLines decode_debug_line(Bytes section);

// The line of the row that covers pc (the last row at or before pc in its sequence),
// nothing when no sequence covers it.
std::optional<SourceLine> line_for_pc(const DecodedLines& lines, std::uint64_t pc);

}  // namespace cudadiag::coredump
