#!/usr/bin/env bash
# `cudadiag run` on jobs of several processes and GPUs. Programs written here, not in the
# repository (PyTorch with CUDA and Triton needed, else skipped with the reason):
#   ddp_clean      torchrun, 2 ranks, a DDP training loop over NCCL: clean, the final loss
#                  the same on every rung (two GPUs or more)
#   rank1_overrun  torchrun, 2 ranks; rank 1 alone runs a Triton store without its mask,
#                  96 floats past a 4,000-float tensor (silent natively): exposed by the fence,
#                  and the verdict names the process: "rank 1 (pid N) on GPU 1 (...)", N the
#                  pid rank 1 printed (two GPUs or more: NCCL, one GPU a rank)
#   rank1_overrun_one_gpu  the same two ranks both on GPU 0 over gloo (NCCL refuses two ranks
#                  on one GPU): exposed, the verdict names "rank 1 (pid N)" and GPU 0
#                  (every machine with a GPU)
# CUDA IPC between processes (torch.multiprocessing) is 76-ipc's, on one GPU.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0). Reports under $OUT/75-ranks.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
dir="$OUT/75-ranks"
rm -rf "$dir" && mkdir -p "$dir/progs"
PYTHON=${PYTHON:-python3}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if ((gpus < 1)); then
  echo "SKIPPED: no GPU here"
  exit 0
fi
if ! "$PYTHON" -c 'import torch, triton; assert torch.cuda.is_available()' >"$dir/probe.log" 2>&1; then
  echo "SKIPPED: $PYTHON has no PyTorch with CUDA and Triton ($(tail -n 1 "$dir/probe.log"))"
  exit 0
fi

cat >"$dir/progs/ddp_clean.py" <<'PY'
import os, torch, torch.distributed as dist
dist.init_process_group("nccl")
rank = dist.get_rank(); torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(
    torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.05)
g = torch.Generator(device="cuda").manual_seed(1 + rank)
for step in range(30):
    x = torch.randn(64, 256, device="cuda", generator=g)
    y = torch.randint(0, 10, (64,), device="cuda", generator=g)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
dist.all_reduce(loss)
if rank == 0: print(f"final loss {loss.item():.6f}")
dist.destroy_process_group()
PY

# The overrun of the program below: a Triton kernel whose store has no mask.
cat >"$dir/progs/unmasked.py" <<'PY'
import triton, triton.language as tl
@triton.jit
def add_one(p, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(p + i, tl.load(p + i, mask=i < n, other=0.0) + 1.0)  # the store has no mask
PY

# RANK1_BACKEND=gloo: both ranks on GPU 0 (the collective on the CPU); else NCCL, one GPU
# a rank. Each rank prints its pid: the verdict must name rank 1's.
cat >"$dir/progs/rank1_overrun.py" <<'PY'
import os, torch, torch.distributed as dist
from unmasked import add_one
backend = os.environ.get("RANK1_BACKEND", "nccl")
dist.init_process_group(backend)
rank = dist.get_rank()
torch.cuda.set_device(0 if backend == "gloo" else int(os.environ["LOCAL_RANK"]))
print(f"rank {rank} pid {os.getpid()} device {torch.cuda.current_device()}", flush=True)
t = torch.ones(4000, device="cuda")
if backend == "gloo":
    c = t.cpu(); dist.all_reduce(c); t.copy_(c)
else:
    dist.all_reduce(t)
if rank == 1:
    add_one[(32,)](t, 4000, BLOCK=128)  # 4,096 stores: 96 floats past the end
torch.cuda.synchronize()
dist.barrier()
print(f"rank {rank} finished: {t[:4000].sum().item():.0f}")
dist.destroy_process_group()
PY

torchrun=("$PYTHON" -m torch.distributed.run --standalone --nproc_per_node=2)
run() {  # NAME SECONDS CUDADIAG-OPTIONS... -- CMD...
  local name=$1 timeout=$2; shift 2
  local start=$(date +%s)
  "$CUDADIAG" run --timeout "$timeout" -o "$dir/$name.json" "$@" >"$dir/$name.txt" 2>"$dir/$name.err"
  echo $? >"$dir/$name.rc"
  "$CUDADIAG" show "$dir/$name.json" >"$dir/$name.txt" 2>>"$dir/$name.err"
  echo "$name: exit $(cat "$dir/$name.rc") in $(($(date +%s) - start)) s; $(head -n 3 "$dir/$name.txt" | tr '\n' ' ' | cut -c1-300)"
}
names=()
if ((gpus >= 2)); then
  run ddp_clean 120 --sanitize never -- "${torchrun[@]}" "$dir/progs/ddp_clean.py"
  run rank1_overrun 120 --rungs native,fence --sanitize never -- "${torchrun[@]}" "$dir/progs/rank1_overrun.py"
  names+=(ddp_clean rank1_overrun)
else
  echo "two GPUs or more needed for ddp_clean and rank1_overrun (NCCL, one GPU a rank): $gpus here, not run"
fi
RANK1_BACKEND=gloo run rank1_overrun_one_gpu 120 --rungs native,fence --sanitize never -- "${torchrun[@]}" \
  "$dir/progs/rank1_overrun.py"
names+=(rank1_overrun_one_gpu)

status() { jget "$dir/$1.json" 'd["verdict"]["status"]'; }
# The pid rank 1 printed in the fence rung's run, and whether the verdict names
# "rank 1 (pid N)" and "GPU G" (the verdict's reasons, as `cudadiag show` prints them).
rank1_pid() {  # NAME
  jget "$dir/$1.json" '[m for r in d["results"] if r["profile"] == "fence" for m in __import__("re").findall(r"rank 1 pid (\d+)", r["child"]["stdout"]["text"])][0]'
}
names_rank1() {  # NAME PID GPU
  jget "$dir/$1.json" "any('rank 1 (pid $2) on GPU $3' in line for line in d['verdict']['reasons'])"
}
typed_rank1() {  # NAME PID: the fence result's attribution carries rank 1 and its pid, typed
  jget "$dir/$1.json" "[(a['process']['rank'], a['process']['pid']) for r in d['results'] if r['profile'] == 'fence' for a in [r['details']['attribution']]][0] == (1, $2)"
}
echo
printf "%-40s %-40s %-40s %s\n" CHECK OBSERVED EXPECTED RESULT
if ((gpus >= 2)); then
  row "ddp_clean verdict" "$(status ddp_clean)" clean
  row "ddp_clean loss the same on every rung" \
    "$(jget "$dir/ddp_clean.json" 'len({r["child"]["stdout"]["text"] for r in d["results"]}) == 1 and all("final loss" in r["child"]["stdout"]["text"] for r in d["results"])')" True
  row "rank1_overrun verdict" "$(status rank1_overrun)" exposed
  pid=$(rank1_pid rank1_overrun)
  row "rank1_overrun: rank 1 printed its pid" "$([[ $pid =~ ^[0-9]+$ ]] && echo yes || echo "$pid")" yes
  row "rank1_overrun names rank 1 (pid $pid) on GPU 1" "$(names_rank1 rank1_overrun "$pid" 1)" True
  row "rank1_overrun report: rank 1, pid $pid" "$(typed_rank1 rank1_overrun "$pid")" True
fi
row "rank1_overrun_one_gpu verdict" "$(status rank1_overrun_one_gpu)" exposed
pid=$(rank1_pid rank1_overrun_one_gpu)
row "one_gpu: rank 1 printed its pid" "$([[ $pid =~ ^[0-9]+$ ]] && echo yes || echo "$pid")" yes
row "one_gpu names rank 1 (pid $pid) on GPU 0" "$(names_rank1 rank1_overrun_one_gpu "$pid" 0)" True
row "one_gpu report: rank 1, pid $pid" "$(typed_rank1 rank1_overrun_one_gpu "$pid")" True
echo
for n in "${names[@]}"; do echo "--- $n (the verdict's first lines)"; head -n 25 "$dir/$n.txt"; done
exit $fail
