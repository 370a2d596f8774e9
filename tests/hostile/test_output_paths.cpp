// -o and stdout through the real binary, as root on a shared node: another user's link,
// file or FIFO planted in a sticky directory is refused (exit 2, target untouched, no
// wait); files are the writer's with a mode within 0644; a report that cannot be
// written is kept in a private file named on stderr; a reader that went away costs no
// SIGPIPE death. Cases that plant another user's files need root (chown) and print
// SKIPPED otherwise.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/file_bytes.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using cudadiag::test::TempDir;
using cudadiag::test::slurp;
using cudadiag::test::spit;

namespace {

constexpr uid_t kNobody = 65534;

struct stat lstat_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st;
}

bool root_or_skip() {
  if (::geteuid() == 0) return true;
  std::printf("SKIPPED: planting another user's files needs root (chown)\n");
  return false;
}

// Where a stream of the binary goes: a file the test reads, or a pipe whose reader has
// already gone (the `| head -c 10` that exited).
enum class Sink { file, gone };

struct LaunchResult {
  bool exited = false;
  int code = -1;  // exit status, or the signal when !exited
  std::string out, err;
  double seconds = 0;
};

struct Launch {
  std::vector<std::string> args;
  fs::path tmpdir;           // the binary's $TMPDIR (where a kept report goes)
  Sink out = Sink::file, err = Sink::file;
  mode_t umask = 022;
  double kill_after = 20;    // seconds; a run that takes longer is killed (and fails the test)
};

LaunchResult run_binary(const Launch& l, const fs::path& scratch) {
  const fs::path out_path = scratch / "stdout.txt", err_path = scratch / "stderr.txt";
  int gone[2];
  REQUIRE(::pipe(gone) == 0);
  ::close(gone[0]);  // nobody reads this pipe
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The binary starts with SIGPIPE at its default, as from a shell.
    ::signal(SIGPIPE, SIG_DFL);
    ::umask(l.umask);
    const int o = l.out == Sink::gone ? gone[1] : ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = l.err == Sink::gone ? gone[1] : ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int i = ::open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || i < 0) ::_exit(127);
    ::dup2(i, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::setenv("TMPDIR", l.tmpdir.c_str(), 1);
    std::vector<char*> argv;
    std::string bin = CUDADIAG_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = l.args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(gone[1]);
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > l.kill_after) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL("cudadiag did not finish within " << l.kill_after << " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  LaunchResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exited = WIFEXITED(status);
  r.code = r.exited ? WEXITSTATUS(status) : WTERMSIG(status);
  if (l.out == Sink::file) r.out = slurp(out_path);
  if (l.err == Sink::file) r.err = slurp(err_path);
  return r;
}

// The file a refused or failed write kept the report in, from the binary's stderr.
std::string kept_path(const std::string& err) {
  const std::string marker = "the report was kept in ";
  const auto at = err.find(marker);
  if (at == std::string::npos) return {};
  const auto end = err.find('\n', at);
  return err.substr(at + marker.size(), end == std::string::npos ? std::string::npos : end - at - marker.size());
}

// A refusal found before any work: nothing to keep, no file left in `tmpdir`.
void check_nothing_kept(const std::string& err, const fs::path& tmpdir) {
  CHECK(kept_path(err).empty());
  CHECK(fs::is_empty(tmpdir));
}

// What `cudadiag schema` prints: the reference report for the kept copies.
std::string schema_text(const fs::path& scratch) {
  const LaunchResult r = run_binary({{"schema"}, scratch}, scratch);
  REQUIRE(r.exited);
  REQUIRE(r.code == 0);
  REQUIRE(r.out.size() > 100);
  return r.out;
}

// A checked kept copy: a private file of root's in `tmpdir` holding `expected`.
void check_kept(const std::string& err, const fs::path& tmpdir, const std::string& expected) {
  const std::string kept = kept_path(err);
  REQUIRE_FALSE(kept.empty());
  CHECK(fs::path(kept).parent_path() == tmpdir);
  const auto st = lstat_of(kept);
  CHECK(S_ISREG(st.st_mode));
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(st.st_uid == ::geteuid());
  CHECK(slurp(kept) == expected);
}

// A root-owned sticky world-writable directory, like /tmp, in `dir`; and $TMPDIR for the binary.
struct SharedSetup {
  TempDir dir;
  fs::path shared, tmpdir, scratch;
  SharedSetup() {
    REQUIRE(::chmod(dir.path.c_str(), 0755) == 0);
    shared = dir.path / "tmp";
    tmpdir = dir.path / "private-tmp";
    scratch = dir.path / "scratch";
    fs::create_directory(shared);
    fs::create_directory(tmpdir);
    fs::create_directory(scratch);
    REQUIRE(::chmod(shared.c_str(), 01777) == 0);
  }
};

}  // namespace

TEST_CASE("cli -o: another user's symlink in a sticky directory is refused, its target untouched",
          "[cli][output_paths][root]") {
  if (!root_or_skip()) return;
  SharedSetup s;
  const auto victim = s.dir.path / "shadow";  // a root file outside, like /etc/shadow
  spit(victim, "root:secret\n");
  REQUIRE(::chmod(victim.c_str(), 0600) == 0);
  const auto link = s.shared / "r.json";
  fs::create_symlink(victim, link);
  REQUIRE(::lchown(link.c_str(), kNobody, kNobody) == 0);

  const LaunchResult r = run_binary({{"schema", "-o", link.string()}, s.tmpdir}, s.scratch);
  CHECK(r.exited);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("cannot write " + link.string()) && Catch::Contains("owned by uid 65534") &&
                        Catch::Contains("sticky directory " + s.shared.string()) &&
                        Catch::Contains("protected_symlinks"));
  CHECK(slurp(victim) == "root:secret\n");
  CHECK((lstat_of(victim).st_mode & 07777) == 0600);
  CHECK(fs::is_symlink(link));
  check_nothing_kept(r.err, s.tmpdir);
}

TEST_CASE("cli -o: another user's 0666 file in a sticky directory is refused and stays theirs",
          "[cli][output_paths][root]") {
  if (!root_or_skip()) return;
  SharedSetup s;
  const auto planted = s.shared / "r.json";
  spit(planted, "theirs");
  REQUIRE(::chown(planted.c_str(), kNobody, kNobody) == 0);
  REQUIRE(::chmod(planted.c_str(), 0666) == 0);

  const LaunchResult r = run_binary({{"schema", "-o", planted.string()}, s.tmpdir}, s.scratch);
  CHECK(r.exited);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("owned by uid 65534 in sticky directory") && Catch::Contains("protected_regular"));
  const auto st = lstat_of(planted);
  CHECK(st.st_uid == kNobody);
  CHECK((st.st_mode & 07777) == 0666);
  CHECK(slurp(planted) == "theirs");
  check_nothing_kept(r.err, s.tmpdir);
}

TEST_CASE("cli -o: a FIFO is refused at once, nothing written into it", "[cli][output_paths][root]") {
  if (!root_or_skip()) return;
  SharedSetup s;
  const auto theirs = s.shared / "r.json";
  REQUIRE(::mkfifo(theirs.c_str(), 0666) == 0);
  REQUIRE(::chown(theirs.c_str(), kNobody, kNobody) == 0);
  Launch l{{"schema", "-o", theirs.string()}, s.tmpdir};
  l.kill_after = 10;
  LaunchResult r = run_binary(l, s.scratch);
  CHECK(r.exited);
  CHECK(r.code == 2);
  CHECK(r.seconds < 5);
  CHECK_THAT(r.err, Catch::Contains("protected_fifos"));
  CHECK(S_ISFIFO(lstat_of(theirs).st_mode));
  // Root's own FIFO in root's own directory: refused too (an open would wait for a reader).
  const auto own = s.dir.path / "own.fifo";
  REQUIRE(::mkfifo(own.c_str(), 0600) == 0);
  l.args = {"schema", "-o", own.string()};
  r = run_binary(l, s.scratch);
  CHECK(r.exited);
  CHECK(r.code == 2);
  CHECK(r.seconds < 5);
  CHECK_THAT(r.err, Catch::Contains(own.string() + ": is a FIFO"));
  check_nothing_kept(r.err, s.tmpdir);
}

TEST_CASE("cli -o: a new file is 0644 even with umask 0, and a replaced one becomes the writer's, within 0644",
          "[cli][output_paths]") {
  TempDir dir;
  const auto fresh = dir.path / "new.json";
  Launch l{{"schema", "-o", fresh.string()}, dir.path};
  l.umask = 0;
  LaunchResult r = run_binary(l, dir.path);
  CHECK(r.code == 0);
  CHECK((lstat_of(fresh).st_mode & 07777) == 0644);

  const auto own = dir.path / "own.json";
  spit(own, "old");
  REQUIRE(::chmod(own.c_str(), 0666) == 0);
  l.args = {"schema", "-o", own.string()};
  r = run_binary(l, dir.path);
  CHECK(r.code == 0);
  CHECK((lstat_of(own).st_mode & 07777) == 0644);
  CHECK(slurp(own) == slurp(fresh));

  if (::geteuid() != 0) return;  // the rest plants another user's file
  const auto foreign = dir.path / "foreign.json";  // another user's, in root's own directory
  spit(foreign, "theirs");
  REQUIRE(::chown(foreign.c_str(), kNobody, kNobody) == 0);
  REQUIRE(::chmod(foreign.c_str(), 0666) == 0);
  l.args = {"schema", "-o", foreign.string()};
  r = run_binary(l, dir.path);
  CHECK(r.code == 0);
  const auto st = lstat_of(foreign);
  CHECK(st.st_uid == 0);  // root's output stays root's
  CHECK((st.st_mode & 07777) == 0644);
  CHECK(slurp(foreign) == slurp(fresh));
}

TEST_CASE("cli -o: a path that cannot be written is exit 2 before any work, nothing kept",
          "[cli][output_paths]") {
  TempDir dir;
  const auto tmpdir = dir.path / "tmp";
  fs::create_directory(tmpdir);
  const auto target = dir.path / "no" / "such" / "r.json";
  LaunchResult r = run_binary({{"schema", "-o", target.string()}, tmpdir}, dir.path);
  CHECK(r.exited);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("cannot write " + target.string() + ": No such file or directory"));
  check_nothing_kept(r.err, tmpdir);

  // `run` does not start the program when its report could not be written.
  const auto marker = dir.path / "ran";
  r = run_binary({{"run", "-o", target.string(), "--", "/bin/sh", "-c", "touch " + marker.string()}, tmpdir},
                 dir.path);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("cannot write " + target.string()));
  CHECK_FALSE(fs::exists(marker));

  // A directory the writer may not add names to (a read-only bind is the same): refused.
  if (::geteuid() != 0) {
    const auto locked = dir.path / "locked";
    fs::create_directory(locked);
    REQUIRE(::chmod(locked.c_str(), 0555) == 0);
    r = run_binary({{"schema", "-o", (locked / "r.json").string()}, tmpdir}, dir.path);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("Permission denied"));
  }
}

TEST_CASE("cli -o: a report whose write fails after the work is exit 2 and kept in a private file named on stderr",
          "[cli][output_paths]") {
  TempDir dir;
  const auto tmpdir = dir.path / "tmp";
  fs::create_directory(tmpdir);
  struct stat st {};
  if (::stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode) || st.st_uid != 0) {
    WARN("SKIPPED: no /dev/full character device of root's here");
    return;
  }
  const LaunchResult r = run_binary({{"schema", "-o", "/dev/full"}, tmpdir}, dir.path);
  CHECK(r.exited);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("cannot write /dev/full: No space left on device; the report was kept in " +
                                    tmpdir.string() + "/cudadiag-report-"));
  check_kept(r.err, tmpdir, schema_text(dir.path));
}

TEST_CASE("cli -o: FILE.json and FILE.md pick the format unless --format says otherwise", "[cli][output_paths]") {
  TempDir dir;
  const auto json_out = dir.path / "list.json";
  LaunchResult r = run_binary({{"list", "-o", json_out.string()}, dir.path}, dir.path);
  REQUIRE(r.code == 0);
  CHECK(slurp(json_out).rfind("{", 0) == 0);
  const auto md_out = dir.path / "schema.MD";
  r = run_binary({{"schema", "-o", md_out.string()}, dir.path}, dir.path);
  REQUIRE(r.code == 0);
  CHECK(slurp(md_out).rfind("```json", 0) == 0);
  const auto forced = dir.path / "forced.json";
  r = run_binary({{"list", "--format", "text", "-o", forced.string()}, dir.path}, dir.path);
  REQUIRE(r.code == 0);
  CHECK(slurp(forced).rfind("{", 0) != 0);
  CHECK(slurp(forced) != slurp(json_out));
}

TEST_CASE("cli: a stdout whose reader has gone is no SIGPIPE death: exit 2, the report kept",
          "[cli][output_paths]") {
  TempDir dir;
  Launch l{{"schema"}, dir.path};
  l.out = Sink::gone;
  const LaunchResult r = run_binary(l, dir.path);
  INFO(r.err);
  CHECK(r.exited);  // not killed by SIGPIPE (13)
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("cannot write to standard output: Broken pipe; the report was kept in "));
  check_kept(r.err, dir.path, schema_text(dir.path));
}

TEST_CASE("cli run: stdout and stderr whose reader has gone: the run completes, logs dropped, the report kept",
          "[cli][output_paths]") {
  TempDir dir;
  const auto tmpdir = dir.path / "tmp";
  fs::create_directory(tmpdir);
  // `cudadiag run ... 2>&1 | head -1`, with head gone before the first log line.
  Launch l{{"run", "-v", "--format", "json", "--", "/bin/true"}, tmpdir};
  l.out = Sink::gone;
  l.err = Sink::gone;
  const LaunchResult r = run_binary(l, dir.path);
  CHECK(r.exited);
  CHECK(r.code == 2);
  // stderr is gone too, so the kept report is found in $TMPDIR; no scratch folder is left.
  std::vector<fs::path> kept;
  for (const auto& e : fs::directory_iterator(tmpdir)) kept.push_back(e.path());
  REQUIRE(kept.size() == 1);
  CHECK_THAT(kept[0].filename().string(), Catch::StartsWith("cudadiag-report-") && Catch::EndsWith(".json"));
  CHECK_THAT(slurp(kept[0]), Catch::Contains("\"command\": \"run\"") && Catch::Contains("\"status\": \"clean\""));

  // With -o, a stderr that is gone costs nothing: the report is written, exit 0.
  const auto out = dir.path / "run.json";
  l.args = {"run", "-v", "--format", "json", "-o", out.string(), "--", "/bin/true"};
  l.out = Sink::file;
  const LaunchResult ok = run_binary(l, dir.path);
  CHECK(ok.exited);
  CHECK(ok.code == 0);
  CHECK_THAT(slurp(out), Catch::Contains("\"status\": \"clean\""));
}

TEST_CASE("cli run: the program runs with SIGPIPE at its default although cudadiag ignores it",
          "[cli][output_paths]") {
  TempDir dir;
  // The program's own ignored signals (SigIgn, a hex mask: SIGPIPE is bit 12) in its output.
  const LaunchResult r = run_binary({{"run", "--format", "json", "--rungs", "native", "--", "/bin/sh", "-c",
                             "grep '^SigIgn' /proc/self/status"},
                            dir.path},
                           dir.path);
  CHECK(r.exited);
  const std::string line = "SigIgn:\\t";  // as the report's JSON escapes the tab
  const auto at = r.out.find(line);
  REQUIRE(at != std::string::npos);
  char* end = nullptr;
  const unsigned long long ignored = std::strtoull(r.out.c_str() + at + line.size(), &end, 16);
  REQUIRE(end == r.out.c_str() + at + line.size() + 16);
  CHECK((ignored & (1ULL << (SIGPIPE - 1))) == 0);
}
