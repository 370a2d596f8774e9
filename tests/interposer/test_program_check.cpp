// Whether a program a process of the run executes is followed by the interposer, or
// escapes it (program_check.h): programs written as bare ELF headers.
#include <catch2/catch.hpp>

#include <elf.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "apps/interposer/program_check.h"
#include "tests/support/temp_dir.h"

using namespace cudadiag;
using namespace cudadiag::interposer;

namespace {

// An ELF file of `elf_class` whose program headers are of `types`.
std::string write_elf(const test::TempDir& dir, const std::string& name, unsigned char elf_class,
                      const std::vector<Elf64_Word>& types) {
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = elf_class;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_EXEC;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof eh;
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = static_cast<Elf64_Half>(types.size());
  const std::string path = (dir.path / name).string();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&eh), sizeof eh);
  for (const auto type : types) {
    Elf64_Phdr ph{};
    ph.p_type = type;
    out.write(reinterpret_cast<const char*>(&ph), sizeof ph);
  }
  return path;
}

}  // namespace

TEST_CASE("program check: a dynamically linked program is followed") {
  test::TempDir dir;
  CHECK(escape_of(write_elf(dir, "dynamic", ELFCLASS64, {PT_PHDR, PT_INTERP, PT_LOAD, PT_DYNAMIC}).c_str()) ==
        ring::EventKind::none);
}

TEST_CASE("program check: a statically linked program cannot load libcuda, so it is no escape") {
  // Triton runs the static /sbin/ldconfig to find libcuda: no process of the run escaped.
  test::TempDir dir;
  const std::string path = write_elf(dir, "ldconfig", ELFCLASS64, {PT_LOAD, PT_LOAD, PT_NOTE, PT_GNU_STACK});
  CHECK(escape_of(path.c_str()) == ring::EventKind::none);
  // A static-pie program (a PT_DYNAMIC of its own, no interpreter) neither.
  CHECK(escape_of(write_elf(dir, "static-pie", ELFCLASS64, {PT_LOAD, PT_DYNAMIC}).c_str()) == ring::EventKind::none);
}

TEST_CASE("program check: a 32-bit program escapes; a script is judged by its interpreter") {
  test::TempDir dir;
  const std::string elf32 = write_elf(dir, "elf32", ELFCLASS32, {PT_LOAD});
  CHECK(escape_of(elf32.c_str()) == ring::EventKind::escaped_foreign);
  const std::string script = (dir.path / "script").string();
  std::ofstream(script) << "#!" << elf32 << " -x\necho hi\n";
  CHECK(escape_of(script.c_str()) == ring::EventKind::escaped_foreign);
  const std::string static_script = (dir.path / "static_script").string();
  std::ofstream(static_script) << "#!" << write_elf(dir, "static", ELFCLASS64, {PT_LOAD}) << "\n";
  CHECK(escape_of(static_script.c_str()) == ring::EventKind::none);
}
