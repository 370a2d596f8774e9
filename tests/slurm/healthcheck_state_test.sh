#!/usr/bin/env bash
# scripts/slurm/cudadiag-healthcheck's state directory, as root on a shared node (no
# Slurm needed: the check runs with --no-drain and the real cudadiag binary):
#   1. absent: made with mode 0700, the report and the log land in it;
#   2. made first by another user (uid 65534), with that user's link planted inside:
#      refused with exit 2 and one line saying why, nothing written there or through it;
#   3. a symbolic link, or root's but writable by others: refused the same way;
#   4. root's, but holding a FIFO named health.json (and one named health.log): the
#      check ends within its timeout instead of hanging, and writes nothing into them.
# Prints "SKIPPED: why" and exits 0 when not run as root.
#
#   healthcheck_state_test.sh CUDADIAG_BINARY SOURCE_DIR
set -uo pipefail
BIN=$1
SRC=$2
HC=$SRC/scripts/slurm/cudadiag-healthcheck
NOBODY=65534

[ "$(id -u)" = 0 ] || { echo "SKIPPED: the state directory rules are about root's check; run as root"; exit 0; }
[ -x "$BIN" ] || { echo "FAIL: no cudadiag binary at $BIN"; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/cudadiag-hc-state.XXXXXX")
trap 'rm -rf "$T"' EXIT
failed=0
check() {  # WHAT COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; failed=1; fi
}
# Runs the check with a bounded wait of its own; prints its output, sets rc and took (s).
# On a GPU machine the health suite runs its GPU cases for real, beside the rest of a
# parallel test suite: 60 s, not the 20 s that a machine without a GPU never nears.
hc() {
  local start=$SECONDS
  CUDADIAG=$BIN CUDADIAG_HEALTH_TIMEOUT=${HC_TIMEOUT:-60} timeout 90 "$HC" --no-drain --allow-no-gpu "$@" >"$T/out" 2>&1
  rc=$?
  took=$((SECONDS - start))
  echo "  healthcheck $*: exit $rc in ${took}s: $(tail -1 "$T/out")"
}

# 1. Absent: made private.
hc --keep "$T/fresh"
check "a fresh state directory is used (exit 0)" test "$rc" = 0
check "it is made with mode 0700, owned by root" test "$(stat -c '%u %a' "$T/fresh")" = "0 700"
check "the report landed there" test -f "$T/fresh/health.json" -a ! -L "$T/fresh/health.json"
check "the log landed there" test -f "$T/fresh/health.log"

# 2. Made first by another user, with a link to a root file planted inside.
echo precious >"$T/victim"
mkdir -m 0777 "$T/planted"
ln -s "$T/victim" "$T/planted/health.json"
ln -s "$T/victim" "$T/planted/health.log"
chown -h "$NOBODY:$NOBODY" "$T/planted" "$T/planted/health.json" "$T/planted/health.log"
hc --keep "$T/planted"
check "another user's directory is refused with exit 2" test "$rc" = 2
check "the reason names the owner, on one line" \
  grep -q "^cudadiag-healthcheck: .*: cudadiag: state directory $T/planted is owned by uid $NOBODY, not by uid 0: refusing it" "$T/out"
check "the output is that one line" test "$(wc -l <"$T/out")" = 1
check "nothing written through the planted links" test "$(cat "$T/victim")" = precious
check "nothing written there" test "$(find "$T/planted" -mindepth 1 | wc -l)" = 2

# 3. A link to a directory, and root's directory that others may write.
mkdir -m 0700 "$T/real"
ln -s "$T/real" "$T/link"
hc --keep "$T/link"
check "a linked state directory is refused with exit 2" test "$rc" = 2
check "the reason says it is a link" grep -q "state directory $T/link is a symbolic link" "$T/out"
check "nothing written where it points" test -z "$(ls -A "$T/real")"
mkdir -m 0777 "$T/open"
hc --keep "$T/open"
check "a state directory others may write is refused with exit 2" test "$rc" = 2
check "the reason gives its mode" grep -q "state directory $T/open has mode 777: group or others may write it" "$T/out"

# 4. FIFOs where the report and the log go: bounded by the timeout, never written.
mkdir -m 0700 "$T/fifo"
mkfifo "$T/fifo/health.json" "$T/fifo/health.log"
# A FIFO opened for writing would block until the suite's own bound ends the check (exit
# 1): 40 s, room for a GPU machine's real health suite, whose answer must still be given.
HC_TIMEOUT=40 hc --keep "$T/fifo"
check "FIFOs in the state directory do not hang the check (ended in ${took}s, timeout 40s)" test "$took" -le 45
check "the check ended by itself" test "$rc" != 124
check "and still gave its answer (exit 0)" test "$rc" = 0
check "the report is a regular file now" test -f "$T/fifo/health.json" -a ! -p "$T/fifo/health.json"

[ $failed = 0 ] && echo PASS
exit $failed
