#include "run/symbolizer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coredump/elf_file.h"
#include "util/demangle.h"

namespace cudadiag::run {

// A file mapped read-only and its section table; `elf` is empty when it could not be read.
struct Symbolizer::Image {
  void* map = nullptr;
  std::size_t bytes = 0;
  std::optional<coredump::ElfFile> elf;
  ~Image() {
    if (map) munmap(map, bytes);
  }
};

namespace {

// Larger objects are not read (no shared object comes near it).
constexpr std::uint64_t kMaxImageBytes = 8ull << 30;

bool may_read(const struct stat& st) {
  return S_ISREG(st.st_mode) && ((st.st_mode & S_IROTH) != 0 || st.st_uid == geteuid()) && st.st_size > 0 &&
         static_cast<std::uint64_t>(st.st_size) <= kMaxImageBytes;
}

}  // namespace

Symbolizer::Symbolizer(std::vector<ModuleRecord> modules) : modules_(std::move(modules)) {}
Symbolizer::~Symbolizer() = default;

const Symbolizer::Image* Symbolizer::image(const std::string& path) {
  auto [it, added] = images_.try_emplace(path);
  if (!added) return it->second.get();
  auto img = std::make_unique<Image>();
  const int fd = path.empty() || path.front() != '/' ? -1 : open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st {};
  if (fd >= 0 && fstat(fd, &st) == 0 && may_read(st)) {
    void* p = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      img->map = p;
      img->bytes = static_cast<std::size_t>(st.st_size);
      try {
        img->elf = coredump::ElfFile::parse(coredump::Bytes(static_cast<const std::uint8_t*>(p), img->bytes), path);
      } catch (const coredump::UnreadableDump&) {
        img->elf.reset();  // not an ELF file we can read: addresses stay unnamed
      }
    }
  }
  if (fd >= 0) close(fd);
  it->second = std::move(img);
  return it->second.get();
}

report::OriginHostFrame Symbolizer::frame(std::uint64_t return_address) {
  report::OriginHostFrame f;
  f.address = return_address;
  const ModuleRecord* m = nullptr;
  for (const auto& x : modules_)
    if (x.begin <= return_address && return_address < x.end) {
      m = &x;
      break;
    }
  if (!m) return f;
  f.module = m->path;
  const std::uint64_t in_file = return_address - m->bias;
  f.offset = in_file;
  const Image* img = image(m->path);
  if (!img || !img->elf) return f;
  // The call is the instruction before the return address.
  const std::uint64_t call = in_file > 0 ? in_file - 1 : in_file;
  auto sym = coredump::function_symbol_at(*img->elf, call, coredump::kShtSymtab);
  if (!sym) sym = coredump::function_symbol_at(*img->elf, call, coredump::kShtDynsym);
  if (!sym) return f;
  f.function = demangle(sym->name);
  f.offset = in_file - sym->value;
  return f;
}

report::AllocationOrigin allocation_origin(const InterposerLog& log, const AllocationRecord& a, Symbolizer& symbols) {
  report::AllocationOrigin o;
  if (!a.site || *a.site >= log.sites.size()) return o;
  const AllocationSite& site = log.sites[*a.site];
  if (!site.recorded) return o;
  for (const auto& p : site.python) o.python.push_back(report::OriginPythonFrame{p.file, p.line, p.function, p.user});
  for (const auto pc : site.frames) o.host.push_back(symbols.frame(pc));
  o.python_note = site.python_note;
  return o;
}

}  // namespace cudadiag::run
