// The slim dumps (data/slim: the driver's own modules emptied, fuzz seeds) give the site
// cuda-gdb printed for the full ones (data/X.cuda-gdb.txt; the addresses the programs
// printed, data/X.out): the site depends only on the tables and the kernel's image. Then
// everything else the site holds is compared with the full dump's.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "coredump/fault_site.h"
#include "coredump/fault_site_json.h"
#include "fixtures.h"

using namespace cudadiag;
using namespace cudadiag::coredump;
using cudadiag::test::coredump_data;
using cudadiag::test::stored_listing;

namespace {

struct Expected {
  const char* name;
  const char* exception;
  const char* kernel;
  std::uint64_t pc;
  std::uint64_t function_offset;
  std::uint32_t line;
  Dim3 block;  // of the first faulting thread
  const char* instruction;
  report::AddressStatus address_status;
  std::optional<std::uint64_t> address;
};

const Expected kSites[] = {
    // freed=0x7f24a6000000; thread 0 reads element 0
    {"use_after_free", "Warp Illegal Address", "touch(float*, int)", 0x7f24cb7ac270, 112, 5, Dim3{0, 0, 0},
     "LDG.E R0, desc[UR4][R2.64]", report::AddressStatus::proven, 0x7f24a6000000},
    // buffer=0x7faa1be00000; no lane carries the exception: the warp left on the SM (threads 32-63)
    // is not the one that faulted, so its R2:R3 (buffer + 1 GiB + 4 * 32) are not the faulting address
    {"far_write", "Warp Illegal Address", "far_write(float*, long long)", 0x7faa237ac2a0, 0xa0, 6, Dim3{0, 0, 0},
     "STG.E desc[UR4][R2.64], R5", report::AddressStatus::not_recoverable, std::nullopt},
    {"gather_bad_index", "Warp Illegal Address", "gather_rows(float const*, long long const*, float*, int)",
     0x7f41a77ac320, 288, 6, Dim3{2, 0, 0}, "LDG.E R9, desc[UR4][R8.64]", report::AddressStatus::not_recoverable,
     std::nullopt},
    // in=0x7f457be00000; thread 0 loads 16 bytes at in + 4
    {"misaligned16", "Warp Misaligned Address", "load_vector(float const*, float*)", 0x7f45837ac270, 112, 4,
     Dim3{0, 0, 0}, "LDG.E.128 R8, desc[UR4][R2.64+0x4]", report::AddressStatus::proven, 0x7f457be00004},
    // the assert's own line (cuda-gdb shows the line after it), the instruction before the lane's PC
    {"device_assert", "Warp Assert", "check_positive(int const*)", 0x7fa1377ac370, 368, 6, Dim3{0, 0, 0},
     "CALL.ABS.NOINC R2", report::AddressStatus::not_attempted, std::nullopt},
};

FaultSite slim_site(const std::string& name) {
  return read_fault_site(coredump_data("slim/" + name + ".nvcudmp"), stored_listing(name), "none");
}

}  // namespace

TEST_CASE("slim dumps read to the site cuda-gdb printed for the full ones") {
  for (const auto& want : kSites) {
    INFO(want.name);
    const auto s = slim_site(want.name);
    REQUIRE(s.unreadable.empty());
    CHECK(s.device == "NVIDIA H100 80GB HBM3");
    CHECK(s.sm_type == "sm_90");
    CHECK(s.exception == want.exception);
    CHECK(s.kernel == want.kernel);
    CHECK(s.function == want.kernel);
    REQUIRE(s.pc);
    CHECK(*s.pc == want.pc);
    CHECK(s.function_offset == want.function_offset);
    REQUIRE(s.line);
    CHECK(s.line->file.size() > std::string(want.name).size());
    CHECK(s.line->file.substr(s.line->file.size() - std::string(want.name).size() - 3) == want.name + std::string(".cu"));
    CHECK(s.line->line == want.line);
    REQUIRE(s.first);
    CHECK(s.first->block == want.block);
    CHECK(s.instruction == want.instruction);
    CHECK(s.address_status == want.address_status);
    CHECK(s.address == want.address);
  }
}

TEST_CASE("slim dumps read to the same site as the full ones, field for field") {
  for (const auto& want : kSites) {
    INFO(want.name);
    auto full = to_json(read_fault_site(coredump_data(std::string(want.name) + ".nvcudmp"), stored_listing(want.name), "none"));
    auto slim = to_json(slim_site(want.name));
    for (auto* j : {&full, &slim}) {
      j->erase("file");
      j->erase("file_bytes");
    }
    CHECK(slim == full);
  }
}

TEST_CASE("guard_write slim: the SM's error PC reads to the same site as the full dump's") {
  const auto slim = slim_site("guard_write");
  CHECK(slim.kernel == "fill_inclusive(float*, int)");
  REQUIRE(slim.line);
  CHECK(slim.line->line == 27);
  auto full = to_json(read_fault_site(coredump_data("guard_write.nvcudmp"), stored_listing("guard_write"), "none"));
  auto slim_json = to_json(slim);
  for (auto* j : {&full, &slim_json}) {
    j->erase("file");
    j->erase("file_bytes");
  }
  CHECK(slim_json == full);
}
