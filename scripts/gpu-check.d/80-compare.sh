#!/usr/bin/env bash
# `cudadiag compare` on reports written on this GPU host: the environment fields the
# comparison reads (lib/compare/env_fields.cpp) must be found in real env/repro
# reports, a report compared with itself must be "same" (exit 0, its race rate a note),
# another host's healthy report (CMP_OTHER) too, and a copy with one result failing and
# another driver must be host_specific with the driver as suspect.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
common_field() {  # common_field FILE FIELD -> its value when every host agrees, else "missing"
  jget "$1" "next((e['value'] for e in d['comparison']['environment_common'] if e['field']=='$2'), 'missing')"
}

"$CUDADIAG" env --format json -o "$OUT/cmp-env-a.json" 2>"$OUT/cmp-env-a.stderr"
"$CUDADIAG" env --format json -o "$OUT/cmp-env-b.json" 2>"$OUT/cmp-env-b.stderr"
"$CUDADIAG" compare --format json -o "$OUT/cmp-env.json" "$OUT/cmp-env-a.json" "$OUT/cmp-env-b.json" 2>"$OUT/cmp-env.stderr"
rc_env=$?
"$CUDADIAG" compare --format md -o "$OUT/cmp-env.md" "$OUT/cmp-env-a.json" "$OUT/cmp-env-b.json" 2>/dev/null

smi_driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
smi_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
smi_vbios=$(nvidia-smi --query-gpu=vbios_version --format=csv,noheader 2>/dev/null | head -1)
smi_cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)

printf '%-40s %-40s %-40s %s\n' CHECK OBSERVED EXPECTED RESULT
row "env vs env: exit code" "$rc_env" 0
row "env vs env: verdict" "$(jget "$OUT/cmp-env.json" "d['verdict']['status']")" same
row "env vs env: differing fields" "$(jget "$OUT/cmp-env.json" "[e['field'] for e in d['comparison']['environment_diff']]")" "[]"
row "field: driver version" "$(common_field "$OUT/cmp-env.json" "driver version")" "$smi_driver"
row "field: gpu0 model" "$(common_field "$OUT/cmp-env.json" "gpu0 model")" "$smi_name"
row "field: gpu0 VBIOS" "$(common_field "$OUT/cmp-env.json" "gpu0 VBIOS")" "$smi_vbios"
row "field: gpu0 compute capability" "$(common_field "$OUT/cmp-env.json" "gpu0 compute capability")" "$smi_cc"
for f in "CUDA driver API" "CUDA runtime" "kernel" "OS" "glibc" "gpu0 ECC mode" "gpu0 ECC errors" \
         "gpu0 remapped rows" "gpu0 MIG mode" "gpu0 compute mode" "gpu0 SMs"; do
  row "field recorded: $f" "$([[ "$(common_field "$OUT/cmp-env.json" "$f")" == missing ]] && echo missing || echo recorded)" recorded
done

# A repro report against itself, then against a doctored copy.
"$CUDADIAG" repro --format json -o "$OUT/cmp-repro-a.json" 2>"$OUT/cmp-repro-a.stderr"
rc_repro=$?
row "repro wrote a report (exit 0 or 1)" "$([[ -s "$OUT/cmp-repro-a.json" && ( $rc_repro == 0 || $rc_repro == 1 ) ]] && echo yes || echo "no (rc $rc_repro)")" yes
if [[ -s "$OUT/cmp-repro-a.json" ]]; then
  # Same data on both sides: the same, exit 0. A case that fails at a rate by design (the
  # attention race, "ok|mismatch") meets its expectation: its rate is a note, never flaky.
  "$CUDADIAG" compare "$OUT/cmp-repro-a.json" "$OUT/cmp-repro-a.json" --format json -o "$OUT/cmp-self.json" \
    2>"$OUT/cmp-self.stderr"
  rc_self=$?
  intermittent=$(jget "$OUT/cmp-repro-a.json" \
    "sum(1 for r in d['results'] if 0 < (r.get('repeats') or {}).get('failures', 0) < (r.get('repeats') or {}).get('runs', 0))")
  rate_notes=$(jget "$OUT/cmp-self.json" "sum(1 for n in d['comparison']['notes'] if 'expected to fail at a rate' in n)")
  echo "repro vs itself: $intermittent intermittent case(s), $rate_notes rate note(s)"
  row "repro vs itself: verdict" "$(jget "$OUT/cmp-self.json" "d['verdict']['status']")" same
  row "repro vs itself: exit code" "$rc_self" 0
  row "repro vs itself: host-specific or flaky" \
    "$(jget "$OUT/cmp-self.json" "sum(1 for c in d['comparison']['outcome_diff'] if c.get('kind') in ('host_specific', 'flaky'))")" 0
  # Another host's report of the same suite (CMP_OTHER=FILE, e.g. an H200's next to this
  # H100's): both healthy, so the same, exit 0, whatever the GPUs and their race rates.
  if [[ -n ${CMP_OTHER:-} && -s ${CMP_OTHER:-} ]]; then
    "$CUDADIAG" compare "$CMP_OTHER" "$OUT/cmp-repro-a.json" --format json -o "$OUT/cmp-other.json" 2>/dev/null
    rc_other=$?
    "$CUDADIAG" compare "$CMP_OTHER" "$OUT/cmp-repro-a.json" >"$OUT/cmp-other.txt" 2>/dev/null
    head -12 "$OUT/cmp-other.txt"
    sed -n '/^Notes/,$p' "$OUT/cmp-other.txt"
    row "other host vs this one: verdict" "$(jget "$OUT/cmp-other.json" "d['verdict']['status']")" same
    row "other host vs this one: exit code" "$rc_other" 0
  fi
  "$CUDADIAG" compare "$OUT/cmp-repro-a.json" "$OUT/cmp-repro-a.json" | head -8
  python3 - "$OUT/cmp-repro-a.json" "$OUT/cmp-repro-b.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["host"]["hostname"] = str(d["host"].get("hostname")) + "-doctored"
d["driver"]["version"] = "1.0.doctored"
for r in d["results"]:
    if r.get("outcome") == "ok":
        r["outcome"] = "cuda_error"
        r["expectation_met"] = False
        r["error"] = {"code": 700, "name": "cudaErrorIllegalAddress", "class": "memory_fault",
                      "sticky": True, "surfaced_at": "synchronize"}
        r.pop("repeats", None)
        break
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
  "$CUDADIAG" compare --format json -o "$OUT/cmp-doctored.json" "$OUT/cmp-repro-a.json" "$OUT/cmp-repro-b.json" 2>/dev/null
  row "doctored copy: exit code" "$?" 1
  row "doctored copy: verdict" "$(jget "$OUT/cmp-doctored.json" "d['verdict']['status']")" host_specific
  row "doctored copy: top suspect" "$(jget "$OUT/cmp-doctored.json" "d['comparison']['suspects'][0]['field']")" "driver version"
  row "doctored copy: unpaired results" "$(jget "$OUT/cmp-doctored.json" "len(d['comparison']['unpaired'])")" 0
  "$CUDADIAG" compare --format md "$OUT/cmp-repro-a.json" "$OUT/cmp-repro-b.json" >"$OUT/cmp-doctored.md" 2>/dev/null
fi
echo
echo "compare env vs env (md):"
head -30 "$OUT/cmp-env.md" 2>/dev/null
exit $fail
