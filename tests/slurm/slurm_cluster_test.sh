#!/usr/bin/env bash
# A real single-host Slurm cluster for the length of this test: Debian's slurm-wlm and
# munge, started in the foreground with their own key, config, loopback ports and
# state under a temp dir (no systemd, no cgroups: proctrack/linuxproc, task/none),
# then torn down. On it:
#   1. scripts/slurm/cudadiag-fleet.sbatch, one task per node: the report lands, and
#      with one report the summary is that report's verdict;
#   2. the same script with one task per GPU (two here): both reports land and the
#      compare step reads them;
#   3. scripts/slurm/cudadiag-healthcheck: passes with --allow-no-gpu, drains the node
#      with --drain where the GPU part cannot run, resumes it after a passing check (only
#      when it drained it itself), and the NHC check wraps it.
# Without a GPU the GPU part is skipped (exit 3) and the host-only cases run; with one,
# the verdicts are whatever the GPUs give. Prints "SKIP: why" and exits 0 when Slurm or
# munge is not installed (scripts/install-deps.sh installs them) or not run as root.
#
#   slurm_cluster_test.sh CUDADIAG_BINARY SOURCE_DIR
set -uo pipefail
BIN=$1
SRC=$2
STEP_TIMEOUT=45

skip() {
  echo "SKIP: $*"
  exit 0
}
for tool in munged slurmctld slurmd sbatch srun scontrol sinfo; do
  command -v "$tool" >/dev/null ||
    skip "$tool not found: install slurmctld, slurmd, slurm-client and munge (scripts/install-deps.sh does)"
done
[ "$(id -u)" = 0 ] || skip "the test cluster runs its daemons as root; run the test as root"
[ -x "$BIN" ] || { echo "FAIL: no cudadiag binary at $BIN"; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/cudadiag-slurm.XXXXXX")
chmod 755 "$T"
mkdir -p "$T/state" "$T/spool" "$T/etc"
pids=()
failed=0

teardown() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for _ in $(seq 50); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.2
  done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  if [ $failed = 0 ]; then rm -rf "$T"; else echo "(logs kept in $T)"; fi
}
trap teardown EXIT

fail() {
  failed=1
  echo "FAIL: $*"
  for log in slurmctld.log slurmd.log munged.log; do
    [ -f "$T/$log" ] && { echo "--- $log (tail)"; tail -n 15 "$T/$log"; }
  done
  exit 1
}

check() {  # DESCRIPTION COMMAND...: fails the test unless the command succeeds
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else fail "$what"; fi
}

port_free() {  # no socket on it (listening or connected), v4 or v6
  ! grep -qi "$(printf ':%04X ' "$1")" /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
pick_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 40000))
    port_free "$p" && port_free $((p + 1)) && { echo "$p"; return; }
  done
  fail "no free pair of loopback ports"
}

# munge: its own key and socket.
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 status=none
chmod 600 "$T/munge.key"
munged -F --force --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
  --log-file="$T/munged.log" --seed-file="$T/munged.seed" >"$T/munged.out" 2>&1 &
pids+=($!)

HOST=$(hostname -s)
CPUS=$(nproc)
OVERRIDES=""
# Two tasks run side by side in the per-GPU job: a one-CPU machine declares two.
if [ "$CPUS" -lt 2 ]; then CPUS=2; OVERRIDES="SlurmdParameters=config_overrides"; fi
PORT=$(pick_port)
export SLURM_CONF=$T/etc/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=cudadiag-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge.sock
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MailProg=/bin/true
$OVERRIDES
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF

for _ in $(seq 50); do [ -S "$T/munge.sock" ] && break; sleep 0.1; done
[ -S "$T/munge.sock" ] || fail "munged did not start"
slurmctld -D -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 150); do
  state=$(sinfo -h -N -o %T 2>/dev/null | head -1)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || fail "the node did not come up idle (state: '${state:-none}')"
echo "ok: cluster up ($HOST, $CPUS CPUs, ports $PORT-$((PORT + 1)))"

# Did the GPU part run? Decides the exit status every step expects.
has_gpu=0
command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && has_gpu=1

run_job() {  # NAME VAR=VALUE...: the fleet script as a batch job; sets job_rc and job_out
  local name=$1
  shift
  job_out=$T/$name.out
  env "$@" CUDADIAG="$BIN" CUDADIAG_OUT="$T/$name" timeout "$STEP_TIMEOUT" \
    sbatch --wait --parsable -N1 -D "$T" -o "$job_out" "$SRC/scripts/slurm/cudadiag-fleet.sbatch" >"$T/$name.id"
  job_rc=$?
  echo "$name: job $(cat "$T/$name.id"), exit $job_rc, last line: $(tail -1 "$job_out" 2>/dev/null)"
}

expected_rc() { [ $has_gpu = 1 ] && echo "0 1" || echo 3; }
rc_expected() { for c in $(expected_rc); do [ "$1" = "$c" ] && return 0; done; return 1; }

# 1. One task per node.
run_job fleet1
check "fleet1 exits $(expected_rc | tr ' ' /) (got $job_rc)" rc_expected "$job_rc"
check "fleet1 report landed as reports/$HOST.json" test -s "$T/fleet1/reports/$HOST.json"
check "fleet1 report has the host-only cases" grep -q '"case_id": "tma.seed-seq1.host"' "$T/fleet1/reports/$HOST.json"
check "fleet1 summary is the last line" grep -q '^cudadiag-fleet: [a-z_]*: 1 report (' <(tail -1 "$job_out")
check "fleet1 summary is the job's comment" \
  grep -q 'Comment=cudadiag-fleet:' <(scontrol show job "$(cat "$T/fleet1.id")")

# 2. One task per GPU (two): two reports, and compare reads them.
run_job fleet2 CUDADIAG_PER_GPU=1 CUDADIAG_GPUS=2
check "fleet2 exits $(expected_rc | tr ' ' /) (got $job_rc)" rc_expected "$job_rc"
for i in 0 1; do check "fleet2 report $HOST-gpu$i.json landed" test -s "$T/fleet2/reports/$HOST-gpu$i.json"; done
check "fleet2 compare read both reports" grep -q '^cudadiag-fleet: [a-z_]*: 2 reports (.*); compare ' <(tail -1 "$job_out")
check "fleet2 compare.md names both reports" grep -q "$HOST-gpu1.json" "$T/fleet2/compare.md"
check "fleet2 compare.json is a compare report" grep -q '"command": "compare"' "$T/fleet2/compare.json"

# 3. The health check, as slurmd would run it, and through NHC.
HC=$SRC/scripts/slurm/cudadiag-healthcheck
CUDADIAG=$BIN timeout "$STEP_TIMEOUT" "$HC" --allow-no-gpu --keep "$T/health" >"$T/health1.out"
rc=$?
echo "healthcheck --allow-no-gpu: exit $rc: $(tail -1 "$T/health1.out")"
if [ $has_gpu = 0 ]; then
  check "healthcheck --allow-no-gpu passes without a GPU" test "$rc" = 0
  CUDADIAG=$BIN timeout "$STEP_TIMEOUT" "$HC" --drain --keep "$T/health" >"$T/health2.out"
  rc=$?
  echo "healthcheck --drain: exit $rc: $(tail -1 "$T/health2.out")"
  check "healthcheck without a GPU exits 1" test "$rc" = 1
  check "healthcheck says why on one line" grep -q "^cudadiag-healthcheck: $HOST: cudadiag: incomplete: GPU part could not run" "$T/health2.out"
  check "healthcheck drained the node with the reason" \
    grep -q '^drain[a-z]* cudadiag: incomplete: GPU part could not run' <(sinfo -h -N -o '%T %E')
  # A passing check resumes the node it drained...
  CUDADIAG=$BIN timeout "$STEP_TIMEOUT" "$HC" --drain --allow-no-gpu --keep "$T/health" >"$T/health3.out"
  echo "healthcheck --drain --allow-no-gpu: exit $?: $(tail -1 "$T/health3.out")"
  check "a passing check resumes the node it drained" grep -q '^idle' <(sinfo -h -N -o %T)
  check "healthcheck says it resumed the node" grep -q "^cudadiag-healthcheck: $HOST: resumed" "$T/health3.out"
  # ...but never one drained for another reason.
  scontrol update nodename="$HOST" state=drain reason="admin: disk replacement"
  CUDADIAG=$BIN timeout "$STEP_TIMEOUT" "$HC" --drain --allow-no-gpu --keep "$T/health" >"$T/health4.out"
  echo "after a passing check on an admin-drained node: $(sinfo -h -N -o "%T %E")"
  check "a node an admin drained stays drained" grep -q '^drain[a-z*]* admin: disk replacement' <(sinfo -h -N -o '%T %E')
  scontrol update nodename="$HOST" state=resume
  # NHC's die and log, as NHC defines them: die records the reason and fails the check.
  # shellcheck disable=SC2317  # die and log are called by the sourced check
  nhc_out=$(
    die() { echo "die $1: $2"; return 1; }
    log() { echo "log: $*"; }
    # shellcheck source=/dev/null
    . "$SRC/scripts/slurm/nhc/cudadiag.nhc"
    export CUDADIAG=$BIN CUDADIAG_HEALTHCHECK=$HC
    check_cudadiag --keep "$T/health" && echo "passed"
    check_cudadiag --allow-no-gpu --keep "$T/health" && echo "passed with --allow-no-gpu"
  )
  echo "$nhc_out"
  check "the NHC check fails the node with the reason" grep -q '^die 1: cudadiag: incomplete: GPU part could not run' <<<"$nhc_out"
  check "the NHC check passes with --allow-no-gpu" grep -q '^passed with --allow-no-gpu$' <<<"$nhc_out"
  check "the NHC check never drains by itself" grep -q '^idle' <(sinfo -h -N -o %T)
else
  check "healthcheck runs on a GPU node (exit 0 or 1)" test "$rc" = 0 -o "$rc" = 1
fi
echo "PASS"
