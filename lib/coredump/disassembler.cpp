#include "coredump/disassembler.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "runner/runner.h"
#include "util/executable_search.h"
#include "util/fd_io.h"
#include "util/scratch_dir.h"

namespace cudadiag::coredump {
namespace {

void add_glob(const std::string& pattern, std::vector<std::string>& out) {
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (std::size_t i = 0; i < g.gl_pathc && i < 64; ++i) out.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
}

}  // namespace

std::vector<std::string> nvdisasm_candidates(const EnvLookup& getenv_fn) {
  const EnvLookup env = getenv_fn ? getenv_fn : [](const char* n) { return std::getenv(n); };
  std::vector<std::string> out;
  if (const char* e = env("CUDADIAG_NVDISASM"); e != nullptr && *e != '\0') out.emplace_back(e);
  std::vector<std::string> path_dirs;
  if (const char* p = env("PATH")) path_dirs = split_search_path(p);
  for (const auto& d : path_dirs) out.push_back(d + "/nvdisasm");
  for (const char* root : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* h = env(root); h != nullptr && *h != '\0') out.push_back(std::string(h) + "/bin/nvdisasm");
  out.emplace_back("/usr/local/cuda/bin/nvdisasm");
  // The wheel: <prefix>/lib/python3.X/{site,dist}-packages/nvidia/cu*/bin/nvdisasm, for the
  // Python environments whose bin/ is on PATH (venv, conda, /usr/local), the active venv or
  // conda prefix, pyenv's versions (PATH holds only its shims), and pip --user.
  std::vector<std::string> prefixes;
  for (const auto& d : path_dirs) prefixes.push_back(d + "/..");
  for (const char* v : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* p = env(v); p != nullptr && *p != '\0') prefixes.emplace_back(p);
  const char* home = env("HOME");
  if (const char* p = env("PYENV_ROOT"); p != nullptr && *p != '\0') prefixes.push_back(std::string(p) + "/versions/*");
  else if (home != nullptr && *home != '\0') prefixes.push_back(std::string(home) + "/.pyenv/versions/*");
  if (home != nullptr && *home != '\0') prefixes.push_back(std::string(home) + "/.local");
  for (const auto& prefix : prefixes)
    for (const char* pk : {"site-packages", "dist-packages"})
      add_glob(prefix + "/lib/python3*/" + pk + "/nvidia/cu*/bin/nvdisasm", out);
  return out;
}

Disassembler find_nvdisasm(const std::string& explicit_path, const EnvLookup& getenv_fn) {
  Disassembler d;
  if (!explicit_path.empty()) {
    if (is_executable_file(explicit_path)) d.path = explicit_path;
    else d.reason = "--nvdisasm " + explicit_path + ": not an executable file";
    return d;
  }
  for (const auto& c : nvdisasm_candidates(getenv_fn))
    if (is_executable_file(c)) {
      d.path = c;
      return d;
    }
  d.reason = std::string("nvdisasm not found (searched $CUDADIAG_NVDISASM, PATH, $CUDA_HOME, $CUDA_PATH, "
                         "/usr/local/cuda and Python environments): ") +
             kNvdisasmHint;
  return d;
}

Listing disassemble_function(const Disassembler& tool, Bytes cubin, const FunctionSymbol& function) {
  Listing out;
  if (tool.path.empty()) {
    out.error = tool.reason;
    return out;
  }
  ScratchDir scratch("nvdisasm");
  const std::string image = scratch.path() + "/image.cubin";
  const int fd = ::open(image.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 || !write_all(fd, cubin.data(), cubin.size())) {
    if (fd >= 0) ::close(fd);
    out.error = "could not write the image for nvdisasm into " + scratch.path();
    return out;
  }
  ::close(fd);
  runner::ChildSpec spec;
  spec.argv = {tool.path, "-c", "-fun", std::to_string(function.index), image};
  spec.deadline = std::chrono::milliseconds(60000);
  spec.capture_limit = 16u << 20;
  spec.result_pipe = false;
  spec.label = "nvdisasm";
  const auto r = runner::run_child(spec);
  if (r.ending == runner::Ending::spawn_failed) {
    out.error = tool.path + ": " + r.spawn_error;
  } else if (r.ending == runner::Ending::timeout) {
    out.error = tool.path + " took longer than 60 s";
  } else if (r.exit_code.value_or(0) != 0 || r.signal) {
    std::string err = r.err.text();
    if (err.size() > 300) err.resize(300);
    out.error = tool.path + " failed" + (r.exit_code ? " (exit " + std::to_string(*r.exit_code) + ")" : "") +
                (err.empty() ? "" : ": " + err);
  } else if (r.out.dropped_bytes > 0) {
    out.error = "nvdisasm printed more than 16 MiB for one function";
  } else {
    out.text = r.out.text();
  }
  return out;
}

std::string no_disassembler_note(const std::string& reason) {
  return "the sites name kernel and line from the cubins' symbols and line tables, but not the faulting instruction "
         "or address: " +
         reason;
}

DisassembleFn disassemble_with(const Disassembler& tool) {
  if (tool.path.empty()) return {};
  return [tool](Bytes image, const FunctionSymbol& f) { return disassemble_function(tool, image, f); };
}

}  // namespace cudadiag::coredump
