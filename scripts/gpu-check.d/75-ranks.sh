#!/usr/bin/env bash
# `cudadiag run` on jobs of several processes and GPUs (two GPUs or more; skipped, with the
# reason, on fewer). Programs written here, not in the repository:
#   ddp_clean      torchrun, 2 ranks, a DDP training loop over NCCL: clean, the final loss
#                  the same on every rung
#   rank1_overrun  torchrun, 2 ranks; rank 1 alone runs a Triton store without its mask,
#                  96 floats past a 4,000-float tensor (silent natively): exposed by the fence
# CUDA IPC between processes (torch.multiprocessing) is 76-ipc's, on one GPU.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0). Reports under $OUT/75-ranks.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
dir="$OUT/75-ranks"
rm -rf "$dir" && mkdir -p "$dir/progs"
PYTHON=${PYTHON:-python3}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if ((gpus < 2)); then
  echo "SKIPPED: $gpus GPU(s) here; this section needs two"
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

cat >"$dir/progs/rank1_overrun.py" <<'PY'
import os, torch, torch.distributed as dist
from unmasked import add_one
dist.init_process_group("nccl")
rank = dist.get_rank(); torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
t = torch.ones(4000, device="cuda")
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
run ddp_clean 120 --sanitize never -- "${torchrun[@]}" "$dir/progs/ddp_clean.py"
run rank1_overrun 120 --rungs native,fence --sanitize never -- "${torchrun[@]}" "$dir/progs/rank1_overrun.py"

status() { jget "$dir/$1.json" 'd["verdict"]["status"]'; }
echo
printf "%-40s %-40s %-40s %s\n" CHECK OBSERVED EXPECTED RESULT
row "ddp_clean verdict" "$(status ddp_clean)" clean
row "ddp_clean loss the same on every rung" \
  "$(jget "$dir/ddp_clean.json" 'len({r["child"]["stdout"]["text"] for r in d["results"]}) == 1 and all("final loss" in r["child"]["stdout"]["text"] for r in d["results"])')" True
row "rank1_overrun verdict" "$(status rank1_overrun)" exposed
echo
for n in ddp_clean rank1_overrun; do echo "--- $n"; head -n 25 "$dir/$n.txt"; done
exit $fail
