#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run/error_text.h"

using namespace cudadiag::run;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string program_data(const std::string& name) {
  return read_file(std::string(CUDADIAG_SOURCE_DIR) + "/tests/run/data/" + name);
}

std::string sanitizer_data(const std::string& name) {
  return read_file(std::string(CUDADIAG_TEST_DATA) + "/sanitizer/" + name);
}

ErrorTextScan scan_err(const std::string& text) { return scan_error_text(text, ""); }

}  // namespace

TEST_CASE("PyTorch AcceleratorError with its hints (real)") {
  const auto s = scan_err(program_data("pytorch_accelerator_illegal_address.txt"));
  const auto* f = s.first_cuda();
  REQUIRE(f);
  CHECK(f->kind == FindingKind::cuda_error);
  CHECK(f->code == 700);
  CHECK(f->name == "cudaErrorIllegalAddress");
  CHECK(f->error_class == cudadiag::taxonomy::ErrorClass::memory_fault);
  CHECK(f->framework == Framework::pytorch);
  CHECK(f->stream == Stream::err);
  CHECK(f->line_number == 11);
  CHECK(f->line == "torch.AcceleratorError: CUDA error: an illegal memory access was encountered");
  // PyTorch's "Search for `cudaErrorIllegalAddress'" line names the same error.
  REQUIRE(s.findings.size() == 2);
  CHECK(s.findings[1].code == 700);
  CHECK(s.findings[1].line_number == 12);
  REQUIRE(s.async_hint_stream);
  CHECK(*s.async_hint_stream == Stream::err);
  CHECK(s.async_hint_line == 13);
}

TEST_CASE("index_select device asserts (real): file, line, kernel, block, thread") {
  const auto s = scan_err(program_data("pytorch_index_select_assert.txt"));
  REQUIRE(s.findings.size() == 3);
  const auto& f = s.findings[0];
  CHECK(f.kind == FindingKind::device_assert);
  CHECK(f.code == 710);
  CHECK(f.name == "cudaErrorAssert");
  CHECK(f.error_class == cudadiag::taxonomy::ErrorClass::device_assert);
  CHECK(f.framework == Framework::pytorch);
  REQUIRE(f.assertion);
  CHECK(f.assertion->expression == "srcIndex < srcSelectDimSize");
  CHECK(f.assertion->file == "/opt/conda/conda-bld/pytorch_1720538643151/work/aten/src/ATen/native/cuda/Indexing.cu");
  CHECK(f.assertion->line == 1231);
  CHECK(f.assertion->function == "indexSelectSmallIndex");
  CHECK(f.kernel == "indexSelectSmallIndex");
  REQUIRE(f.assertion->block);
  CHECK(*f.assertion->block == std::array<long long, 3>{31, 0, 0});
  REQUIRE(f.assertion->thread);
  CHECK(*f.assertion->thread == std::array<long long, 3>{116, 0, 0});
  CHECK((*s.findings[2].assertion->thread)[0] == 118);
}

TEST_CASE("advanced-indexing assert, then RuntimeError (real): the assert comes first") {
  const auto s = scan_err(program_data("pytorch_index_kernel_assert.txt"));
  REQUIRE(s.findings.size() == 4);
  const auto* first = s.first_cuda();
  REQUIRE(first);
  CHECK(first->kind == FindingKind::device_assert);
  CHECK(first->assertion->expression == "-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"");
  CHECK(first->assertion->function == "operator()");
  CHECK(first->assertion->line == 92);
  const auto& rt = s.findings[3];
  CHECK(rt.kind == FindingKind::cuda_error);
  CHECK(rt.code == 710);
  CHECK(rt.line_number == 5);
  CHECK(rt.framework == Framework::pytorch);
  CHECK(s.async_hint_line == 6);
}

TEST_CASE("old THC asserts: template function names, Windows paths without a function") {
  auto s = scan_err(program_data("pytorch_thc_template_assert.txt"));
  REQUIRE(s.findings.size() == 2);
  REQUIRE(s.findings[0].assertion);
  CHECK(s.findings[0].assertion->file == "/pytorch/aten/src/THC/THCTensorIndex.cu");
  CHECK(s.findings[0].assertion->line == 308);
  CHECK(s.findings[0].assertion->function.rfind("void indexSelectSmallIndex(TensorInfo<T, IndexType>", 0) == 0);
  CHECK((*s.findings[1].assertion->thread)[0] == 1);

  s = scan_err(program_data("pytorch_windows_thc_assert.txt"));
  REQUIRE(s.findings.size() == 2);
  CHECK(s.findings[0].assertion->file == "C:/cb/pytorch_1000000000000/work/aten/src/THC/THCTensorIndex.cu");
  CHECK(s.findings[0].assertion->line == 218);
  CHECK(s.findings[0].assertion->function.empty());
  CHECK((*s.findings[0].assertion->thread)[0] == 106);
}

TEST_CASE("notebook AcceleratorError names cudaErrorAssert (real)") {
  const auto s = scan_err(program_data("pytorch_notebook_accelerator_assert.txt"));
  const auto* f = s.first_cuda();
  REQUIRE(f);
  CHECK(f->code == 710);
  CHECK(f->framework == Framework::pytorch);
  CHECK(f->line == "AcceleratorError: CUDA error: device-side assert triggered");
  CHECK(s.findings.size() == 2);  // and the "Search for `cudaErrorAssert'" line
}

TEST_CASE("assert after the RuntimeError, pasted with markdown (real)") {
  const auto s = scan_err(program_data("pytorch_scatter_gather_assert.txt"));
  REQUIRE(s.findings.size() == 2);
  CHECK(s.findings[0].kind == FindingKind::cuda_error);
  CHECK(s.findings[0].code == 710);
  CHECK(s.findings[1].kind == FindingKind::device_assert);
  CHECK(s.findings[1].assertion->file == "/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu");
  CHECK(s.findings[1].assertion->line == 115);
}

TEST_CASE("misaligned address then an abort from c10::Error (real)") {
  const auto s = scan_err(program_data("pytorch_misaligned_c10_abort.txt"));
  REQUIRE(s.findings.size() == 3);
  CHECK(s.findings[0].code == 716);
  CHECK(s.findings[0].name == "cudaErrorMisalignedAddress");
  CHECK(s.findings[0].error_class == cudadiag::taxonomy::ErrorClass::misaligned);
  CHECK(s.findings[1].kind == FindingKind::signal);
  CHECK(s.findings[1].signal_name == "SIGABRT");
  CHECK(s.findings[1].framework == Framework::pytorch);  // c10::Error
  CHECK(s.findings[2].code == 716);                      // what():  CUDA error: misaligned address
  CHECK(s.findings[2].framework == Framework::pytorch);  // c10 on the line
}

TEST_CASE("unspecified launch failure (real)") {
  const auto s = scan_err(program_data("pytorch_unspecified_launch_failure.txt"));
  const auto* f = s.first_cuda();
  REQUIRE(f);
  CHECK(f->code == 719);
  CHECK(f->error_class == cudadiag::taxonomy::ErrorClass::launch_failure);
  CHECK(f->line_number == 6);
}

TEST_CASE("PyTorch out of memory (real)") {
  const auto s = scan_err(program_data("pytorch_oom.txt"));
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].code == 2);
  CHECK(s.findings[0].error_class == cudadiag::taxonomy::ErrorClass::out_of_memory);
  CHECK(s.findings[0].framework == Framework::pytorch);
}

TEST_CASE("legacy numbering: the message decides, not the number (real)") {
  // "cuda runtime error (59)" is the old cudaErrorAssert; today 59 is something else.
  const auto s = scan_err(program_data("torch7_cuda_runtime_error_59.txt"));
  REQUIRE(s.findings.size() == 2);
  for (const auto& f : s.findings) CHECK(f.code == 710);
}

TEST_CASE("Triton error (real)") {
  const auto s = scan_err(program_data("triton_misaligned.txt"));
  const auto* f = s.first_cuda();
  REQUIRE(f);
  CHECK(f->code == 716);
  CHECK(f->framework == Framework::triton);
  CHECK(f->line == "RuntimeError: Triton Error [CUDA]: misaligned address");
}

TEST_CASE("JAX/XLA errors (real): driver names, the kernel XLA launched") {
  auto s = scan_err(program_data("jax_xla_custom_call.txt"));
  REQUIRE(s.findings.size() == 4);
  const auto& f = s.findings[0];
  CHECK(f.code == 700);
  CHECK(f.name == "cudaErrorIllegalAddress");
  CHECK(f.driver_name == "CUDA_ERROR_ILLEGAL_ADDRESS");
  CHECK(f.framework == Framework::jax);
  CHECK(f.kernel == "add");
  for (const auto& g : s.findings) CHECK(g.framework == Framework::jax);

  s = scan_err(program_data("jax_pjrt_synchronize.txt"));
  REQUIRE(s.first_cuda());
  CHECK(s.first_cuda()->code == 700);
  CHECK(s.first_cuda()->framework == Framework::jax);
  CHECK(s.findings.size() == 1);
}

TEST_CASE("CuPy and TensorRT (real)") {
  auto s = scan_err(program_data("cupy_driver_error.txt"));
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].code == 700);
  CHECK(s.findings[0].framework == Framework::cupy);
  s = scan_err(program_data("tensorrt_runtime.txt"));
  REQUIRE(s.findings.size() == 2);
  CHECK(s.findings[0].code == 700);
  CHECK(s.findings[0].framework == Framework::tensorrt);
}

TEST_CASE("compute-sanitizer text (real): access records and their details") {
  auto s = scan_err(program_data("sanitizer_text_one_byte_after.txt"));
  REQUIRE(s.findings.size() == 1);
  const auto& f = s.findings[0];
  CHECK(f.kind == FindingKind::sanitizer);
  CHECK(f.framework == Framework::compute_sanitizer);
  CHECK(f.name == "Invalid __global__ write of size 1 bytes");
  CHECK(f.error_class == cudadiag::taxonomy::ErrorClass::memory_fault);
  REQUIRE(f.access);
  CHECK(f.access->direction == "write");
  CHECK(f.access->size == 1);
  CHECK(f.access->kernel.rfind("void thrust::cuda_cub::assign_value<", 0) == 0);
  CHECK(f.access->location.find("assign_value.h:58") != std::string::npos);
  CHECK(f.access->address == "0x7b3c42e0000a");
  REQUIRE(f.access->thread);
  REQUIRE(f.access->nearest);
  CHECK(f.access->nearest->distance_bytes == 1);
  CHECK(f.access->nearest->relation == "after");
  CHECK(f.access->nearest->size == 10);

  s = scan_err(program_data("sanitizer_text_null_access.txt"));
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].access->address == "0x0");
  CHECK(s.findings[0].access->kernel == "compress(const unsigned int *, const unsigned int *, uint2 *, int)");
  CHECK(s.findings[0].access->location.empty());
  CHECK(s.findings[0].access->nearest->relation == "before");
  CHECK((*s.findings[0].access->thread)[0] == 16);
}

TEST_CASE("compute-sanitizer 'Program hit' (real) names the error and the API call") {
  const auto s = scan_err(program_data("sanitizer_text_program_hit.txt"));
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].kind == FindingKind::cuda_error);
  CHECK(s.findings[0].code == 700);
  CHECK(s.findings[0].api_call == "cudaDeviceSynchronize");
  CHECK(s.findings[0].framework == Framework::compute_sanitizer);
}

TEST_CASE("compute-sanitizer text captured on the H200 (real)") {
  auto s = scan_error_text("", sanitizer_data("real_h200_memcheck_oob_write.txt"));
  REQUIRE(s.findings.size() == 3);
  CHECK(s.findings[0].kind == FindingKind::sanitizer);
  CHECK(s.findings[0].stream == Stream::out);
  CHECK(s.findings[0].access->kernel == "oob_write(float *, int)");
  CHECK(s.findings[0].access->location == "probe.cu:8");
  CHECK(*s.findings[0].access->block == std::array<long long, 3>{3, 0, 0});
  CHECK(s.findings[0].access->nearest->size == 4000);  // "4,000 bytes"
  CHECK(s.findings[1].code == 719);
  CHECK(s.findings[1].api_call == "cudaDeviceSynchronize");
  CHECK(s.sanitizer_error_count == 2);
  // The program's own line names the error too.
  CHECK(s.findings[2].line == "mode=oob_write launch=0(cudaSuccess) sync=719(cudaErrorLaunchFailure)");
  CHECK(s.findings[2].code == 719);
  CHECK(s.findings[2].framework == Framework::cuda);

  s = scan_err(sanitizer_data("real_h200_memcheck_assert.txt"));
  REQUIRE_FALSE(s.findings.empty());
  CHECK(s.findings[0].kind == FindingKind::device_assert);
  CHECK(s.findings[0].assertion->function == "void dassert(int)");
  CHECK(s.findings[0].assertion->file == "probe.cu");
  CHECK(s.findings[0].framework == Framework::cuda);
}

TEST_CASE("shell-reported signals (real and typical forms)") {
  auto s = scan_err(program_data("shell_segfault.txt"));
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].kind == FindingKind::signal);
  CHECK(s.findings[0].signal_name == "SIGSEGV");
  CHECK(s.findings[0].line_number == 4);

  s = scan_err("run.sh: line 3: 41234 Aborted                 (core dumped) python3 train.py\n");
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].signal_name == "SIGABRT");
  s = scan_err("Aborted (core dumped)\nBus error\n  77 Killed  python x.py\nFloating point exception\n");
  REQUIRE(s.findings.size() == 4);
  CHECK(s.findings[1].signal_name == "SIGBUS");
  CHECK(s.findings[2].signal_name == "SIGKILL");
  CHECK(s.findings[3].signal_name == "SIGFPE");
  // Ordinary words are not signals.
  CHECK(scan_err("Training aborted by user\nKilled 3 stale workers\nAborted: retrying\n").findings.empty());
}

TEST_CASE("commands that do not start, and the interposer that did not load") {
  auto s = scan_err("sh: 1: trian.py: not found\n");
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].kind == FindingKind::not_started);
  CHECK(s.findings[0].framework == Framework::shell);
  s = scan_err("bash: pyhton3: command not found\n");
  CHECK(s.has(FindingKind::not_started));
  s = scan_err("python3: can't open file '/w/missing.py': [Errno 2] No such file or directory\n");
  REQUIRE(s.has(FindingKind::not_started));
  CHECK(s.first_of(FindingKind::not_started)->framework == Framework::python);
  s = scan_err("env: 'nope': No such file or directory\n");
  CHECK(s.has(FindingKind::not_started));
  // A module that is not found is the program's own failure.
  CHECK(scan_err("ModuleNotFoundError: No module named 'torch'\nweights not found\n").findings.empty());

  s = scan_err("ERROR: ld.so: object '/opt/cd/libcudadiag_fence.so' from LD_PRELOAD cannot be preloaded "
               "(cannot open shared object file): ignored.\n");
  REQUIRE(s.has(FindingKind::preload_failed));
  CHECK(s.first_of(FindingKind::preload_failed)->framework == Framework::loader);
}

TEST_CASE("names, numbers and generic messages") {
  auto s = scan_err("RuntimeError:copy_if failed to synchronize:cudaErrorIllegalAddress\n");
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].code == 700);
  s = scan_err("GPUassert: an illegal memory access was encountered kernel.cu 42\n");
  CHECK(s.findings.at(0).code == 700);
  s = scan_err("CUDA error 716 at kernel.cu:10\n");
  CHECK(s.findings.at(0).code == 716);
  s = scan_err("cudaErrorFooBarBaz happened\n");
  REQUIRE(s.findings.size() == 1);
  CHECK_FALSE(s.findings[0].code);
  CHECK(s.findings[0].name == "cudaErrorFooBarBaz");
  CHECK(s.findings[0].error_class == cudadiag::taxonomy::ErrorClass::unknown);
  // Generic texts need a CUDA context on the line.
  CHECK(scan_err("error: invalid argument '--foo'\nout of memory? no\nmisaligned address in struct\n").findings.empty());
  CHECK(scan_err("CUDA error: invalid argument\n").findings.at(0).code == 1);
  // A status, not a failure; and types that look like names.
  CHECK(scan_err("cudaEventQuery returned cudaErrorNotReady\ncudaError_t err = cudaSuccess;\n").findings.empty());
  // A host assert (glibc) ends in SIGABRT and is not a device assert.
  s = scan_err("prog: host.cpp:12: int main(): Assertion `n > 0' failed.\n");
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].kind == FindingKind::host_assert);
  CHECK(s.findings[0].assertion->expression == "n > 0");
  CHECK(s.findings[0].assertion->file == "host.cpp");
}

TEST_CASE("separators of '=' are not the sanitizer, and records close") {
  auto s = scan_err("============================= test session starts ==============================\n"
                    "Invalid __global__ write of size 4 bytes\n");
  CHECK(s.findings.empty());
  s = scan_err("========= Invalid __global__ read of size 4 bytes\n"
               "unrelated program line\n"
               "=========     by thread (1,2,3) in block (4,5,6)\n");
  REQUIRE(s.findings.size() == 1);
  CHECK_FALSE(s.findings[0].access->thread);  // the record was closed by the program's line
}

TEST_CASE("stderr findings come before stdout's; CRLF line ends") {
  const auto s = scan_error_text("RuntimeError: CUDA error: misaligned address\r\n",
                                 "CUDA error: an illegal memory access was encountered\r\n");
  REQUIRE(s.findings.size() == 2);
  CHECK(s.findings[0].stream == Stream::err);
  CHECK(s.findings[0].code == 716);
  CHECK(s.findings[0].line == "RuntimeError: CUDA error: misaligned address");
  CHECK(s.findings[1].stream == Stream::out);
  CHECK(s.first_cuda() == &s.findings[0]);
}

TEST_CASE("hostile input: junk, invalid UTF-8, NULs, huge lines, floods") {
  std::string junk;
  for (int i = 0; i < 200000; ++i) junk += static_cast<char>((i * 97 + 13) & 0xFF);
  std::string text = junk + "\nCUDA error: an illegal memory access was encountered \xFF\xFE\n" + junk;
  auto s = scan_err(text);
  const auto* f = s.first_cuda();
  REQUIRE(f);
  CHECK(f->code == 700);
  CHECK_NOTHROW(nlohmann::json(f->line).dump());  // the stored line is valid UTF-8
  for (const auto& g : s.findings) CHECK_NOTHROW(nlohmann::json(g.line).dump());

  // A 16 MiB line made of near-matches of every pattern: linear time, bounded excerpt.
  std::string huge;
  while (huge.size() < (16u << 20))
    huge += "Assertion `x block: [1,2 cudaError_ CUDA_ERROR_ ========== Segmentation ";
  const auto t0 = std::chrono::steady_clock::now();
  s = scan_err(huge + "\n" + huge);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  CHECK(ms < 5000);
  for (const auto& g : s.findings) CHECK(g.line.size() <= kMaxLineExcerpt);

  // A flood of asserts: the first ones are kept, the rest counted.
  std::string flood;
  for (int i = 0; i < 5000; ++i)
    flood += "k.cu:1: f: block: [0,0,0], thread: [" + std::to_string(i) + ",0,0] Assertion `i < n` failed.\n";
  s = scan_err(flood);
  CHECK(s.findings.size() == kMaxFindings);
  CHECK(s.dropped == 5000 - kMaxFindings);
  CHECK((*s.findings[0].assertion->thread)[0] == 0);

  // Malformed brackets and numbers never throw.
  CHECK_NOTHROW(scan_err("a.cu:99999999999999999999999: f: block: [,,], thread: [1,2 Assertion `` failed.\n"));
  CHECK_NOTHROW(scan_err("========= ERROR SUMMARY: 99999999999999999999999999 errors\n"));
  CHECK_NOTHROW(scan_err(std::string("\0\0\0\n\n\r\r", 7)));
  CHECK(scan_err("").findings.empty());
}

TEST_CASE("shell and interpreter texts captured on the build machine (real)") {
  auto s = scan_err(program_data("local_bash_abort.txt"));
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].kind == FindingKind::signal);
  CHECK(s.findings[0].signal_name == "SIGABRT");
  s = scan_err(program_data("local_bash_segfault.txt"));
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].signal_name == "SIGSEGV");
  s = scan_err(program_data("local_dash_not_found.txt"));
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].kind == FindingKind::not_started);
  CHECK(s.findings[0].framework == Framework::shell);
  s = scan_err(program_data("local_python_cannot_open.txt"));
  REQUIRE(s.findings.size() == 1);
  CHECK(s.findings[0].kind == FindingKind::not_started);
  CHECK(s.findings[0].framework == Framework::python);
}
