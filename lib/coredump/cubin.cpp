#include "coredump/cubin.h"

#include "coredump/elf_file.h"

namespace cudadiag::coredump {

CubinLookup look_up_pc(Bytes cubin, std::uint64_t pc) {
  CubinLookup out;
  try {
    const ElfFile elf = ElfFile::parse(cubin, "relocated image", 1u << 20);
    out.function = function_symbol_at(elf, pc, kShtSymtab);
    if (!out.function) return out;  // not this image: its line table is not decoded
    if (const ElfSection* lines = elf.find(".debug_line"); lines != nullptr && !lines->bytes.empty()) {
      out.has_line_table = true;
      const auto decoded = decode_debug_line(lines->bytes);
      out.line = line_for_pc(decoded, pc);
      if (!decoded.error.empty()) out.problem = "line table: " + decoded.error;
    }
  } catch (const UnreadableDump& e) {
    out.problem = e.what();
  }
  return out;
}

std::optional<SourceLine> line_in_cubin(Bytes cubin, std::uint64_t pc) { return look_up_pc(cubin, pc).line; }

}  // namespace cudadiag::coredump
