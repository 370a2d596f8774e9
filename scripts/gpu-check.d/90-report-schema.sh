#!/usr/bin/env bash
# Reports written on a real GPU host against the embedded JSON Schema, and --redact on
# real identifiers. Runs last so that it also checks every JSON report the earlier
# sections left in $OUT (any *.json with a top-level schema_version).
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
mkdir -p "$OUT/report-schema"
is_report() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if isinstance(d, dict) and 'schema_version' in d else 1)" "$1" 2>/dev/null
}

dir="$OUT/report-schema"
"$CUDADIAG" env --format json -o "$dir/env.json" 2>"$dir/env.stderr"
rc_env=$?
"$CUDADIAG" env --format json --redact -o "$dir/env-redacted.json" 2>"$dir/env-redacted.stderr"
rc_red_json=$?
"$CUDADIAG" env --format md --redact -o "$dir/env-redacted.md" 2>>"$dir/env-redacted.stderr"
rc_red_md=$?
"$CUDADIAG" env --format text --redact >"$dir/env-redacted.txt" 2>>"$dir/env-redacted.stderr"
rc_red_text=$?

printf '%-52s %-18s %-18s %s\n' CHECK OBSERVED EXPECTED RESULT
row "env --format json exit code (0 or 1)" "$([[ $rc_env == 0 || $rc_env == 1 ]] && echo ok || echo "$rc_env")" ok
row "env --redact json/md/text exit codes" "$rc_red_json/$rc_red_md/$rc_red_text" "$rc_env/$rc_env/$rc_env"

uuids=$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null | tr -d ' ')
pcis=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader 2>/dev/null | tr -d ' ')
serials=$(nvidia-smi --query-gpu=serial --format=csv,noheader 2>/dev/null | tr -d ' ' | grep -v -i 'n/a\|not supported')
host=$(hostname)
for f in env-redacted.json env-redacted.md env-redacted.txt; do
  leaks=0
  for u in $uuids; do grep -qiF "${u#GPU-}" "$dir/$f" && leaks=$((leaks + 1)); done
  for p in $pcis; do
    bus=$(echo "$p" | tr 'A-Z' 'a-z' | sed -E 's/^[0-9a-f]+:([0-9a-f]{2}:[0-9a-f]{2}).*/\1/')  # 3b:00
    grep -qiE "[0-9a-f]{4,8}:$bus" "$dir/$f" && leaks=$((leaks + 1))
  done
  for s in $serials; do grep -qF "$s" "$dir/$f" && leaks=$((leaks + 1)); done
  # Whole words only: a short hostname such as "vm" is also a piece of "nvml".
  [[ -n $host ]] && grep -qwF "$host" "$dir/$f" && leaks=$((leaks + 1))
  row "$f: UUID/PCI/serial/hostname leaks" "$leaks" 0
done
row "redacted json has redacted: hashes" "$(grep -c 'redacted:' "$dir/env-redacted.json" | awk '{print ($1 > 0) ? "yes" : "no"}')" yes

checked=0
while IFS= read -r -d '' f; do
  is_report "$f" || continue
  checked=$((checked + 1))
  "$CUDADIAG" schema --validate "$f" >"$f.schema.txt" 2>&1
  rc=$?
  row "${f#"$OUT"/}" "$([[ $rc == 0 ]] && echo valid || echo "invalid ($rc)")" valid
  [[ $rc == 0 ]] || sed -n '2,6p' "$f.schema.txt"
done < <(find "$OUT" -name '*.json' -print0 | sort -z)
row "reports found under \$OUT" "$([[ $checked -ge 2 ]] && echo ">=2" || echo "$checked")" ">=2"
exit $fail
