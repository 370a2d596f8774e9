"""A Triton kernel whose store lacks its mask: the last block writes past the output.

n = 1000 floats with BLOCK = 1024: 24 elements (96 bytes) beyond the tensor's end.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_one(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x + 1.0)  # the bug: no mask=mask


torch.manual_seed(0)
n = 1000
x = torch.randn(n, device="cuda")
y = torch.empty_like(x)
add_one[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
torch.cuda.synchronize()
ok = torch.allclose(y, x + 1.0)
print(f"finished: correct={ok} (the unmasked store went unnoticed)")
