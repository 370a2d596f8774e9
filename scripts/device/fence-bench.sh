#!/usr/bin/env bash
# What the fence costs, on a GPU machine, in one call (about 3 minutes), from anywhere in
# the repository, with build/ built (targets cudadiag_fence and cudadiag-ring-dump):
#
#   scripts/device/fence-bench.sh
#
# Settings (the fence rung's environment is `blocking` plus the interposer):
#   native          as is (PyTorch's caching allocator on)
#   blocking        CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1
#   fenced          blocking + LD_PRELOAD=libcudadiag_fence.so CUDADIAG_RING=<ring>
#   fenced_noreuse  fenced + CUDADIAG_FENCE_REUSE_MB=0 (every buffer's memory created and
#                   released, as before the reuse cache)
# 1. tests/programs/alloc_free_bench.cu (nvcc): microseconds per cudaMalloc, launch,
#    cudaFree in buffer lives of mixed sizes, and per launch of a tiny kernel; every
#    setting, 3 interleaved repeats, medians. Natively also the driver's VMM calls one
#    by one (what a fenced buffer's life is made of).
# 2. tests/programs/train_loop.py: native, blocking and fenced interleaved 3 times, then
#    fenced_noreuse once; median wall time and loop time (loop_seconds), final losses.
# 3. The interposer's own driver calls as its ring counted and timed them.
# Prints one table last. Exit 0 when every result is right and fenced / native wall time
# of the training loop is at most 1.15; 1 otherwise.
# Logs and rings: $OUT/fence-bench-logs.tar.gz (OUT defaults to ./fence-bench-out).
set -uo pipefail
cd "$(dirname "$0")/../.."
CYCLES=${CYCLES:-3000}
LAUNCHES=${LAUNCHES:-20000}
VMM_LIVES=${VMM_LIVES:-200}
source scripts/device/interposer-env.sh fence-bench
"$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1

bench=$work/bin/alloc_free_bench
"$NVCC" -O2 -arch=native -o "$bench" "$PROGRAMS/alloc_free_bench.cu" -lcuda >"$logs/build.log" 2>&1 ||
  { echo "fence-bench: building alloc_free_bench failed:"; cat "$logs/build.log"; exit 2; }
echo "built in $(($(date +%s) - started)) s"

# run NAME SETTING REPEAT TIMEOUT CMD...: output in $logs/NAME.SETTING.REPEAT.log; the
# ring of a fenced setting dumped into $logs/NAME.SETTING.REPEAT.ring.txt; one line in
# runs.txt.
run() {
  local name=$1 setting=$2 repeat=$3 limit=$4
  shift 4
  local -a env_of=(-u PYTORCH_CUDA_ALLOC_CONF -u PYTORCH_ALLOC_CONF -u CUDADIAG_FENCE_REUSE_MB)
  local tag=$name.$setting.$repeat
  local ring=$rings/$tag.ring
  case $setting in
    native) env_of+=(-u CUDA_LAUNCH_BLOCKING -u PYTORCH_NO_CUDA_MEMORY_CACHING -u LD_PRELOAD) ;;
    blocking) env_of+=(-u LD_PRELOAD CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1) ;;
    fenced | fenced_noreuse)
      env_of+=(CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 "LD_PRELOAD=$LIB" "CUDADIAG_RING=$ring")
      [[ $setting == fenced_noreuse ]] && env_of+=(CUDADIAG_FENCE_REUSE_MB=0)
      ;;
  esac
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout -k 5 "$limit" env "${env_of[@]}" "$@" >"$logs/$tag.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  if [[ $setting == fenced* ]]; then
    "$DUMP" "$ring" >"$logs/$tag.ring.txt" 2>&1
    rm -f "$ring"*
  fi
  echo "$name $setting $repeat $rc $t0 $t1" >>"$work/runs.txt"
}

# --- 1. micro-benchmark ---------------------------------------------------------------
run vmm native 1 60 "$bench" vmm "$VMM_LIVES"
for repeat in 1 2 3; do
  for setting in native blocking fenced fenced_noreuse; do
    run cycles "$setting" "$repeat" 60 "$bench" cycles "$CYCLES"
    run launches "$setting" "$repeat" 60 "$bench" launches "$LAUNCHES"
  done
done
echo "micro-benchmark done at $(($(date +%s) - started)) s"

# --- 2. training loop -----------------------------------------------------------------
for repeat in 1 2 3; do
  for setting in native blocking fenced; do
    run train_loop "$setting" "$repeat" 120 "$PYTHON" "$PROGRAMS/train_loop.py"
  done
done
if (($(date +%s) - started < 190)); then
  run train_loop fenced_noreuse 1 120 "$PYTHON" "$PROGRAMS/train_loop.py"
else
  echo "fence-bench: skipping the fenced_noreuse training loop (time budget)"
fi
echo "training loop done at $(($(date +%s) - started)) s"

tar -czf "$OUT/fence-bench-logs.tar.gz" -C "$work" logs runs.txt
python3 - "$work" "$OUT/fence-bench-table.txt" <<'PY'
import os
import statistics
import sys

work, table_path = sys.argv[1], sys.argv[2]
logs = os.path.join(work, "logs")
TARGET = 1.15
SETTINGS = ("native", "blocking", "fenced", "fenced_noreuse")


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def program_fields(text, mode):
    """The key=value fields of the benchmark's "mode=MODE ..." line."""
    for line in text.splitlines():
        if line.startswith(f"mode={mode} "):
            return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    return {}


def ring_fields(text):
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key] = value
    return out


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def num(d, key):
    try:
        return float(d[key])
    except (KeyError, ValueError):
        return None


def f2(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


runs = []
for line in read(os.path.join(work, "runs.txt")).splitlines():
    name, setting, repeat, rc, t0, t1 = line.split()
    runs.append({"name": name, "setting": setting, "repeat": repeat, "rc": int(rc),
                 "wall": float(t1) - float(t0), "log": read(os.path.join(logs, f"{name}.{setting}.{repeat}.log")),
                 "ring": read(os.path.join(logs, f"{name}.{setting}.{repeat}.ring.txt"))})
problems = []
out = []


def runs_of(name, setting):
    return [r for r in runs if r["name"] == name and r["setting"] == setting]


# --- micro-benchmark ------------------------------------------------------------------
out.append("== micro-benchmark (tests/programs/alloc_free_bench.cu; median of 3 runs; us per operation)")
head = ("setting", "cycle", "cudaMalloc", "launch", "cudaFree", "tiny launch", "check")
rows, micro = [], {}
for setting in SETTINGS:
    cyc = [program_fields(r["log"], "cycles") for r in runs_of("cycles", setting)]
    lau = [program_fields(r["log"], "launches") for r in runs_of("launches", setting)]
    m = {k: med([num(c, k) for c in cyc]) for k in ("us_per_cycle", "us_alloc", "us_launch", "us_free")}
    m["us_per_launch"] = med([num(l, "us_per_launch") for l in lau])
    checks = [c.get("check", "missing") for c in cyc] + [l.get("check", "missing") for l in lau]
    bad = [r for r in runs_of("cycles", setting) + runs_of("launches", setting) if r["rc"] != 0]
    ok = all(c == "ok" for c in checks) and not bad and checks
    if not ok:
        problems.append(f"micro-benchmark {setting}: check {checks}, exit {[r['rc'] for r in bad]}")
    micro[setting] = m
    rows.append((setting, f2(m["us_per_cycle"]), f2(m["us_alloc"]), f2(m["us_launch"]), f2(m["us_free"]),
                 f2(m["us_per_launch"], 3), "ok" if ok else "WRONG"))
widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
out += ["  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head] + rows]
for base in ("blocking", "native"):
    f, b = micro.get("fenced", {}), micro.get(base, {})
    out.append(f"  fenced vs {base}: cycle {f2(ratio(f.get('us_per_cycle'), b.get('us_per_cycle')))}x "
               f"(alloc+free {f2(ratio((f.get('us_alloc') or 0) + (f.get('us_free') or 0), (b.get('us_alloc') or 0) + (b.get('us_free') or 0)))}x), "
               f"tiny launch {f2(ratio(f.get('us_per_launch'), b.get('us_per_launch')))}x")
f, n = micro.get("fenced", {}), micro.get("fenced_noreuse", {})
out.append(f"  reuse cache: {f2(n.get('us_per_cycle'))} -> {f2(f.get('us_per_cycle'))} us per buffer life "
           f"({f2(ratio(f.get('us_per_cycle'), n.get('us_per_cycle')))}x)")

vmm = program_fields(runs_of("vmm", "native")[0]["log"] if runs_of("vmm", "native") else "", "vmm")
out.append("")
out.append(f"== the driver's VMM calls one by one (native; {vmm.get('n', '?')} lives of one "
           f"{vmm.get('granularity', '?')}-byte granule; rdma_supported={vmm.get('rdma_supported', '?')}; check={vmm.get('check', 'missing')})")
for key, value in vmm.items():
    if key.startswith("us_"):
        out.append(f"  {key[3:]:22} {value:>9} us")
if vmm.get("check") != "ok":
    problems.append("vmm: " + (vmm.get("check") or "no result line"))


def driver_calls(ring_text):
    calls = {}
    for line in ring_text.splitlines():
        if line.startswith("driver_call."):
            name, _, rest = line[len("driver_call."):].partition("=")
            parts = rest.split()
            calls[name] = (int(parts[1]), float(parts[3]) / 1000.0, float(parts[5]))
    return calls


out.append("")
out.append("== the interposer's own driver calls (its ring: calls, total ms, mean us), first run of each")
for name, setting in (("cycles", "fenced"), ("cycles", "fenced_noreuse"), ("train_loop", "fenced"),
                      ("train_loop", "fenced_noreuse")):
    rs = runs_of(name, setting)
    if not rs:
        continue
    ring = ring_fields(rs[0]["ring"])
    calls = driver_calls(rs[0]["ring"])
    total = sum(ms for _, ms, _ in calls.values())
    out.append(f"  {name} {setting}: allocations={ring.get('allocations', '?')} fenced={ring.get('fenced', '?')} "
               f"frees={ring.get('frees', '?')} launches={ring.get('launches', '?')} "
               f"handles_reused={ring.get('handles_reused', '?')} reservations_reused={ring.get('reservations_reused', '?')} "
               f"tma_encodes={ring.get('tma_encodes', '?')} tma_near_guard={ring.get('tma_near_guard', '?')} "
               f"unfenced={ring.get('unfenced', '') or '-'}; {total:.1f} ms in driver calls")
    for call, (count, ms, mean) in sorted(calls.items(), key=lambda kv: -kv[1][1]):
        out.append(f"    {call:22} {count:7d} calls {ms:9.1f} ms {mean:9.2f} us each")
    if ring.get("status") != "ok":
        problems.append(f"{name} {setting}: ring {ring.get('status', 'unreadable')}")

# --- training loop ----------------------------------------------------------------------
out.append("")
out.append("== training loop (tests/programs/train_loop.py; native, blocking, fenced interleaved)")
head = ("setting", "runs", "wall s (median)", "loop s (median)", "walls", "final_loss")
rows, walls, loops, losses = [], {}, {}, {}
for setting in SETTINGS:
    rs = runs_of("train_loop", setting)
    if not rs:
        continue
    w = [r["wall"] for r in rs]
    lp = []
    for r in rs:
        loss = next((l.split("=", 1)[1] for l in r["log"].splitlines() if l.startswith("final_loss=")), "-")
        losses.setdefault(setting, set()).add(loss)
        lp.append(next((float(l.split("=", 1)[1]) for l in r["log"].splitlines() if l.startswith("loop_seconds=")), None))
        if r["rc"] != 0:
            problems.append(f"train_loop {setting} run {r['repeat']}: exit {r['rc']}")
    walls[setting], loops[setting] = med(w), med(lp)
    rows.append((setting, str(len(rs)), f2(walls[setting]), f2(loops[setting], 3), " ".join(f"{x:.1f}" for x in w),
                 ",".join(sorted(losses[setting]))))
widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
out += ["  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head] + rows]
all_losses = set().union(*losses.values()) if losses else set()
identical = len(all_losses) == 1 and "-" not in all_losses
out.append(f"  identical final_loss in every run: {'yes' if identical else 'NO: ' + ' '.join(sorted(all_losses))}")
if not identical:
    problems.append("the training loop's final loss differs between runs or settings")
wall_ratio = ratio(walls.get("fenced"), walls.get("native"))
out.append(f"  fenced / native: wall {f2(wall_ratio, 3)}x, loop {f2(ratio(loops.get('fenced'), loops.get('native')), 3)}x; "
           f"fenced / blocking: wall {f2(ratio(walls.get('fenced'), walls.get('blocking')), 3)}x, "
           f"loop {f2(ratio(loops.get('fenced'), loops.get('blocking')), 3)}x")
if "fenced_noreuse" in walls:
    out.append(f"  fenced_noreuse / native: wall {f2(ratio(walls.get('fenced_noreuse'), walls.get('native')), 3)}x, "
               f"loop {f2(ratio(loops.get('fenced_noreuse'), loops.get('native')), 3)}x")
met = wall_ratio is not None and wall_ratio <= TARGET
out.append(f"  target fenced <= {TARGET}x native wall time: {'met' if met else 'NOT met'}")
if not met:
    problems.append(f"fenced / native wall time {f2(wall_ratio, 3)}x is above {TARGET}x")

out.append("")
out.append("fence-bench: " + ("all results right, target met" if not problems else "PROBLEMS: " + "; ".join(problems)))
text = "\n".join(out)
with open(table_path, "w") as f:
    f.write(text + "\n")
print(text)
sys.exit(0 if not problems else 1)
PY
status=$?
echo "logs: $OUT/fence-bench-logs.tar.gz (total $(($(date +%s) - started)) s)"
exit $status
