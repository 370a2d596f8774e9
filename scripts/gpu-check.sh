#!/usr/bin/env bash
# GPU checks in one call: run on a machine with an NVIDIA GPU from the repository root,
# with the binary at build/bin/cudadiag (build it here or elsewhere and copy it).
# Each section in scripts/gpu-check.d/ prints a table of observed vs expected outcomes
# and exits non-zero on a mismatch. Logs and JSON reports go to $OUT (default ./gpu-check-out).
#
#   scripts/gpu-check.sh            # every section
#   scripts/gpu-check.sh 20 30      # only sections whose name starts with 20 or 30
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"
export CUDADIAG=${CUDADIAG:-$PWD/build/bin/cudadiag}
if [[ ! -x $CUDADIAG ]]; then
  echo "gpu-check: $CUDADIAG not found; build first (scripts/build.sh)" >&2
  exit 2
fi

echo "== gpu-check on $(hostname) at $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version,ecc.mode.current,memory.total --format=csv,noheader 2>/dev/null ||
  echo "nvidia-smi not available"
"$CUDADIAG" --version

declare -a summary
status=0
for section in scripts/gpu-check.d/*.sh; do
  name=$(basename "$section" .sh)
  if (($#)); then
    keep=0
    for prefix in "$@"; do [[ $name == "$prefix"* ]] && keep=1; done
    ((keep)) || continue
  fi
  echo
  echo "== $name"
  start=$(date +%s)
  bash "$section" 2>&1 | tee "$OUT/$name.log"
  rc=${PIPESTATUS[0]}
  summary+=("$(printf '%-28s %-6s %4ss' "$name" "$([[ $rc == 0 ]] && echo PASS || echo FAIL)" $(($(date +%s) - start)))")
  ((rc == 0)) || status=1
done

echo
echo "== gpu-check summary"
printf '%s\n' "${summary[@]}"
exit $status
