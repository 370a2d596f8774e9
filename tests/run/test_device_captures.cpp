// Outputs of real programs failing on an H100 (driver 580.159.04, torch 2.11, triton 3.6,
// jax 0.11.2, cupy 14.2; tests/run/data/device_h100_*, see the README there): each
// is recognised for what it is, the kernel log's Xid 31 page is the address the program
// aimed at, and the framework caching switches did what the caching table says.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "host/xid.h"
#include "run/error_text.h"
#include "run/judge.h"
#include "sanitizer/memcheck.h"

using namespace cudadiag;
using namespace cudadiag::run;

namespace {

std::string data(const std::string& name) {
  std::ifstream in(std::string(CUDADIAG_SOURCE_DIR) + "/tests/run/data/device_h100_" + name, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ErrorTextScan scan(const std::string& name) { return scan_error_text(data(name + "_stderr.txt"), ""); }

// "key=0x..." in a program's stdout.
std::uint64_t printed(const std::string& stdout_text, const std::string& key) {
  std::smatch m;
  REQUIRE(std::regex_search(stdout_text, m, std::regex(key + "=(0x[0-9a-f]+)")));
  return std::stoull(m[1].str(), nullptr, 16);
}

int printed_pid(const std::string& stdout_text) {
  std::smatch m;
  REQUIRE(std::regex_search(stdout_text, m, std::regex("pid=([0-9]+)")));
  return std::stoi(m[1].str());
}

}  // namespace

TEST_CASE("device: CuPy illegal address and misaligned address, runtime then driver", "[device_captures]") {
  auto s = scan("cupy_far_write");
  const auto* f = s.first_cuda();
  REQUIRE(f);
  CHECK(f->kind == FindingKind::cuda_error);
  CHECK(f->framework == Framework::cupy);
  CHECK(f->code == 700);
  CHECK(f->name == "cudaErrorIllegalAddress");
  CHECK(f->error_class == cudadiag::taxonomy::ErrorClass::memory_fault);
  CHECK(f->line_number == 8);
  // cuModuleUnload at exit reports the same error by its driver name.
  bool driver = false;
  for (const auto& x : s.findings) driver = driver || (x.driver_name == "CUDA_ERROR_ILLEGAL_ADDRESS" && x.code == 700);
  CHECK(driver);

  s = scan("cupy_misaligned");
  f = s.first_cuda();
  REQUIRE(f);
  CHECK(f->framework == Framework::cupy);
  CHECK(f->code == 716);
  CHECK(f->error_class == cudadiag::taxonomy::ErrorClass::misaligned);
}

TEST_CASE("device: Triton kernels under PyTorch, with and without CUDA_LAUNCH_BLOCKING", "[device_captures]") {
  // Asynchronous: PyTorch reports it at the next synchronize, with its hints.
  auto s = scan("triton_far_write");
  const auto* f = s.first_cuda();
  REQUIRE(f);
  CHECK(f->framework == Framework::pytorch);
  CHECK(f->code == 700);
  CHECK(f->line == "torch.AcceleratorError: CUDA error: an illegal memory access was encountered");
  CHECK(s.async_hint_stream.has_value());

  // Blocking: Triton's launcher reports it at the launch of the faulting kernel.
  s = scan("triton_far_write_blocking");
  f = s.first_cuda();
  REQUIRE(f);
  CHECK(f->framework == Framework::triton);
  CHECK(f->code == 700);
  CHECK(f->line == "RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered");
  CHECK_FALSE(s.async_hint_stream.has_value());

  s = scan("triton_misaligned");
  f = s.first_cuda();
  REQUIRE(f);
  CHECK(f->code == 716);
  CHECK(f->error_class == cudadiag::taxonomy::ErrorClass::misaligned);
}

TEST_CASE("device: device-side asserts of PyTorch kernels and of a Triton kernel", "[device_captures]") {
  struct Case {
    const char* name;
    const char* file_end;
    long long line;
    const char* function;
    const char* expression;
    long long thread;
  };
  for (const Case c : {Case{"torch_getitem_oob", "ATen/native/cuda/IndexKernel.cu", 111, "operator()",
                            "-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"", 1},
                       Case{"torch_index_select_oob", "ATen/native/cuda/Indexing.cu", 1515, "indexSelectSmallIndex",
                            "srcIndex < srcSelectDimSize", 0},
                       Case{"triton_device_assert", "progs/triton_device_assert.py", 8, "unknown",
                            "value out of range", 5}}) {
    INFO(c.name);
    const auto s = scan(c.name);
    const auto* f = s.first_cuda();
    REQUIRE(f);
    CHECK(f->kind == FindingKind::device_assert);
    CHECK(f->code == 710);
    CHECK(f->error_class == cudadiag::taxonomy::ErrorClass::device_assert);
    REQUIRE(f->assertion);
    CHECK_THAT(f->assertion->file, Catch::EndsWith(c.file_end));
    CHECK(f->assertion->line == c.line);
    CHECK(f->assertion->function == c.function);
    CHECK(f->assertion->expression == c.expression);
    REQUIRE(f->assertion->thread);
    CHECK((*f->assertion->thread)[0] == c.thread);
    // ... and PyTorch's own line naming cudaErrorAssert.
    bool runtime = false;
    for (const auto& x : s.findings)
      runtime = runtime || (x.kind == FindingKind::cuda_error && x.code == 710 && x.framework == Framework::pytorch);
    CHECK(runtime);
  }
}

TEST_CASE("device: PyTorch out of memory", "[device_captures]") {
  const auto s = scan("torch_oom");
  const auto* f = s.first_cuda();
  REQUIRE(f);
  CHECK(f->framework == Framework::pytorch);
  CHECK(f->code == 2);
  CHECK(f->error_class == cudadiag::taxonomy::ErrorClass::out_of_memory);
}

TEST_CASE("device: JAX under the platform allocator, a Pallas read far out of bounds", "[device_captures]") {
  const auto s = scan("jax_pallas_oob_platform");
  const auto* f = s.first_cuda();
  REQUIRE(f);
  CHECK(f->code == 717);
  CHECK(f->driver_name == "CUDA_ERROR_INVALID_ADDRESS_SPACE");
  bool jax = false;
  for (const auto& x : s.findings) jax = jax || (x.framework == Framework::jax && x.code == 717);
  CHECK(jax);
}

TEST_CASE("device: shells and interpreters reporting on commands", "[device_captures]") {
  auto s = scan("not_found_sh");
  REQUIRE(s.first_of(FindingKind::not_started));
  CHECK(s.first_of(FindingKind::not_started)->framework == Framework::shell);
  s = scan("not_found_python");
  REQUIRE(s.first_of(FindingKind::not_started));
  CHECK(s.first_of(FindingKind::not_started)->framework == Framework::python);
  s = scan("shell_abort");
  REQUIRE(s.first_of(FindingKind::signal));
  CHECK(s.first_of(FindingKind::signal)->signal_name == "SIGABRT");
  s = scan("shell_segfault");
  REQUIRE(s.first_of(FindingKind::signal));
  CHECK(s.first_of(FindingKind::signal)->signal_name == "SIGSEGV");
  for (const char* name : {"not_found_sh", "not_found_python", "shell_abort", "shell_segfault"}) {
    INFO(name);
    CHECK(scan(name).first_cuda() == nullptr);
  }
}

TEST_CASE("device: memcheck with --padding, text and XML, one element past a CuPy array", "[device_captures]") {
  const auto text = data("sanitizer_text_cupy_overrun_stdout.txt");
  const auto s = scan_error_text("", text);
  const auto* f = s.first_of(FindingKind::sanitizer);
  REQUIRE(f);
  REQUIRE(f->access);
  CHECK(f->access->direction == "write");
  CHECK(f->access->size == 4);
  REQUIRE(f->access->nearest);
  CHECK(f->access->nearest->distance_bytes == 1);
  CHECK(f->access->nearest->size == 4000);
  CHECK(s.sanitizer_error_count == 6);

  // The XML of the same program: the accessed address is the array's end.
  auto xml = sanitizer::parse_memcheck_xml(data("sanitizer_padding_cupy_overrun.xml"));
  REQUIRE_FALSE(xml.findings.empty());
  const auto& access = xml.findings.front();
  CHECK(access.direction == "write");
  CHECK(access.kernel == "overrun");
  const auto out = data("sanitizer_padding_cupy_overrun_stdout.txt");
  CHECK(std::stoull(access.address, nullptr, 16) == printed(out, "base") + 4000);
  sanitizer::attach_text_allocations(xml, out);
  REQUIRE(xml.findings.front().nearest);
  CHECK(xml.findings.front().nearest->distance_bytes == 1);

  // Judged on the sanitizer rung: a CUDA error found by memcheck.
  RunObservation obs;
  obs.rung = Rung::sanitizer;
  obs.child.ending = runner::Ending::exit_code;
  obs.child.exit_code = 1;
  obs.child.out.head = out;
  obs.sanitizer = sanitizer::parse_memcheck_xml(data("sanitizer_padding_cupy_overrun.xml"));
  const auto j = judge_run(obs);
  CHECK(j.outcome == RunOutcome::cuda_error);
}

TEST_CASE("device: the Xid 31 page is the address each program aimed at", "[device_captures]") {
  const auto events = host::parse_xid_text(data("kmsg_nvrm.txt"));
  std::map<int, std::uint64_t> page_of_pid;
  for (const auto& e : events)
    if (e.xid == 31 && e.mmu_fault && e.pid) page_of_pid[*e.pid] = e.mmu_fault->address;
  REQUIRE(page_of_pid.size() == 3);
  for (const char* name : {"cupy_far_write", "triton_far_write", "triton_far_write_blocking"}) {
    INFO(name);
    const auto out = data(std::string(name) + "_stdout.txt");
    const int pid = printed_pid(out);
    REQUIRE(page_of_pid.count(pid));
    CHECK(page_of_pid[pid] == printed(out, "target"));
    CHECK(printed(out, "target") % host::kMmuFaultGranularity == 0);
  }
  for (const auto& e : events)
    if (e.xid == 31) CHECK(e.mmu_fault->access == host::MmuAccess::write);
  // Xid 13 lines name no pid: they go to the run that was going at the time.
  bool pidless = false;
  for (const auto& e : events) pidless = pidless || (e.xid == 13 && !e.pid);
  CHECK(pidless);
}

TEST_CASE("device: the caching switches did what the caching table says", "[device_captures]") {
  using nlohmann::json;
  const auto line = [](const std::string& name) { return json::parse(data(name + "_stdout.txt")); };
  // PyTorch: what the caching allocator keeps after a free.
  CHECK(line("caching_torch_default")["reserved_after_free"].get<long long>() > 0);
  CHECK(line("caching_torch_nocache")["reserved_after_free"] == 0);
  // XLA: the pool it takes at start, and no pool at all under the platform allocator.
  const auto pool = [&](const std::string& name) { return line(name)["memory_stats"]["pool_bytes"].get<long long>(); };
  CHECK(pool("caching_jax_no_prealloc") * 1000 < pool("caching_jax_default"));
  CHECK(line("caching_jax_platform")["memory_stats"].is_null());
  // The Pallas read 8 GiB out of bounds: silent under the pool, a fault without it.
  CHECK_THAT(data("jax_pallas_oob_default_stdout.txt"), Catch::Contains("sum 0.0"));
  CHECK_THAT(data("jax_pallas_oob_platform_stdout.txt"), Catch::Contains("allocator=platform"));
  CHECK(scan("jax_pallas_oob_platform").first_cuda() != nullptr);
}
