#include "run/error_text.h"

#include "taxonomy/taxonomy.h"
#include "util/utf8.h"
#include "util/trim.h"

namespace cudadiag::run {
namespace {

using sv = std::string_view;

bool contains(sv s, sv needle) { return s.find(needle) != sv::npos; }
bool starts_with(sv s, sv p) { return s.substr(0, p.size()) == p; }
bool ends_with(sv s, sv p) { return s.size() >= p.size() && s.substr(s.size() - p.size()) == p; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_alnum(char c) { return is_digit(c) || is_upper(c) || (c >= 'a' && c <= 'z'); }


// Decimal at s[i..] (at most 18 digits); advances i.
std::optional<long long> take_number(sv s, std::size_t& i) {
  long long v = 0;
  std::size_t digits = 0;
  while (i < s.size() && is_digit(s[i]) && digits < 18) {
    v = v * 10 + (s[i] - '0');
    ++i;
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  while (i < s.size() && is_digit(s[i])) ++i;  // longer: keep the first 18 digits
  return v;
}

// "[5,0,0]" or "(232,0,0)" starting at s[i] (the opening bracket).
std::optional<std::array<long long, 3>> take_triple(sv s, std::size_t i) {
  if (i >= s.size() || (s[i] != '[' && s[i] != '(')) return std::nullopt;
  ++i;
  std::array<long long, 3> v{};
  for (int k = 0; k < 3; ++k) {
    while (i < s.size() && s[i] == ' ') ++i;
    const auto n = take_number(s, i);
    if (!n) return std::nullopt;
    v[static_cast<std::size_t>(k)] = *n;
    while (i < s.size() && s[i] == ' ') ++i;
    if (k < 2) {
      if (i >= s.size() || s[i] != ',') return std::nullopt;
      ++i;
    }
  }
  return v;
}

std::optional<std::array<long long, 3>> triple_after(sv s, sv label) {
  const auto at = s.find(label);
  if (at == sv::npos) return std::nullopt;
  return take_triple(s, at + label.size());
}

// The word after `label` up to a space (without trailing punctuation).
std::string word_after(sv s, sv label) {
  const auto at = s.find(label);
  if (at == sv::npos) return "";
  sv rest = s.substr(at + label.size());
  std::size_t n = 0;
  while (n < rest.size() && rest[n] != ' ' && rest[n] != '\t') ++n;
  sv w = rest.substr(0, n);
  while (!w.empty() && (w.back() == '.' || w.back() == ',' || w.back() == ':')) w.remove_suffix(1);
  return utf8_prefix(w, 64);
}

// A name starting with `prefix` whose next character passes `first` and whose body
// passes `body`: "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS". Every
// occurrence is tried once, left to right.
template <class First, class Body>
std::string find_name(sv line, sv prefix, First first, Body body) {
  std::size_t pos = 0;
  while ((pos = line.find(prefix, pos)) != sv::npos) {
    std::size_t end = pos + prefix.size();
    if (end < line.size() && first(line[end])) {
      while (end < line.size() && body(line[end]) && end - pos < 80) ++end;
      sv name = line.substr(pos, end - pos);
      while (ends_with(name, "_")) name.remove_suffix(1);
      return std::string(name);
    }
    pos = end;
  }
  return "";
}

// cudaGetErrorString texts. Distinctive ones are recognised anywhere; generic ones only
// on a line that also says it is a CUDA error (kCudaContext).
struct MessageRule {
  sv text;
  int code;
  bool needs_context;
};
constexpr MessageRule kMessages[] = {
    {"an illegal memory access was encountered", 700, false},
    {"device-side assert triggered", 710, false},
    {"unspecified launch failure", 719, false},
    {"an illegal instruction was encountered", 715, false},
    {"operation not supported on global/shared address space", 717, false},
    {"the launch timed out and was terminated", 702, false},
    {"too many resources requested for launch", 701, false},
    {"no kernel image is available for execution on the device", 209, false},
    {"uncorrectable ECC error encountered", 214, false},
    {"CUDA out of memory", 2, false},  // PyTorch's OutOfMemoryError text
    {"no CUDA-capable device is detected", 100, false},
    {"CUDA driver version is insufficient for CUDA runtime version", 35, false},
    {"the provided PTX was compiled with an unsupported toolchain", 222, false},
    {"CUDA-capable device(s) is/are busy or unavailable", 46, false},
    {"operation not permitted when stream is capturing", 900, false},
    {"misaligned address", 716, true},
    {"invalid configuration argument", 9, true},
    {"hardware stack error", 714, true},
    {"invalid program counter", 718, true},
    {"out of memory", 2, true},
    {"invalid device ordinal", 101, true},
    {"invalid resource handle", 400, true},
    {"invalid argument", 1, true},
    {"initialization error", 3, true},
    {"unknown error", 999, true},
};
constexpr sv kCudaContext[] = {"CUDA error",   "CUDA Error",         "cuda error",          "CUDA ERROR",
                               "CUDA Runtime", "cuda runtime error", "CUDA failure",        "Triton Error [CUDA]",
                               "CUDA_ERROR_",  "cudaError",          "GPUassert",           "CUDA call"};

// What frameworks print when CUDA cannot start here (no driver, no device), in their own
// words rather than the runtime's: without these a laptop's "Found no NVIDIA driver" reads
// as the program's own failure instead of "CUDA could not start" (exit 3). Each maps onto
// the runtime error it stands for; the framework is the one whose source prints it (a
// marker on the line or a recent traceback line still wins).
struct StartFailureRule {
  sv text;
  int code;
  Framework framework;
};
constexpr StartFailureRule kStartFailures[] = {
    // c10/cuda/CUDAFunctions.cpp, torch/cuda/__init__.py (_lazy_init, _check_driver)
    {"Found no NVIDIA driver on your system", 35, Framework::pytorch},
    {"The NVIDIA driver on your system is too old", 35, Framework::pytorch},
    {"No CUDA GPUs are available", 100, Framework::pytorch},
    {"CUDA driver initialization failed, you might not have a CUDA gpu", 3, Framework::pytorch},
    // jax/_src/xla_bridge.py: "Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices."
    {"No visible GPU devices", 100, Framework::jax},
    {"no supported devices found for platform CUDA", 100, Framework::jax},
    // triton/runtime/driver.py with no usable backend; triton/backends/nvidia/driver.py
    {"0 active drivers ([]). There should only be one.", 100, Framework::triton},
    {"libcuda.so cannot found", 35, Framework::triton},
    // tensorflow's warning before it runs on the CPU
    {"Could not find cuda drivers on your machine", 35, Framework::tensorflow},
    // ld.so, Python's ImportError (CuPy's "Failed to import CuPy"), ctypes: no driver library
    {"libcuda.so.1: cannot open shared object file", 35, Framework::cuda},
};

bool has_cuda_context(sv line) {
  for (const sv c : kCudaContext)
    if (contains(line, c)) return true;
  return false;
}

Framework marker_of(sv l) {
  if (contains(l, "Triton Error")) return Framework::triton;
  if (contains(l, "torch") || contains(l, "c10::") || contains(l, "c10/") || contains(l, "TORCH_USE_CUDA_DSA") ||
      contains(l, "AcceleratorError") || contains(l, "aten/src") || contains(l, "ATen/") ||
      contains(l, "CUDA kernel errors might be asynchronously reported"))
    return Framework::pytorch;
  if (contains(l, "triton")) return Framework::triton;
  if (contains(l, "tensorflow")) return Framework::tensorflow;
  if (contains(l, "XlaRuntimeError") || contains(l, "JaxRuntimeError") || contains(l, "jaxlib") ||
      contains(l, "jax.") || contains(l, "pjrt") || contains(l, "xla/") || contains(l, "XLA"))
    return Framework::jax;
  if (contains(l, "cupy") || contains(l, "CUDARuntimeError") || contains(l, "CUDADriverError")) return Framework::cupy;
  if (contains(l, "[TRT]")) return Framework::tensorrt;
  return Framework::unknown;
}

void fill_from_taxonomy(ErrorFinding& f, const taxonomy::ErrorEntry& e) {
  f.code = e.code;
  f.name = std::string(e.name);
  f.error_class = e.error_class;
}

// A CUDA error on the line, named by (in order of precision) a runtime name, a driver
// name, a message, or "CUDA error <number>". nullopt when the line names none.
std::optional<ErrorFinding> cuda_error_of(sv line) {
  ErrorFinding f;
  f.kind = FindingKind::cuda_error;
  const std::string runtime = find_name(line, "cudaError", is_upper, is_alnum);
  const std::string driver = find_name(line, "CUDA_ERROR_", is_upper,
                                       [](char c) { return is_upper(c) || is_digit(c) || c == '_'; });
  if (!driver.empty()) f.driver_name = driver;
  if (!runtime.empty() || !driver.empty()) {
    const auto* e = taxonomy::find_by_name(!runtime.empty() ? sv(runtime) : sv(driver));
    if (!e && !runtime.empty() && !driver.empty()) e = taxonomy::find_by_name(driver);
    if (e && e->code == 600) return std::nullopt;  // cudaErrorNotReady: a status, not a failure
    if (e) {
      fill_from_taxonomy(f, *e);
    } else {
      f.name = !runtime.empty() ? runtime : driver;
      f.error_class = taxonomy::ErrorClass::unknown;
    }
    return f;
  }
  for (const auto& m : kStartFailures) {
    if (!contains(line, m.text)) continue;
    if (const auto* e = taxonomy::find_runtime(m.code)) fill_from_taxonomy(f, *e);
    f.framework = m.framework;  // the fallback when nothing on or near the line names one
    return f;
  }
  const bool context = has_cuda_context(line);
  for (const auto& m : kMessages) {
    if (m.needs_context && !context) continue;
    if (!contains(line, m.text)) continue;
    if (const auto* e = taxonomy::find_runtime(m.code)) fill_from_taxonomy(f, *e);
    return f;
  }
  // "CUDA error 700 at ..." / "CUDA error: 700"
  for (const sv label : {sv("CUDA error"), sv("cuda error"), sv("CUDA Error")}) {
    const auto at = line.find(label);
    if (at == sv::npos) continue;
    std::size_t i = at + label.size();
    while (i < line.size() && (line[i] == ' ' || line[i] == ':')) ++i;
    const auto n = take_number(line, i);
    if (!n || *n <= 0 || *n > 100000) continue;
    const auto* e = taxonomy::find_runtime(static_cast<int>(*n));
    if (!e || e->code == 600) continue;
    fill_from_taxonomy(f, *e);
    return f;
  }
  return std::nullopt;
}

// "file:line: function: " -> parts (the head of an assert line, before "block:" or
// "Assertion"). The file is the word before the first ":<digits>:".
void parse_assert_head(sv head, AssertDetails& a) {
  std::size_t pos = 0;
  while ((pos = head.find(':', pos)) != sv::npos) {
    std::size_t i = pos + 1;
    const auto n = take_number(head, i);
    if (n && i < head.size() && head[i] == ':') {
      const auto space = head.substr(0, pos).rfind(' ');
      a.file = utf8_prefix(head.substr(space == sv::npos ? 0 : space + 1, pos - (space == sv::npos ? 0 : space + 1)), 256);
      a.line = *n;
      sv fn = util::trim_blanks(head.substr(i + 1));
      while (!fn.empty() && (fn.back() == ':' || fn.back() == ',')) fn.remove_suffix(1);
      a.function = utf8_prefix(util::trim_blanks(fn), 256);
      return;
    }
    pos = i;
  }
}

// Device assert ("... block: [..], thread: [..] Assertion `x` failed.") or host assert
// (glibc: "prog: file.c:12: main: Assertion `x' failed.").
std::optional<ErrorFinding> assert_of(sv line) {
  constexpr sv kAssertion = "Assertion `";
  const auto a = line.find(kAssertion);
  if (a == sv::npos) return std::nullopt;
  const std::size_t start = a + kAssertion.size();
  const sv head = line.substr(0, a);
  const auto block = head.find("block: [");
  const auto device_close = line.find("` failed", start);
  ErrorFinding f;
  AssertDetails d;
  if (block != sv::npos && device_close != sv::npos) {
    f.kind = FindingKind::device_assert;
    d.expression = utf8_prefix(line.substr(start, device_close - start), 256);
    d.block = take_triple(head, block + 7);
    d.thread = triple_after(head.substr(block), "thread: ");
    parse_assert_head(head.substr(0, block), d);
    if (const auto* e = taxonomy::find_runtime(710)) fill_from_taxonomy(f, *e);
    f.kernel = d.function;
  } else {
    const auto host_close = line.find("' failed", start);
    if (host_close == sv::npos) return std::nullopt;
    f.kind = FindingKind::host_assert;
    f.signal_name = "SIGABRT";
    d.expression = utf8_prefix(line.substr(start, host_close - start), 256);
    parse_assert_head(head, d);
  }
  f.assertion = std::move(d);
  return f;
}

// "12345 Aborted", "Aborted (core dumped)", or the word alone: how shells report a child
// that died of a signal. The word must stand alone so that "Training aborted" is not it.
bool shell_signal_word(sv line, sv word) {
  const sv t = util::trim_blanks(line);
  if (t == word) return true;
  const auto at = t.find(word);
  if (at == sv::npos) return false;
  const sv after = t.substr(at + word.size());
  const bool after_ok = after.empty() || after.front() == ' ';
  if (!after_ok) return false;
  if (at == 0) return starts_with(util::trim_blanks(after), "(core dumped)") || after.empty();
  // "bash: line 1: 12345 Aborted   (core dumped) python ..." : a pid right before it.
  std::size_t i = at;
  while (i > 0 && t[i - 1] == ' ') --i;
  std::size_t digits = 0;
  while (i > 0 && is_digit(t[i - 1])) {
    --i;
    ++digits;
  }
  return digits > 0 && (i == 0 || t[i - 1] == ' ');
}

std::optional<ErrorFinding> signal_of(sv line) {
  ErrorFinding f;
  f.kind = FindingKind::signal;
  if (contains(line, "Segmentation fault")) f.signal_name = "SIGSEGV";
  else if (contains(line, "terminate called after throwing an instance of")) f.signal_name = "SIGABRT";
  else if (shell_signal_word(line, "Aborted")) f.signal_name = "SIGABRT";
  else if (shell_signal_word(line, "Bus error")) f.signal_name = "SIGBUS";
  else if (contains(line, "Floating point exception")) f.signal_name = "SIGFPE";
  else if (shell_signal_word(line, "Illegal instruction")) f.signal_name = "SIGILL";
  else if (shell_signal_word(line, "Killed")) f.signal_name = "SIGKILL";
  else return std::nullopt;
  return f;
}

bool shell_prefixed(sv t) {
  for (const sv p : {sv("sh:"), sv("bash:"), sv("/bin/sh:"), sv("/bin/bash:"), sv("/usr/bin/sh:"), sv("/usr/bin/bash:"),
                     sv("dash:"), sv("zsh:"), sv("env:"), sv("/usr/bin/env:")})
    if (starts_with(t, p)) return true;
  return false;
}

std::optional<ErrorFinding> not_started_of(sv line) {
  const sv t = util::trim_blanks(line);
  bool hit = ends_with(t, ": command not found") || contains(t, ": cannot execute binary file") ||
             contains(t, "Exec format error") ||
             (contains(t, "can't open file '") && contains(t, "No such file or directory"));
  if (!hit && shell_prefixed(t)) {
    hit = ends_with(t, ": not found") || ends_with(t, ": No such file or directory") ||
          ends_with(t, ": Permission denied");
  }
  if (!hit) return std::nullopt;
  ErrorFinding f;
  f.kind = FindingKind::not_started;
  f.framework = contains(t, "can't open file") ? Framework::python : Framework::shell;
  return f;
}

// ---- compute-sanitizer text ----------------------------------------------------------

// The content of a "=========" line (exactly nine '=' then a space or the end), or
// nullopt. Longer runs of '=' (pytest banners, separators) are not the sanitizer.
std::optional<sv> sanitizer_content(sv line) {
  const auto at = line.find("=========");
  if (at == sv::npos) return std::nullopt;
  if (at > 0 && line[at - 1] == '=') return std::nullopt;
  const std::size_t end = at + 9;
  if (end < line.size() && line[end] != ' ' && line[end] != '\r') return std::nullopt;
  sv rest = line.substr(std::min(end, line.size()));
  if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return rest;
}

bool is_access_record(sv content) {
  for (const sv p : {sv("Invalid "), sv("Misaligned "), sv("Out-of-range "), sv("Malformed "), sv("Uninitialized ")})
    if (starts_with(content, p)) return true;
  return false;
}

// Lines that follow an access record: where, which thread, which address, how far.
void add_access_line(sv content, AccessDetails& a) {
  const sv t = util::trim_blanks(content);
  if (starts_with(t, "at ")) {
    sv rest = t.substr(3);
    const auto in = rest.find(" in ");
    if (starts_with(rest, "0x") && in != sv::npos) {  // "at 0x3b0 in void kernel(...)"
      a.kernel = utf8_prefix(util::trim_blanks(rest.substr(in + 4)), 256);
    } else {
      const auto plus = rest.find("+0x");
      const auto cut = plus != sv::npos ? plus : in;
      a.kernel = utf8_prefix(util::trim_blanks(rest.substr(0, cut)), 256);
      if (in != sv::npos) a.location = utf8_prefix(util::trim_blanks(rest.substr(in + 4)), 256);
    }
  } else if (starts_with(t, "by thread ")) {
    a.thread = triple_after(t, "by thread ");
    a.block = triple_after(t, " in block ");
  } else if (starts_with(t, "Address ") || starts_with(t, "Access to ") || starts_with(t, "Access at ")) {
    const sv label = starts_with(t, "Address ") ? sv("Address ") : t.substr(0, 10);
    a.address = word_after(t, label);
  } else if (contains(t, "nearest allocation")) {
    a.nearest = sanitizer::parse_nearest_allocation(t);
  }
}

struct StreamState {
  Framework recent = Framework::unknown;  // framework named on a recent line
  std::size_t recent_line = 0;
  std::optional<std::size_t> open_access;  // index of the access finding its lines belong to
};

Framework framework_for(const ErrorFinding& f, sv line, const StreamState& st, std::size_t line_number,
                        Framework fallback) {
  if (f.kind == FindingKind::device_assert && f.assertion) {
    const std::string& file = f.assertion->file;
    if (contains(file, "aten/") || contains(file, "ATen") || contains(file, "c10")) return Framework::pytorch;
    if (ends_with(file, ".py")) return Framework::triton;
  }
  const Framework m = marker_of(line);
  if (m != Framework::unknown) return m;
  if (st.recent != Framework::unknown && line_number - st.recent_line <= 8) return st.recent;
  return fallback;
}

// False when the finding was only counted (the list is full).
bool add(ErrorTextScan& scan, ErrorFinding f, Stream stream, std::size_t line_number, sv line) {
  if (scan.findings.size() >= kMaxFindings) {
    ++scan.dropped;
    return false;
  }
  f.stream = stream;
  f.line_number = line_number;
  f.line = utf8_prefix(util::trim_blanks(line), kMaxLineExcerpt);
  scan.findings.push_back(std::move(f));
  return true;
}

void scan_line(sv line, Stream stream, std::size_t n, StreamState& st, ErrorTextScan& scan) {
  if (contains(line, "CUDA kernel errors might be asynchronously reported") && !scan.async_hint_stream) {
    scan.async_hint_stream = stream;
    scan.async_hint_line = n;
  }

  if (const auto content = sanitizer_content(line)) {
    const sv c = *content;
    if (is_access_record(c)) {
      ErrorFinding f;
      f.kind = FindingKind::sanitizer;
      f.framework = Framework::compute_sanitizer;
      f.error_class = contains(c, "isaligned") ? taxonomy::ErrorClass::misaligned : taxonomy::ErrorClass::memory_fault;
      f.name = utf8_prefix(util::trim_blanks(c), 128);
      const auto a = sanitizer::parse_access_text(c);
      f.access = AccessDetails{a.space, a.direction, a.size, "", "", "", std::nullopt, std::nullopt, std::nullopt};
      if (add(scan, std::move(f), stream, n, line)) st.open_access = scan.findings.size() - 1;
      else st.open_access.reset();
      return;
    }
    if (st.open_access && !c.empty() && (c.front() == ' ' || c.front() == '\t')) {
      auto& f = scan.findings[*st.open_access];
      add_access_line(c, *f.access);
      if (f.kernel.empty()) f.kernel = f.access->kernel;
      return;
    }
    st.open_access.reset();
    if (starts_with(c, "Program hit ")) {
      if (const auto api = sanitizer::parse_api_error(c)) {
        ErrorFinding f;
        f.kind = FindingKind::cuda_error;
        f.framework = Framework::compute_sanitizer;
        if (const auto* e = taxonomy::find_by_name(api->error_name)) fill_from_taxonomy(f, *e);
        else if (api->code) {
          if (const auto* e2 = taxonomy::find_runtime(*api->code)) fill_from_taxonomy(f, *e2);
        }
        if (f.name.empty()) {
          f.name = utf8_prefix(api->error_name, 80);
          f.error_class = taxonomy::ErrorClass::unknown;
        }
        if (starts_with(api->error_name, "CUDA_ERROR_")) f.driver_name = utf8_prefix(api->error_name, 80);
        f.api_call = utf8_prefix(api->call, 80);
        add(scan, std::move(f), stream, n, line);
      }
    } else if (starts_with(c, "Error: Target application terminated before first instrumented API call")) {
      scan.sanitizer_saw_no_cuda_call = true;
    } else if (starts_with(c, "ERROR SUMMARY: ")) {
      std::string digits;
      for (std::size_t i = 15; i < c.size() && digits.size() < 18 && (is_digit(c[i]) || c[i] == ','); ++i)
        if (c[i] != ',') digits += c[i];
      if (!digits.empty()) scan.sanitizer_error_count = std::stoll(digits);
    }
    return;  // banners, host frames and the rest of the sanitizer's report
  }
  st.open_access.reset();

  const Framework marker = marker_of(line);
  std::optional<ErrorFinding> f;
  Framework fallback = Framework::cuda;
  if ((f = assert_of(line))) {
    fallback = f->kind == FindingKind::device_assert ? Framework::cuda : Framework::unknown;
  } else if (contains(line, "from LD_PRELOAD cannot be preloaded")) {
    f = ErrorFinding{};
    f->kind = FindingKind::preload_failed;
    fallback = Framework::loader;
  } else if ((f = not_started_of(line))) {
    fallback = f->framework;
  } else if ((f = cuda_error_of(line))) {
    if (f->framework != Framework::unknown) fallback = f->framework;
    // "Failed to launch CUDA kernel: add with block dimensions: ..." (XLA)
    constexpr sv kLaunch = "Failed to launch CUDA kernel: ";
    if (const auto at = line.find(kLaunch); at != sv::npos) {
      const sv rest = line.substr(at + kLaunch.size());
      const auto with = rest.find(" with ");
      f->kernel = utf8_prefix(rest.substr(0, with == sv::npos ? std::min<std::size_t>(rest.size(), 128) : with), 128);
    }
  } else if ((f = signal_of(line))) {
    fallback = contains(line, "terminate called") ? Framework::cxx : Framework::shell;
  }
  if (f) {
    if (f->kind != FindingKind::not_started) f->framework = framework_for(*f, line, st, n, fallback);
    add(scan, std::move(*f), stream, n, line);
  }
  if (marker != Framework::unknown) {
    st.recent = marker;
    st.recent_line = n;
  }
}

}  // namespace

const char* to_string(Framework f) {
  switch (f) {
    case Framework::pytorch: return "pytorch";
    case Framework::triton: return "triton";
    case Framework::jax: return "jax";
    case Framework::tensorflow: return "tensorflow";
    case Framework::cupy: return "cupy";
    case Framework::tensorrt: return "tensorrt";
    case Framework::compute_sanitizer: return "compute-sanitizer";
    case Framework::cuda: return "cuda";
    case Framework::cxx: return "c++ runtime";
    case Framework::python: return "python";
    case Framework::shell: return "shell";
    case Framework::loader: return "ld.so";
    case Framework::unknown: break;
  }
  return "unknown";
}

const char* to_string(FindingKind k) {
  switch (k) {
    case FindingKind::cuda_error: return "cuda_error";
    case FindingKind::device_assert: return "device_assert";
    case FindingKind::sanitizer: return "sanitizer";
    case FindingKind::signal: return "signal";
    case FindingKind::host_assert: return "host_assert";
    case FindingKind::not_started: return "not_started";
    case FindingKind::preload_failed: return "preload_failed";
  }
  return "cuda_error";
}

const char* to_string(Stream s) { return s == Stream::out ? "stdout" : "stderr"; }

const ErrorFinding* ErrorTextScan::first_cuda() const {
  for (const auto& f : findings)
    if (f.kind == FindingKind::cuda_error || f.kind == FindingKind::device_assert || f.kind == FindingKind::sanitizer)
      return &f;
  return nullptr;
}

const ErrorFinding* ErrorTextScan::first_of(FindingKind kind) const {
  for (const auto& f : findings)
    if (f.kind == kind) return &f;
  return nullptr;
}

void scan_stream(std::string_view text, Stream stream, ErrorTextScan& scan) {
  StreamState st;
  std::size_t n = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const sv line = text.substr(0, nl);
    scan_line(line, stream, ++n, st, scan);
    if (nl == sv::npos) break;
    text.remove_prefix(nl + 1);
  }
}

ErrorTextScan scan_error_text(std::string_view stderr_text, std::string_view stdout_text) {
  ErrorTextScan scan;
  scan_stream(stderr_text, Stream::err, scan);
  scan_stream(stdout_text, Stream::out, scan);
  return scan;
}

}  // namespace cudadiag::run
