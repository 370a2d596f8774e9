#pragma once
// What a relocated cubin from the dump says about a PC: the function symbol whose
// [value, value + size) holds it, and the source line from its .debug_line (present
// when the code was built with -lineinfo; ptxas writes the relocated addresses there).
// .nv_debug_line_sass maps the same code to PTX lines, which users do not read: unused.
#include <cstdint>
#include <optional>
#include <string>

#include "coredump/bytes.h"
#include "coredump/dwarf_line.h"
#include "coredump/elf_file.h"

namespace cudadiag::coredump {

struct CubinLookup {
  std::optional<FunctionSymbol> function;
  std::optional<SourceLine> line;
  bool has_line_table = false;  // known only when the function was found
  std::string problem;  // the image or its line table could not be read whole (kept short)
};

// Never throws: a cubin that cannot be read gives an empty lookup with the problem named.
CubinLookup look_up_pc(Bytes cubin, std::uint64_t pc);

// The source line only (for a second PC in the same image).
std::optional<SourceLine> line_in_cubin(Bytes cubin, std::uint64_t pc);

}  // namespace cudadiag::coredump
