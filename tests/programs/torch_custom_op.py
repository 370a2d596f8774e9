"""A PyTorch custom op whose CUDA kernel writes one element past its output.

The kernel is nvcc-built into a shared library (write_past_end.cu, path in argv[1]),
called on the output tensor's data_ptr and registered with torch.library. Natively the
write lands in the caching allocator's slack and the op "succeeds".
"""
import ctypes
import sys

import torch

lib = ctypes.CDLL(sys.argv[1])
lib.write_past_end.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_void_p]
lib.write_past_end.restype = ctypes.c_int


@torch.library.custom_op("cudadiag_probe::fill_twos", mutates_args=())
def fill_twos(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    rc = lib.write_past_end(out.data_ptr(), out.numel(), torch.cuda.current_stream().cuda_stream)
    if rc != 0:
        raise RuntimeError(f"write_past_end launch failed: CUDA error {rc}")
    return out


@fill_twos.register_fake
def _(x):
    return torch.empty_like(x)


torch.manual_seed(0)
x = torch.randn(1000, device="cuda")  # 4,000 bytes: the output ends exactly at its end
y = torch.ops.cudadiag_probe.fill_twos(x)
torch.cuda.synchronize()
print(f"finished: sum={y.sum().item():.1f} (the write past the end went unnoticed)")
