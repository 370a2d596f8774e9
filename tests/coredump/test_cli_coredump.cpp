// `cudadiag coredump` through the real binary: a fixture reads (exit 0), a truncated file
// is bad input (exit 2, naming the file and what is wrong).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../support/temp_dir.h"
#include "fixtures.h"

extern char** environ;

namespace {

struct Run {
  int code = -1;
  std::string out, err;
};

Run run_cudadiag(const std::vector<std::string>& args, const std::filesystem::path& dir) {
  const auto out = dir / "stdout", err = dir / "stderr";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string bin = CUDADIAG_BINARY;
  std::vector<std::string> copy = args;
  std::vector<char*> argv{bin.data()};
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = cudadiag::test::slurp_file(out.string());
  r.err = cudadiag::test::slurp_file(err.string());
  return r;
}

}  // namespace

TEST_CASE("cudadiag coredump prints the site of a fixture and exits 0") {
  cudadiag::test::TempDir dir;
  const auto r = run_cudadiag({"coredump", "--no-disassemble", cudadiag::test::coredump_data("use_after_free.nvcudmp")},
                              dir.path);
  CHECK(r.code == 0);
  CHECK(r.out.find("Warp Illegal Address (code 14)") != std::string::npos);
  CHECK(r.out.find("touch(float*, int) <<<(1,1,1), (64,1,1)>>>") != std::string::npos);
  CHECK(r.out.find("use_after_free.cu:5") != std::string::npos);
  CHECK(r.out.find("touch(float*, int)+112") != std::string::npos);
  const auto j = run_cudadiag({"coredump", "--no-disassemble", "--format", "json", "-o", (dir.path / "site.json").string(),
                               cudadiag::test::coredump_data("device_assert.nvcudmp")},
                              dir.path);
  CHECK(j.code == 0);
  const std::string doc = cudadiag::test::slurp_file((dir.path / "site.json").string());
  CHECK(doc.find("\"fault_site_version\"") != std::string::npos);
  CHECK(doc.find("\"instruction_before_lane_pc\"") != std::string::npos);
}

TEST_CASE("cudadiag coredump on a truncated file exits 2 naming it") {
  cudadiag::test::TempDir dir;
  const std::string full = cudadiag::test::slurp_file(cudadiag::test::coredump_data("misaligned16.nvcudmp"));
  const auto cut = dir.path / "cut.nvcudmp";
  std::ofstream(cut, std::ios::binary) << full.substr(0, full.size() / 2);
  const auto r = run_cudadiag({"coredump", "--no-disassemble", cut.string()}, dir.path);
  CHECK(r.code == 2);
  CHECK(r.err.find("cut.nvcudmp") != std::string::npos);
  CHECK(r.err.find("unreadable dump:") != std::string::npos);
  CHECK(r.err.find("truncated?") != std::string::npos);
  // A good and a bad file: the good one is still printed, the exit is 2.
  const auto both = run_cudadiag(
      {"coredump", "--no-disassemble", cudadiag::test::coredump_data("misaligned16.nvcudmp"), cut.string()}, dir.path);
  CHECK(both.code == 2);
  CHECK(both.out.find("Warp Misaligned Address") != std::string::npos);
  const auto missing = run_cudadiag({"coredump", (dir.path / "nope.nvcudmp").string()}, dir.path);
  CHECK(missing.code == 2);
}
