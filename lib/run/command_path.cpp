#include "run/command_path.h"

#include <sys/stat.h>
#include <unistd.h>

namespace cudadiag::run {
namespace {

std::string why(FileKind k) {
  switch (k) {
    case FileKind::missing: return "no such file";
    case FileKind::directory: return "is a directory";
    case FileKind::not_executable: return "is not executable";
    case FileKind::executable: break;
  }
  return "";
}

}  // namespace

FileKind probe_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return FileKind::missing;
  if (S_ISDIR(st.st_mode)) return FileKind::directory;
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) return FileKind::not_executable;
  return FileKind::executable;
}

CommandPath find_command(const std::string& name, const std::string& path_var, const FileProbe& probe) {
  CommandPath out;
  if (name.empty()) {
    out.error = "the command is empty";
    return out;
  }
  if (name.find('/') != std::string::npos) {
    const FileKind k = probe(name);
    if (k == FileKind::executable) out.path = name;
    else out.error = "'" + name + "': " + why(k);
    return out;
  }
  // The first match wins; a file that exists but cannot be executed is passed over, as
  // the shell does, and named when nothing else matches.
  std::string passed_over;
  std::size_t start = 0;
  while (start <= path_var.size() && !path_var.empty()) {
    const std::size_t colon = path_var.find(':', start);
    const std::size_t end = colon == std::string::npos ? path_var.size() : colon;
    const std::string dir = path_var.substr(start, end - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    const FileKind k = probe(candidate);
    if (k == FileKind::executable) {
      out.path = candidate;
      return out;
    }
    if (k != FileKind::missing && passed_over.empty()) passed_over = candidate + " " + why(k);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  out.error = "'" + name + "' was not found on PATH (" + (path_var.empty() ? std::string("empty") : path_var) + ")";
  if (!passed_over.empty()) out.error += "; " + passed_over;
  return out;
}

}  // namespace cudadiag::run
