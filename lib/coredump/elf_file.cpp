#include "coredump/elf_file.h"

#include <fmt/format.h>

namespace cudadiag::coredump {
namespace {

constexpr std::uint64_t kHeaderBytes = 64;
constexpr std::uint64_t kSectionHeaderBytes = 64;
constexpr std::uint16_t kShnXindex = 0xffff;

// "relocated image: " before a message about a nested ELF file; nothing for the dump itself.
std::string in(const std::string& what) { return what.empty() ? std::string() : what + ": "; }

std::uint64_t need(const std::optional<std::uint64_t>& v, const std::string& what, const char* field) {
  if (!v) throw UnreadableDump(fmt::format("{}the ELF header's {} lies past the end of the file", in(what), field));
  return *v;
}

}  // namespace

ElfFile ElfFile::parse(Bytes file, const std::string& what, std::uint64_t max_sections) {
  ElfFile elf;
  elf.file_ = file;
  if (file.size() < kHeaderBytes)
    throw UnreadableDump(fmt::format("{}{} bytes, too short for an ELF header (64 bytes)", in(what), file.size()));
  const std::uint8_t* d = file.data();
  if (d[0] != 0x7f || d[1] != 'E' || d[2] != 'L' || d[3] != 'F')
    throw UnreadableDump(fmt::format("{}not an ELF file (no \\x7fELF magic)", in(what)));
  if (d[4] != 2) throw UnreadableDump(fmt::format("{}not a 64-bit ELF file (class {})", in(what), d[4]));
  if (d[5] != 1) throw UnreadableDump(fmt::format("{}not a little-endian ELF file (data encoding {})", in(what), d[5]));
  elf.type_ = *file.u16(0x10);
  elf.machine_ = *file.u16(0x12);
  const std::uint64_t shoff = need(file.u64(0x28), what, "e_shoff");
  const std::uint16_t shentsize = *file.u16(0x3a);
  std::uint64_t shnum = *file.u16(0x3c);
  std::uint64_t shstrndx = *file.u16(0x3e);
  if (shoff == 0) throw UnreadableDump(fmt::format("{}no section table (e_shoff is 0)", in(what)));
  if (shentsize < kSectionHeaderBytes)
    throw UnreadableDump(fmt::format("{}section header size {} (expected at least 64)", in(what), shentsize));
  if (!file.has(shoff, kSectionHeaderBytes))
    throw UnreadableDump(fmt::format("{}the section table at offset {} lies past the end of the file ({} bytes): "
                                     "truncated?",
                                     in(what), shoff, file.size()));
  // Extended numbering: more than 0xff00 sections put the count in section 0's sh_size and
  // the string-table index in its sh_link (large dumps have one section per lane).
  if (shnum == 0) shnum = *file.u64(shoff + 0x20);
  if (shstrndx == kShnXindex) shstrndx = *file.u32(shoff + 0x28);
  if (shnum == 0) throw UnreadableDump(fmt::format("{}the section table is empty", in(what)));
  if (shnum > max_sections)
    throw UnreadableDump(fmt::format("{}{} sections declared, more than the {} accepted", in(what), shnum, max_sections));
  if (shnum > (file.size() - shoff) / shentsize)
    throw UnreadableDump(fmt::format("{}{} section headers of {} bytes at offset {} run past the end of the file "
                                     "({} bytes): truncated?",
                                     in(what), shnum, shentsize, shoff, file.size()));
  elf.sections_.reserve(static_cast<std::size_t>(shnum));
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::uint64_t o = shoff + i * shentsize;
    ElfSection s;
    s.index = static_cast<std::uint32_t>(i);
    s.type = *file.u32(o + 0x04);
    s.flags = *file.u64(o + 0x08);
    s.addr = *file.u64(o + 0x10);
    s.offset = *file.u64(o + 0x18);
    s.size = *file.u64(o + 0x20);
    s.link = *file.u32(o + 0x28);
    s.info = *file.u32(o + 0x2c);
    s.entsize = *file.u64(o + 0x38);
    if (i > 0 && s.type != kShtNobits && s.type != 0) {
      auto b = file.slice(s.offset, s.size);
      if (!b)
        throw UnreadableDump(fmt::format("{}section {} (offset {}, {} bytes) runs past the end of the file ({} bytes): "
                                         "truncated?",
                                         in(what), i, s.offset, s.size, file.size()));
      s.bytes = *b;
    }
    elf.sections_.push_back(s);
  }
  if (shstrndx >= elf.sections_.size())
    throw UnreadableDump(fmt::format("{}section-name table index {} is outside the {} sections", in(what), shstrndx,
                                     elf.sections_.size()));
  const Bytes names = elf.sections_[static_cast<std::size_t>(shstrndx)].bytes;
  const std::uint64_t name_field_offset = 0;
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::uint32_t name_offset = *file.u32(shoff + i * shentsize + name_field_offset);
    if (i == 0 && name_offset == 0) continue;
    const auto n = names.cstring(name_offset, 1024);
    if (!n)
      throw UnreadableDump(fmt::format("{}the name of section {} (offset {} in the name table) is outside it", in(what), i,
                                       name_offset));
    elf.sections_[static_cast<std::size_t>(i)].name = std::string(*n);
  }
  return elf;
}

const ElfSection* ElfFile::find(const std::string& name) const {
  for (const auto& s : sections_)
    if (s.name == name) return &s;
  return nullptr;
}

std::optional<FunctionSymbol> function_symbol_at(const ElfFile& elf, std::uint64_t address,
                                                 std::uint32_t section_type) {
  constexpr std::uint8_t kSttFunc = 2;
  constexpr std::uint8_t kStoCudaEntry = 0x10;
  constexpr std::uint64_t kSymbolBytes = 24;
  for (const auto& s : elf.sections()) {
    if (s.type != section_type || s.link >= elf.sections().size()) continue;
    const Bytes names = elf.sections()[s.link].bytes;
    const std::uint64_t count = s.size / kSymbolBytes;
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t o = i * kSymbolBytes;
      const auto info = s.bytes.u8(o + 4);
      const auto other = s.bytes.u8(o + 5);
      const auto value = s.bytes.u64(o + 8);
      const auto size = s.bytes.u64(o + 16);
      const auto name_offset = s.bytes.u32(o);
      if (!info || !value || !size || !name_offset || (*info & 0xf) != kSttFunc || *size == 0) continue;
      if (address < *value || address - *value >= *size) continue;
      const auto name = names.cstring(*name_offset, 4096);
      if (!name) continue;
      return FunctionSymbol{std::string(*name), static_cast<std::uint32_t>(i), *value, *size,
                            other && (*other & kStoCudaEntry) != 0};
    }
  }
  return std::nullopt;
}

}  // namespace cudadiag::coredump
