#pragma once
// A bounded ELF64 little-endian reader: the file header and the section table, for the
// GPU core dump and for the relocated cubins it carries. Every section's bytes are checked
// against the file when the table is read, so later reads of a section cannot leave it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coredump/bytes.h"

namespace cudadiag::coredump {

inline constexpr std::uint32_t kShtSymtab = 2;
inline constexpr std::uint32_t kShtDynsym = 11;
inline constexpr std::uint32_t kShtNobits = 8;

struct ElfSection {
  std::uint32_t index = 0;
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::uint64_t addr = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint32_t info = 0;
  std::uint64_t entsize = 0;
  Bytes bytes;  // empty for SHT_NOBITS
};

class ElfFile {
 public:
  // `what` names the file in messages ("the dump", "relocated image 9"). Throws
  // UnreadableDump naming the first thing that does not fit. At most max_sections
  // sections are accepted (a count beyond it is a corrupted header, not a big file).
  static ElfFile parse(Bytes file, const std::string& what, std::uint64_t max_sections = 16u << 20);

  std::uint16_t type() const { return type_; }
  std::uint16_t machine() const { return machine_; }
  const std::vector<ElfSection>& sections() const { return sections_; }
  const ElfSection* find(const std::string& name) const;  // first section with the name
  Bytes file() const { return file_; }

 private:
  Bytes file_;
  std::uint16_t type_ = 0;
  std::uint16_t machine_ = 0;
  std::vector<ElfSection> sections_;
};

// A function symbol of an ELF file's symbol table.
struct FunctionSymbol {
  std::string name;  // mangled, as in the symbol table
  std::uint32_t index = 0;  // in its table (nvdisasm's -fun takes it for .symtab)
  std::uint64_t value = 0;
  std::uint64_t size = 0;
  // STO_CUDA_ENTRY (0x10 in st_other) in a cubin: a kernel's entry (__global__), where a
  // device function or the driver's helpers have none. Seen in every relocated image of
  // the H100 dumps in tests/coredump/data.
  bool entry = false;
};

// The function symbol whose [value, value + size) holds `address`, from the tables of
// `section_type` (kShtSymtab, kShtDynsym); nothing when none holds it. Bounded by the
// sections' bytes.
std::optional<FunctionSymbol> function_symbol_at(const ElfFile& elf, std::uint64_t address,
                                                 std::uint32_t section_type);

inline constexpr std::uint16_t kElfTypeCore = 4;
inline constexpr std::uint16_t kElfMachineCuda = 190;  // EM_CUDA

}  // namespace cudadiag::coredump
