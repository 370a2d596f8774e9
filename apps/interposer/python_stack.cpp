#include "apps/interposer/python_stack.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>

#include "apps/interposer/real_dlsym.h"

namespace cudadiag::interposer {
namespace {

// --- where things are, per minor version ------------------------------------------------
// Offsets into the interpreter's structures of a 64-bit build with the GIL, from the
// CPython headers of each version (Include/cpython/pystate.h, code.h, unicodeobject.h;
// Include/internal/pycore_frame.h). They hold for every patch release of a minor version.

enum class FrameKind : std::uint8_t {
  object,       // 3.9, 3.10: a chain of PyFrameObject (f_back)
  interpreter,  // 3.11 on: a chain of _PyInterpreterFrame (previous)
};

struct Layout {
  int minor = 0;
  FrameKind kind = FrameKind::object;
  std::uint32_t tstate_frame = 0;   // PyThreadState: frame (3.9, 3.10), cframe (3.11, 3.12), current_frame (3.13)
  std::int32_t cframe_current = -1; // _PyCFrame: current_frame (3.11, 3.12); -1: the thread state holds the frame
  std::uint32_t frame_back = 0;     // f_back / previous
  std::uint32_t frame_code = 0;     // f_code / f_executable
  std::uint32_t frame_instr = 0;    // f_lasti (an int) / prev_instr, instr_ptr (a pointer)
  std::uint32_t frame_owner = 0;    // owner (a byte; interpreter frames)
  bool lasti_in_units = false;      // 3.10: f_lasti counts 2-byte code units
  bool cstack_shims = false;        // 3.12 on: frames owned by the C stack are shims, not Python code
  std::uint32_t code_filename = 0;
  std::uint32_t code_name = 0;
  std::uint32_t code_units = 0;     // co_code_adaptive (3.11 on): the first code unit
  std::uint32_t code_first_traceable = 0;  // _co_firsttraceable (an int; 3.11 on)
  std::uint32_t ascii_size = 0;     // sizeof(PyASCIIObject): a compact ASCII string's bytes follow
  std::uint32_t compact_size = 0;   // sizeof(PyCompactUnicodeObject): another compact string's code units follow
  bool ready_bit = false;           // 3.9 to 3.11: state.ready must be set
};

constexpr Layout kLayouts[] = {
    {9, FrameKind::object, 24, -1, 24, 32, 104, 0, false, false, 104, 112, 0, 0, 48, 72, true},
    {10, FrameKind::object, 24, -1, 24, 32, 96, 0, true, false, 104, 112, 0, 0, 48, 72, true},
    {11, FrameKind::interpreter, 56, 8, 48, 32, 56, 69, false, false, 112, 120, 184, 168, 48, 72, true},
    {12, FrameKind::interpreter, 56, 0, 8, 0, 56, 70, false, true, 112, 120, 192, 176, 40, 56, false},
    {13, FrameKind::interpreter, 72, -1, 8, 0, 56, 70, false, true, 112, 120, 200, 184, 40, 56, false},
};

// Common to every version.
constexpr std::uint32_t kObType = 8;         // PyObject: ob_type
constexpr std::uint32_t kVarSize = 16;       // PyVarObject: ob_size (a code object's code units, 3.11 on)
constexpr std::uint32_t kStrLength = 16;     // PyASCIIObject: length (code points)
constexpr std::uint32_t kStrState = 32;      // PyASCIIObject: state (bit field)
constexpr std::uint32_t kStateKindShift = 2; // state: kind (1, 2 or 4 bytes a code point)
constexpr std::uint32_t kStateCompact = 0x20;
constexpr std::uint32_t kStateAscii = 0x40;
constexpr std::uint32_t kStateReady = 0x80;
constexpr std::uint8_t kOwnedByGenerator = 1;
constexpr std::uint8_t kOwnedByCStack = 3;
constexpr std::uint32_t kMaxStringLength = 1u << 16;

// 3.13 keeps the offsets debuggers need at the start of _PyRuntime (_Py_DebugOffsets,
// Include/internal/pycore_runtime.h): eight bytes "xdebugpy", then uint64 values in this
// order. Where they are present and sane they are preferred to the table.
constexpr char kDebugCookie[8] = {'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'};
enum DebugField : int {
  kDebugVersion = 0,
  kDebugFreeThreaded = 1,
  kDebugThreadSize = 18,
  kDebugThreadCurrentFrame = 22,
  kDebugFrameSize = 27,
  kDebugFramePrevious = 28,
  kDebugFrameExecutable = 29,
  kDebugFrameInstr = 30,
  kDebugFrameOwner = 32,
  kDebugCodeSize = 33,
  kDebugCodeFilename = 34,
  kDebugCodeName = 35,
  kDebugCodeUnits = 42,
  kDebugObjectSize = 43,
  kDebugObjectType = 44,
  kDebugFields = 45,
};

// --- the interpreter found in the process ------------------------------------------------

struct Interpreter {
  Layout layout;
  const void* code_type = nullptr;     // &PyCode_Type
  const void* unicode_type = nullptr;  // &PyUnicode_Type
  const void* frame_type = nullptr;    // &PyFrame_Type (frame objects: 3.9, 3.10)
  int (*is_initialized)() = nullptr;   // Py_IsInitialized
  void* (*this_thread_state)() = nullptr;      // PyGILState_GetThisThreadState
  int (*addr_to_line)(void*, int) = nullptr;   // PyCode_Addr2Line
};

enum Status : int {
  kNotFound = 0,  // no interpreter at the last look (g_looked_at), or no look yet
  kPublishing,    // a thread is filling g_interpreter
  kReady,
  kUnreadable,    // an interpreter this reader does not know
};

std::atomic<int> g_status{kNotFound};
std::atomic<std::uint32_t> g_looked_at{~0u};  // `loads` at the last look
Interpreter g_interpreter;                    // set once, before g_status becomes kReady

void* symbol(const char* name) noexcept {
  const DlsymFn dlsym_fn = real_dlsym();
  return dlsym_fn ? dlsym_fn(RTLD_DEFAULT, name) : nullptr;
}

template <class T>
T load(std::uintptr_t address) noexcept {
  T v;
  std::memcpy(&v, reinterpret_cast<const void*>(address), sizeof v);
  return v;
}

// A pointer that can be an object's: non-null, 8-byte aligned, in user space, not one of
// the debug allocators' fill patterns (as faulthandler checks).
bool plausible(std::uintptr_t p) noexcept {
  if (p < 4096 || (p & 7) != 0 || p >= (1ull << 47)) return false;
  const std::uintptr_t pattern = p & 0xffffffffffff0000ull;
  return pattern != 0xdddddddddddd0000ull && pattern != 0xcdcdcdcdcdcd0000ull && pattern != 0xfdfdfdfdfdfd0000ull;
}

bool of_type(std::uintptr_t object, const void* type) noexcept {
  return plausible(object) && load<const void*>(object + kObType) == type;
}

// The minor version of CPython 3 in the process; 0 when it is not one.
int python3_minor() noexcept {
  if (const auto* version = static_cast<const unsigned long*>(symbol("Py_Version")))  // 3.11 on: PY_VERSION_HEX
    return (*version >> 24) == 3 ? static_cast<int>((*version >> 16) & 0xff) : 0;
  auto get_version = reinterpret_cast<const char* (*)()>(symbol("Py_GetVersion"));
  const char* text = get_version ? get_version() : nullptr;  // "3.10.13 (main, ...)"
  if (!text || text[0] != '3' || text[1] != '.') return 0;
  int minor = 0;
  for (const char* p = text + 2; *p >= '0' && *p <= '9' && minor < 100; ++p) minor = minor * 10 + (*p - '0');
  return minor;
}

// 3.13's own offsets, where _PyRuntime holds them and they agree with what this reader
// needs (every field inside its structure); else the table's.
void prefer_debug_offsets(Layout& l) noexcept {
  const auto* runtime = static_cast<const unsigned char*>(symbol("_PyRuntime"));
  if (!runtime || std::memcmp(runtime, kDebugCookie, sizeof kDebugCookie) != 0) return;
  std::uint64_t f[kDebugFields];
  std::memcpy(f, runtime + sizeof kDebugCookie, sizeof f);
  if ((f[kDebugVersion] >> 16) != 0x030dull || f[kDebugFreeThreaded] != 0) return;
  const auto inside = [](std::uint64_t offset, std::uint64_t size, std::uint64_t bytes) {
    return size < 65536 && offset + bytes <= size;
  };
  const bool sane = inside(f[kDebugThreadCurrentFrame], f[kDebugThreadSize], 8) &&
                    inside(f[kDebugFramePrevious], f[kDebugFrameSize], 8) &&
                    inside(f[kDebugFrameExecutable], f[kDebugFrameSize], 8) &&
                    inside(f[kDebugFrameInstr], f[kDebugFrameSize], 8) &&
                    inside(f[kDebugFrameOwner], f[kDebugFrameSize], 1) &&
                    inside(f[kDebugCodeFilename], f[kDebugCodeSize], 8) &&
                    inside(f[kDebugCodeName], f[kDebugCodeSize], 8) && f[kDebugCodeUnits] <= f[kDebugCodeSize] &&
                    f[kDebugObjectSize] == 16 && f[kDebugObjectType] == kObType;
  if (!sane) return;
  l.tstate_frame = static_cast<std::uint32_t>(f[kDebugThreadCurrentFrame]);
  l.frame_back = static_cast<std::uint32_t>(f[kDebugFramePrevious]);
  l.frame_code = static_cast<std::uint32_t>(f[kDebugFrameExecutable]);
  l.frame_instr = static_cast<std::uint32_t>(f[kDebugFrameInstr]);
  l.frame_owner = static_cast<std::uint32_t>(f[kDebugFrameOwner]);
  l.code_filename = static_cast<std::uint32_t>(f[kDebugCodeFilename]);
  l.code_name = static_cast<std::uint32_t>(f[kDebugCodeName]);
  l.code_units = static_cast<std::uint32_t>(f[kDebugCodeUnits]);
}

Status look_for_interpreter(Interpreter& py) noexcept {
  py.is_initialized = reinterpret_cast<int (*)()>(symbol("Py_IsInitialized"));
  if (!py.is_initialized) return kNotFound;
  const int minor = python3_minor();
  const Layout* layout = nullptr;
  for (const Layout& l : kLayouts)
    if (l.minor == minor) layout = &l;
  if (!layout) return kUnreadable;
  py.layout = *layout;
  py.code_type = symbol("PyCode_Type");
  py.unicode_type = symbol("PyUnicode_Type");
  py.frame_type = symbol("PyFrame_Type");
  py.this_thread_state = reinterpret_cast<void* (*)()>(symbol("PyGILState_GetThisThreadState"));
  py.addr_to_line = reinterpret_cast<int (*)(void*, int)>(symbol("PyCode_Addr2Line"));
  const void* type_type = symbol("PyType_Type");
  if (!py.code_type || !py.unicode_type || !py.frame_type || !py.this_thread_state || !py.addr_to_line || !type_type)
    return kUnreadable;
  // Objects whose type is not at offset 8 (a free-threaded or a ref-tracing build) are
  // laid out otherwise than the table says.
  if (load<const void*>(reinterpret_cast<std::uintptr_t>(py.unicode_type) + kObType) != type_type) return kUnreadable;
  if (minor >= 13) prefer_debug_offsets(py.layout);
  return kReady;
}

// The interpreter, once it is there; null while there is none (or none readable).
const Interpreter* interpreter(std::uint32_t loads, ring::PythonState& state) noexcept {
  int status = g_status.load(std::memory_order_acquire);
  if (status == kNotFound && g_looked_at.load(std::memory_order_relaxed) != loads) {
    Interpreter found;
    const Status seen = look_for_interpreter(found);
    g_looked_at.store(loads, std::memory_order_relaxed);
    // Published once, by whoever comes first; the others found the same.
    if (seen != kNotFound && g_status.compare_exchange_strong(status, kPublishing, std::memory_order_acq_rel)) {
      g_interpreter = found;
      g_status.store(seen, std::memory_order_release);
    }
    status = g_status.load(std::memory_order_acquire);
  }
  if (status == kReady) return &g_interpreter;
  if (status == kUnreadable) state = ring::PythonState::unreadable;
  return nullptr;
}

// --- frames ----------------------------------------------------------------------------

// Walks from the thread state; one step at a time, each frame checked before it is read.
void walk(const Interpreter& py, std::uintptr_t tstate, PythonStack& s) noexcept {
  const Layout& l = py.layout;
  std::uintptr_t frame = load<std::uintptr_t>(tstate + l.tstate_frame);
  if (l.cframe_current >= 0) frame = plausible(frame) ? load<std::uintptr_t>(frame + l.cframe_current) : 0;
  // Frames past the depth are not walked; links beyond a bound are not followed either
  // (a cycle would be a corrupt chain).
  for (std::uint32_t steps = 0; frame && steps < 4 * kPythonStackDepth && s.depth < kPythonStackDepth; ++steps) {
    if (!plausible(frame)) break;
    std::uintptr_t code = 0;
    std::int64_t offset = -1;
    if (l.kind == FrameKind::object) {
      if (load<const void*>(frame + kObType) != py.frame_type) break;
      code = load<std::uintptr_t>(frame + l.frame_code);
      const std::int32_t lasti = load<std::int32_t>(frame + l.frame_instr);
      offset = lasti < 0 ? -1 : (l.lasti_in_units ? 2 * static_cast<std::int64_t>(lasti) : lasti);
    } else {
      const std::uint8_t owner = load<std::uint8_t>(frame + l.frame_owner);
      code = load<std::uintptr_t>(frame + l.frame_code);
      if ((l.cstack_shims && owner == kOwnedByCStack) || !of_type(code, py.code_type)) {
        frame = load<std::uintptr_t>(frame + l.frame_back);
        continue;  // a shim of the C stack, or no code object: no Python line of its own
      }
      const std::uintptr_t first = code + l.code_units;
      const std::uintptr_t instr = load<std::uintptr_t>(frame + l.frame_instr);
      const std::int64_t units = instr >= first ? static_cast<std::int64_t>((instr - first) / 2) : -1;
      // Incomplete: its code's first traceable instruction has not run (its prologue).
      const std::int32_t first_traceable = load<std::int32_t>(code + l.code_first_traceable);
      const std::int64_t size = load<std::int64_t>(code + kVarSize);
      if ((owner != kOwnedByGenerator && units < first_traceable) || units >= size) {
        frame = load<std::uintptr_t>(frame + l.frame_back);
        continue;
      }
      offset = 2 * units;
    }
    if (!of_type(code, py.code_type)) break;
    s.code[s.depth] = reinterpret_cast<const void*>(code);
    s.offset[s.depth] = static_cast<std::int32_t>(offset);
    ++s.depth;
    frame = load<std::uintptr_t>(frame + l.frame_back);
  }
}

// --- strings ---------------------------------------------------------------------------

// A compact str object's code points, read in place.
struct Text {
  const unsigned char* data = nullptr;
  std::uint32_t length = 0;
  std::uint32_t width = 1;  // bytes a code point
  std::uint32_t at(std::uint32_t i) const noexcept {
    if (width == 1) return data[i];
    if (width == 2) return load<std::uint16_t>(reinterpret_cast<std::uintptr_t>(data) + 2 * i);
    return load<std::uint32_t>(reinterpret_cast<std::uintptr_t>(data) + 4 * i);
  }
};

bool text_of(const Interpreter& py, std::uintptr_t object, Text& t) noexcept {
  if (!of_type(object, py.unicode_type)) return false;
  const std::uint32_t state = load<std::uint32_t>(object + kStrState);
  const std::int64_t length = load<std::int64_t>(object + kStrLength);
  const std::uint32_t width = (state >> kStateKindShift) & 7;
  if (!(state & kStateCompact) || (py.layout.ready_bit && !(state & kStateReady)) || length < 0 ||
      (width != 1 && width != 2 && width != 4))
    return false;
  const bool ascii = (state & kStateAscii) != 0;
  t.data = reinterpret_cast<const unsigned char*>(object + (ascii ? py.layout.ascii_size : py.layout.compact_size));
  t.width = width;
  t.length = static_cast<std::uint32_t>(length < kMaxStringLength ? length : kMaxStringLength);
  return true;
}

std::uint32_t utf8_bytes(std::uint32_t c) noexcept { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

char* put_utf8(char* p, std::uint32_t c) noexcept {
  if (c >= 0xd800 && c < 0xe000) c = '?';  // a lone surrogate is no UTF-8
  if (c < 0x80) {
    *p++ = static_cast<char>(c);
  } else if (c < 0x800) {
    *p++ = static_cast<char>(0xc0 | (c >> 6));
    *p++ = static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    *p++ = static_cast<char>(0xe0 | (c >> 12));
    *p++ = static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    *p++ = static_cast<char>(0x80 | (c & 0x3f));
  } else {
    *p++ = static_cast<char>(0xf0 | (c >> 18));
    *p++ = static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    *p++ = static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    *p++ = static_cast<char>(0x80 | (c & 0x3f));
  }
  return p;
}

// The text from code point `from` on, as UTF-8, NUL-terminated in `size` bytes.
void put_text(const Text& t, std::uint32_t from, char* dst, std::size_t size) noexcept {
  std::memset(dst, 0, size);
  char* p = dst;
  for (std::uint32_t i = from; i < t.length; ++i) {
    const std::uint32_t c = t.at(i);
    if (static_cast<std::size_t>(p - dst) + utf8_bytes(c) > size - 1) break;
    p = put_utf8(p, c);
  }
}

// The last code points that fit in `size` bytes (the path's end names the file).
void put_tail(const Text& t, char* dst, std::size_t size, std::uint8_t& flags) noexcept {
  std::size_t bytes = 0;
  std::uint32_t from = t.length;
  while (from > 0 && bytes + utf8_bytes(t.at(from - 1)) <= size - 1) bytes += utf8_bytes(t.at(--from));
  if (from > 0) flags |= ring::kPythonFileCut;
  put_text(t, from, dst, size);
}

bool contains(const Text& t, const char* pattern) noexcept {
  const std::size_t n = std::strlen(pattern);
  for (std::uint32_t i = 0; i + n <= t.length; ++i) {
    std::size_t k = 0;
    while (k < n && t.at(i + static_cast<std::uint32_t>(k)) == static_cast<unsigned char>(pattern[k])) ++k;
    if (k == n) return true;
  }
  return false;
}

// The interpreter's own modules and installed packages are not the user's code.
bool user_file(const Text& file) noexcept {
  if (file.length == 0 || file.at(0) == '<') return false;  // <frozen ...>, <string>
  return !contains(file, "/site-packages/") && !contains(file, "/dist-packages/") && !contains(file, "/lib/python3.");
}

struct FrameText {
  Text file;
  Text name;
  bool ok = false;
};

FrameText frame_text(const Interpreter& py, const void* code) noexcept {
  const auto c = reinterpret_cast<std::uintptr_t>(code);
  FrameText f;
  f.ok = text_of(py, load<std::uintptr_t>(c + py.layout.code_filename), f.file);
  if (!text_of(py, load<std::uintptr_t>(c + py.layout.code_name), f.name)) f.name = Text{};
  return f;
}

void put_frame(const Interpreter& py, const PythonStack& s, std::uint32_t i, const FrameText& t, bool user,
               ring::PythonFrame& out) noexcept {
  out = ring::PythonFrame{};
  out.line = py.addr_to_line(const_cast<void*>(s.code[i]), s.offset[i]);
  if (out.line < 0) out.line = 0;
  if (user) out.flags |= ring::kPythonUserFrame;
  put_tail(t.file, out.file, sizeof out.file, out.flags);
  if (t.name.data) put_text(t.name, 0, out.function, sizeof out.function);
}

}  // namespace

void walk_python_stack(PythonStack& s, std::uint32_t loads) noexcept {
  s.state = ring::PythonState::none;
  s.depth = 0;
  const Interpreter* py = interpreter(loads, s.state);
  if (!py || !py->is_initialized()) return;  // none, or finalizing: thread states may be going away
  const auto tstate = reinterpret_cast<std::uintptr_t>(py->this_thread_state());
  if (plausible(tstate)) walk(*py, tstate, s);
  s.state = s.depth ? ring::PythonState::read : ring::PythonState::no_python_code;
}

std::uint32_t describe_python_stack(const PythonStack& s, ring::PythonFrame* out) noexcept {
  if (s.depth == 0 || g_status.load(std::memory_order_acquire) != kReady) return 0;
  const Interpreter& py = g_interpreter;
  std::uint32_t count = 0;
  for (std::uint32_t i = 0; i < s.depth && count < ring::kPythonFrames; ++i) {
    const FrameText t = frame_text(py, s.code[i]);
    if (!t.ok) continue;
    const bool user = user_file(t.file);
    if (count == 0 || user) put_frame(py, s, i, t, user, out[count++]);
    if (user) break;  // the user's line: nothing further out is needed
  }
  return count;
}

}  // namespace cudadiag::interposer
