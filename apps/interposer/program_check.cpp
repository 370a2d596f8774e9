#include "apps/interposer/program_check.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>

namespace cudadiag::interposer {
namespace {

constexpr int kMaxInterpreterDepth = 4;
constexpr std::size_t kPathBytes = 4096;

// The loader treats the program as secure (AT_SECURE) when exec changes the ids.
bool changes_ids(int fd, const struct stat& st) {
  if ((st.st_mode & S_ISUID) && st.st_uid != getuid()) return true;
  if ((st.st_mode & S_ISGID) && st.st_gid != getgid()) return true;
  return getuid() != 0 && fgetxattr(fd, "security.capability", nullptr, 0) > 0;
}

bool read_at(int fd, off_t offset, void* out, std::size_t n) {
  return pread(fd, out, n, offset) == static_cast<ssize_t>(n);
}

// The dynamic loader itself (run as a program, it still honours LD_PRELOAD).
bool is_dynamic_loader(const char* path) {
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  return std::strncmp(base, "ld-linux", 8) == 0 || std::strncmp(base, "ld.so", 5) == 0 ||
         std::strncmp(base, "ld64.so", 7) == 0;
}

ring::EventKind check_elf(int fd) {
  Elf64_Ehdr eh{};
  if (!read_at(fd, 0, &eh, sizeof eh)) return ring::EventKind::escaped_unreadable;
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) {
    // A 32-bit program: the 64-bit interposer cannot load into it.
    return ring::EventKind::escaped_foreign;
  }
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 4096)
    return ring::EventKind::escaped_unreadable;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!read_at(fd, static_cast<off_t>(eh.e_phoff + i * sizeof ph), &ph, sizeof ph))
      return ring::EventKind::escaped_unreadable;
    if (ph.p_type == PT_INTERP) return ring::EventKind::none;
  }
  // Statically linked: nothing can be preloaded, and nothing can load libcuda.so either
  // (the driver is a shared library only), so the program cannot use CUDA: no escape
  // (Triton runs /sbin/ldconfig to find libcuda).
  return ring::EventKind::none;
}

ring::EventKind check(int fd, const char* path, int depth);

// "#!interpreter [arg]": the interpreter decides.
ring::EventKind check_script(int fd, int depth) {
  char line[kPathBytes];
  const ssize_t n = pread(fd, line, sizeof line - 1, 0);
  if (n < 2) return ring::EventKind::none;
  line[n] = '\0';
  char* p = line + 2;
  while (*p == ' ' || *p == '\t') ++p;
  char* end = p;
  while (*end && *end != ' ' && *end != '\t' && *end != '\n') ++end;
  *end = '\0';
  if (*p == '\0' || depth >= kMaxInterpreterDepth) return ring::EventKind::none;  // exec fails
  const int interpreter = open(p, O_RDONLY | O_CLOEXEC);
  if (interpreter < 0) return ring::EventKind::none;  // exec fails: nothing runs
  const ring::EventKind k = check(interpreter, p, depth + 1);
  close(interpreter);
  return k;
}

ring::EventKind check(int fd, const char* path, int depth) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return ring::EventKind::escaped_unreadable;
  if (!S_ISREG(st.st_mode)) return ring::EventKind::none;  // exec fails
  if (changes_ids(fd, st)) return ring::EventKind::escaped_setid;
  unsigned char magic[4] = {};
  if (pread(fd, magic, sizeof magic, 0) < 2) return ring::EventKind::none;  // exec fails (or a shell runs it)
  if (magic[0] == '#' && magic[1] == '!') return check_script(fd, depth);
  if (std::memcmp(magic, ELFMAG, SELFMAG) != 0) return ring::EventKind::none;  // execvp hands it to /bin/sh
  if (path && is_dynamic_loader(path)) return ring::EventKind::none;
  return check_elf(fd);
}

}  // namespace

ring::EventKind escape_of(const char* path) noexcept {
  if (!path) return ring::EventKind::none;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    // Execute-only programs cannot be read: exec still runs them.
    struct stat st {};
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? ring::EventKind::escaped_unreadable : ring::EventKind::none;
  }
  const ring::EventKind k = check(fd, path, 0);
  close(fd);
  return k;
}

ring::EventKind escape_of_fd(int fd) noexcept { return check(fd, nullptr, 0); }

bool find_on_path(const char* file, const char* path_list, char* out, std::size_t size) noexcept {
  if (!file || !*file || size == 0) return false;
  const std::size_t file_length = std::strlen(file);
  if (std::strchr(file, '/')) {
    if (file_length + 1 > size) return false;
    std::memcpy(out, file, file_length + 1);
    return true;
  }
  const char* p = path_list ? path_list : "/bin:/usr/bin";
  while (true) {
    const std::size_t length = std::strcspn(p, ":");
    // An empty entry is the current directory.
    const std::size_t dir_length = length == 0 ? 1 : length;
    if (dir_length + 1 + file_length + 1 <= size) {
      if (length == 0) {
        out[0] = '.';
      } else {
        std::memcpy(out, p, length);
      }
      out[dir_length] = '/';
      std::memcpy(out + dir_length + 1, file, file_length + 1);
      struct stat st {};
      if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) return true;
    }
    if (p[length] == '\0') return false;
    p += length + 1;
  }
}

}  // namespace cudadiag::interposer
