"""A child process writes past the end of a CUDA tensor it received from its parent
(torch.multiprocessing, CUDA IPC): an unmasked Triton store, 128 floats past a 16 MiB
tensor. The parent's tensor is a segment of PyTorch's caching allocator of its own (a
request of 10 MiB or more gets a segment of its size, rounded to 2 MiB; smaller ones share
a 2 or 20 MiB segment), so under `cudadiag run`'s fence the tensor ends at a guard, in the
child's mapping of it too. `cudadiag run` must expose it, naming the child process and
the parent's allocation the child imported.
"""
import sys

import torch
import torch.multiprocessing as mp
import triton
import triton.language as tl

N = 4 << 20  # floats: 16 MiB


@triton.jit
def add_one(p, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(p + i, tl.load(p + i, mask=i < n, other=0.0) + 1.0)  # the store has no mask


def child(t):
    add_one[(N // 128 + 1,)](t, N, BLOCK=128)  # one block more than the tensor holds
    torch.cuda.synchronize()


if __name__ == "__main__":
    mp.set_start_method("spawn")
    t = torch.zeros(N, device="cuda")
    p = mp.Process(target=child, args=(t,))
    p.start()
    p.join()
    if p.exitcode != 0:
        sys.exit(f"the child failed (exit code {p.exitcode})")
    print(f"finished: sum={t.sum().item():.0f}")
