#!/usr/bin/env bash
# TMA descriptors on the device: (1) the validator's rule table through the real
# cuTensorMapEncodeTiled (validator vs driver per row; any disagreement fails), (2) the
# cp.async.bulk.tensor load check on a set of shapes (1D..5D, swizzles, element
# strides, a box larger than the tensor with zero and NaN fill, tf32 and the _ftz types),
# (2b) the tf32 conversion probe, (3) the seed's
# seq-len sweep 0..8 (as-is: seq 0 and 1 rejected, 2..8 encode and load; canonical:
# seq 1 works too).
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
SEED_LOG=tests/data/tma/flashinfer_seqlen1.log
SEQ2_LOG=tests/data/tma/seqlen2_ok.log

echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null | head -1)"

# --- (1) rule table: validator vs driver ------------------------------------------
"$CUDADIAG" tma --table --format json -o "$OUT/tma-table.json" 2>"$OUT/tma-table.stderr"
rc=$?
echo "tma --table exit code: $rc (expected 0)"
[[ $rc == 0 ]] || fail=1
python3 - "$OUT/tma-table.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
rows = d.get("tma", {}).get("rows", [])
bad = 0
print(f"validator target: sm_{d.get('tma', {}).get('target_cc')} (the device's compute capability)")
print(f"{'ROW':42} {'VALIDATOR':8} {'DRIVER':32} {'AGREE':5}  NOTE")
for r in rows:
    v = "valid" if r["validator"]["valid"] else "invalid"
    drv = r.get("driver")
    dtxt = "-" if drv is None else ("accepted" if drv["result"] == 0 else f"{drv['name']} ({drv['result']})")
    agree = drv is not None and ((drv["result"] == 0) == r["validator"]["valid"])
    bad += not agree
    rules = ",".join(x.replace("tma.", "") for x in r.get("expected_errors", []))
    print(f"{r['label'][:42]:42} {v:8} {dtxt[:32]:32} {'yes' if agree else 'NO':5}  {rules} {r.get('note','')}")
print(f"rows: {len(rows)}, disagreements: {bad}")
sys.exit(1 if bad or not rows else 0)
PY

# --- (2) load shapes ------------------------------------------------------------------
printf '\n%-34s %-10s %-10s %-18s %-10s %s\n' SHAPE EXIT EXPECTED DEVICE_OUTCOME EXPECTED RESULT
check() {  # check NAME EXPECTED_RC EXPECTED_OUTCOME tma-args...
  local name=$1 want_rc=$2 want_out=$3
  shift 3
  "$CUDADIAG" tma "$@" --format json -o "$OUT/tma-$name.json" 2>"$OUT/tma-$name.stderr"
  local rc=$?
  local got
  got=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(','.join(sorted(set(str(r['device_outcome']) for r in d['tma']['rows']))))" "$OUT/tma-$name.json" 2>/dev/null || echo "?")
  local ok=PASS
  [[ $rc == "$want_rc" && $got == "$want_out" ]] || { ok=FAIL; fail=1; }
  printf '%-34s %-10s %-10s %-18s %-10s %s\n' "$name" "$rc" "$want_rc" "$got" "$want_out" "$ok"
}
check 1d-fp32 0 ok --dtype fp32 --dims 1000 --box 256
check 2d-bf16-swz128 0 ok --dtype bf16 --dims 256,96 --strides 512 --box 64,32 --swizzle 128B --l2-promotion 128B
check 2d-bf16-swz64 0 ok --dtype bf16 --dims 96,20 --strides 192 --box 32,8 --swizzle 64B
check 2d-fp32-swz32 0 ok --dtype fp32 --dims 40,24 --strides 160 --box 8,8 --swizzle 32B
check 2d-bf16-elemstride2 0 ok --dtype bf16 --dims 128,50 --strides 256 --box 64,8 --element-strides 1,2
check 3d-fp32-partial 0 ok --dtype fp32 --dims 64,40,6 --strides 256,10240 --box 32,16,4
check 4d-uint8 0 ok --dtype uint8 --dims 64,5,3,2 --strides 64,320,960 --box 32,4,2,2
check 5d-fp16 0 ok --dtype fp16 --dims 16,3,3,3,2 --strides 32,96,288,864 --box 8,2,2,2,2
check box-gt-tensor-zero 0 ok --dtype fp32 --dims 20,3 --strides 80 --box 32,8
check box-gt-tensor-nan 0 ok --dtype fp32 --dims 20,3 --strides 80 --box 32,8 --oob-fill nan
check box-gt-tensor-bf16-nan 0 ok --dtype bf16 --dims 40,3,2 --strides 80,240 --box 64,8,1 --swizzle 128B --oob-fill nan
check address-offset-16 0 ok --dtype bf16 --dims 128,4 --strides 256 --box 64,4 --address 0x10
# tf32 types: global memory holds fp32, shared memory receives tf32 (the reference
# models the rounding, lib/tma/element_conversion.h); names, aliases and the numeric code.
check 1d-tf32 0 ok --dtype tf32 --dims 1000 --box 256
check 1d-tf32-ftz 0 ok --dtype tf32_ftz --dims 1000 --box 256
check 1d-fp32-ftz 0 ok --dtype float32_ftz --dims 1000 --box 256
check 2d-tf32-swz128 0 ok --dtype tfloat32 --dims 96,20 --strides 384 --box 32,8 --swizzle 128B
check 2d-tf32-code11-nan 0 ok --dtype 11 --dims 20,3 --strides 80 --box 32,8 --oob-fill nan
check seed-seq2-log 0 ok --from-log "$SEQ2_LOG"
check seed-seq1-log 1 cuda_error --from-log "$SEED_LOG"

# --- (2b) which tf32 rounding the copy engine does: chosen inputs, every candidate -------
PROBE=${PROBE:-$(dirname "$BIN")/tma-conversion-probe}
if [[ -x $PROBE ]]; then
  echo
  "$PROBE" >"$OUT/tma-conversion-probe.txt" 2>&1
  rc=$?
  grep -E "fits:|RESULT" "$OUT/tma-conversion-probe.txt"
  echo "tma-conversion-probe exit code: $rc (expected 0; the full table is in tma-conversion-probe.txt)"
  [[ $rc == 0 ]] || fail=1
else
  echo "tma-conversion-probe not built ($PROBE): skipped"
fi

# --- (3) the seed's sweep -------------------------------------------------------------
for policy in as-is canonical; do
  "$CUDADIAG" tma --from-log "$SEED_LOG" --sweep seq-len=0..8 --size1-stride "$policy" --format json \
    -o "$OUT/tma-sweep-$policy.json" 2>"$OUT/tma-sweep-$policy.stderr"
  "$CUDADIAG" tma --from-log "$SEED_LOG" --sweep seq-len=0..8 --size1-stride "$policy" >"$OUT/tma-sweep-$policy.txt" 2>&1
  python3 - "$OUT/tma-sweep-$policy.json" "$policy" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1])); policy = sys.argv[2]
bad = 0
print(f"\nsweep seq-len 0..8, --size1-stride {policy}")
print(f"{'SEQ':4} {'VALIDATOR':9} {'DRIVER':28} {'LOAD':22} {'EXPECTED':26} RESULT")
for r in d["tma"]["rows"]:
    seq = r["sweep"]["seq-len"]
    v = "valid" if r["validator"]["valid"] else "invalid"
    drv = r.get("driver"); ld = r.get("load")
    dtxt = "-" if drv is None else ("accepted" if drv["result"] == 0 else f"{drv['name']}")
    ltxt = "-" if not ld else ("not run" if not ld.get("ran") else f"mismatch {ld['mismatches']}" if ld["mismatches"] else f"ok {ld['boxes']} boxes")
    works = seq >= 2 or (seq == 1 and policy == "canonical")
    want = "valid/accepted/ok" if works else "invalid/rejected/-"
    got_ok = (v == "valid" and drv is not None and drv["result"] == 0 and ld is not None and ld.get("ran") and ld["mismatches"] == 0)
    got_bad = (v == "invalid" and drv is not None and drv["result"] != 0)
    ok = got_ok if works else got_bad
    bad += not ok
    print(f"{seq:<4} {v:9} {dtxt[:28]:28} {ltxt[:22]:22} {want:26} {'PASS' if ok else 'FAIL'}")
sys.exit(1 if bad else 0)
PY
done
echo
cat "$OUT/tma-sweep-as-is.txt" | head -20
exit $fail
