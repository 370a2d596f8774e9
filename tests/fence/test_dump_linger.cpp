// The wait at the end of a run armed for a GPU core dump: the process's own dump file,
// found by its pid, waited for within the budget, and until it stops growing.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "fence/dump_linger.h"
#include "tests/support/temp_dir.h"

using namespace cudadiag::fence;
using namespace std::chrono_literals;

namespace {

std::string path_of(const char* pattern, long pid, std::size_t cap = 256) {
  char out[256];
  return own_dump_path(pattern, pid, out, cap) ? std::string(out) : std::string("(none)");
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("dump linger: the process's own dump file from CUDA_COREDUMP_FILE", "[dump_linger]") {
  CHECK(path_of("/w/core-fence-0_%p.nvcudmp", 4242) == "/w/core-fence-0_4242.nvcudmp");
  CHECK(path_of("/w/a_%p_%p", 7) == "/w/a_7_7");
  CHECK(path_of("/w/fixed.nvcudmp", 7) == "/w/fixed.nvcudmp");
  CHECK(path_of("/w/core_%h.nvcudmp", 7) == "(none)");  // a directive cudadiag never arms
  CHECK(path_of("/w/core_%", 7) == "(none)");
  CHECK(path_of(nullptr, 7) == "(none)");
  CHECK(path_of("/w/core_%p", 123456, 10) == "(none)");  // does not fit
  CHECK(path_of("/w/c_%p", 123, 9) == "/w/c_123");        // fits exactly, NUL included
  CHECK(path_of("/w/c_%p", 123, 8) == "(none)");
}

TEST_CASE("dump linger: the budget is a strict decimal of milliseconds", "[dump_linger]") {
  CHECK(parse_linger_ms("5000") == 5000);
  CHECK(parse_linger_ms("1") == 1);
  CHECK(parse_linger_ms("60000") == kMaxDumpLingerMs);
  CHECK(parse_linger_ms("60001") == 0);
  CHECK(parse_linger_ms("99999999999999999999") == 0);
  CHECK(parse_linger_ms("0") == 0);
  CHECK(parse_linger_ms("") == 0);
  CHECK(parse_linger_ms("5s") == 0);
  CHECK(parse_linger_ms("-1") == 0);
  CHECK(parse_linger_ms(nullptr) == 0);
}

TEST_CASE("dump linger: no dump within the budget ends the wait at the budget", "[dump_linger]") {
  cudadiag::test::TempDir dir;
  const std::string path = (dir / "core_1.nvcudmp").string();
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(linger_for_dump(path.c_str(), 150) == LingerEnd::no_dump);
  const double took = ms_since(t0);
  CHECK(took >= 149);  // the wait counts whole milliseconds
  CHECK(took < 2000);
  CHECK(linger_for_dump(path.c_str(), 0) == LingerEnd::not_armed);
  CHECK(linger_for_dump(nullptr, 100) == LingerEnd::not_armed);
}

TEST_CASE("dump linger: a dump that appears late is waited for until it stops growing", "[dump_linger]") {
  cudadiag::test::TempDir dir;
  const std::string path = (dir / "core_2.nvcudmp").string();
  std::thread driver([&path] {
    std::this_thread::sleep_for(100ms);
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 4; ++i) {
      out << std::string(1000, 'x') << std::flush;
      std::this_thread::sleep_for(60ms);
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  const LingerEnd end = linger_for_dump(path.c_str(), 5000, 300);
  const double took = ms_since(t0);
  driver.join();
  CHECK(end == LingerEnd::dump_written);
  CHECK(took >= 100 + 3 * 60 + 300 - 50);  // appeared, grew, then stayed still for the settle time
  CHECK(took < 4000);
  CHECK(std::filesystem::file_size(path) == 4000);

  // Still growing at the cap: said so, not waited on for ever.
  const std::string growing = (dir / "core_3.nvcudmp").string();
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::ofstream out(growing, std::ios::binary);
    while (!stop) {
      out << 'x' << std::flush;
      std::this_thread::sleep_for(10ms);
    }
  });
  CHECK(linger_for_dump(growing.c_str(), 2000, 300, 400) == LingerEnd::dump_growing);
  stop = true;
  writer.join();
}

TEST_CASE("dump linger: armed by the environment only (the driver's switch, the budget and the file)",
          "[dump_linger]") {
  cudadiag::test::TempDir dir;
  const std::string pattern = (dir / "core_%p.nvcudmp").string();
  ::setenv("CUDA_COREDUMP_FILE", pattern.c_str(), 1);
  ::unsetenv("CUDA_ENABLE_COREDUMP_ON_EXCEPTION");
  ::setenv(kDumpLingerVar, "100", 1);
  CHECK(linger_if_armed(31) == LingerEnd::not_armed);  // dumps not armed
  ::setenv("CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "1", 1);
  ::unsetenv(kDumpLingerVar);
  CHECK(linger_if_armed(31) == LingerEnd::not_armed);  // armed, no linger asked for
  ::setenv(kDumpLingerVar, "100", 1);
  CHECK(linger_if_armed(31) == LingerEnd::no_dump);
  std::ofstream((dir / "core_31.nvcudmp").string()) << "dump";
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(linger_if_armed(31) == LingerEnd::dump_written);
  CHECK(ms_since(t0) >= kDumpSettleMs - 50);
  ::unsetenv("CUDA_COREDUMP_FILE");
  ::unsetenv("CUDA_ENABLE_COREDUMP_ON_EXCEPTION");
  ::unsetenv(kDumpLingerVar);
}
