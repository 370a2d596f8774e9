#!/usr/bin/env bash
# Benchmark of `cudadiag run` (run on the device; not a test): what each rung costs on a
# real PyTorch training loop (tests/programs/train_loop.py: a small transformer, 20
# steps). One warm-up run, then 3 rounds, each running the loop once per rung in turn
# (native, blocking, fence, sanitizer = memcheck with --padding), so that drift hits every
# rung alike. The time is the program's wall time as the runner measured it (process
# start to exit, Python and CUDA start-up included). Prints, last, a table: median per
# rung, its ratio to native (target: fence <= 1.15x), the final loss of every run (a
# rung must not change it). Exits 1 when the fence misses its target or a loss differs.
# Then the same for an allocation-heavy GPT-style loop (tests/programs/gpt_loop.py: 6
# layers, d=768, seq 512, bf16, SDPA, AdamW, 30 steps; GPT_ROUNDS interleaved native and
# fence runs, and memcheck once in the same run): the fence / native ratio of the wall time
# and of the loop alone (loop_seconds, start-up excluded), target <= 1.10x, and memcheck's.
# Reports go to $OUT/bench-run.
set -uo pipefail
cd "$(dirname "$0")/.."
CUDADIAG=${CUDADIAG:-./build/bin/cudadiag}
OUT=${OUT:-./gpu-check-out}
PYTHON=${PYTHON:-python3}
ROUNDS=${ROUNDS:-3}
GPT_ROUNDS=${GPT_ROUNDS:-3}
dir="$OUT/bench-run"
rm -rf "$dir" && mkdir -p "$dir"
loop=(tests/programs/train_loop.py)

once() {  # NAME RUNG [PROGRAM]: one run of a loop (default: train_loop.py) on one rung, its report in NAME.json
  local name=$1 rung=$2 program=${3:-${loop[0]}}
  local -a extra=()
  [[ $rung == sanitizer ]] && extra=(--sanitize always)
  "$CUDADIAG" run --rungs "$rung" ${extra[@]+"${extra[@]}"} --timeout 600 --format json -q -o "$dir/$name.json" \
    -- "$PYTHON" "$program" 2>"$dir/$name.stderr"
  echo $? >"$dir/$name.rc"
}

echo "== bench-run on $(hostname) at $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "nvidia-smi not available"
once warmup native
for round in $(seq 1 "$ROUNDS"); do
  for rung in native blocking fence sanitizer; do
    once "$rung.$round" "$rung"
  done
done

gpt=tests/programs/gpt_loop.py
once gpt.warmup native "$gpt"
for round in $(seq 1 "$GPT_ROUNDS"); do
  for rung in native fence; do
    once "gpt.$rung.$round" "$rung" "$gpt"
  done
done
once gpt.sanitizer.1 sanitizer "$gpt"

python3 - "$dir" "$ROUNDS" <<'PY'
import json, os, re, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
rungs = ["native", "blocking", "fence", "sanitizer"]
times, losses, problems = {r: [] for r in rungs}, {}, []
for rung in rungs:
    for i in range(1, rounds + 1):
        name = f"{rung}.{i}"
        try:
            rep = json.load(open(os.path.join(d, name + ".json")))
        except Exception as e:
            problems.append(f"{name}: no report ({e})")
            continue
        res = [r for r in rep["results"] if r["profile"] == rung]
        if not res:
            problems.append(f"{name}: no {rung} result ({rep['verdict']['reasons'][:1]})")
            continue
        r = res[0]
        run_outcome = r["details"].get("run_outcome")
        if run_outcome not in ("clean", "fence_not_effective"):
            problems.append(f"{name}: {run_outcome}: {r.get('reason', '')[:200]}")
        times[rung].append(r["duration_ms"] / 1000)
        m = re.search(r"final_loss=([0-9.]+)", r["child"]["stdout"]["text"])
        losses[name] = m.group(1) if m else None
        if rung == "fence":
            f = rep["run"]["fence"]
            print(f"  {name}: fence {f.get('fenced')}/{f.get('allocations')} allocations fenced, "
                  f"{f.get('launches')} launches, effective={f.get('effective')}")

print("\n== runs (s)")
for rung in rungs:
    print(f"  {rung:10} " + "  ".join(f"{t:6.2f}" for t in times[rung]))
distinct = sorted(set(v for v in losses.values() if v))
print(f"\n== final loss: {'identical in every run: ' + distinct[0] if len(distinct) == 1 and None not in losses.values() else losses}")
if len(distinct) != 1 or None in losses.values():
    problems.append("the final loss differs between runs (or is missing)")

median = {r: statistics.median(times[r]) for r in rungs if times[r]}
base = median.get("native")
print(f"\n== bench-run: train_loop.py, median of {rounds} interleaved runs per rung")
print(f"  {'rung':10} {'median s':>9} {'x native':>9}  what it adds")
what = {"native": "as given",
        "blocking": "CUDA_LAUNCH_BLOCKING=1, framework caching off",
        "fence": "blocking + the guard-page interposer (target <= 1.15x)",
        "sanitizer": "blocking + compute-sanitizer memcheck --padding 65536"}
for r in rungs:
    if r in median:
        ratio = median[r] / base if base else float("nan")
        print(f"  {r:10} {median[r]:9.2f} {ratio:8.2f}x  {what[r]}")
if base and "fence" in median:
    ratio = median["fence"] / base
    ok = ratio <= 1.15
    print(f"  fence / native = {ratio:.2f}x: {'meets' if ok else 'MISSES'} the 1.15x target"
          + (f"; fence / blocking = {median['fence'] / median['blocking']:.2f}x (the interposer's own share)"
             if "blocking" in median else ""))
    if not ok:
        problems.append(f"fence / native {ratio:.2f}x > 1.15x")
for p in problems:
    print("  PROBLEM", p)
sys.exit(1 if problems else 0)
PY
first=$?

python3 - "$dir" "$GPT_ROUNDS" <<'PY'
import json, os, re, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
wall, loop, losses, problems = {}, {}, {}, []
runs = [(r, i) for i in range(1, rounds + 1) for r in ("native", "fence")] + [("sanitizer", 1)]
for rung, i in runs:
    name = f"gpt.{rung}.{i}"
    try:
        rep = json.load(open(os.path.join(d, name + ".json")))
    except Exception as e:
        problems.append(f"{name}: no report ({e})")
        continue
    res = [r for r in rep["results"] if r["profile"] == rung]
    if not res:
        problems.append(f"{name}: no {rung} result ({rep['verdict']['reasons'][:1]})")
        continue
    r = res[0]
    if r["details"].get("run_outcome") not in ("clean", "fence_not_effective"):
        problems.append(f"{name}: {r['details'].get('run_outcome')}: {r.get('reason', '')[:200]}")
    text = r["child"]["stdout"]["text"]
    wall.setdefault(rung, []).append(r["duration_ms"] / 1000)
    m = re.search(r"loop_seconds=([0-9.]+)", text)
    if m:
        loop.setdefault(rung, []).append(float(m.group(1)))
    m = re.search(r"final_loss=([0-9.]+)", text)
    losses[name] = m.group(1) if m else None
    if rung == "fence":
        f = rep["run"]["fence"]
        print(f"  {name}: fence {f.get('fenced')}/{f.get('allocations')} allocations fenced, "
              f"{f.get('launches')} launches, effective={f.get('effective')}")
# bf16 SDPA's backward is not deterministic: native runs differ among themselves in the
# 4th digit (H100: 0.0833002 and 0.0833490). A rung must stay within the spread native
# shows, widened to 1% of the loss.
values = {k: float(v) for k, v in losses.items() if v}
native_values = [v for k, v in values.items() if ".native." in k]
print(f"\n== gpt_loop final loss: {losses}")
if None in losses.values() or not native_values:
    problems.append("gpt_loop: a final loss is missing")
else:
    lo, hi = min(native_values), max(native_values)
    slack = max(hi - lo, 0.01 * abs(sum(native_values) / len(native_values)))
    off = {k: v for k, v in values.items() if v < lo - slack or v > hi + slack}
    print(f"  native spread {lo:.7f}..{hi:.7f}, allowed +-{slack:.7f}: {'every rung within' if not off else off}")
    if off:
        problems.append(f"gpt_loop: the final loss moved beyond native's spread: {off}")
print(f"\n== bench-run: gpt_loop.py (6 layers, d=768, seq 512, bf16, SDPA, AdamW, 30 steps), "
      f"median of {rounds} interleaved runs (memcheck: 1)")
print(f"  {'rung':10} {'wall s':>8} {'x native':>9} {'loop s':>8} {'x native':>9}")
med = lambda v: statistics.median(v) if v else float("nan")
for rung in ("native", "fence", "sanitizer"):
    w, l = med(wall.get(rung, [])), med(loop.get(rung, []))
    print(f"  {rung:10} {w:8.2f} {w / med(wall.get('native', [])):8.2f}x {l:8.2f} {l / med(loop.get('native', [])):8.2f}x")
if wall.get("native") and wall.get("fence"):
    ratio = med(wall["fence"]) / med(wall["native"])
    loop_ratio = med(loop.get("fence", [])) / med(loop.get("native", []))
    ok = ratio <= 1.10
    print(f"  fence / native = {ratio:.2f}x wall, {loop_ratio:.2f}x the loop alone: "
          f"{'meets' if ok else 'MISSES'} the 1.10x target")
    if not ok:
        problems.append(f"gpt_loop: fence / native {ratio:.2f}x > 1.10x")
for p in problems:
    print("  PROBLEM", p)
sys.exit(1 if problems else 0)
PY
second=$?
exit $((first || second))
