"""A correct program that shares a CUDA tensor with a child process (torch.multiprocessing,
CUDA IPC): the child adds one to it in place, the parent checks the sum.

PyTorch's CUDA IPC needs its caching allocator: with PYTORCH_NO_CUDA_MEMORY_CACHING=1 (the
blocking rung's setting) the child fails with `RuntimeError: invalid device pointer` and
the parent waits. `cudadiag run` must name that setting as what breaks the program, not
call the program's failure its own, and run the rung once more without it: the program is
clean on every rung (under the fence the tensor's segment is handed to the child with the
interposer's own IPC handle and mapped there against a guard).
"""
import torch
import torch.multiprocessing as mp


def add_one(t, done):
    t.add_(1.0)
    torch.cuda.synchronize()
    done.set()


if __name__ == "__main__":
    mp.set_start_method("spawn")
    t = torch.zeros(1 << 20, device="cuda")
    done = mp.Event()
    p = mp.Process(target=add_one, args=(t, done))
    p.start()
    if not done.wait(timeout=30):
        raise SystemExit("the child never finished")
    p.join()
    print(f"finished: sum={t.sum().item():.0f}")
