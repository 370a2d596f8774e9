#!/usr/bin/env bash
# The build's slowest units, from Ninja's own log: the first thing to read when a build
# gets slower. Each line: seconds, then the output (object, library or executable).
#
#   scripts/slowest-units.sh            # the 15 slowest of ./build
#   scripts/slowest-units.sh -n 30 DIR  # the 30 slowest of DIR
# Ninja's log keeps one line per output and build; only the newest entry of each counts.
set -euo pipefail
n=15
if [[ ${1:-} == -n ]]; then n=$2; shift 2; fi
dir=${1:-build}
log=$dir/.ninja_log
if [[ ! -r $log ]]; then
  echo "slowest-units: $log not found: build first (scripts/build.sh)" >&2
  exit 2
fi
# .ninja_log v5: start_ms end_ms mtime output hash; a later line for the same output
# replaces an earlier one.
awk -F'\t' '!/^#/ { ms[$4] = $2 - $1 }
  END { total = 0; for (o in ms) total += ms[o]
        printf "%d outputs, %.0f s of build time in all\n", length(ms), total / 1000 > "/dev/stderr"
        for (o in ms) printf "%8.1f s  %s\n", ms[o] / 1000, o }' "$log" | sort -rn | head -n "$n"
