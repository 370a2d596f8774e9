# Sourced by every gpu-check section: the binary under test, the output folder, and the
# observed-vs-expected table each section prints.
#   source "$(dirname "$0")/lib/common.sh"
CUDADIAG=${CUDADIAG:-./build/bin/cudadiag}
OUT=${OUT:-./gpu-check-out}
mkdir -p "$OUT"
fail=0
ROW_WIDTH=${ROW_WIDTH:-40}

# row CHECK OBSERVED EXPECTED: one table line; a difference fails the section.
row() {
  local ok=PASS w=$ROW_WIDTH
  [[ "$2" == "$3" ]] || { ok=FAIL; fail=1; }
  printf "%-${w}s %-${w}s %-${w}s %s\n" "${1:0:$w}" "${2:0:$w}" "${3:0:$w}" "$ok"
}

# jget FILE EXPR: a Python expression over the JSON document d, or "?".
jget() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null || echo "?"
}
