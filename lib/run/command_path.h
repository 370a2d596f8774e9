#pragma once
// Where the user's command lives, decided before anything runs: a name without '/' is
// looked up on PATH (the PATH the program will get: --env PATH=... wins over ours), a
// path is checked as given. A command that cannot be found or executed is the user's
// input error, named with the reason, not a run that "did not start".
#include <functional>
#include <string>

namespace cudadiag::run {

struct CommandPath {
  std::string path;   // what to execute ("" when not found)
  std::string error;  // why not: "'foo' was not found on PATH (/usr/bin:/bin)", ...
  bool found() const { return !path.empty(); }
};

// What a file is, for the lookup: injectable so that tests need no real files.
enum class FileKind { missing, directory, not_executable, executable };
using FileProbe = std::function<FileKind(const std::string& path)>;
FileKind probe_file(const std::string& path);  // stat + access(X_OK)

// `name` as the shell would find it: with a '/', that file; without, the first
// executable regular file named so in PATH's directories (an empty entry is the current
// directory). An empty path_var searches nothing.
CommandPath find_command(const std::string& name, const std::string& path_var,
                         const FileProbe& probe = probe_file);

}  // namespace cudadiag::run
