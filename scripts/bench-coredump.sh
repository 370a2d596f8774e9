#!/usr/bin/env bash
# Benchmark of arming GPU core dumps (run on the device; not a test): what
# CUDA_ENABLE_COREDUMP_ON_EXCEPTION and the light flags cudadiag sets
# (lib/coredump/arming.h) cost a clean program, on a real PyTorch training loop
# (tests/programs/train_loop.py). NVIDIA's driver documentation warns that arming may
# cost time even without an exception (an error barrier at warp exit). One warm-up run,
# then ROUNDS rounds (default 5), each running the loop once unarmed and once armed,
# alternating which goes first, so that drift hits both alike: `cudadiag run --rungs
# native`, armed with the driver's variables exactly as `run` sets them (by default) for a
# site run (lib/coredump/arming.h: the light flags, the file and the hang pipe), passed
# with --env. (`run` itself never arms a clean program's runs: only a rung that
# failed runs once more armed; this measures what that armed run, or a production job
# that arms dumps itself, pays.)
# The time is the program's wall time as the runner measured it (process start to exit).
# Prints, last, a table: median per mode, armed/unarmed ratio (target <= 1.02x), and the
# final loss of every run (arming must not change it). Exits 1 when the ratio misses
# its target, a run is not clean, or a loss differs. Reports go to $OUT/bench-coredump.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
CUDADIAG=${CUDADIAG:-./build/bin/cudadiag}
OUT=${OUT:-./gpu-check-out}
PYTHON=${PYTHON:-python3}
ROUNDS=${ROUNDS:-5}
TARGET=${TARGET:-1.02}
dir="$OUT/bench-coredump"
rm -rf "$dir" && mkdir -p "$dir"
loop=(tests/programs/train_loop.py)

once() {  # NAME MODE: one run of the loop, armed or unarmed, its report in NAME.json
  local name=$1 mode=$2
  local -a extra=()
  # armed: as a site run arms; armed-nopipe: the exception dump only (no user-triggered
  # dump, so no pipe for the driver to watch): which part of arming costs what.
  [[ $mode == armed* ]] && extra=(--env CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1
    --env "CUDA_COREDUMP_FILE=$dir/core-${name}_%p.nvcudmp"
    --env CUDA_COREDUMP_GENERATION_FLAGS=skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,skip_local_memory,skip_constbank_memory)
  [[ $mode == armed ]] && extra+=(--env CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1
    --env "CUDA_COREDUMP_PIPE=$dir/pipe-${name}_%p")
  "$CUDADIAG" run --rungs native ${extra[@]+"${extra[@]}"} --timeout 600 --format json -q -o "$dir/$name.json" \
    -- "$PYTHON" "${loop[@]}" 2>"$dir/$name.stderr"
  echo $? >"$dir/$name.rc"
}

echo "== bench-coredump on $(hostname) at $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "nvidia-smi not available"
MODES=(unarmed armed armed-nopipe)
once warmup armed
for round in $(seq 1 "$ROUNDS"); do
  # The order turns every round, so that drift hits every mode alike.
  for k in 0 1 2; do
    mode=${MODES[$(((round + k) % 3))]}
    once "$mode.$round" "$mode"
  done
done

python3 - "$dir" "$ROUNDS" "$TARGET" <<'PY'
import json, os, re, statistics, sys
d, rounds, target = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
modes = ["unarmed", "armed", "armed-nopipe"]
times, loops, losses, problems = {m: [] for m in modes}, {m: [] for m in modes}, {}, []
for mode in modes:
    for i in range(1, rounds + 1):
        name = f"{mode}.{i}"
        try:
            rep = json.load(open(os.path.join(d, name + ".json")))
        except Exception as e:
            problems.append(f"{name}: no report ({e})")
            continue
        r = rep["results"][0]
        armed = "CUDA_ENABLE_COREDUMP_ON_EXCEPTION" in json.dumps(rep["run"])
        if armed != mode.startswith("armed"):
            problems.append(f"{name}: the driver's variables present={armed}, expected {mode}")
        if mode.startswith("armed") and any(f.startswith("core-") for f in os.listdir(d)):
            problems.append(f"{name}: a core dump was written on a clean run")
        if r["details"].get("run_outcome") != "clean":
            problems.append(f"{name}: {r['details'].get('run_outcome')}: {r.get('reason', '')[:200]}")
        if r.get("fault_sites"):
            problems.append(f"{name}: a core dump was written on a clean run")
        times[mode].append(r["duration_ms"] / 1000)
        m = re.search(r"final_loss=([0-9.]+)", r["child"]["stdout"]["text"])
        losses[name] = m.group(1) if m else None
        m = re.search(r"loop_seconds=([0-9.]+)", r["child"]["stdout"]["text"])
        if m:
            loops[mode].append(float(m.group(1)))
med = {m: statistics.median(times[m]) if times[m] else None for m in modes}
loop = {m: statistics.median(loops[m]) if loops[m] else None for m in modes}
print(f"\n  {'mode':13} {'wall runs (s)':48} {'median':>8} {'loop median':>12}")
for m in modes:
    print(f"  {m:13} {' '.join(f'{t:.2f}' for t in times[m]):48} {med[m] if med[m] is None else round(med[m], 2):>8} "
          f"{'-' if loop[m] is None else f'{loop[m]:.3f}':>12}")
ratio = med["armed"] / med["unarmed"] if med["armed"] and med["unarmed"] else None
print(f"\n  armed / unarmed: {'?' if ratio is None else f'{ratio:.3f}x'} wall (target <= {target}x)")
for m in modes[1:]:
    if med[m] and med["unarmed"]:
        lr = f", loop {loop[m] / loop['unarmed']:.3f}x" if loop[m] and loop["unarmed"] else ""
        print(f"  {m} / unarmed: {med[m] / med['unarmed']:.3f}x wall{lr}")
print(f"  final loss per run: {losses}")
if ratio is None or ratio > target:
    problems.append(f"armed/unarmed {ratio} misses the target {target}")
if len(set(losses.values())) != 1 or None in losses.values():
    problems.append("the final loss differs between runs")
for p in problems:
    print("  PROBLEM", p)
sys.exit(1 if problems else 0)
PY
