#include <catch2/catch.hpp>

#include <map>

#include "run/command_path.h"

using namespace cudadiag::run;

namespace {

// A file system of a few files.
FileProbe files(std::map<std::string, FileKind> known) {
  return [known](const std::string& path) {
    const auto it = known.find(path);
    return it == known.end() ? FileKind::missing : it->second;
  };
}

}  // namespace

TEST_CASE("command path: PATH order, the first executable wins", "[command_path]") {
  const auto fs = files({{"/opt/bin/python3", FileKind::not_executable},
                         {"/usr/bin/python3", FileKind::executable},
                         {"/bin/python3", FileKind::executable}});
  const auto c = find_command("python3", "/opt/bin:/usr/bin:/bin", fs);
  CHECK(c.found());
  CHECK(c.path == "/usr/bin/python3");
  CHECK(c.error.empty());
}

TEST_CASE("command path: not found names the command and the PATH", "[command_path]") {
  auto c = find_command("trian.py", "/usr/bin:/bin", files({}));
  CHECK_FALSE(c.found());
  CHECK(c.error == "'trian.py' was not found on PATH (/usr/bin:/bin)");
  // Only a file that cannot be executed: said so.
  c = find_command("tool", "/usr/bin", files({{"/usr/bin/tool", FileKind::not_executable}}));
  CHECK_FALSE(c.found());
  CHECK(c.error == "'tool' was not found on PATH (/usr/bin); /usr/bin/tool is not executable");
  CHECK(find_command("x", "", files({})).error == "'x' was not found on PATH (empty)");
  CHECK(find_command("", "/bin", files({})).error == "the command is empty");
}

TEST_CASE("command path: an empty PATH entry is the current directory", "[command_path]") {
  const auto fs = files({{"./run.sh", FileKind::executable}});
  CHECK(find_command("run.sh", "/usr/bin::/bin", fs).path == "./run.sh");
  CHECK(find_command("run.sh", "/usr/bin:", fs).path == "./run.sh");
  CHECK_FALSE(find_command("run.sh", "/usr/bin", fs).found());
}

TEST_CASE("command path: a path is taken as given, never searched", "[command_path]") {
  const auto fs = files({{"./train.sh", FileKind::executable},
                         {"/data", FileKind::directory},
                         {"/data/notes.txt", FileKind::not_executable},
                         {"/usr/bin/train.sh", FileKind::executable}});
  CHECK(find_command("./train.sh", "/usr/bin", fs).path == "./train.sh");
  CHECK(find_command("/data", "/usr/bin", fs).error == "'/data': is a directory");
  CHECK(find_command("/data/notes.txt", "/usr/bin", fs).error == "'/data/notes.txt': is not executable");
  CHECK(find_command("bin/train.sh", "/usr", fs).error == "'bin/train.sh': no such file");
}

TEST_CASE("command path: the real file system", "[command_path]") {
  CHECK(probe_file("/bin/sh") == FileKind::executable);
  CHECK(probe_file("/") == FileKind::directory);
  CHECK(probe_file("/nonexistent/cudadiag") == FileKind::missing);
  CHECK(find_command("sh", "/nonexistent:/bin:/usr/bin").found());
}
