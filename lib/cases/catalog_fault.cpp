// The fault catalog: minimal reproducers, each with the outcome a healthy host gives
// under every profile. Keys of CaseDef.expected: profile names ("default", "blocking",
// "nocache", "fence", "blocking+fence", "sanitizer") plus the other fence side by
// allocator name ("fence-front" for a case fenced at the back, and vice versa), which
// `cudadiag fault --allocator` reaches (see run_expectation.h). CUDA_LAUNCH_BLOCKING
// changes where an error surfaces, not whether it does, so blocking profiles fall back
// to their non-blocking entry.
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include "cases/catalog.h"
#include "cases/run_expectation.h"

namespace cudadiag::cases {
namespace {

constexpr const char* kSilent = "silent";
constexpr const char* kFault = "error:memory_fault";
// What the program sees after memcheck stopped a bad access: unspecified launch failure.
// A memory fault (700) is accepted too: the class memcheck reports the access as.
constexpr const char* kCaughtBySanitizer = "error:719|error:launch_failure|error:memory_fault";
// The pool leaves 4 KiB before a slab's first buffer and megabytes after its last, and
// cudaMalloc maps 2 MiB pages: overruns up to this many fp32 elements stay silent there.
constexpr long long kMaxDistance = 1024;

// A reproducer's own parameter: k (a distance in elements), offset_bytes, or none.
enum class Knob : std::uint8_t { none, distance, offset };

struct Reproducer {
  const char* name;
  const char* title;
  profiles::Allocator fence_allocator;
  int deadline_ms;
  bool expects_fault;
  ProfileExpectations expected;
  Knob knob = Knob::none;  // the parameter it takes besides elements
};

// Expectations for an overrun past the end of a 16 KiB buffer.
ProfileExpectations overrun_expectations() {
  return {"",
          {{"default", kSilent},   // lands in the pool slab's next block or slack
          {"nocache", kSilent},   // lands in the rest of cudaMalloc's 2 MiB page
          {"fence", kFault},      // lands in the unmapped guard after the buffer
          {"fence-front", kSilent},  // the guard is before the buffer; the rest of the granule is mapped
          // The sanitizer profile gives every buffer its own cudaMalloc: memcheck reports
          // the access, stops the kernel, and the program's next call returns 719
          // (cudaErrorLaunchFailure; recorded on an H200, tests/data/sanitizer).
          {"sanitizer", kCaughtBySanitizer}}};
}

ProfileExpectations underrun_expectations() {
  return {"",
          {{"default", kSilent},  // the pool keeps 4 KiB of slab before its first buffer
          // Uncertain: a cudaMalloc'ed buffer can start a fresh 2 MiB page whose
          // predecessor is unmapped (fault) or belongs to another allocation (silent).
          {"nocache", "silent|error:memory_fault"},
          {"fence", kFault},
          {"fence-back", kSilent},  // the buffer sits at the end of a mapped granule
          {"sanitizer", kCaughtBySanitizer}}};  // memcheck knows each buffer's start
}

const std::vector<Reproducer>& reproducers() {
  static const std::vector<Reproducer> list = {
      {"oob-write", "kernel writes k elements past the end of its output (bound n + k)", profiles::Allocator::fence_back, 0, true,
       overrun_expectations(), Knob::distance},
      {"oob-read", "kernel reads k elements past the end of its input (window shifted by k)", profiles::Allocator::fence_back, 0,
       true, overrun_expectations(), Knob::distance},
      {"underrun-write", "kernel writes k elements before the start of its output", profiles::Allocator::fence_front, 0, true,
       underrun_expectations(), Knob::distance},
      {"underrun-read", "kernel reads k elements before the start of its input", profiles::Allocator::fence_front, 0, true,
       underrun_expectations(), Knob::distance},
      // The alignment rule is checked by the hardware on every access: allocator-independent.
      // Under the sanitizer the tool reports the access and the API returns its own code.
      {"misaligned-vector-load", "16-byte vector load from a pointer only 4-byte aligned (716)", profiles::Allocator::fence_back, 0,
       true, {"error:716", {{"sanitizer", "error"}}}, Knob::offset},
      {"device-assert", "bounds-checked gather hits an index out of range: device assert (710)", profiles::Allocator::fence_back, 0,
       true, {"error:710", {{"sanitizer", "error"}}}},
      {"use-after-free", "kernel writes a 4 MiB buffer freed before the launch", profiles::Allocator::fence_back, 0, true,
       {"", {{"default", kSilent},  // the pool keeps freed blocks mapped, like a caching allocator
        // Uncertain: cudaFree may keep the pages mapped for reuse by the driver.
        {"nocache", "silent|error:memory_fault"},
        {"fence", kFault},  // unmapped by free, the range stays reserved
        {"fence-front", kFault},
        {"sanitizer", kCaughtBySanitizer}}}},  // memcheck tracks frees: no live allocation there
      // A trap is reported as an unspecified launch failure (719) on current drivers;
      // 715 (illegal instruction) is the same class of stop on older ones.
      {"trap", "kernel executes trap: the illegal-instruction class of stop", profiles::Allocator::fence_back, 0, true,
       {"error:719|error:715", {{"sanitizer", "error"}}}},
      {"hang", "kernel spins forever: killed at the deadline", profiles::Allocator::fence_back, 3000, true, {"timeout"}},
      // CUDA 13 with driver 580 answers a 2048-thread block with invalid value (1) at launch
      // (seen on an H100); older runtimes answered invalid configuration (9).
      {"too-many-threads", "launch with 2048 threads per block: rejected at launch (1, or 9 on older CUDA)",
       profiles::Allocator::fence_back, 0, false, {"error:1|error:9"}},
      // Uncertain between invalid value (1) and out of resources (701): the device run decides.
      {"smem-over-limit", "dynamic shared memory 1 KiB above the opt-in limit", profiles::Allocator::fence_back, 0, false,
       {"error:1|error:701"}},
      {"out-of-memory", "allocation of twice the device memory (2)", profiles::Allocator::fence_back, 0, false, {"error:2"}},
      {"too-many-resources", "~144 registers per thread launched with 1024 threads (701)", profiles::Allocator::fence_back, 0, false,
       {"error:701"}},
      {"ok-control", "correct kernel: must be ok everywhere", profiles::Allocator::fence_back, 0, false, {"ok"}},
  };
  return list;
}

const Reproducer* find_reproducer(const std::string& name) {
  for (const auto& r : reproducers())
    if (name == r.name) return &r;
  return nullptr;
}

long long int_param(const json& p, const char* key, long long fallback) {
  if (!p.contains(key)) return fallback;
  const auto& v = p[key];
  if (!v.is_number_integer()) throw std::invalid_argument(std::string(key) + ": expected an integer");
  return v.get<long long>();
}

json normalize_fault_params(const json& in) {
  if (!in.is_object()) throw std::invalid_argument("fault parameters: expected an object");
  if (!in.contains("reproducer") || !in["reproducer"].is_string())
    throw std::invalid_argument("reproducer: missing (one of the fault catalog names, see `cudadiag list`)");
  const std::string name = in["reproducer"].get<std::string>();
  const Reproducer* r = find_reproducer(name);
  if (!r) throw std::invalid_argument("reproducer: unknown '" + name + "'");
  static const std::set<std::string> known = {"reproducer", "elements", "k", "offset_bytes"};
  for (const auto& [key, value] : in.items())
    if (!known.count(key)) throw std::invalid_argument("unknown fault parameter '" + key + "'");

  json out{{"reproducer", name}};
  const long long elements = int_param(in, "elements", 4096);
  if (elements < 64 || elements > (1ll << 28))
    throw std::invalid_argument("elements: " + std::to_string(elements) + " is outside 64..268435456");
  if (elements % 4 != 0)
    throw std::invalid_argument("elements: " + std::to_string(elements) +
                                " must be a multiple of 4 (16-byte buffers, so a one-element overrun reaches the "
                                "fence)");
  out["elements"] = elements;
  if (r->knob == Knob::distance) {
    const long long k = int_param(in, "k", 1);
    if (k < 1 || k > kMaxDistance || k >= elements)
      throw std::invalid_argument("k: " + std::to_string(k) + " is outside 1.." + std::to_string(kMaxDistance) +
                                  " (and below elements): larger distances leave the pool's slack");
    out["k"] = k;
  } else if (in.contains("k")) {
    throw std::invalid_argument("k: only the oob-* and underrun-* reproducers take a distance");
  }
  if (r->knob == Knob::offset) {
    const long long off = int_param(in, "offset_bytes", 4);
    if (off < 1 || off > 15)
      throw std::invalid_argument("offset_bytes: " + std::to_string(off) + " is outside 1..15");
    out["offset_bytes"] = off;
  } else if (in.contains("offset_bytes")) {
    throw std::invalid_argument("offset_bytes: only misaligned-vector-load takes an offset");
  }
  return out;
}

std::vector<CaseDef> fault_cases() {
  std::vector<CaseDef> out;
  for (const auto& r : reproducers()) {
    CaseDef c;
    c.id = std::string("fault.") + r.name;
    c.family = Family::fault;
    c.title = r.title;
    c.params = normalize_fault_params(json{{"reproducer", r.name}});
    c.expected = r.expected;
    add_blocking_variants(c.expected);
    c.expects_fault = r.expects_fault;
    c.deadline_ms = r.deadline_ms;
    c.fence_allocator = r.fence_allocator;
    c.tags = {"catalog"};
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

KernelFamily fault_family() {
  KernelFamily f;
  f.id = Family::fault;
  f.description = "minimal fault reproducers: overruns, underruns, misalignment, asserts, launch errors";
  f.cases = fault_cases;
  f.normalize_params = normalize_fault_params;
  return f;
}

}  // namespace cudadiag::cases
