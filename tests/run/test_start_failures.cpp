// CUDA that cannot start, as frameworks say it in their own words: each is read as the
// runtime error it stands for, and a run that ends on one is "CUDA could not start"
// (exit 3), not the program's own failure (exit 1). The texts are the frameworks' own
// (PyTorch's c10/cuda/CUDAFunctions.cpp and torch/cuda/__init__.py, JAX's xla_bridge.py,
// Triton's runtime/driver.py and backends/nvidia/driver.py, CuPy's runtime errors).
#include <catch2/catch.hpp>

#include <string>

#include "evidence/cuda_start.h"
#include "run/error_text.h"
#include "run/run_verdict.h"
#include "run_fixtures.h"

using namespace cudadiag::run;
using namespace cudadiag::run::testing;
using cudadiag::taxonomy::ErrorClass;

namespace {

constexpr const char* kTorchNoDriver =
    "Traceback (most recent call last):\n"
    "  File \"/home/u/train.py\", line 4, in <module>\n"
    "    x = torch.ones(3, device=\"cuda\")\n"
    "  File \"/usr/lib/python3/dist-packages/torch/cuda/__init__.py\", line 319, in _lazy_init\n"
    "    torch._C._cuda_init()\n"
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed "
    "a driver from http://www.nvidia.com/Download/index.aspx\n";

constexpr const char* kTorchNoGpu =
    "Traceback (most recent call last):\n"
    "  File \"/home/u/train.py\", line 4, in <module>\n"
    "    model.cuda()\n"
    "  File \"/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py\", line 372, in _lazy_init\n"
    "    torch._C._cuda_init()\n"
    "RuntimeError: No CUDA GPUs are available\n";

struct StartFailureCase {
  const char* what;
  const char* text;
  int code;
  Framework framework;
};

const StartFailureCase kStartFailureCases[] = {
    {"PyTorch, no driver", kTorchNoDriver, 35, Framework::pytorch},
    {"PyTorch, no device", kTorchNoGpu, 100, Framework::pytorch},
    // torch < 1.5 raised the same words as an AssertionError over three lines.
    {"PyTorch, no driver (AssertionError)",
     "AssertionError: \nFound no NVIDIA driver on your system. Please check that you\nhave an NVIDIA GPU and "
     "installed a driver from\nhttp://www.nvidia.com/Download/index.aspx\n",
     35, Framework::pytorch},
    {"PyTorch, old driver",
     "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU "
     "driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx\n",
     35, Framework::pytorch},
    {"PyTorch, driver initialisation",
     "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.\n", 3, Framework::pytorch},
    {"JAX, no visible device",
     "RuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices. (you may "
     "need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)\n",
     100, Framework::jax},
    {"JAX, no supported device",
     "RuntimeError: Unable to initialize backend 'cuda': INTERNAL: no supported devices found for platform CUDA "
     "(you may need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)\n",
     100, Framework::jax},
    {"JAX/XLA, cuInit",
     "2024-03-05 14:57:34.729740: E external/xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to "
     "cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n",
     100, Framework::jax},
    {"Triton, no active driver", "RuntimeError: 0 active drivers ([]). There should only be one.\n", 100,
     Framework::triton},
    {"Triton, no libcuda",
     "AssertionError: libcuda.so cannot found!\nPlease make sure GPU is set up and then run \"/sbin/ldconfig\" "
     "(requires sudo) to refresh the linker cache.\n",
     35, Framework::triton},
    {"CuPy, no device",
     "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorNoDevice: no CUDA-capable device is detected\n",
     100, Framework::cupy},
    {"CuPy, no driver",
     "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA driver version is "
     "insufficient for CUDA runtime version\n",
     35, Framework::cupy},
    {"a program linked against libcuda, no driver",
     "./saxpy: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file "
     "or directory\n",
     35, Framework::cuda},
};

}  // namespace

TEST_CASE("frameworks' own no-driver and no-device messages name the runtime error they stand for") {
  for (const auto& c : kStartFailureCases) {
    INFO(c.what);
    const auto s = scan_error_text(c.text, "");
    const auto* f = s.first_cuda();
    REQUIRE(f);
    CHECK(f->kind == FindingKind::cuda_error);
    CHECK(f->code == c.code);
    CHECK(f->framework == c.framework);
    REQUIRE(f->error_class);
    CHECK(cudadiag::evidence::cuda_could_not_start(*f->error_class));
  }
}

TEST_CASE("a run that ends on a framework's no-driver message: CUDA could not start, exit 3") {
  for (const auto& c : kStartFailureCases) {
    INFO(c.what);
    const auto v = decide_run_verdict(
        {judge_run(exited(Rung::native, 1, c.text)), judge_run(exited(Rung::blocking, 1, c.text))}, {});
    CHECK(v.kind == VerdictKind::inconclusive);
    CHECK(v.cuda_could_not_start);
    CHECK(exit_code_of(v) == 3);
  }
}

TEST_CASE("a failure without CUDA's start words stays the program's own") {
  // A program that prints its own failure with no CUDA words stays the program's (exit 1).
  const auto own = decide_run_verdict({judge_run(exited(Rung::native, 1, "RuntimeError: loss is NaN\n"))}, {});
  CHECK_FALSE(own.cuda_could_not_start);
  CHECK(exit_code_of(own) == 1);
  // "driver" and "GPU" alone are not a start failure.
  const auto s = scan_error_text("ValueError: no GPU named 'a100' in the config; available drivers: ['x']\n", "");
  CHECK(s.first_cuda() == nullptr);
}
