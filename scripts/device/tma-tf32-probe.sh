#!/usr/bin/env bash
# Which conversion does a TMA load apply to tf32 / tf32_ftz / fp32_ftz elements on this
# GPU? Run from the repository root on an sm_90+ machine with build/ built (the probe is
# build/bin/tma-conversion-probe, target tma_conversion_probe). Under a minute.
#
#   scripts/device/tma-tf32-probe.sh        # logs under $OUT (default ./tma-tf32-probe-out)
#
# Part 1, the probe: loads chosen inputs (ties with an even and an odd kept bit, values
# just below/above half an ulp, negatives, subnormals, the largest finite values, NaN,
# infinity) with the cp.async.bulk.tensor kernel `cudadiag tma` uses, and fits three
# tf32 roundings (truncate, nearest_even, nearest_away) x subnormals flushed or kept.
# Part 2, cudadiag itself: `cudadiag tma` loads of random fp32 data as tf32, tf32_ftz and
# fp32_ftz must come out "ok" under the default model.
#
# Reading the output: the probe's last lines say, per type, which candidates fit every
# element ("fits: nearest_even, subnormals flushed | ...") and whether the default model
# of lib/tma/element_conversion.h (kTf32Rounding, ConversionModel) is among them. Exit 0
# and "RESULT: the default conversion model matches the device" mean nothing to change;
# otherwise set the default to the candidate that fits and rebuild.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/tma-tf32-probe-out}
mkdir -p "$OUT"
BIN=${CUDADIAG:-$PWD/build/bin/cudadiag}
PROBE=${PROBE:-$PWD/build/bin/tma-conversion-probe}
for f in "$BIN" "$PROBE"; do
  [[ -x $f ]] || { echo "tma-tf32-probe: $f not found; build first (cmake --build build)" >&2; exit 2; }
done

echo "== probe ($PROBE)"
"$PROBE" 2>&1 | tee "$OUT/probe.txt"
probe_rc=${PIPESTATUS[0]}

echo
echo "== cudadiag tma loads under the default model"
printf '%-28s %-6s %-14s %s\n' CHECK EXIT OUTCOME RESULT
status=0
for spec in "tf32 1d:--dtype tf32 --dims 4096 --box 256" \
            "tf32_ftz 1d:--dtype tf32_ftz --dims 4096 --box 256" \
            "fp32_ftz 1d:--dtype fp32_ftz --dims 4096 --box 256" \
            "tf32 2d swizzle 128B:--dtype tfloat32 --dims 96,20 --strides 384 --box 32,8 --swizzle 128B" \
            "tf32 code 11 nan fill:--dtype 11 --dims 20,3 --strides 80 --box 32,8 --oob-fill nan"; do
  name=${spec%%:*}
  args=${spec#*:}
  file="$OUT/tma-${name// /-}.json"
  # shellcheck disable=SC2086
  "$BIN" tma $args --format json -o "$file" 2>"$file.stderr"
  rc=$?
  outcome=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(','.join(sorted({str(r['device_outcome']) for r in d['tma']['rows']})))" "$file" 2>/dev/null || echo "?")
  ok=PASS
  [[ $rc == 0 && $outcome == ok ]] || { ok=FAIL; status=1; }
  printf '%-28s %-6s %-14s %s\n' "$name" "$rc" "$outcome" "$ok"
done

echo
case $probe_rc in
  0) echo "tma-tf32-probe: default model confirmed" ;;
  1) echo "tma-tf32-probe: the default model does not fit; see the 'fits:' lines above"; status=1 ;;
  3) echo "tma-tf32-probe: no sm_90+ device"; status=3 ;;
  *) echo "tma-tf32-probe: probe failed (exit $probe_rc)"; status=1 ;;
esac
exit $status
