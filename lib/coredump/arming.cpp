#include "coredump/arming.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "coredump/core_dump.h"
#include "coredump/dump_file.h"
#include "coredump/report_site.h"
#include "util/atomic_file.h"
#include "util/errors.h"
#include "util/path_name.h"

namespace cudadiag::coredump {
namespace {

using Clock = std::chrono::steady_clock;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Names in dir that are `prefix` + digits + `suffix`, of the file type `mode` (lstat: a
// link is never one of them), sorted.
std::vector<std::string> entries(const DumpNames& n, std::string_view prefix, std::string_view suffix, mode_t mode) {
  std::vector<std::string> out;
  DIR* d = ::opendir(n.dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name(e->d_name);
    if (!starts_with(name, prefix) || name.size() < prefix.size() + suffix.size() ||
        name.substr(name.size() - suffix.size()) != suffix)
      continue;
    if (!all_digits(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()))) continue;
    const std::string path = n.dir + "/" + std::string(name);
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == mode) out.push_back(path);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool is_coredump_variable(std::string_view name) {
  return starts_with(name, "CUDA_COREDUMP_") || name == kEnableVar || name == kUserTriggerVar ||
         name == "CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION" || name == "CUDA_ENABLE_LIGHTWEIGHT_COREDUMP";
}

std::vector<std::string> user_coredump_variables(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names)
    if (is_coredump_variable(n) && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> inherited_coredump_variables() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view kv(*e);
    names.emplace_back(kv.substr(0, kv.find('=')));
  }
  return user_coredump_variables(names);
}

std::string user_settings_line(const std::vector<std::string>& user_vars) {
  std::string set;
  for (const auto& v : user_vars) set += (set.empty() ? "" : ", ") + v;
  return "GPU core dumps not armed by cudadiag: the program's environment sets " + set +
         " (kept as they are; cudadiag reads no dump of its own)";
}

std::string DumpNames::file_pattern() const { return dir + "/" + prefix + "_%p.nvcudmp"; }
std::string DumpNames::pipe_pattern() const { return dir + "/" + prefix + "-pipe_%p"; }

std::map<std::string, std::string> arming_env(const DumpNames& names, bool pipe) {
  std::map<std::string, std::string> env{{std::string(kEnableVar), "1"},
                                         {std::string(kFileVar), names.file_pattern()},
                                         {std::string(kFlagsVar), std::string(kGenerationFlags)}};
  if (pipe) {
    env[std::string(kUserTriggerVar)] = "1";
    env[std::string(kPipeVar)] = names.pipe_pattern();
  }
  return env;
}

std::vector<std::string> find_dumps(const DumpNames& names) {
  return entries(names, names.prefix + "_", ".nvcudmp", S_IFREG);
}

std::vector<std::string> find_pipes(const DumpNames& names) { return entries(names, names.prefix + "-pipe_", "", S_IFIFO); }

namespace {

// Writes into a pipe whose reader went away must fail with EPIPE, not kill the caller:
// SIGPIPE is blocked in this thread while they run, and one that they raised is taken
// off the pending set before the mask is restored (a library cannot rely on main()
// ignoring SIGPIPE).
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    already_pending_ = sigismember(&pending, SIGPIPE) == 1;
    blocked_ = ::pthread_sigmask(SIG_BLOCK, &pipe, &old_) == 0;
  }
  ~SigpipeBlocked() {
    if (!blocked_) return;
    sigset_t pending;
    sigpending(&pending);
    if (!already_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      sigset_t pipe;
      sigemptyset(&pipe);
      sigaddset(&pipe, SIGPIPE);
      const timespec now{0, 0};
      (void)::sigtimedwait(&pipe, nullptr, &now);
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t old_{};
  bool blocked_ = false;
  bool already_pending_ = false;
};

}  // namespace

std::vector<std::string> trigger_pipes(const std::vector<std::string>& pipes, std::size_t bytes) {
  const SigpipeBlocked no_sigpipe;
  std::vector<std::string> out;
  static const std::vector<char> zeros(64 * 1024, 0);
  for (const auto& p : pipes) {
    // O_NONBLOCK: an open with no reader fails (ENXIO) instead of waiting, a full pipe
    // takes what fits; O_NOFOLLOW and the check after open: only a FIFO is written.
    const int fd = ::open(p.c_str(), O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    std::size_t written = 0;
    if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
      // A full pipe (EAGAIN) is waited on while the reader drains it, kTriggerWait at most.
      const auto until = Clock::now() + kTriggerWait;
      while (written < bytes) {
        const ssize_t n = ::write(fd, zeros.data(), std::min(zeros.size(), bytes - written));
        if (n > 0) {
          written += static_cast<std::size_t>(n);
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN) break;  // EPIPE: the reader is gone
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
        if (left <= 0) break;
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, static_cast<int>(std::min<long long>(left, 50))) < 0 && errno != EINTR) break;
      }
    }
    ::close(fd);
    if (written > 0) out.push_back(p);
  }
  return out;
}

DumpWatcher::DumpWatcher(DumpNames names, std::size_t expected, std::chrono::milliseconds settle)
    : names_(std::move(names)), expected_(std::max<std::size_t>(1, expected)), settle_(settle) {}

bool DumpWatcher::complete() {
  const auto now = Clock::now();
  std::map<std::string, std::uint64_t> sizes;
  for (const auto& f : find_dumps(names_)) {
    struct stat st {};
    if (::lstat(f.c_str(), &st) == 0) sizes[f] = static_cast<std::uint64_t>(st.st_size);
  }
  if (sizes != sizes_ || last_change_ == Clock::time_point{}) {
    sizes_ = std::move(sizes);
    last_change_ = now;
    return false;
  }
  if (sizes_.size() < expected_) return false;
  for (const auto& [f, size] : sizes_)
    if (size == 0) return false;
  return now - last_change_ >= settle_;
}

Collected collect_dumps(const DumpNames& names, const CollectOptions& opts) {
  Collected out;
  const auto files = find_dumps(names);
  if (files.size() > opts.max_dumps)
    out.notes.push_back(fmt::format("{} core dumps were written; the first {} were read", files.size(), opts.max_dumps));
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i];
    const auto t0 = Clock::now();
    report::FaultSite site;
    struct stat st {};
    const bool stat_ok = ::lstat(path.c_str(), &st) == 0;
    const std::uint64_t size = stat_ok ? static_cast<std::uint64_t>(st.st_size) : 0;
    bool keep = !opts.keep_dir.empty();
    if (i >= opts.max_dumps) {
      keep = false;
    } else if (size > opts.max_bytes) {
      site.dump = base_name(path);
      site.dump_bytes = size;
      site.unreadable = fmt::format("{} bytes, more than the {} bytes cudadiag reads of a dump (not read)", size,
                                    opts.max_bytes);
      out.sites.push_back(std::move(site));
      keep = false;
      out.notes.push_back(fmt::format("{}: {} bytes, not read and not kept (limit {} bytes)", base_name(path), size,
                                      opts.max_bytes));
    } else {
      std::optional<DumpFile> file;
      try {
        file.emplace(path);
        const CoreDump dump = read_core_dump(file->bytes());
        site = to_report_site(analyze_dump(dump, opts.disassemble, opts.no_disassembler_reason));
      } catch (const UnreadableDump& e) {
        site = report::FaultSite{};
        site.unreadable = e.what();
      }
      site.dump = base_name(path);
      site.dump_bytes = file ? file->bytes().size() : size;
      if (keep && file) {
        const std::string kept = opts.keep_dir + "/" + base_name(path);
        try {
          const auto b = file->bytes();
          write_file_atomically(kept, std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
          site.kept = true;
          site.dump = kept;
        } catch (const std::exception& e) {
          out.notes.push_back(std::string("a core dump was not kept: ") + e.what());
        }
      }
      site.read_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      out.sites.push_back(std::move(site));
    }
    ::unlink(path.c_str());  // kept as a copy, or read: the scratch folder keeps nothing
  }
  return out;
}

}  // namespace cudadiag::coredump
