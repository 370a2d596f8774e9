"""A ring-attention style gather that reads rows 2 to 4 MB past the end of a 4 MB K chunk.

K is 1024 rows of 1024 float32 (4 MiB); a Triton kernel gathers rows by index without a
mask, and the indices (rows 1536 to 2047) are those of the whole sequence, not of this
rank's chunk: every row read lies 2 MiB to 4 MiB past K's end. The next tensor (V, made
right after K) or the caching allocator's segment sits there natively: the read is silent.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def gather_rows(k_ptr, idx_ptr, out_ptr, D: tl.constexpr):
    row = tl.load(idx_ptr + tl.program_id(0))
    cols = tl.arange(0, D)
    v = tl.load(k_ptr + row * D + cols)  # the bug: no check that row < K's rows
    tl.store(out_ptr + tl.program_id(0) * D + cols, v)


torch.manual_seed(0)
rows, d = 1024, 1024
k = torch.randn(rows, d, device="cuda")  # 4 MiB
v = torch.randn(rows, d, device="cuda")  # the neighbour the read lands in natively
idx = torch.arange(1536, 2048, device="cuda", dtype=torch.int64)  # rows of the whole sequence
out = torch.empty(idx.numel(), d, device="cuda")
gather_rows[(idx.numel(),)](k, idx, out, D=d)
torch.cuda.synchronize()
print(f"finished: gathered {idx.numel()} rows, sum={out.sum().item():.3f} (the far read went unnoticed)")
