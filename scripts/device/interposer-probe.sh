#!/usr/bin/env bash
# Device check of the interposer (build/bin/libcudadiag_fence.so) in one call, on a GPU
# machine, from anywhere in the repository, with build/ built (cudadiag_fence and
# cudadiag-ring-dump):
#
#   scripts/device/interposer-probe.sh
#
# Builds the nvcc programs of tests/programs (nvcc's default -cudart static, and one
# -cudart shared), then runs every program in three settings:
#   native    as is
#   blocking  CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1
#   fenced    blocking + LD_PRELOAD=libcudadiag_fence.so CUDADIAG_RING=<ring>
# and JAX (platform allocator) and CuPy once, fenced. Prints one table last: exit status,
# the CUDA error in the program's output, allocations the fence saw / fenced, the last
# kernel launched (from the ring), wall time, whether each expectation held; then the
# training loop's final loss per setting (a fence must not change it) and the fenced /
# native wall-time ratio. Exit 0 when every expectation held, 1 otherwise.
# Logs and rings: $OUT/interposer-probe-logs.tar.gz (OUT defaults to ./interposer-probe-out).
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/device/interposer-env.sh interposer-probe

# --- build (in parallel) --------------------------------------------------------------
source scripts/lib/test-programs.sh
build_test_runs "$work/bin" "$logs"
echo "built in $(($(date +%s) - started)) s"

# --- runs -----------------------------------------------------------------------------
# run PROGRAM SETTING TIMEOUT CMD...: log in $logs/PROGRAM.SETTING.log; one line in runs.txt.
run() {
  local program=$1 setting=$2 limit=$3
  shift 3
  local -a env_of=()
  case $setting in
    native*) ;;
    blocking) env_of=(CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1) ;;
    fenced)
      rm -f "$rings/$program.ring"*
      # The interposer's diagnostics go to the log too (stderr; a few lines).
      env_of=(CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 "LD_PRELOAD=$LIB"
        "CUDADIAG_RING=$rings/$program.ring" CUDADIAG_FENCE_DEBUG=1)
      ;;
  esac
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout -k 5 "$limit" env ${env_of[@]+"${env_of[@]}"} "$@" >"$logs/$program.$setting.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  if [[ $setting == fenced ]]; then
    "$DUMP" "$rings/$program.ring" --records >"$logs/$program.fenced.ring.txt" 2>&1
  fi
  echo "$program $setting $rc $t0 $t1" >>"$work/runs.txt"
}

for program in oob_static oob_shared use_after_free misaligned device_assert clean; do
  for setting in native blocking fenced; do
    run "$program" "$setting" 30 "$work/bin/$program"
  done
done
for setting in native blocking fenced; do
  run torch_custom_op "$setting" 90 "$PYTHON" "$PROGRAMS/torch_custom_op.py" "$work/bin/libwrite_past_end.so"
  run triton_no_mask "$setting" 90 "$PYTHON" "$PROGRAMS/triton_no_mask.py"
done
# The loss must not depend on the setting: native twice shows the loop is deterministic.
for setting in native native_repeat blocking fenced; do
  run train_loop "$setting" 120 "$PYTHON" "$PROGRAMS/train_loop.py"
done
if (($(date +%s) - started < 180)); then
  run jax fenced 60 env XLA_PYTHON_CLIENT_ALLOCATOR=platform XLA_PYTHON_CLIENT_PREALLOCATE=false \
    "$PYTHON" "$PROGRAMS/jax_probe.py"
  run cupy fenced 60 "$PYTHON" "$PROGRAMS/cupy_probe.py"
else
  echo "interposer-probe: skipping JAX and CuPy (time budget)"
fi

tar -czSf "$OUT/interposer-probe-logs.tar.gz" -C "$work" logs rings runs.txt
python3 - "$work" "$OUT/interposer-probe-table.txt" <<'PY'
import os
import re
import sys

work, table_path = sys.argv[1], sys.argv[2]
logs = os.path.join(work, "logs")

ERRORS = [  # (pattern in the program's output, short text), most specific first
    (r"illegal memory access", "illegal memory access (700)"),
    (r"misaligned address", "misaligned address (716)"),
    (r"device-side assert", "device-side assert (710)"),
    (r"unspecified launch failure", "unspecified launch failure (719)"),
    (r"out of memory", "out of memory"),
    (r"CUDA error[^\n]{0,60}", None),
    (r"Triton Error[^\n]{0,60}", None),
    (r"Traceback \(most recent call last\)", "python exception"),
]
# What each program must show in each setting: silent (exit 0, no error), ok (the same,
# for a correct program), or the error it must surface.
EXPECT = {
    "oob_static": {"native": "silent", "fenced": "illegal memory access"},
    "oob_shared": {"native": "silent", "fenced": "illegal memory access"},
    "use_after_free": {"fenced": "illegal memory access"},
    "misaligned": {s: "misaligned address" for s in ("native", "blocking", "fenced")},
    "device_assert": {s: "device-side assert" for s in ("native", "blocking", "fenced")},
    "clean": {s: "ok" for s in ("native", "blocking", "fenced")},
    "torch_custom_op": {"native": "silent", "fenced": "illegal memory access"},
    "triton_no_mask": {"native": "silent", "fenced": "illegal memory access"},
    "train_loop": {s: "ok" for s in ("native", "native_repeat", "blocking", "fenced")},
}


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def error_of(text):
    for pattern, label in ERRORS:
        m = re.search(pattern, text)
        if m:
            return label or m.group(0).strip()
    return ""


def ring_of(program):
    fields = {}
    for line in read(os.path.join(logs, f"{program}.fenced.ring.txt")).splitlines():
        if "=" in line and not line.startswith(("allocation ", "launch ")):
            key, _, value = line.partition("=")
            fields[key] = value
    return fields


def exit_text(rc):
    return {124: "timeout", 137: "killed"}.get(rc, f"signal {rc - 128}" if rc > 128 else str(rc))


rows, met, total = [], 0, 0
losses, walls = {}, {}
for line in read(os.path.join(work, "runs.txt")).splitlines():
    program, setting, rc, t0, t1 = line.split()
    rc, wall = int(rc), float(t1) - float(t0)
    text = read(os.path.join(logs, f"{program}.{setting}.log"))
    error = error_of(text)
    allocs, kernel, fenced = "", "", 0
    if setting == "fenced":
        ring = ring_of(program)
        if ring.get("status") == "ok":
            allocs = f"{ring.get('allocations', '?')}/{ring.get('fenced', '?')}"
            fenced = int(ring.get("fenced", "0") or 0)
            kernel = ring.get("last_kernel", "")
        else:
            allocs = f"ring {ring.get('status', 'unreadable')}"
    if program == "train_loop":
        m = re.search(r"final_loss=(\S+)", text)
        losses[setting] = m.group(1) if m else "-"
        walls[setting] = wall
    expected = EXPECT.get(program, {}).get(setting)
    check = "-"
    if expected:
        total += 1
        if expected in ("silent", "ok"):
            good = rc == 0 and not error
        else:
            good = expected in error
        if setting == "fenced" and fenced == 0:
            good = False  # the ring must show that the fence placed the program's buffers
        check = "ok" if good else f"UNEXPECTED (wanted {expected})"
        met += good
    if len(kernel) > 48:
        kernel = kernel[:45] + "..."
    rows.append((program, setting, exit_text(rc), error or "-", allocs or "-", kernel or "-", f"{wall:.1f}", check))

head = ("program", "setting", "exit", "CUDA error in output", "allocs seen/fenced", "last kernel (ring)", "wall s",
        "check")
widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
out = ["== interposer probe"]
out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head] + rows]
out.append("")
out.append("== training loop (a fence must not change results)")
for setting in ("native", "native_repeat", "blocking", "fenced"):
    out.append(f"  {setting:14} final_loss={losses.get(setting, '-')}")
values = [losses.get(s) for s in ("native", "native_repeat", "blocking", "fenced")]
identical = len(set(values)) == 1 and values[0] not in (None, "-")
out.append(f"  identical in every setting: {'yes' if identical else 'NO'}")
total += 1
met += identical
if walls.get("native") and walls.get("fenced"):
    out.append(f"  fenced / native wall time: {walls['fenced'] / walls['native']:.2f}x "
               f"({walls['fenced']:.1f} s / {walls['native']:.1f} s)")
out.append("")
out.append(f"interposer-probe: {met}/{total} expectations met")
text = "\n".join(out)
with open(table_path, "w") as f:
    f.write(text + "\n")
print(text)
sys.exit(0 if met == total else 1)
PY
status=$?
echo "logs: $OUT/interposer-probe-logs.tar.gz (total $(($(date +%s) - started)) s)"
exit $status
