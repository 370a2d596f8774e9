#!/usr/bin/env bash
# Benchmark of `cudadiag run` (run on the device; not a test): what each rung costs on a
# real PyTorch training loop (tests/programs/train_loop.py: a small transformer, 20
# steps). One warm-up run, then 3 rounds, each running the loop once per rung in turn
# (native, blocking, fence, sanitizer = memcheck with --padding), so that drift hits every
# rung alike. The time is the program's wall time as the runner measured it (process
# start to exit, Python and CUDA start-up included). Prints, last, a table: median per
# rung, its ratio to native (target: fence <= 1.15x), the final loss of every run (a
# rung must not change it). Exits 1 when the fence misses its target or a loss differs.
# Reports go to $OUT/bench-run.
set -uo pipefail
cd "$(dirname "$0")/.."
CUDADIAG=${CUDADIAG:-./build/bin/cudadiag}
OUT=${OUT:-./gpu-check-out}
PYTHON=${PYTHON:-python3}
ROUNDS=${ROUNDS:-3}
dir="$OUT/bench-run"
rm -rf "$dir" && mkdir -p "$dir"
loop=(tests/programs/train_loop.py)

once() {  # NAME RUNG: one run of the loop on one rung, its report in NAME.json
  local name=$1 rung=$2
  local -a extra=()
  [[ $rung == sanitizer ]] && extra=(--sanitize always)
  "$CUDADIAG" run --rungs "$rung" ${extra[@]+"${extra[@]}"} --timeout 600 --format json -q -o "$dir/$name.json" \
    -- "$PYTHON" "${loop[@]}" 2>"$dir/$name.stderr"
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
