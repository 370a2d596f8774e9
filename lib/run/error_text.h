#pragma once
// CUDA errors in a program's own output. The program is someone else's: PyTorch,
// Triton, JAX/XLA, CuPy, TensorRT or plain CUDA, each with its own way of printing the
// same error. The scanner reads stdout and stderr line by line and names every CUDA
// error it recognises with its code and name from the taxonomy, keeping the line it
// came from:
//   cudart messages      "CUDA error: an illegal memory access was encountered"
//   runtime/driver names "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS"
//   PyTorch              "torch.AcceleratorError: CUDA error: ...", its asynchronous-report hint
//   device asserts       "Indexing.cu:1236: fn: block: [5,0,0], thread: [31,0,0] Assertion `...` failed."
//   Triton               "RuntimeError: Triton Error [CUDA]: misaligned address"
//   JAX/XLA              "XlaRuntimeError: INTERNAL: ... CUDA_ERROR_ILLEGAL_ADDRESS: ..."
//   compute-sanitizer    "========= Invalid __global__ write of size 4 bytes" and what follows
//   no driver, no device "Found no NVIDIA driver on your system", "No CUDA GPUs are available"
//                        (PyTorch), "No visible GPU devices" (JAX), "0 active drivers" (Triton):
//                        as the runtime error each stands for (35, 100, 3): CUDA could not start
//   and how a process ended when a shell or runtime says so ("Segmentation fault",
//   "Aborted (core dumped)"), a command that did not start ("foo: not found"), and a
//   library ld.so could not preload.
// Any bytes are accepted (binary junk, invalid UTF-8, NULs, huge lines): the work is
// linear in the text, and the stored line excerpts are valid UTF-8.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sanitizer/memcheck.h"
#include "taxonomy/taxonomy.h"

namespace cudadiag::run {

enum class Framework {
  pytorch, triton, jax, tensorflow, cupy, tensorrt, compute_sanitizer,
  cuda,     // a CUDA runtime or driver message with no framework around it
  cxx,      // the C++ runtime ("terminate called after throwing ...")
  python,   // the Python interpreter
  shell,    // sh/bash/env reporting on a command
  loader,   // ld.so
  unknown,
};
const char* to_string(Framework f);

enum class FindingKind {
  cuda_error,      // a CUDA error named by message, cudaError name, CUresult name or number
  device_assert,   // a kernel's failed assert (cudaErrorAssert, 710)
  sanitizer,       // a compute-sanitizer access error ("Invalid __global__ write ...")
  signal,          // a process died of a signal, as a shell or runtime reported it
  host_assert,     // a failed assert() on the host ("Assertion `x' failed."): ends in SIGABRT
  not_started,     // the command (or one it runs) was not found or could not be executed
  preload_failed,  // ld.so could not preload a library (the interposer did not load)
};
const char* to_string(FindingKind k);

enum class Stream { out, err };
const char* to_string(Stream s);  // "stdout" | "stderr"

// "file:line: function: block: [b], thread: [t] Assertion `expression` failed."
struct AssertDetails {
  std::string expression;
  std::string file;
  std::optional<long long> line;
  std::string function;
  std::optional<std::array<long long, 3>> block;
  std::optional<std::array<long long, 3>> thread;
};

// A compute-sanitizer access error with the lines that follow it in the text report.
struct AccessDetails {
  std::string space;      // __global__, __shared__, ...
  std::string direction;  // read | write
  std::optional<long long> size;
  std::string kernel;     // "oob_write(float *, int)" from "at oob_write(float *, int)+0xc0 in probe.cu:8"
  std::string location;   // "probe.cu:8" when the report names it
  std::string address;    // accessed address, hex
  std::optional<std::array<long long, 3>> thread;
  std::optional<std::array<long long, 3>> block;
  std::optional<sanitizer::NearestAllocation> nearest;
};

struct ErrorFinding {
  FindingKind kind = FindingKind::cuda_error;
  Framework framework = Framework::unknown;
  Stream stream = Stream::err;
  std::size_t line_number = 0;  // 1-based, within the captured text of that stream
  std::string line;             // the line (at most kMaxLineExcerpt bytes, valid UTF-8)
  // cuda_error, device_assert and sanitizer "Program hit" lines, from the taxonomy:
  std::optional<int> code;      // cudaError_t value
  std::string name;             // cudaErrorIllegalAddress (or the name as written when unknown)
  std::string driver_name;      // CUDA_ERROR_ILLEGAL_ADDRESS when the text used it
  std::optional<taxonomy::ErrorClass> error_class;  // memory_fault, misaligned, ... (none for other kinds)
  std::string api_call;         // "cudaDeviceSynchronize" when the text names the call
  std::string kernel;           // when the text names the kernel
  std::string signal_name;      // signal: SIGSEGV, SIGABRT, ...
  std::optional<AssertDetails> assertion;  // device_assert, host_assert
  std::optional<AccessDetails> access;     // sanitizer
};

inline constexpr std::size_t kMaxLineExcerpt = 400;
inline constexpr std::size_t kMaxFindings = 256;

struct ErrorTextScan {
  std::vector<ErrorFinding> findings;  // stderr's first, then stdout's, each in line order
  std::size_t dropped = 0;             // findings past kMaxFindings: counted, not kept
  std::optional<long long> sanitizer_error_count;  // "========= ERROR SUMMARY: N errors"
  // "========= Error: Target application terminated before first instrumented API call":
  // compute-sanitizer ended a program that made no CUDA call (and exits 255 for it).
  bool sanitizer_saw_no_cuda_call = false;
  // PyTorch's "CUDA kernel errors might be asynchronously reported at some other API
  // call": the stack trace may name the wrong call. Where it was seen, if it was.
  std::optional<Stream> async_hint_stream;
  std::size_t async_hint_line = 0;

  // First finding of a CUDA error: cuda_error, device_assert or sanitizer.
  const ErrorFinding* first_cuda() const;
  const ErrorFinding* first_of(FindingKind kind) const;
  bool has(FindingKind kind) const { return first_of(kind) != nullptr; }
};

// Scans stderr, then stdout.
ErrorTextScan scan_error_text(std::string_view stderr_text, std::string_view stdout_text);

// Adds one stream's findings to `scan`.
void scan_stream(std::string_view text, Stream stream, ErrorTextScan& scan);

}  // namespace cudadiag::run
