#!/bin/sh
# `cudadiag run` interrupted while its program ignores SIGINT and SIGTERM and has a
# grandchild in a session of its own, by one, two or three signals: cudadiag must end
# promptly with the program, its group and the grandchild dead. After one or two signals
# the report is written (interrupted, the grandchild named); a third signal exits at once,
# the tree killed first. The scratch folder is gone in every case.
# usage: interrupt_run.sh CUDADIAG FAKE_CHILD WORK_DIR
set -u
BIN=$1 FAKE=$2 ROOT=$3
ms() { echo $(($(date +%s%N) / 1000000)); }

# interrupt SIGNALS LIMIT_MS: one run of cudadiag interrupted by SIGNALS SIGINTs 100 ms apart
# (the third right after the second); it must end within LIMIT_MS of the first.
interrupt() {
  signals=$1 limit=$2 DIR=$ROOT/$1
  fail() { echo "FAIL ($signals signal(s)): $*"; [ -f "$DIR/stderr" ] && sed 's/^/  cudadiag: /' "$DIR/stderr"; exit 1; }
  rm -rf "$DIR" && mkdir -p "$DIR/tmp" || exit 1
  TMPDIR="$DIR/tmp" "$BIN" run --rungs native --no-kernel-log --timeout 600 --format json -o "$DIR/report.json" \
    -- "$FAKE" escape-ignore-term 600 >"$DIR/stdout" 2>"$DIR/stderr" &
  cudadiag=$!
  # Started: wait for the program and its grandchild (cudadiag's child running FAKE, and
  # that child's child). On a GPU machine cudadiag first probes the driver in children of
  # its own, so the program starts later there: wait for the program itself, not a delay.
  program= grandchild=
  i=0
  while [ $i -lt 400 ]; do
    for pid in $(pgrep -P $cudadiag); do
      case "$(cat /proc/$pid/cmdline 2>/dev/null | tr '\0' ' ')" in
        *"$FAKE escape-ignore-term"*) program=$pid ;;
      esac
    done
    [ -n "$program" ] && grandchild=$(pgrep -P "$program" | head -1)
    [ -n "$grandchild" ] && break
    sleep 0.05
    i=$((i + 1))
  done
  [ -n "$(ls "$DIR/tmp")" ] || fail "cudadiag made no scratch folder under TMPDIR"
  [ -n "$program" ] || fail "no program running under cudadiag after 20 s"
  [ -n "$grandchild" ] || fail "the program started no grandchild"

  t0=$(ms)
  kill -INT $cudadiag
  [ "$signals" -ge 2 ] && sleep 0.1 && kill -INT $cudadiag
  [ "$signals" -ge 3 ] && kill -INT $cudadiag
  wait $cudadiag
  rc=$?
  elapsed=$(($(ms) - t0))
  echo "$signals signal(s): exit $rc, ${elapsed} ms after the first signal"

  [ $rc -eq 1 ] || fail "exit code $rc, expected 1 (interrupted)"
  [ $elapsed -lt "$limit" ] || fail "cudadiag took ${elapsed} ms to end (limit ${limit} ms)"
  kill -0 "$program" 2>/dev/null && fail "the program (pid $program) is still alive"
  kill -0 "$grandchild" 2>/dev/null && fail "the grandchild (pid $grandchild) in its own session is still alive"
  [ -z "$(ls "$DIR/tmp")" ] || fail "scratch left behind: $(ls "$DIR/tmp")"
  [ "$signals" -ge 3 ] && return 0
  [ -f "$DIR/report.json" ] || fail "no report written"
  grep -q '"interrupted": true' "$DIR/report.json" || fail "the report is not marked interrupted"
  grep -Eq "\"pid\": $grandchild,?\$" "$DIR/report.json" || fail "the report does not name the grandchild ($grandchild)"
  grep -q 'left the process group and session; killed at the end of the run' "$DIR/report.json" ||
    fail "the report does not say the grandchild left the session"
}

# One signal: SIGTERM to the group (ignored), SIGKILL 300 ms later.
interrupt 1 2000
# Two: SIGKILL at the second.
interrupt 2 2000
# Three: out at once, the tree killed and the scratch folder removed first.
interrupt 3 2000
echo ok
