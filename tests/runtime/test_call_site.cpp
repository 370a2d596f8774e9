// Errors inside the runtime's helpers (alloc, copies, synchronize) are located at the
// helper's caller: CallSite's default argument is evaluated where the helper is called.
#include <catch2/catch.hpp>

#include <string>

#include "kernels/runtime/gpu_runtime.h"

using namespace cudadiag::gpu;

namespace {

// Stands in for a Session helper: takes the call site the same way.
CallSite helper(int, CallSite site = CallSite::current()) { return site; }

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TEST_CASE("call site: a helper's default argument names its caller's file and line", "[runtime]") {
  const int line = __LINE__ + 1;
  const CallSite site = helper(1);
  CHECK(ends_with(site.file, "tests/runtime/test_call_site.cpp"));
  CHECK(site.line == line);
  CHECK(site.text() == std::string(site.file) + ":" + std::to_string(line));
  // Paths are relative to the repository (-ffile-prefix-map), as in every report.
  CHECK(std::string(site.file).rfind("tests/runtime/", 0) == 0);
}

TEST_CASE("call site: an error re-located at the caller keeps everything else", "[runtime]") {
  CudaFailure f;
  f.code = 2;
  f.name = "cudaErrorMemoryAllocation";
  f.api_call = "cuMemCreate";
  f.surfaced_at = "malloc";
  f.location = "kernels/runtime/fence_allocator.cu:48";
  const CudaError moved = CudaError(f).located_at(CallSite{"kernels/fault/fault_cases.cu", 120});
  CHECK(moved.failure().location == "kernels/fault/fault_cases.cu:120");
  CHECK(moved.failure().api_call == "cuMemCreate");
  CHECK(moved.failure().surfaced_at == "malloc");
  CHECK(moved.failure().code == 2);
}
