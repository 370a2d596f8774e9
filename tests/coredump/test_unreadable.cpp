// Truncated, corrupted and foreign files are "unreadable dump: <what>", never a crash, a
// hang or an allocation the file cannot justify.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "coredump/core_dump.h"
#include "coredump/fault_site.h"
#include "fixtures.h"

using namespace cudadiag::coredump;
using cudadiag::test::coredump_data;
using cudadiag::test::slurp_file;

namespace {

// Read and analyze: throws UnreadableDump or returns whether a site came out.
bool read_and_analyze(Bytes bytes) {
  const CoreDump d = read_core_dump(bytes);
  const FaultSite s = analyze_dump(d, {}, "none");
  return !s.exception.empty() || !s.has_exception;
}

std::string unreadable_message(Bytes bytes) {
  try {
    read_and_analyze(bytes);
  } catch (const UnreadableDump& e) {
    return e.what();
  }
  return "";
}
std::string unreadable_message(const std::string& bytes) { return unreadable_message(Bytes(bytes)); }

void put_u64(std::string& s, std::size_t at, std::uint64_t v) { std::memcpy(&s[at], &v, 8); }
void put_u32(std::string& s, std::size_t at, std::uint32_t v) { std::memcpy(&s[at], &v, 4); }
void put_u16(std::string& s, std::size_t at, std::uint16_t v) { std::memcpy(&s[at], &v, 2); }
std::uint64_t get_u64(const std::string& s, std::size_t at) {
  std::uint64_t v = 0;
  std::memcpy(&v, &s[at], 8);
  return v;
}

}  // namespace

TEST_CASE("every prefix of a real dump is unreadable, with a message saying why") {
  const std::string full = slurp_file(coredump_data("device_assert.nvcudmp"));
  const Bytes all(full);
  REQUIRE(read_and_analyze(all));
  // Every length: inside the ELF header, the section data, the section table.
  std::size_t checked = 0;
  for (std::size_t n = 0; n < full.size(); ++n) {
    // A view of the first n bytes: the reader must not look past it.
    const std::string msg = unreadable_message(Bytes(all.data(), n));
    if (msg.rfind("unreadable dump: ", 0) != 0) FAIL("prefix of " << n << " bytes was read: " << msg);
    ++checked;
  }
  CHECK(checked == full.size());
  CHECK(unreadable_message(full.substr(0, 10)).find("too short for an ELF header") != std::string::npos);
  CHECK(unreadable_message(full.substr(0, full.size() - 1)).find("truncated?") != std::string::npos);
  CHECK(unreadable_message(full.substr(0, 4096)).find("truncated?") != std::string::npos);
}

TEST_CASE("foreign files are named as such") {
  CHECK(unreadable_message("").find("too short") != std::string::npos);
  CHECK(unreadable_message(std::string(100, 'x')).find("not an ELF file") != std::string::npos);
  // A real ELF that is not a core dump: a cubin from inside a dump, or this test binary.
  const std::string self = slurp_file("/proc/self/exe");
  CHECK(unreadable_message(self).find("not a GPU core dump") != std::string::npos);
  std::string dump = slurp_file(coredump_data("misaligned16.nvcudmp"));
  put_u16(dump, 0x12, 62);  // EM_X86_64
  CHECK(unreadable_message(dump).find("for machine 62, not a GPU core dump") != std::string::npos);
  dump = slurp_file(coredump_data("misaligned16.nvcudmp"));
  dump[4] = 1;  // ELFCLASS32
  CHECK(unreadable_message(dump).find("not a 64-bit ELF") != std::string::npos);
}

TEST_CASE("huge counts and sizes in the headers are refused before any allocation") {
  const std::string good = slurp_file(coredump_data("misaligned16.nvcudmp"));
  const std::uint64_t shoff = get_u64(good, 0x28);
  SECTION("extended numbering claims 2^40 sections") {
    std::string d = good;
    put_u16(d, 0x3c, 0);
    put_u64(d, shoff + 0x20, 1ull << 40);
    CHECK(unreadable_message(d).find("sections declared") != std::string::npos);
  }
  SECTION("extended numbering claims more sections than the file holds") {
    std::string d = good;
    put_u16(d, 0x3c, 0);
    put_u64(d, shoff + 0x20, 100000);
    CHECK(unreadable_message(d).find("run past the end of the file") != std::string::npos);
  }
  SECTION("a table's size is 2^62") {
    std::string d = good;
    put_u64(d, shoff + 64 * 1 + 0x20, 1ull << 62);  // .cudbg.devtbl
    CHECK(unreadable_message(d).find("runs past the end of the file") != std::string::npos);
  }
  SECTION("a table's entry size is 1") {
    std::string d = good;
    put_u64(d, shoff + 64 * 1 + 0x38, 1);
    CHECK(unreadable_message(d).find("entry size 1") != std::string::npos);
  }
  SECTION("every table points at the whole file with small rows: bounded by the row budget") {
    std::string d = good;
    const std::uint16_t shnum = static_cast<std::uint16_t>(static_cast<unsigned char>(d[0x3c]) |
                                                           (static_cast<unsigned char>(d[0x3d]) << 8));
    REQUIRE(shoff + 64ull * shnum <= d.size());
    for (std::uint16_t i = 1; i + 3 < shnum; ++i) {
      const std::size_t h = shoff + 64ull * i;
      put_u32(d, h + 4, 0x80000000u + 13);  // CTA table
      put_u64(d, h + 0x18, 0);
      put_u64(d, h + 0x20, shoff);
      put_u64(d, h + 0x38, 8);
    }
    CHECK(unreadable_message(d).rfind("unreadable dump: ", 0) == 0);
  }
  SECTION("the section-name table index is outside the table") {
    std::string d = good;
    put_u16(d, 0x3e, 0xfff0);
    CHECK(unreadable_message(d).find("section-name table index") != std::string::npos);
  }
}

TEST_CASE("a parent pointer that leads nowhere is named") {
  std::string d = slurp_file(coredump_data("use_after_free.nvcudmp"));
  const std::uint64_t shoff = get_u64(d, 0x28);
  // Section 143 is the warp table of sm124's CTA table (142): point it at the device table.
  put_u32(d, shoff + 64 * 143 + 0x28, 1);
  CHECK(unreadable_message(d).find("is not a CTA table") != std::string::npos);
  put_u32(d, shoff + 64 * 143 + 0x28, 142);
  put_u32(d, shoff + 64 * 143 + 0x2c, 7);
  CHECK(unreadable_message(d).find("parent row 7 is outside a CTA table (1 rows)") != std::string::npos);
}

TEST_CASE("bit flips in any section header field: read or refused, never a crash") {
  const std::string good = slurp_file(coredump_data("gather_bad_index.nvcudmp"));
  const std::uint64_t shoff = get_u64(good, 0x28);
  const std::uint16_t shnum = static_cast<std::uint16_t>(static_cast<unsigned char>(good[0x3c]) |
                                                         (static_cast<unsigned char>(good[0x3d]) << 8));
  std::mt19937_64 rng(26);
  std::size_t refused = 0, read = 0;
  for (std::uint16_t i = 0; i < shnum; ++i)
    for (int flip = 0; flip < 8; ++flip) {
      std::string d = good;
      const std::size_t byte = shoff + 64ull * i + rng() % 64;
      d[byte] = static_cast<char>(d[byte] ^ (1u << (rng() % 8)));
      try {
        read_and_analyze(Bytes(d));
        ++read;
      } catch (const UnreadableDump&) {
        ++refused;
      }
    }
  CHECK(refused + read == shnum * 8u);
  CHECK(refused > 0);
}
