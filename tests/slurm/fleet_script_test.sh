#!/usr/bin/env bash
# scripts/slurm/cudadiag-fleet.sbatch with a stand-in cudadiag (a script that records
# its arguments and writes no report), without Slurm and with a stand-in Slurm
# (scontrol and srun scripts on PATH), so it runs anywhere:
#   1. no task wrote a report: the summary line, summary.txt and (under Slurm) the
#      job comment say so, exit 1, and no bash error;
#   2. CUDADIAG_ARGS='--case fault.*' reaches cudadiag as written although the submit
#      directory holds a file the glob would match;
#   3. a reused output folder keeps its earlier reports (moved to earlier-<time>/);
#   4. a Slurm job given no GPUs says so in its summary line; one given GPUs does not;
#   5. cudadiag is never looked for relative to the script (sbatch runs a spool copy):
#      a script copied beside a build/bin/cudadiag, with none on PATH, is exit 2 naming
#      where it looked.
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

grep -q "the job was given no GPUs" "$T/slurm/summary.txt" 2>/dev/null ||
  fail "slurm: a job without GPUs is not said to have none: '$(cat "$T/slurm/summary.txt" 2>/dev/null)'"

# 3. A reused folder: the earlier report is kept, moved aside; this job's folder starts empty.
mkdir -p "$T/reused/reports"
echo '{"earlier": true}' >"$T/reused/reports/node0.json"
rc=$(run_fleet reused -u SLURM_JOB_ID CUDADIAG_GPUS=1)
kept=$(ls "$T"/reused/earlier-*/node0.json 2>/dev/null | head -1)
[ -n "$kept" ] && grep -q earlier "$kept" || fail "reused: the earlier report was not kept in earlier-*/"
[ -e "$T/reused/reports/node0.json" ] && fail "reused: the earlier report is still among this job's reports"

# 4. A job given GPUs: no such note.
rc=$(run_fleet gpus PATH="$T/bin:$PATH" SLURM_JOB_ID=4243 SLURM_JOB_NODELIST=node1 SLURM_GPUS_ON_NODE=8)
grep -q "given no GPUs" "$T/gpus/summary.txt" 2>/dev/null && fail "gpus: a job with GPUs is said to have none"

# 5. The script's own location is no hint: a spool copy beside build/bin/cudadiag.
# ($0/../../build/bin/cudadiag is where an older script looked.)
mkdir -p "$T/build/bin" "$T/spool/job" "$T/emptypath"
cp "$SBATCH" "$T/spool/job/slurm_script"
cp "$T/cudadiag" "$T/build/bin/cudadiag"
ln -s "$(command -v bash)" "$T/emptypath/bash"
for tool in date mkdir hostname tr grep sed tail head cat mv ls wc sort dirname; do
  p=$(command -v $tool) && ln -sf "$p" "$T/emptypath/$tool"
done
(cd "$T/spool" && env -u CUDADIAG -u SLURM_JOB_ID PATH="$T/emptypath" CUDADIAG_OUT="$T/spoolout" STUB_LOG="$T/spool.args" \
  SLURM_SUBMIT_DIR="$T/submit" bash "$T/spool/job/slurm_script" >"$T/spool.out" 2>"$T/spool.err")
rc=$?
if [ -x /opt/cudadiag/bin/cudadiag ]; then
  echo "(check 5 partly skipped: /opt/cudadiag/bin/cudadiag exists here)"
else
  [ $rc = 2 ] || fail "spool: exit $rc, expected 2 (no cudadiag found)"
  grep -q "no cudadiag binary on PATH, in /opt/cudadiag/bin or in $T/submit/build/bin" "$T/spool.out" ||
    fail "spool: '$(tail -n 1 "$T/spool.out")'"
  [ -e "$T/spool.args" ] && fail "spool: a cudadiag found relative to the script's copy was run"
fi

if [ $failed = 0 ]; then
  echo "PASS: fleet script without reports, CUDADIAG_ARGS unglobbed, earlier reports kept, GPUs asked for, no \$0 lookup"
  exit 0
fi
for f in "$T"/*.out "$T"/*.err; do echo "--- $f"; tail -n 5 "$f"; done
exit 1
