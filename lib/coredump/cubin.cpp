#include "coredump/cubin.h"

#include "coredump/elf_file.h"

namespace cudadiag::coredump {
namespace {

constexpr std::uint8_t kSttFunc = 2;
constexpr std::uint64_t kSymbolBytes = 24;

std::optional<FunctionSymbol> function_at(const ElfFile& elf, std::uint64_t pc) {
  for (const auto& s : elf.sections()) {
    if (s.type != kShtSymtab || s.link >= elf.sections().size()) continue;
    const Bytes names = elf.sections()[s.link].bytes;
    const std::uint64_t count = s.size / kSymbolBytes;
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t o = i * kSymbolBytes;
      const auto info = s.bytes.u8(o + 4);
      const auto value = s.bytes.u64(o + 8);
      const auto size = s.bytes.u64(o + 16);
      const auto name_offset = s.bytes.u32(o);
      if (!info || !value || !size || !name_offset || (*info & 0xf) != kSttFunc || *size == 0) continue;
      if (pc < *value || pc - *value >= *size) continue;
      const auto name = names.cstring(*name_offset, 4096);
      if (!name) continue;
      return FunctionSymbol{std::string(*name), static_cast<std::uint32_t>(i), *value, *size};
    }
  }
  return std::nullopt;
}

}  // namespace

CubinLookup look_up_pc(Bytes cubin, std::uint64_t pc) {
  CubinLookup out;
  try {
    const ElfFile elf = ElfFile::parse(cubin, "relocated image", 1u << 20);
    out.function = function_at(elf, pc);
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
