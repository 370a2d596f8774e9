#!/usr/bin/env bash
# Where the fence rung's time goes on tests/programs/gpt_loop.py: each of its settings
# alone and together, interleaved, REPEATS times; loop_seconds and wall time per run and
# the interposer's driver calls from its ring.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPEATS=${REPEATS:-2}
source scripts/device/interposer-env.sh gpt-cost
SETTINGS=${SETTINGS:-"native caching_off launch_blocking blocking fenced fenced_nolb"}
for repeat in $(seq 1 "$REPEATS"); do
  for setting in $SETTINGS; do
    env_of=(-u PYTORCH_CUDA_ALLOC_CONF -u PYTORCH_ALLOC_CONF -u CUDA_LAUNCH_BLOCKING -u PYTORCH_NO_CUDA_MEMORY_CACHING -u LD_PRELOAD)
    ring=$rings/$setting.$repeat.ring
    case $setting in
      caching_off) env_of+=(PYTORCH_NO_CUDA_MEMORY_CACHING=1) ;;
      launch_blocking) env_of+=(CUDA_LAUNCH_BLOCKING=1) ;;
      blocking) env_of+=(CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1) ;;
      fenced) env_of+=(CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 "LD_PRELOAD=$LIB" "CUDADIAG_RING=$ring") ;;
      fenced_recycle) env_of+=(CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 "LD_PRELOAD=$LIB" "CUDADIAG_RING=$ring" CUDADIAG_FENCE_RECYCLE_MB=4096) ;;
      fenced_recycle_nolb) env_of+=(PYTORCH_NO_CUDA_MEMORY_CACHING=1 "LD_PRELOAD=$LIB" "CUDADIAG_RING=$ring" CUDADIAG_FENCE_RECYCLE_MB=4096) ;;
      fenced_nolb) env_of+=(PYTORCH_NO_CUDA_MEMORY_CACHING=1 "LD_PRELOAD=$LIB" "CUDADIAG_RING=$ring") ;;
      fenced_env) env_of+=(CUDA_LAUNCH_BLOCKING=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1 "LD_PRELOAD=$LIB" "CUDADIAG_RING=$ring" ${EXTRA_ENV:-}) ;;
    esac
    t0=$(date +%s.%N)
    timeout -k 5 180 env "${env_of[@]}" "$PYTHON" "$PROGRAMS/gpt_loop.py" >"$logs/$setting.$repeat.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    loop=$(grep -o 'loop_seconds[ =:]*[0-9.]*' "$logs/$setting.$repeat.log" | grep -o '[0-9.]*$')
    loss=$(grep -o 'final_loss[ =:]*[0-9.]*' "$logs/$setting.$repeat.log" | grep -o '[0-9.]*$')
    printf '%-16s %s rc=%s wall=%s loop=%s loss=%s\n' "$setting" "$repeat" "$rc" "$(python3 -c "print(round($t1 - $t0, 2))")" "$loop" "$loss"
    [[ $rc == 0 ]] || tail -5 "$logs/$setting.$repeat.log"
    if [[ -f $ring ]]; then
      "$DUMP" "$ring" >"$logs/$setting.$repeat.ring.txt" 2>&1
      grep -E '^(driver_call|allocations|frees|launches|handles_reused|reservations_reused|recycle|slack)' "$logs/$setting.$repeat.ring.txt" | sed 's/^/    /' | head -40
      rm -f "$ring"*
    fi
  done
done
tar -czf "$OUT/gpt-cost-logs.tar.gz" -C "$work" logs
