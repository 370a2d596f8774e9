#!/usr/bin/env bash
# One device run for the hunting-speed work (about 4 minutes on an H100):
#   1. correctness: every attention kernel variant (one-slab seed tiles, two-slab tiles,
#      the wgmma engine; fp16/bf16, D=64/128, causal, ragged S, B*H > 1) verified on the device on every run
#      and against the CPU float64 reference on run 0; the fault catalog under every
#      allocator (scripts/gpu-check.d/20-faults.sh); the attention section
#      (scripts/gpu-check.d/30-attention.sh: the race at the seed tile, S=512, the
#      defaults, required strictly between 0 and 1 at 1000 runs); the default repro suite;
#   2. the drop-barrier race at the seed tile (64,64,4), S=512, 1000 runs per point:
#      race_window swept with every CTA late (where the race starts to fire), then
#      race_rate swept at fixed windows (the tunable intermittent rate), each with its
#      Wilson 95% interval; S=64 as the control;
#   3. verified runs per second inside the child (repeats.runs_per_second) for
#      `fault fault.ok-control --repeat` and `attention` at the seed tile, S=512, D=64;
#   4. the tuned attention tiles against SDPA at B=4 H=8 S=4096 D=128 fp16, causal and
#      not (scripts/bench-attention.sh: TFLOP/s and the ratio in one run).
# Logs and reports under $OUT (tarred into $OUT/hunt-probe.tgz); a short table last.
# Exit status: 0 when every correctness check is as expected.
set -uo pipefail
cd "$(dirname "$0")/../.."
CUDADIAG=${CUDADIAG:-./build/bin/cudadiag}
OUT=${OUT:-./hunt-probe-out}
LOG="$OUT/hunt"
mkdir -p "$LOG"
export CUDADIAG OUT
fail=0
summary=()
t_start=$(date +%s)

echo "device: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)"
"$CUDADIAG" --version

# field FILE EXPR: a python expression over r (results[0]) of a report; "-" when absent.
field() {
  python3 - "$1" "$2" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))["results"][0]
    print(eval(sys.argv[2], {"r": r}))
except Exception as e:
    print("-")
PY
}

# ---- 1. correctness -----------------------------------------------------------
echo "== 1. attention variants, verified on the device (every run) and on the CPU (run 0)"
printf '%-46s %-8s %-6s %-10s %-10s %-8s %s\n' variant outcome runs max_err cpu_err agrees kernel
check_attention() {  # NAME ARGS...
  local name=$1; shift
  local f="$LOG/attn.$name.json"
  "$CUDADIAG" attention --format json -o "$f" -q --repeat "${REPEAT:-20}" "$@" >"$f.log" 2>&1
  local rc=$?
  local outcome runs mre cpu agrees kernel
  outcome=$(field "$f" 'r["outcome"]')
  runs=$(field "$f" 'r["repeats"]["runs"]')
  mre=$(field "$f" '"%.2e" % r["details"]["max_rel_err"]')
  cpu=$(field "$f" '"%.2e" % r["details"]["host_check"]["rel_err"]')
  agrees=$(field "$f" 'r["details"]["host_check"]["agrees"]')
  kernel=$(field "$f" 'r["details"]["kernel"]')
  local verdict=ok
  if [[ $outcome != ok || $rc != 0 ]]; then verdict=FAIL; fail=1; fi
  if [[ $agrees == False ]]; then verdict=FAIL; fail=1; fi
  printf '%-46s %-8s %-6s %-10s %-10s %-8s %s %s\n' "$name" "$outcome" "$runs" "$mre" "$cpu" "$agrees" "$kernel" "$verdict"
  [[ $verdict == ok ]] || summary+=("correctness FAIL: attention $name ($outcome, rc $rc)")
}
for dt in fp16 bf16; do
  check_attention "$dt.seed.bm64-bn64-w4.s512" --dtype $dt --seq-len 512 --block-m 64 --block-n 64 --warps 4
  check_attention "$dt.seed.bm80-bn64-w4.s333" --dtype $dt --seq-len 333 --block-m 80 --block-n 64 --warps 4
  for d in 64 128; do
    for bn in 64 32; do
      check_attention "$dt.d$d.2slab.bm128-bn$bn-w4.s1000.b2h3" --dtype $dt --head-dim $d --seq-len 1000 --batch 2 --heads 3 \
        --block-m 128 --block-n $bn --warps 4
      check_attention "$dt.d$d.2slab.bm128-bn$bn-w4.causal.s777" --dtype $dt --head-dim $d --seq-len 777 --causal \
        --block-m 128 --block-n $bn --warps 4
    done
    check_attention "$dt.d$d.1slab.bm128-bn128-w8.causal.s700" --dtype $dt --head-dim $d --seq-len 700 --causal \
      --block-m 128 --block-n 128 --warps 8
  done
done
# The wgmma engine (sm_90a): its two tiles, both dtypes, ragged, causal, several heads.
for dt in fp16 bf16; do
  for bn in 64 128; do
    check_attention "$dt.wgmma.bn$bn.s1000.b2h3" --engine wgmma --dtype $dt --head-dim 128 --seq-len 1000 --batch 2 \
      --heads 3 --block-m 128 --block-n $bn --warps 8
    check_attention "$dt.wgmma.bn$bn.causal.s777" --engine wgmma --dtype $dt --head-dim 128 --seq-len 777 --causal \
      --block-m 128 --block-n $bn --warps 8
  done
done
check_attention "fp16.wgmma.s64" --engine wgmma --head-dim 128 --seq-len 64 --block-m 128 --block-n 64 --warps 8
REPEAT=3 check_attention "fp16.d128.2slab.bench-shape.gpu-ref-only" --head-dim 128 --seq-len 4096 --batch 1 --heads 8 \
  --block-m 128 --block-n 64 --warps 4
check_attention "fp16.d64.replay" --seq-len 512 --replay 0x0123456789abcdef
check_attention "fp16.misalign16.s300" --seq-len 300 --misalign-bytes 16

echo "== 1b. fault catalog under every allocator (scripts/gpu-check.d/20-faults.sh)"
if bash scripts/gpu-check.d/20-faults.sh >"$LOG/faults-matrix.txt" 2>&1; then
  echo "fault catalog: all as expected"; summary+=("fault catalog matrix: all as expected")
else
  fail=1; tail -n 25 "$LOG/faults-matrix.txt"; summary+=("fault catalog matrix: FAIL (see $LOG/faults-matrix.txt)")
fi
"$CUDADIAG" fault fault.ok-control --replay 42 --format json -o "$LOG/fault.replay.json" -q >/dev/null 2>&1
echo "fault replay: rc $? host_check $(field "$LOG/fault.replay.json" 'r["details"]["host_check"]')"

echo "== 1c. attention section (scripts/gpu-check.d/30-attention.sh: tiles, knobs, the race required intermittent at S=512, replay, wgmma)"
if bash scripts/gpu-check.d/30-attention.sh >"$LOG/attention-section.txt" 2>&1; then
  echo "attention section: all as expected"; summary+=("attention section: all as expected")
else
  fail=1; grep -E 'UNEXPECTED|NO_RACE|NOT_INTERMITTENT' "$LOG/attention-section.txt" | head -n 20
  summary+=("attention section: FAIL (see $LOG/attention-section.txt)")
fi
grep -E '^knob.drop-barrier' "$LOG/attention-section.txt" | while read -r l; do echo "  $l"; done

echo "== 1d. default repro suite"
"$CUDADIAG" repro --format json -o "$LOG/repro.json" -q >"$LOG/repro.log" 2>&1
rc=$?
echo "repro default suite: rc $rc, verdict $(python3 -c "import json;print(json.load(open('$LOG/repro.json'))['verdict'])" 2>/dev/null)"
[[ $rc == 0 ]] || { fail=1; summary+=("repro default suite: rc $rc"); }

# ---- 2. race sweep -----------------------------------------------------------------
echo "== 2. drop-barrier race at (64,64,4), 1000 runs per point: failures [Wilson 95%]"
race() {  # NAME ARGS...
  local name=$1; shift
  local f="$LOG/race.$name.json"
  "$CUDADIAG" attention --format json -o "$f" -q --drop-barrier --block-m 64 --block-n 64 --warps 4 --repeat 1000 "$@" \
    >"$f.log" 2>&1
  local line
  line=$(field "$f" '"%d/%d %.3f [%.3f, %.3f] %s %.0f/s" % (r["repeats"]["failures"], r["repeats"]["runs"], r["repeats"]["failure_rate"], r["repeats"]["ci95_low"], r["repeats"]["ci95_high"], r["outcome"], r["repeats"]["runs_per_second"])')
  printf '%-34s %s\n' "$name" "$line"
  echo "$name $line" >>"$LOG/race-table.txt"
}
: >"$LOG/race-table.txt"
for w in 0 500 1000 2000 4000 8000 16000 32000 64000 1000000; do race "s512.rate1.window$w" --seq-len 512 --race-rate 1 --race-window $w; done
for w in 20000 64000; do
  for p in 0.005 0.01 0.02 0.05 0.1 0.2; do race "s512.window$w.rate$p" --seq-len 512 --race-window $w --race-rate $p; done
done
race "s512.defaults" --seq-len 512
race "s64.defaults" --seq-len 64
race "s64.rate1.window2000" --seq-len 64 --race-rate 1 --race-window 2000
summary+=("race at (64,64,4) S=512, defaults: $(grep '^s512.defaults ' "$LOG/race-table.txt" | cut -d' ' -f2-)")

# ---- 3. verified runs per second in the child ------------------------------------------
echo "== 3. verified runs/s (in the child: repeats.runs_per_second; whole command: wall)"
rate() {  # NAME ARGS...
  local name=$1; shift
  local f="$LOG/rate.$name.json" t0 t1
  t0=$(date +%s.%N)
  "$CUDADIAG" "$@" --format json -o "$f" -q >"$f.log" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  local line
  line=$(field "$f" '"%s runs=%d in-child %.0f runs/s (%.3f s, host check %.3f s)" % (r["outcome"], r["repeats"]["runs"], r["repeats"]["runs_per_second"], r["repeats"]["seconds"], r["details"].get("host_check", {}).get("seconds", 0.0))')
  local wall
  wall=$(python3 -c "print('%.2f' % ($t1 - $t0))")
  printf '%-28s %s; command %s s (rc %d)\n' "$name" "$line" "$wall" "$rc"
  summary+=("$name: $line; command $wall s")
}
rate fault.ok-control.20000 fault fault.ok-control --repeat 20000
rate fault.ok-control.fence fault fault.ok-control --repeat 5000 --allocator fence-back
rate attention.seed.s512.d64 attention --block-m 64 --block-n 64 --warps 4 --seq-len 512 --head-dim 64 --repeat 5000
rate attention.seed.s512.race attention --block-m 64 --block-n 64 --warps 4 --seq-len 512 --drop-barrier --repeat 2000

# ---- 4. attention throughput against SDPA ------------------------------------------------
echo "== 4. attention throughput, B=4 H=8 S=4096 D=128 fp16 (scripts/bench-attention.sh)"
OUT="$LOG/bench" bash scripts/bench-attention.sh 2>&1 | tee "$LOG/bench.txt"
while read -r l; do summary+=("bench $l"); done < <(grep '^| B=' "$LOG/bench.txt")
for c in 0 1; do  # every configuration: TFLOP/s bm bn warps[-engine] outcome max_rel_err (0 = not verified)
  while read -r l; do summary+=("bench causal=$c: $l"); done <"$LOG/bench/ours.$c.txt"
done
if command -v cuobjdump >/dev/null; then
  cuobjdump --dump-resource-usage "$CUDADIAG" 2>/dev/null | grep -A1 fa2_fwd_kernel >"$LOG/resource-usage.txt"
fi

tar -czf "$OUT/hunt-probe.tgz" -C "$OUT" hunt 20-faults attention 2>/dev/null
echo
echo "== hunt-probe summary ($(( $(date +%s) - t_start )) s; logs: $OUT/hunt-probe.tgz)"
printf '%s\n' "${summary[@]}"
echo "race table (name failures/runs rate [ci95] outcome runs/s):"
column -t "$LOG/race-table.txt" 2>/dev/null || cat "$LOG/race-table.txt"
echo "correctness: $([[ $fail == 0 ]] && echo 'all as expected' || echo 'FAILURES above')"
exit $fail
