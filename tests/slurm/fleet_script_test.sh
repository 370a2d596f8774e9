#!/usr/bin/env bash
# scripts/slurm/cudadiag-fleet.sbatch with a stand-in cudadiag (a script that records
# its arguments and writes no report), without Slurm and with a stand-in Slurm
# (scontrol and srun scripts on PATH), so it runs anywhere:
#   1. no task wrote a report: the summary line, summary.txt and (under Slurm) the
#      job comment say so, exit 1, and no bash error;
#   2. CUDADIAG_ARGS='--case fault.*' reaches cudadiag as written although the submit
#      directory holds a file the glob would match.
#
#   fleet_script_test.sh SOURCE_DIR
set -uo pipefail
SRC=$1
SBATCH=$SRC/scripts/slurm/cudadiag-fleet.sbatch

T=$(mktemp -d "${TMPDIR:-/tmp}/cudadiag-fleet-test.XXXXXX")
failed=0
trap 'if [ $failed = 0 ]; then rm -rf "$T"; else echo "(files kept in $T)"; fi' EXIT
fail() {
  failed=1
  echo "FAIL: $*"
}

mkdir -p "$T/bin" "$T/submit"
# cudadiag that writes no report: its arguments, one per line, go to $STUB_LOG.
cat >"$T/cudadiag" <<'EOF'
#!/usr/bin/env bash
printf '%s\n' "$@" >>"$STUB_LOG"
echo "stub cudadiag: no report" >&2
exit 1
EOF
# Slurm: one node; srun runs the task once in place; scontrol update is recorded.
cat >"$T/bin/scontrol" <<'EOF'
#!/usr/bin/env bash
case $1 in
  show) echo node1 ;;
  update) printf '%s\n' "$*" >>"$SCONTROL_LOG" ;;
esac
EOF
cat >"$T/bin/srun" <<'EOF'
#!/usr/bin/env bash
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do shift; done
SLURMD_NODENAME=node1 SLURM_LOCALID=0 exec "$@"
EOF
chmod +x "$T/cudadiag" "$T/bin/scontrol" "$T/bin/srun"
# A file the glob fault.* would match in the submit directory.
touch "$T/submit/fault.oob-write"

run_fleet() {  # NAME [VAR=VALUE...]: runs the script from the submit directory
  local name=$1
  shift
  (cd "$T/submit" && env "$@" CUDADIAG="$T/cudadiag" CUDADIAG_OUT="$T/$name" STUB_LOG="$T/$name.args" \
    SCONTROL_LOG="$T/$name.scontrol" CUDADIAG_ARGS='--case fault.*  --repeat 2' \
    bash "$SBATCH" >"$T/$name.out" 2>"$T/$name.err")
  echo $?
}

check_no_report() {  # NAME RC
  local name=$1 rc=$2
  local want="cudadiag-fleet: findings: no task wrote a report: see the task logs"
  [ "$rc" = 1 ] || fail "$name: exit $rc, expected 1"
  grep -q "unbound variable\|bad array subscript\|syntax error" "$T/$name.err" &&
    fail "$name: bash error: $(grep -m1 'unbound\|subscript\|syntax' "$T/$name.err")"
  tail -n 1 "$T/$name.out" | grep -qF "$want" || fail "$name: summary line: '$(tail -n 1 "$T/$name.out")'"
  grep -qF "$want" "$T/$name/summary.txt" 2>/dev/null || fail "$name: no summary.txt saying '$want'"
  # The arguments reached cudadiag as words, the glob unexpanded.
  grep -qx 'fault\.\*' "$T/$name.args" 2>/dev/null || fail "$name: cudadiag did not get 'fault.*': $(tr '\n' ' ' <"$T/$name.args")"
  grep -qx 'fault.oob-write' "$T/$name.args" && fail "$name: CUDADIAG_ARGS was globbed against the submit directory"
  grep -qx -- '--repeat' "$T/$name.args" || fail "$name: CUDADIAG_ARGS not split into words"
}

# 1. Without Slurm: this host, two tasks (one per GPU).
rc=$(run_fleet local -u SLURM_JOB_ID CUDADIAG_GPUS=2)
check_no_report local "$rc"
[ "$(grep -cx -- '--devices' "$T/local.args")" = 2 ] || fail "local: expected two tasks"

# 2. Under (stand-in) Slurm: the same, and the job comment says it.
rc=$(run_fleet slurm PATH="$T/bin:$PATH" SLURM_JOB_ID=4242 SLURM_JOB_NODELIST=node1)
check_no_report slurm "$rc"
grep -q "JobId=4242 Comment=cudadiag-fleet: findings: no task wrote a report: see the task logs" \
  "$T/slurm.scontrol" 2>/dev/null || fail "slurm: job comment: '$(cat "$T/slurm.scontrol" 2>/dev/null)'"

if [ $failed = 0 ]; then
  echo "PASS: fleet script without reports, and CUDADIAG_ARGS unglobbed"
  exit 0
fi
for f in "$T"/*.out "$T"/*.err; do echo "--- $f"; tail -n 5 "$f"; done
exit 1
