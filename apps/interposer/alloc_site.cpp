#include "apps/interposer/alloc_site.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "apps/interposer/real_dlsym.h"

namespace cudadiag::interposer {
namespace {

// --- modules -----------------------------------------------------------------------

struct Range {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

// The modules recorded into `g_modules_ring`, sorted by begin: a return address found in
// one of them needs no new look at the loaded objects.
SpinLock g_modules_lock;
RingWriter* g_modules_ring = nullptr;
Range* g_known = nullptr;
std::uint32_t g_known_count = 0;
std::uint32_t g_known_capacity = 0;
Range g_self;                                   // the interposer's own code
std::atomic<std::uint32_t> g_loads{0};          // libraries loaded (note_library_load)
std::uint32_t g_loads_seen = ~0u;               // g_loads at the last look
char g_exe[ring::kModulePathBytes];             // the program's own file

bool known(std::uint64_t pc) noexcept {
  std::uint32_t lo = 0, hi = g_known_count;
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (g_known[mid].end <= pc) lo = mid + 1;
    else hi = mid;
  }
  return lo < g_known_count && g_known[lo].begin <= pc && pc < g_known[lo].end;
}

void insert_known(Range r) noexcept {
  if (g_known_count == g_known_capacity) return;
  std::uint32_t i = g_known_count;
  while (i > 0 && g_known[i - 1].begin > r.begin) {
    g_known[i] = g_known[i - 1];
    --i;
  }
  g_known[i] = r;
  ++g_known_count;
}

struct Scan {
  RingWriter* ring;
  std::uint64_t self_pc;
};

int on_object(dl_phdr_info* info, size_t, void* data) {
  auto* scan = static_cast<Scan*>(data);
  std::uint64_t lo = ~0ull, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = ph.p_vaddr < lo ? ph.p_vaddr : lo;
    hi = ph.p_vaddr + ph.p_memsz > hi ? ph.p_vaddr + ph.p_memsz : hi;
  }
  if (lo >= hi) return 0;
  const Range r{info->dlpi_addr + lo, info->dlpi_addr + hi};
  if (r.begin <= scan->self_pc && scan->self_pc < r.end) {
    g_self = r;
    return 0;  // the interposer's frames are never kept
  }
  for (std::uint32_t i = 0; i < g_known_count; ++i)
    if (g_known[i].begin == r.begin) return 0;
  const char* path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : g_exe;
  ModuleEvent e;
  e.begin = r.begin;
  e.end = r.end;
  e.bias = info->dlpi_addr;
  e.path = path;
  if (scan->ring->add_module(e)) insert_known(r);
  return 0;
}

// Caller holds g_modules_lock.
void look_at_loaded_objects(RingWriter& ring) noexcept {
  if (g_modules_ring != &ring) {  // a new ring (a process of its own after fork): its table is empty
    g_modules_ring = &ring;
    g_known_count = 0;
    g_loads_seen = ~0u;
    std::free(g_known);
    g_known_capacity = ring.header()->module_capacity;
    g_known = static_cast<Range*>(std::calloc(g_known_capacity ? g_known_capacity : 1, sizeof(Range)));
    if (!g_known) g_known_capacity = 0;
  }
  const std::uint32_t loads = g_loads.load(std::memory_order_acquire);
  if (loads == g_loads_seen) return;
  g_loads_seen = loads;
  Scan scan{&ring, reinterpret_cast<std::uint64_t>(&look_at_loaded_objects)};
  dl_iterate_phdr(&on_object, &scan);
}

// --- Python ------------------------------------------------------------------------

struct PyApi {
  int (*is_initialized)() = nullptr;
  int (*gil_check)() = nullptr;
  void* (*get_frame)() = nullptr;              // PyEval_GetFrame: borrowed
  int (*frame_line)(void*) = nullptr;          // PyFrame_GetLineNumber
  void* (*frame_code)(void*) = nullptr;        // PyFrame_GetCode: new reference
  void* (*frame_back)(void*) = nullptr;        // PyFrame_GetBack: new reference
  void* (*get_attr)(void*, const char*) = nullptr;  // PyObject_GetAttrString: new reference
  const char* (*as_utf8)(void*) = nullptr;     // PyUnicode_AsUTF8
  void (*dec_ref)(void*) = nullptr;            // Py_DecRef
  void* (*err_occurred)() = nullptr;
  void (*err_clear)() = nullptr;
  bool complete() const {
    return is_initialized && gil_check && get_frame && frame_line && frame_code && frame_back && get_attr &&
           as_utf8 && dec_ref && err_occurred && err_clear;
  }
};

PyApi g_py;
std::atomic<bool> g_py_ready{false};
std::uint32_t g_py_loads_seen = ~0u;  // g_loads when the interpreter was last looked for

template <class F>
void look_up(F& out, const char* name) noexcept {
  const DlsymFn dlsym_fn = real_dlsym();
  out = dlsym_fn ? reinterpret_cast<F>(dlsym_fn(RTLD_DEFAULT, name)) : nullptr;
}

// Caller holds g_modules_lock.
bool python_api() noexcept {
  if (g_py_ready.load(std::memory_order_acquire)) return true;
  const std::uint32_t loads = g_loads.load(std::memory_order_acquire);
  if (loads == g_py_loads_seen) return false;  // not there at the last look, nothing loaded since
  g_py_loads_seen = loads;
  PyApi p;
  look_up(p.is_initialized, "Py_IsInitialized");
  if (!p.is_initialized) return false;
  look_up(p.gil_check, "PyGILState_Check");
  look_up(p.get_frame, "PyEval_GetFrame");
  look_up(p.frame_line, "PyFrame_GetLineNumber");
  look_up(p.frame_code, "PyFrame_GetCode");
  look_up(p.frame_back, "PyFrame_GetBack");
  look_up(p.get_attr, "PyObject_GetAttrString");
  look_up(p.as_utf8, "PyUnicode_AsUTF8");
  look_up(p.dec_ref, "Py_DecRef");
  look_up(p.err_occurred, "PyErr_Occurred");
  look_up(p.err_clear, "PyErr_Clear");
  if (!p.complete()) return false;  // an interpreter older than 3.9
  g_py = p;
  g_py_ready.store(true, std::memory_order_release);
  return true;
}

// The interpreter's own modules and installed packages are not the user's code.
bool user_file(const char* file) noexcept {
  if (!file[0] || file[0] == '<') return false;  // <frozen ...>, <string>
  return !std::strstr(file, "/site-packages/") && !std::strstr(file, "/dist-packages/") &&
         !std::strstr(file, "/lib/python3.");
}

void copy_tail(char* dst, std::size_t size, const char* src, std::uint8_t& flags) noexcept {
  std::memset(dst, 0, size);
  if (!src) return;
  const std::size_t n = std::strlen(src);
  if (n < size) {
    std::memcpy(dst, src, n);
    return;
  }
  std::memcpy(dst, src + n - (size - 1), size - 1);  // the path's end names the file
  flags |= ring::kPythonFileCut;
}

void copy_head(char* dst, std::size_t size, const char* src) noexcept {
  std::memset(dst, 0, size);
  if (!src) return;
  const std::size_t n = strnlen(src, size - 1);
  std::memcpy(dst, src, n);
}

bool read_frame(void* frame, ring::PythonFrame& out) noexcept {
  out = ring::PythonFrame{};
  void* code = g_py.frame_code(frame);
  if (!code) return false;
  out.line = g_py.frame_line(frame);
  if (void* file = g_py.get_attr(code, "co_filename")) {
    copy_tail(out.file, sizeof out.file, g_py.as_utf8(file), out.flags);
    g_py.dec_ref(file);
  }
  if (void* name = g_py.get_attr(code, "co_name")) {
    copy_head(out.function, sizeof out.function, g_py.as_utf8(name));
    g_py.dec_ref(name);
  }
  g_py.dec_ref(code);
  if (user_file(out.file)) out.flags |= ring::kPythonUserFrame;
  return true;
}

// The innermost Python frame, then the innermost one of the user's code (when it is not
// the same). Read only by the thread that holds the interpreter's lock, with no exception
// in flight (what this reads must not disturb one).
std::uint32_t python_frames(ring::PythonFrame* out, ring::PythonState& state) noexcept {
  if (!g_py.is_initialized()) return 0;
  if (!g_py.gil_check()) {
    state = ring::PythonState::lock_released;
    return 0;
  }
  if (g_py.err_occurred()) {
    state = ring::PythonState::error_pending;
    return 0;
  }
  state = ring::PythonState::read;
  void* frame = g_py.get_frame();
  std::uint32_t count = 0;
  bool owned = false;
  for (int depth = 0; frame && depth < 64 && count < ring::kPythonFrames; ++depth) {
    ring::PythonFrame f;
    if (read_frame(frame, f) && (depth == 0 || (f.flags & ring::kPythonUserFrame))) {
      out[count++] = f;
      if (f.flags & ring::kPythonUserFrame) break;  // the user's line: nothing further out is needed
    }
    void* back = g_py.frame_back(frame);
    if (owned) g_py.dec_ref(frame);
    frame = back;
    owned = true;
  }
  if (owned && frame) g_py.dec_ref(frame);
  if (g_py.err_occurred()) g_py.err_clear();
  return count;
}

}  // namespace

void init_allocation_sites() noexcept {
  // glibc's backtrace loads the unwinder on its first call: here, not inside an allocation.
  void* frames[2];
  (void)backtrace(frames, 2);
  const ssize_t n = readlink("/proc/self/exe", g_exe, sizeof g_exe - 1);
  g_exe[n > 0 ? n : 0] = '\0';
}

void note_library_load() noexcept { g_loads.fetch_add(1, std::memory_order_acq_rel); }

std::uint32_t capture_allocation_site(RingWriter& ring) noexcept {
  if (!ring.header() || ring.header()->site_capacity == 0) return ring::kNoSite;
  InternalScope internal;  // dlsym calls made meanwhile pass straight through
  constexpr int kRaw = static_cast<int>(ring::kSiteFrames) + 16;
  void* raw[kRaw];
  const int n = backtrace(raw, kRaw);

  SiteEvent e;
  g_modules_lock.lock();
  bool unknown = g_modules_ring != &ring;
  for (int i = 0; i < n && !unknown; ++i) {
    const auto pc = reinterpret_cast<std::uint64_t>(raw[i]);
    if (!(g_self.begin <= pc && pc < g_self.end) && !known(pc)) unknown = true;
  }
  if (unknown) look_at_loaded_objects(ring);
  std::uint32_t flags = ring::kStacksHost;
  for (int i = 0; i < n && e.frame_count < ring::kSiteFrames; ++i) {
    const auto pc = reinterpret_cast<std::uint64_t>(raw[i]);
    if (g_self.begin <= pc && pc < g_self.end) continue;  // the interposer's own frames
    e.frames[e.frame_count++] = pc;
  }
  const bool py = python_api();
  g_modules_lock.unlock();
  if (py) {
    e.python_count = python_frames(e.python, e.python_state);
    if (e.python_count) flags |= ring::kStacksPython;
  }
  ring.add_stack_flags(flags);
  return ring.add_site(e);
}

}  // namespace cudadiag::interposer
