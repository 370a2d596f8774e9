#!/usr/bin/env bash
# The fleet tools on this GPU host, without Slurm:
#  1. scripts/slurm/cudadiag-healthcheck (the `health` suite): healthy, exit 0, in seconds;
#  2. scripts/slurm/cudadiag-fleet.sbatch run directly: one task per local GPU
#     (--devices i), every report healthy, compared when there are two GPUs or more.
# Prints a table of checks and the fleet script's summary line; exits 1 on a mismatch.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
dir="$OUT/70-fleet"
rm -rf "$dir" && mkdir -p "$dir"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')

start=$(date +%s.%N)
CUDADIAG=$CUDADIAG scripts/slurm/cudadiag-healthcheck --no-drain --keep "$dir/health" >"$dir/health.out" 2>&1
rc_health=$?
health_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')

start=$(date +%s.%N)
env -u SLURM_JOB_ID CUDADIAG="$CUDADIAG" CUDADIAG_OUT="$dir/fleet" bash scripts/slurm/cudadiag-fleet.sbatch \
  >"$dir/fleet.out" 2>"$dir/fleet.err"
rc_fleet=$?
fleet_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
summary=$(tail -1 "$dir/fleet.out")

printf "%-${ROW_WIDTH}s %-${ROW_WIDTH}s %-${ROW_WIDTH}s %s\n" CHECK OBSERVED EXPECTED RESULT
row "healthcheck: exit code" "$rc_health" 0
row "healthcheck: says healthy" "$(grep -c 'cudadiag: healthy' "$dir/health.out")" 1
row "healthcheck: under 20 s" "$(awk -v s="$health_s" 'BEGIN {print (s < 20) ? "yes" : "no"}')" yes
row "fleet script: exit code" "$rc_fleet" 0
row "fleet script: one report per GPU" "$(find "$dir/fleet/reports" -name '*.json' | wc -l)" "$gpus"
if [[ $gpus -ge 2 ]]; then
  row "fleet script: compared the GPUs" "$(grep -c 'compare same' <<<"$summary")" 1
else
  row "fleet script: the report's own verdict" "$(grep -o 'healthy 1' <<<"$summary")" "healthy 1"
fi
echo
echo "health check ($health_s s): $(tail -1 "$dir/health.out")"
echo "fleet script ($fleet_s s, $gpus GPU(s)): $summary"
exit $fail
