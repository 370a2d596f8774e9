#!/usr/bin/env bash
# Throughput of the bundled attention kernel against PyTorch's
# scaled_dot_product_attention on the same shapes, in one run on the device.
#   scripts/bench-attention.sh            # B=4 H=8 S=4096 D=128 fp16, causal and not
# Engines first: each engine (mma: mma.sync, every tile; wgmma: the sm_90a engine) runs
# a short verified series on this device (20 runs, checked on the device every run and
# on the CPU float64 reference for run 0, causal, ragged S); an engine that is not `ok`
# here (another architecture, a wrong result) is not timed. Then `cudadiag attention
# --bench` (cudaEvents, 5 warm-up launches, median of 30, after one run verified on the
# device against its fp32 reference) for each tile configuration of the verified
# engines; (128, 64|32, 4) run the two-slab mma kernel (each warp owns 32 rows, the
# FlashAttention-2 tiling). The best verified configuration, whatever its engine, is
# compared with SDPA (5 warm-up calls, median of 30 timed with cuda events); a
# configuration whose verified run did not pass is never the best.
# FLOPs = 4*B*H*S^2*D, halved when causal.
set -uo pipefail
CUDADIAG=${CUDADIAG:-./build/bin/cudadiag}
OUT=${OUT:-./bench-out}
mkdir -p "$OUT"
B=${B:-4} H=${H:-8} S=${S:-4096} D=${D:-128} DTYPE=${DTYPE:-fp16}
# "block_m block_n warps [engine]" (engine default mma).
CONFIGS=${CONFIGS:-"128 64 4|128 32 4|128 128 8|128 64 8|64 64 4|128 64 8 wgmma|128 128 8 wgmma"}

# The engines that verify on this device, each at one of its own tiles.
verified_engines=" "
for probe in "mma 128 64 4" "wgmma 128 64 8"; do
  read -r engine bm bn w <<<"$probe"
  f="$OUT/verify.$engine.json"
  "$CUDADIAG" attention --engine "$engine" --dtype "$DTYPE" --head-dim "$D" --seq-len 777 --batch 1 --heads 2 \
    --causal --block-m "$bm" --block-n "$bn" --warps "$w" --repeat 20 --format json -o "$f" -q >"$f.log" 2>&1
  outcome=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["outcome"], r.get("reason", "").replace(" ", "_") or "-")' "$f" 2>/dev/null || echo "no_report -")
  echo "engine $engine: $outcome"
  [[ $outcome == "ok "* ]] && verified_engines+="$engine "
done
ours() {  # ours CAUSAL_FLAG -> lines "tflops bm bn w outcome max_rel_err"
  local causal=$1
  IFS='|' read -ra cfgs <<<"$CONFIGS"
  for cfg in "${cfgs[@]}"; do
    read -r bm bn w engine <<<"$cfg"
    engine=${engine:-mma}
    [[ $verified_engines == *" $engine "* ]] || continue
    local f="$OUT/ours.c${causal:+1}.bm$bm-bn$bn-w$w.$engine.json"
    "$CUDADIAG" attention --bench --batch "$B" --heads "$H" --seq-len "$S" --head-dim "$D" --dtype "$DTYPE" \
      $causal --block-m "$bm" --block-n "$bn" --warps "$w" --engine "$engine" --format json -o "$f" -q --timeout 600 \
      >"$f.log" 2>&1
    python3 - "$f" "$bm" "$bn" "$w$([[ $engine == mma ]] || echo "-$engine")" <<'PY'
import json, sys
f, bm, bn, w = sys.argv[1:]
try:
    r = json.load(open(f))["results"][0]
    b = r["details"]["bench"]
    tf = b["tflops"] if r["outcome"] == "ok" else 0.0
    print("%.2f %s %s %s %s %.2e" % (tf, bm, bn, w, r["outcome"], r["details"].get("max_rel_err", float("nan"))))
except Exception as e:
    print("0 %s %s %s failed -" % (bm, bn, w))
PY
  done
}

sdpa() {  # sdpa CAUSAL(0|1) -> TFLOP/s
  python3 - "$B" "$H" "$S" "$D" "$DTYPE" "$1" <<'PY'
import sys, torch
import torch.nn.functional as F
B, H, S, D = map(int, sys.argv[1:5]); dt = torch.float16 if sys.argv[5] == "fp16" else torch.bfloat16
causal = sys.argv[6] == "1"
q, k, v = (torch.empty(B, H, S, D, device="cuda", dtype=dt).uniform_(-1, 1) for _ in range(3))
for _ in range(5): F.scaled_dot_product_attention(q, k, v, is_causal=causal)
torch.cuda.synchronize()
times = []
for _ in range(30):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); F.scaled_dot_product_attention(q, k, v, is_causal=causal); e.record(); e.synchronize()
    times.append(s.elapsed_time(e))
times.sort(); ms = times[len(times) // 2]
flops = 4.0 * B * H * S * S * D / (2 if causal else 1)
print("%.2f" % (flops / (ms * 1e-3) / 1e12))
PY
}

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); torch $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)"
rows=()
for causal in 0 1; do
  flag=""; [[ $causal == 1 ]] && flag="--causal"
  echo "-- causal=$causal: our tile configurations (TFLOP/s bm bn warps outcome max_rel_err)"
  ours "$flag" | tee "$OUT/ours.$causal.txt"
  best=$(awk '$5 == "ok"' "$OUT/ours.$causal.txt" | sort -g -r | head -1)
  read -r tf bm bn w _ <<<"${best:-0 - - - none}"
  engine=mma
  [[ $w == *-* ]] && engine=${w#*-} && w=${w%%-*}
  ref=$(sdpa $causal)
  ratio=$(python3 -c "print('%.2f' % ($tf / $ref if float('$ref') > 0 else 0))" 2>/dev/null || echo "-")
  rows+=("$(printf '| B=%s H=%s S=%s D=%s %s | %s | %s (%s %sx%s, %s warps) | %s | %s |' "$B" "$H" "$S" "$D" "$DTYPE" "$causal" "$tf" "$engine" "$bm" "$bn" "$w" "$ref" "$ratio")")
done
echo
echo "| shape | causal | ours TFLOP/s (config) | SDPA TFLOP/s | ratio |"
echo "|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
