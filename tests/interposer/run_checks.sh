#!/usr/bin/env bash
# CPU checks of libcudadiag_fence.so, one per ctest (tests/interposer/CMakeLists.txt):
#   run_checks.sh CHECK [ARGUMENT]
# Environment: INTERPOSER (the library), FAKE_DRIVER_DIR (holds the fake libcuda.so.1),
# PROBE_LIBRARY_DIR, STATIC_RUNTIME, LINKED_DRIVER, DLSYM_PROBE, RING_DUMP, DEEPBIND_LIBRARY,
# STATIC_CHILD, NATIVE_THREAD, CUDADIAG, IPC_PROBE, MULTI_GPU.
# A probe that dies on a guard exits 139 (SIGSEGV): the fake driver's memory is host
# memory, so a guard the interposer placed is a real unmapped page.
set -uo pipefail
check=${1:?usage: run_checks.sh CHECK [ARGUMENT]}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
readonly SEGV=139

fail() {
  echo "FAIL ($check): $*"
  for f in "$work"/*.out; do
    [[ -f $f ]] && { echo "--- $(basename "$f")"; head -c 4000 "$f"; }
  done
  exit 1
}

# run NAME CMD...: output (stdout and stderr) in $work/NAME.out, status in $work/NAME.rc.
run() {
  local name=$1
  shift
  "$@" >"$work/$name.out" 2>&1
  echo $? >"$work/$name.rc"
}
# Environment assignments for `env`: the interposer preloaded; the fake driver found first.
PRELOAD="LD_PRELOAD=$INTERPOSER"
FAKE="LD_LIBRARY_PATH=$FAKE_DRIVER_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rc_of() { cat "$work/$1.rc"; }
out_of() { cat "$work/$1.out"; }

expect_rc() {  # NAME STATUS
  [[ $(rc_of "$1") == "$2" ]] || fail "$1 exited $(rc_of "$1"), expected $2"
}
expect_line() {  # NAME EXTENDED-REGEX (one whole line)
  grep -Eqx -- "$2" "$work/$1.out" || fail "$1: no line matching '$2'"
}
expect_same() {  # NAME NAME
  cmp -s "$work/$1.out" "$work/$2.out" || fail "$1 and $2 differ: $(diff "$work/$1.out" "$work/$2.out" | head -20)"
}
expect_empty() {  # NAME
  [[ ! -s $work/$1.out ]] || fail "$1 printed something"
}
# cpython VERSION: an interpreter of that minor version (python3.N on PATH, under pyenv,
# in /usr); none: it says so and fails (the caller exits 77: skipped).
cpython() {
  local candidate
  for candidate in "$(command -v "python$1" 2>/dev/null)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/"python$1" \
      /usr/bin/"python$1" /usr/local/bin/"python$1"; do
    if [[ -x $candidate ]] && "$candidate" -c "import sys; sys.exit(sys.version[:${#1}+1] != '$1.')" 2>/dev/null; then
      echo "CPython $1: $candidate" >&2
      echo "$candidate"
      return
    fi
  done
  echo "SKIPPED: no CPython $1 here (python$1 on PATH, under pyenv, in /usr)" >&2
  return 1
}
dump_ring() {  # NAME RING [--records]
  local name=$1 ring=$2
  shift 2
  run "$name" "$RING_DUMP" "$ring" "$@"
  expect_rc "$name" 0
}

case $check in
  quiet_true)
    run true env "$PRELOAD" /bin/true
    expect_rc true 0
    expect_empty true
    # Diagnostics only when asked for, and only on stderr.
    env "$PRELOAD" CUDADIAG_FENCE_DEBUG=1 CUDADIAG_FENCE_ALIGN=24 /bin/true >"$work/debug_stdout.out" 2>"$work/debug.out"
    expect_empty debug_stdout
    expect_line debug 'cudadiag-fence\[[0-9]+\]: ignoring CUDADIAG_FENCE_ALIGN=24 \(invalid value; the default applies\)'
    expect_line debug 'cudadiag-fence\[[0-9]+\]: loaded; no CUDADIAG_RING: fencing without a record'
    ;;

  quiet_shell)
    mkdir "$work/cwd"
    (cd "$work/cwd" && run shell env "$PRELOAD" sh -c 'echo one; /bin/true; ls; echo two')
    expect_rc shell 0
    [[ $(out_of shell) == $'one\ntwo' ]] || fail "the shell printed '$(out_of shell)'"
    [[ -z $(ls -A "$work/cwd") ]] || fail "files appeared: $(ls -A "$work/cwd")"
    ;;

  quiet_python)
    command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
    script='import ctypes, ctypes.util, json, math, subprocess
libm = ctypes.CDLL(ctypes.util.find_library("m"))
libm.cos.restype = ctypes.c_double
libm.cos.argtypes = [ctypes.c_double]
print(json.dumps({"cos": libm.cos(0.0), "sqrt": math.sqrt(2)}))
print(subprocess.run(["sh", "-c", "echo child"], capture_output=True, text=True).stdout.strip())'
    run native python3 -c "$script"
    run fenced env "$PRELOAD" python3 -c "$script"
    expect_rc fenced 0
    expect_same native fenced
    expect_line fenced 'child'
    ;;

  exports)
    run symbols nm -D --defined-only "$INTERPOSER"
    expected='cuGetProcAddress cuGetProcAddress_v2 cuLaunchCooperativeKernel cuLaunchCooperativeKernel_ptsz
      cuLaunchKernel cuLaunchKernelEx cuLaunchKernelEx_ptsz cuLaunchKernel_ptsz cuMemAllocAsync
      cuMemAllocAsync_ptsz cuMemAllocFromPoolAsync cuMemAllocFromPoolAsync_ptsz cuMemAllocHost_v2
      cuMemAllocManaged cuMemAllocPitch_v2 cuMemAlloc_v2 cuMemFreeAsync cuMemFreeAsync_ptsz cuMemFreeHost
      cuMemFree_v2 cuMemHostAlloc cuTensorMapEncodeIm2col cuTensorMapEncodeIm2colWide cuTensorMapEncodeTiled dlsym
      dlopen execve execv execvp execvpe execl execlp execle fexecve execveat posix_spawn posix_spawnp
      cuIpcGetMemHandle cuIpcOpenMemHandle cuIpcOpenMemHandle_v2 cuIpcCloseMemHandle cuMemRetainAllocationHandle
      cuMemExportToShareableHandle cuMemMap cuMemUnmap cuCtxEnablePeerAccess cuCtxDisablePeerAccess
      exit __libc_start_main'
    got=$(awk '{print $3}' "$work/symbols.out" | sort | tr '\n' ' ')
    want=$(echo $expected | tr ' ' '\n' | sort | tr '\n' ' ')
    [[ $got == "$want" ]] || fail "exported: $got"
    run needed readelf -d "$INTERPOSER"
    needed=$(grep NEEDED "$work/needed.out" | grep -Ev 'lib(c|dl|pthread)\.so|ld-linux' || true)
    [[ -z $needed ]] || fail "depends on more than libc: $needed"
    ;;

  ring_loaded_no_cuda)
    run true env CUDADIAG_RING="$work/ring" "$PRELOAD" /bin/true
    expect_rc true 0
    expect_empty true
    dump_ring dump "$work/ring"
    expect_line dump 'status=ok'
    expect_line dump 'loaded=true'
    expect_line dump 'cuda_seen=false'
    expect_line dump 'processes_loaded=1'
    expect_line dump 'allocations=0'
    expect_line dump 'launches=0'
    ;;

  ring_dump_missing)
    run dump "$RING_DUMP" "$work/no-ring"
    expect_rc dump 2
    expect_line dump 'status=missing'
    expect_line dump 'loaded=false'
    grep -q "no-ring: no such file: the interposer never loaded" "$work/dump.out" || fail "no message naming the file"
    printf 'some text' >"$work/foreign"
    run foreign "$RING_DUMP" "$work/foreign"
    expect_rc foreign 2
    expect_line foreign 'status=bad_magic'
    ;;

  dlsym_unchanged)
    export LD_LIBRARY_PATH="$PROBE_LIBRARY_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    run native "$DLSYM_PROBE"
    run fenced env "$PRELOAD" "$DLSYM_PROBE"
    expect_rc native 0
    expect_rc fenced 0
    expect_same native fenced
    expect_line fenced 'cos\(0\)=1'
    expect_line fenced 'printf found=1'
    expect_line fenced 'RTLD_NEXT chain=11'
    expect_line fenced 'RTLD_DEFAULT from a local library=7'
    expect_line fenced 'cuGetProcAddress_v2=\(nil\)'
    expect_line fenced 'cuMemAlloc_v2=\(nil\)'
    expect_line fenced 'dlerror names it=1'
    ;;

  resolve | resolve_internal_pointers)
    [[ $check == resolve_internal_pointers ]] && export FAKE_CUDA_INTERNAL_POINTERS=1
    run native env "$FAKE" "$STATIC_RUNTIME" resolve
    run fenced env "$FAKE" "$PRELOAD" "$STATIC_RUNTIME" resolve
    expect_rc native 0
    expect_rc fenced 0
    # The driver's answers (rc, symbolStatus) are passed through unchanged...
    sed 's/ -> .*//' "$work/native.out" >"$work/native_status.out"
    sed 's/ -> .*//' "$work/fenced.out" >"$work/fenced_status.out"
    expect_same native_status fenced_status
    grep -q ' -> fence' "$work/native.out" && fail "the interposer answered without being preloaded"
    # ... and exactly the hooked variants the driver chose are replaced.
    expect_line fenced 'cuGetProcAddress@12000/0: rc=0 status=0 -> fence:cuGetProcAddress_v2'
    expect_line fenced 'cuGetProcAddress@11030/0: rc=0 status=0 -> fence:cuGetProcAddress'
    expect_line fenced 'cuMemAlloc@12000/0: rc=0 status=0 -> fence:cuMemAlloc_v2'
    expect_line fenced 'cuMemAlloc@3000/0: rc=0 status=0 -> driver:(cuMemAlloc|internal)'
    expect_line fenced 'cuMemFree@13000/1: rc=0 status=0 -> fence:cuMemFree_v2'
    expect_line fenced 'cuMemAllocAsync@12000/2: rc=0 status=0 -> fence:cuMemAllocAsync_ptsz'
    expect_line fenced 'cuMemAllocAsync@12000/1: rc=0 status=0 -> fence:cuMemAllocAsync'
    expect_line fenced 'cuMemAllocAsync@11000/0: rc=500 status=2 -> null'
    expect_line fenced 'cuLaunchKernel@12000/2: rc=0 status=0 -> fence:cuLaunchKernel_ptsz'
    expect_line fenced 'cuLaunchKernel@12000/0: rc=0 status=0 -> fence:cuLaunchKernel'
    expect_line fenced 'cuLaunchKernelEx@12000/2: rc=0 status=0 -> fence:cuLaunchKernelEx'
    expect_line fenced 'cuCtxGetDevice@12000/0: rc=0 status=0 -> driver:(cuCtxGetDevice|internal)'
    expect_line fenced 'cuTensorMapEncodeTiled@12000/0: rc=0 status=0 -> fence:cuTensorMapEncodeTiled'
    expect_line fenced 'cuNoSuchFunction@12000/0: rc=500 status=1 -> null'
    expect_line fenced 'cuMemAlloc@12000 without symbolStatus: rc=0 -> fence:cuMemAlloc_v2'
    ;;

  clean_unchanged)
    run native env "$FAKE" "$STATIC_RUNTIME" clean
    run fenced env "$FAKE" "$PRELOAD" "$STATIC_RUNTIME" clean
    expect_rc native 0
    expect_rc fenced 0
    expect_line native 'clean ok'
    expect_same native fenced
    ;;

  dump_linger)
    # Armed for a GPU core dump and asked to linger: a process that used CUDA waits at its
    # end for its dump (lib/fence/dump_linger.h); one that never did, or one not asked
    # to, ends at once; a dump already there ends the wait once it stops growing.
    ms() { echo $(($(date +%s%N) / 1000000)); }
    armed=(CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 "CUDA_COREDUMP_FILE=$work/core_%p.nvcudmp")
    run native env "$FAKE" "$STATIC_RUNTIME" clean
    t0=$(ms)
    run lingered env "$FAKE" "$PRELOAD" "${armed[@]}" CUDADIAG_DUMP_LINGER_MS=800 "$STATIC_RUNTIME" clean
    took=$(($(ms) - t0))
    expect_rc lingered 0
    expect_same native lingered
    ((took >= 800)) || fail "a CUDA program armed to linger 800 ms ended after $took ms"
    t0=$(ms)
    run no_cuda env "$PRELOAD" "${armed[@]}" CUDADIAG_DUMP_LINGER_MS=3000 sh -c 'exit 3'
    took=$(($(ms) - t0))
    expect_rc no_cuda 3
    ((took < 2000)) || fail "a process that never used CUDA waited $took ms"
    t0=$(ms)
    run not_asked env "$FAKE" "$PRELOAD" "${armed[@]}" "$STATIC_RUNTIME" clean
    took=$(($(ms) - t0))
    expect_rc not_asked 0
    ((took < 2000)) || fail "a program not asked to linger waited $took ms"
    echo dump >"$work/written.nvcudmp"
    t0=$(ms)
    run written env "$FAKE" "$PRELOAD" CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 "CUDA_COREDUMP_FILE=$work/written.nvcudmp" \
      CUDADIAG_DUMP_LINGER_MS=20000 "$STATIC_RUNTIME" clean
    took=$(($(ms) - t0))
    expect_rc written 0
    ((took >= 900 && took < 10000)) || fail "a dump already written ended the wait after $took ms, not about 1 s"
    ;;

  clean_ring)
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$STATIC_RUNTIME" clean
    expect_rc fenced 0
    dump_ring dump "$work/ring" --records
    expect_line dump 'cuda_seen=true'
    expect_line dump "owner_pid=[1-9][0-9]*"
    # 6 buffers, 1 stream-ordered, 1 pitched (fenced); 1 managed, 1 host (recorded only).
    expect_line dump 'allocations=10'
    expect_line dump 'fenced=8'
    expect_line dump 'frees=10'
    expect_line dump 'launches=8'
    expect_line dump 'tma_encodes=2'
    expect_line dump 'tma_near_guard=1'
    expect_line dump 'unfenced=host memory: 1; managed memory: 1'
    expect_line dump 'quarantined_bytes=[1-9][0-9]*'
    expect_line dump 'last_kernel=fill_bytes\(unsigned char\*, unsigned long, int\)'
    expect_line dump 'last_launch=grid\(2,2,2\) block\(64,1,1\) smem=0 stream=0x0 api=cuLaunchKernelEx pointer_args=1 returned=true'
    expect_line dump 'slack_watched=true'
    expect_line dump 'slack_writes=0'
    [[ $(grep -c '^allocation .* side=back freed=true released=false api=' "$work/dump.out") == 8 ]] ||
      fail "expected 8 freed fenced allocations kept in quarantine"
    # Every allocation and launch names the context it ran in and its device (the fake
    # driver's one context, 0x1, on device 0).
    [[ $(grep -c '^allocation .* context=0x1 device=0 ' "$work/dump.out") == 10 ]] ||
      fail "expected 10 allocations made in context 0x1 on device 0"
    [[ $(grep -c '^launch .* context=0x1 .* device=0 api=' "$work/dump.out") == 8 ]] ||
      fail "expected 8 launches made in context 0x1 on device 0"
    expect_line dump 'allocation .* api=cuMemAllocAsync_ptsz reason='
    # Each encoded TMA descriptor with where its base lies: the 1 MiB buffer has 1 MiB
    # mapped after its base, the 4,000-byte one 4,000 bytes (less than TMA's 128 KiB reach).
    big=$(sed -n 's/^allocation .* address=\(0x[0-9a-f]*\) bytes=1048576 .*/\1/p' "$work/dump.out")
    small=$(sed -n 's/^allocation .* address=\(0x[0-9a-f]*\) bytes=4000 .*/\1/p' "$work/dump.out")
    codes='data_type=[0-9]+ rank=2 interleave=[0-9]+ swizzle=[0-9]+ oob_fill=[0-9]+ result=0'
    expect_line dump "tma_map seq=0 api=cuTensorMapEncodeTiled address=$big span_bytes=16384 mapped_after=1048576 allocation_address=$big allocation_bytes=1048576 allocation_seq=[0-9]+ $codes fenced=true near_guard=false past_buffer=false"
    expect_line dump "tma_map seq=1 api=cuTensorMapEncodeTiled address=$small span_bytes=4000 mapped_after=4000 allocation_address=$small allocation_bytes=4000 allocation_seq=[0-9]+ $codes fenced=true near_guard=true past_buffer=false"
    # The fence's own driver calls, counted and timed.
    # The stream-ordered buffer was freed first: the pitched one reuses its memory.
    expect_line dump 'handles_reused=1'
    expect_line dump 'driver_call.cuMemCreate=calls 7 total_us [0-9.]+ mean_us [0-9.]+'
    expect_line dump 'driver_call.cuCtxSynchronize=calls 7 total_us [0-9.]+ mean_us [0-9.]+'
    expect_line dump 'driver_call.cuStreamSynchronize=calls 1 total_us [0-9.]+ mean_us [0-9.]+'
    expect_line dump 'driver_call.kernel_lookup=calls 1 total_us [0-9.]+ mean_us [0-9.]+'
    # Without a quarantine every freed range is given back at once.
    run noq env "$FAKE" CUDADIAG_RING="$work/ring0" CUDADIAG_FENCE_QUARANTINE_MB=0 "$PRELOAD" \
      "$STATIC_RUNTIME" clean
    expect_rc noq 0
    dump_ring dump0 "$work/ring0" --records
    expect_line dump0 'quarantined_bytes=0'
    [[ $(grep -c '^allocation .* side=back .* released=true' "$work/dump0.out") == 8 ]] ||
      fail "expected 8 released fenced allocations"
    ;;

  overrun | overrun_internal_pointers)
    [[ $check == overrun_internal_pointers ]] && export FAKE_CUDA_INTERNAL_POINTERS=1
    run native env "$FAKE" "$STATIC_RUNTIME" overrun
    expect_rc native 0
    expect_line native 'overrun: no fault'
    run fenced env "$FAKE" "$PRELOAD" "$STATIC_RUNTIME" overrun
    expect_rc fenced $SEGV
    # At 256-byte alignment the byte after a 4,000-byte buffer is rounding slack.
    run coarse env "$FAKE" CUDADIAG_FENCE_ALIGN=256 "$PRELOAD" "$STATIC_RUNTIME" overrun
    expect_rc coarse 0
    run off env "$FAKE" CUDADIAG_FENCE_SIDE=none "$PRELOAD" "$STATIC_RUNTIME" overrun
    expect_rc off 0
    ;;

  kernel_overrun_ring)
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$STATIC_RUNTIME" kernel-overrun
    expect_rc fenced $SEGV
    # The process died inside the launch: the ring still says what ran, on what.
    dump_ring dump "$work/ring" --records
    expect_line dump 'status=ok'
    expect_line dump 'allocations=1'
    expect_line dump 'fenced=1'
    expect_line dump 'launches=1'
    expect_line dump 'last_kernel=fill_bytes\(unsigned char\*, unsigned long, int\)'
    # It never returned: the record says so.
    expect_line dump 'last_launch=grid\(1,1,1\) block\(32,1,1\) smem=0 stream=0x0 api=cuLaunchKernel_ptsz pointer_args=1 returned=false'
    address=$(sed -n 's/^allocation .* address=\(0x[0-9a-f]*\) .*/\1/p' "$work/dump.out")
    expect_line dump "launch seq=0 .* pointer_args=$address"
    ;;

  end_wait)
    # A kernel that faulted on a guard while the launch did not block, in a program that
    # never waits for it: the fence's wait at the program's end finds it, the ring records
    # it, and the program's exit status stays its own.
    run fenced env "$FAKE" FAKE_CUDA_ASYNC_FAULT=1 CUDADIAG_RING="$work/ring" "$PRELOAD" "$STATIC_RUNTIME" kernel-overrun
    expect_rc fenced 0
    expect_line fenced 'kernel-overrun: no fault'
    dump_ring dump "$work/ring"
    expect_line dump 'end_wait_result=700'
    # A program that ends clean leaves nothing there.
    run clean env "$FAKE" CUDADIAG_RING="$work/ring-clean" "$PRELOAD" "$STATIC_RUNTIME" clean
    expect_rc clean 0
    dump_ring dump_clean "$work/ring-clean"
    expect_line dump_clean 'end_wait_result=0'
    # cudadiag run: the fence rung is a CUDA error found by that wait, and exposes it.
    export LD_LIBRARY_PATH="$FAKE_DRIVER_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    run verdict env FAKE_CUDA_ASYNC_FAULT=1 "$CUDADIAG" run --rungs native,fence --sanitize never --no-kernel-log \
      --no-coredump --format json -o "$work/verdict.json" -- "$STATIC_RUNTIME" kernel-overrun
    expect_rc verdict 1
    grep -q '"verdict": "exposed"' "$work/verdict.json" || fail "the run is not exposed"
    grep -q "in the fence's wait at the program's end" "$work/verdict.json" || fail "the end wait is not named"
    ;;

  ring_identity)
    # Who recorded, once at start: the pid, the executable and the launcher's rank; and the
    # device it used, with the UUID and PCI bus id the driver gave.
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" RANK=1 LOCAL_RANK=1 WORLD_SIZE=2 \
      SLURM_PROCID=0 "$STATIC_RUNTIME" clean
    expect_rc fenced 0
    dump_ring dump "$work/ring"
    pid=$(sed -n 's/^owner_pid=//p' "$work/dump.out")
    expect_line dump "process pid=$pid rank=1 local_rank=1 world_size=2 rank_from=RANK local_rank_from=LOCAL_RANK world_size_from=WORLD_SIZE exe=.*/interposer_static_runtime"
    expect_line dump 'devices=1'
    expect_line dump 'device ordinal=0 uuid_result=0 bus_id_result=0 uuid=GPU-fa4e0000-0000-0000-0000-000000000000 pci_bus_id=0000:00:06.0'
    # No launcher: no rank; srun's task id when it is the only launcher.
    run bare env -u RANK -u LOCAL_RANK -u WORLD_SIZE -u SLURM_PROCID "$FAKE" CUDADIAG_RING="$work/ring_bare" \
      "$PRELOAD" "$STATIC_RUNTIME" clean
    dump_ring dump_bare "$work/ring_bare"
    expect_line dump_bare 'process pid=[0-9]+ rank=-1 local_rank=-1 world_size=-1 rank_from= local_rank_from= world_size_from= exe=.*'
    run srun env -u RANK -u LOCAL_RANK -u WORLD_SIZE "$FAKE" CUDADIAG_RING="$work/ring_srun" SLURM_PROCID=3 \
      SLURM_NTASKS=4 "$PRELOAD" "$STATIC_RUNTIME" clean
    dump_ring dump_srun "$work/ring_srun"
    expect_line dump_srun 'process pid=[0-9]+ rank=3 local_rank=-1 world_size=4 rank_from=SLURM_PROCID local_rank_from= world_size_from=SLURM_NTASKS exe=.*'
    ;;

  slack_write_ring)
    # One byte past a 4,002-byte buffer lands in the 14 bytes of slack before the guard:
    # no fault, but the canary there changed, seen when the buffer is freed.
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$STATIC_RUNTIME" slack-overrun
    expect_rc fenced 0
    expect_line fenced 'slack-overrun: no fault'
    dump_ring dump "$work/ring"
    expect_line dump 'slack_writes=1'
    expect_line dump 'slack_write allocation_seq=0 address=0x[0-9a-f]+ bytes=4002 first_offset=0 last_offset=0 slack_bytes=14 pid=[0-9]+ seen at free'
    # Without the interposer the same program is as silent.
    run native env "$FAKE" "$STATIC_RUNTIME" slack-overrun
    expect_rc native 0
    ;;

  alloc_site)
    # Where each buffer was made: the host call stack at allocation, named from the
    # program's own symbols by the parent, and in a Python program the user's line.
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$STATIC_RUNTIME" slack-overrun
    expect_rc fenced 0
    dump_ring dump "$work/ring" --records
    expect_line dump 'stacks_captured=true'
    expect_line dump 'sites=1'
    expect_line dump 'allocated_at seq=0 host: .*(main|misuse)[^ ]*\+0x[0-9a-f]+ \(interposer_static_runtime\).*'
    # CUDADIAG_RING_SITES=0: nothing captured, nothing named.
    run off env "$FAKE" CUDADIAG_RING="$work/ring-off" CUDADIAG_RING_SITES=0 "$PRELOAD" "$STATIC_RUNTIME" slack-overrun
    expect_rc off 0
    dump_ring dump_off "$work/ring-off" --records
    expect_line dump_off 'stacks_captured=false'
    grep -q '^allocated_at' "$work/dump_off.out" && fail "a site was named with CUDADIAG_RING_SITES=0"
    # The run's verdict names the allocation's site next to the slack write.
    export LD_LIBRARY_PATH="$FAKE_DRIVER_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    run verdict "$CUDADIAG" run --rungs native,fence --sanitize never --no-kernel-log --format json -- "$STATIC_RUNTIME" slack-overrun
    expect_rc verdict 1
    grep -Eq '#0 was allocated at host: .*\(interposer_static_runtime\)' "$work/verdict.out" ||
      fail "the verdict does not say where #0 was allocated"
    command -v python3 >/dev/null || { echo "SKIPPED: python3 not installed (the Python half)"; exit 0; }
    # PyDLL keeps the interpreter's lock during the call (as an extension that allocates
    # under it); CDLL releases it (as PyTorch and CuPy do around their operators): the
    # frames are read either way (python_line checks each CPython in detail).
    cat >"$work/alloc.py" <<'PY'
import ctypes
import sys

cuda = (ctypes.PyDLL if sys.argv[1] == "held" else ctypes.CDLL)("libcuda.so.1")
assert cuda.cuInit(0) == 0


def make_buffer(n):
    p = ctypes.c_uint64()
    assert cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0
    return p.value


p = make_buffer(4002)
ctypes.memset(p + 4002, 7, 1)  # one byte past the end, into the slack
assert cuda.cuMemFree_v2(ctypes.c_uint64(p)) == 0
print("python: done")
PY
    for mode in held released; do
      run "py_$mode" env CUDADIAG_RING="$work/ring-$mode" "$PRELOAD" python3 "$work/alloc.py" $mode
      expect_rc "py_$mode" 0
      dump_ring "dump_$mode" "$work/ring-$mode" --records
      expect_line "dump_$mode" 'allocated_at seq=0 [^ ]*alloc\.py:10 in make_buffer'
      run "pyverdict_$mode" "$CUDADIAG" run --rungs native,fence --sanitize never --no-kernel-log --format json -- \
        python3 "$work/alloc.py" $mode
      expect_rc "pyverdict_$mode" 1
      grep -Eq '#0 was allocated at [^ ]*alloc\.py:10 in make_buffer' "$work/pyverdict_$mode.out" ||
        fail "the verdict does not name the Python line that allocated #0 ($mode)"
    done
    ;;

  python_line)
    # The Python line of each allocation on one CPython (ARGUMENT: 3.9 ... 3.13), with the
    # interpreter's lock released (CDLL) and held (PyDLL): a plain call, a deep stack, a
    # package installed in site-packages whose 30 frames of its own come before the
    # user's, a generator, a thread of the program's, a thread of a native library (no
    # Python code on it), and functions whose names are not ASCII.
    version=${2:?python_line needs a version}
    python=$(cpython "$version") || exit 77
    package="$work/lib/python$version/site-packages/fakepkg"
    mkdir -p "$package"
    cat >"$package/__init__.py" <<'PY'
import ctypes


def make(cuda, n, depth=30):
    if depth:
        return make(cuda, n, depth - 1)
    p = ctypes.c_uint64()
    assert cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0  # package
    return p.value
PY
    cat >"$work/lines.py" <<'PY'
import ctypes
import sys
import threading

mode, site_packages, native_thread = sys.argv[1:4]
sys.path.insert(0, site_packages)
import fakepkg  # noqa: E402

cuda = (ctypes.PyDLL if mode == "held" else ctypes.CDLL)("libcuda.so.1")
assert cuda.cuInit(0) == 0


def alloc(n):
    p = ctypes.c_uint64()
    assert cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0  # alloc
    return p.value


def deeper(k, n):
    return alloc(n) if k == 0 else deeper(k - 1, n)


class Model:
    def step(self, n):
        return fakepkg.make(cuda, n)  # step


def produce(n):
    yield alloc(n)


def on_thread(n, out):
    out.append(alloc(n))


def größe(n):
    p = ctypes.c_uint64()
    assert cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0  # latin
    return p.value


def 分配(n):
    p = ctypes.c_uint64()
    assert cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)) == 0  # wide
    return p.value


alloc(1000)
deeper(40, 1001)
Model().step(1002)
next(produce(1003))
made = []
worker = threading.Thread(target=on_thread, args=(1004, made))
worker.start()
worker.join()
assert made
native = ctypes.CDLL(native_thread)
native.alloc_on_own_thread.restype = ctypes.c_uint64
assert native.alloc_on_own_thread(ctypes.cast(cuda.cuMemAlloc_v2, ctypes.c_void_p), ctypes.c_size_t(1005))
größe(1006)
分配(1007)
print("python: done")
PY
    line_of() { grep -n "# $1\$" "$2" | cut -d: -f1; }
    at=$(line_of alloc "$work/lines.py")
    step=$(line_of step "$work/lines.py")
    inner=$(line_of package "$package/__init__.py")
    latin=$(line_of latin "$work/lines.py")
    wide=$(line_of wide "$work/lines.py")
    for mode in released held; do
      run "lines_$mode" env "$FAKE" CUDADIAG_RING="$work/ring-$mode" CUDADIAG_FENCE_DEBUG=1 "$PRELOAD" "$python" \
        "$work/lines.py" $mode "$work/lib/python$version/site-packages" "$NATIVE_THREAD"
      expect_rc "lines_$mode" 0
      expect_line "lines_$mode" 'python: done'
      # Every stack was read with the unwind tables (x86-64), none with backtrace.
      if [[ $(uname -m) == x86_64 ]]; then
        expect_line "lines_$mode" 'cudadiag-fence\[[0-9]+\]: allocation sites: [0-9]+ worked out in full, 0 host stacks read by backtrace'
      fi
      dump_ring "dump_$mode" "$work/ring-$mode" --records
      for seq in 0 1 3 4; do
        expect_line "dump_$mode" "allocated_at seq=$seq [^ ]*/lines\.py:$at in alloc"
      done
      expect_line "dump_$mode" "allocated_at seq=2 [^ ]*/lines\.py:$step in step \(innermost: [^ ]*/site-packages/fakepkg/__init__\.py:$inner in make\)"
      expect_line "dump_$mode" "allocated_at seq=5 host: .* \(no Python line: the allocating thread was running no Python code .*\)"
      # Names that are not ASCII (one byte and two bytes a character), read in place.
      expect_line "dump_$mode" "allocated_at seq=6 [^ ]*/lines\.py:$latin in größe"
      expect_line "dump_$mode" "allocated_at seq=7 [^ ]*/lines\.py:$wide in 分配"
    done
    ;;

  python_unreadable)
    # An interpreter outside 3.9 to 3.13 (ARGUMENT: 3.8): no frame of it is read, and the
    # site says why.
    python=$(cpython "${2:?python_unreadable needs a version}") || exit 77
    cat >"$work/old.py" <<'PY'
import ctypes

cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
p = ctypes.c_uint64()
assert cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(1000)) == 0
print("python: done")
PY
    run old env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$python" "$work/old.py"
    expect_rc old 0
    dump_ring dump "$work/ring" --records
    expect_line dump "allocated_at seq=0 host: .* \(no Python line: the interpreter is not one whose frames the interposer reads \(CPython 3\.9 to 3\.13 with the GIL\)\)"
    ;;

  underrun_front)
    run back env "$FAKE" "$PRELOAD" "$STATIC_RUNTIME" underrun
    expect_rc back 0
    run front env "$FAKE" CUDADIAG_FENCE_SIDE=front "$PRELOAD" "$STATIC_RUNTIME" underrun
    expect_rc front $SEGV
    ;;

  use_after_free)
    run native env "$FAKE" "$STATIC_RUNTIME" use-after-free
    expect_rc native 0
    run fenced env "$FAKE" "$PRELOAD" "$STATIC_RUNTIME" use-after-free
    expect_rc fenced $SEGV
    ;;

  double_free)
    run native env "$FAKE" "$STATIC_RUNTIME" double-free
    run fenced env "$FAKE" "$PRELOAD" "$STATIC_RUNTIME" double-free
    expect_line native 'second free: 1'
    expect_same native fenced
    ;;

  vmm_failure_falls_back)
    export FAKE_CUDA_FAIL_CREATE=1
    run native env "$FAKE" "$STATIC_RUNTIME" clean
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$STATIC_RUNTIME" clean
    expect_rc fenced 0
    expect_same native fenced
    dump_ring dump "$work/ring"
    expect_line dump 'allocations=10'
    expect_line dump 'fenced=0'
    expect_line dump 'unfenced=VMM failed: cuMemCreate returned 2: 8; host memory: 1; managed memory: 1'
    ;;

  linked_driver_overrun)
    run native "$LINKED_DRIVER" overrun
    expect_rc native 0
    run clean env "$PRELOAD" "$LINKED_DRIVER" clean
    expect_rc clean 0
    expect_line clean 'clean: no fault'
    run fenced env "$PRELOAD" "$LINKED_DRIVER" overrun
    expect_rc fenced $SEGV
    ;;

  fork_child_records_apart)
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$STATIC_RUNTIME" fork
    expect_rc fenced 0
    expect_line fenced 'child exit=0'
    dump_ring parent "$work/ring"
    expect_line parent 'allocations=1'
    expect_line parent 'other_cuda_processes=1'
    expect_line parent 'process_files=1'
    child_ring=$(ls "$work"/ring.[0-9]*)
    dump_ring child "$child_ring"
    expect_line child 'allocations=1'
    expect_line child 'frees=1'
    ;;

  handle_reuse)
    # 30 buffer lives of 1, 2 and 4 granules: memory is created once per size and reused;
    # each life maps, grants access, waits for the context and unmaps once (and the
    # program's end waits once more: end_wait).
    run native env "$FAKE" "$STATIC_RUNTIME" cycles 30
    run fenced env "$FAKE" FAKE_CUDA_STATS="$work/stats.out" CUDADIAG_RING="$work/ring" "$PRELOAD" \
      "$STATIC_RUNTIME" cycles 30
    expect_rc fenced 0
    expect_line native 'cycles=30 checksum=[0-9]+'
    expect_same native fenced
    for line in cuMemCreate=3 cuMemRelease=0 cuMemMap=30 cuMemSetAccess=30 cuMemUnmap=30 cuCtxSynchronize=31 \
      cuMemAddressReserve=30 cuMemAddressFree=0; do
      expect_line stats "$line"
    done
    dump_ring dump "$work/ring"
    expect_line dump 'fenced=30'
    expect_line dump 'handles_reused=27'
    expect_line dump 'reservations_reused=0'
    expect_line dump 'driver_call.cuMemCreate=calls 3 .*'
    expect_line dump 'driver_call.cuMemMap=calls 30 .*'
    grep -q '^driver_call.cuMemRelease=' "$work/dump.out" && fail "memory was released instead of reused"
    # Without a quarantine, freed address ranges serve the next buffer of their size too.
    run noq env "$FAKE" FAKE_CUDA_STATS="$work/stats_noq.out" CUDADIAG_RING="$work/ring_noq" \
      CUDADIAG_FENCE_QUARANTINE_MB=0 "$PRELOAD" "$STATIC_RUNTIME" cycles 30
    expect_same native noq
    expect_line stats_noq 'cuMemAddressReserve=3'
    expect_line stats_noq 'cuMemAddressFree=0'
    dump_ring dump_noq "$work/ring_noq"
    expect_line dump_noq 'reservations_reused=27'
    # CUDADIAG_FENCE_REUSE_MB=0: every buffer's memory is created and released.
    run noreuse env "$FAKE" FAKE_CUDA_STATS="$work/stats_noreuse.out" CUDADIAG_FENCE_REUSE_MB=0 "$PRELOAD" \
      "$STATIC_RUNTIME" cycles 30
    expect_same native noreuse
    expect_line stats_noreuse 'cuMemCreate=30'
    expect_line stats_noreuse 'cuMemRelease=30'
    ;;

  recycle)
    # CUDADIAG_FENCE_RECYCLE_MB: 30 buffer lives of 1, 2 and 4 granules make one mapping per
    # size; every later life reuses a freed buffer's mapping without a driver call (the
    # context wait of the free stays: the free must not return before queued work ends;
    # one more at the program's end).
    run native env "$FAKE" "$STATIC_RUNTIME" cycles 30
    run fenced env "$FAKE" FAKE_CUDA_STATS="$work/stats.out" CUDADIAG_RING="$work/ring" CUDADIAG_FENCE_RECYCLE_MB=64 \
      "$PRELOAD" "$STATIC_RUNTIME" cycles 30
    expect_rc fenced 0
    expect_same native fenced
    for line in cuMemCreate=3 cuMemMap=3 cuMemSetAccess=3 cuMemUnmap=0 cuMemRelease=0 cuCtxSynchronize=31 \
      cuMemAddressReserve=3; do
      expect_line stats "$line"
    done
    dump_ring dump "$work/ring"
    expect_line dump 'fenced=30'
    expect_line dump 'recycled=27'
    expect_line dump 'recycle_limit_bytes=67108864'
    # A recycled buffer is placed flush against the guard: an overrun still faults.
    run overrun env "$FAKE" CUDADIAG_FENCE_RECYCLE_MB=64 "$PRELOAD" "$STATIC_RUNTIME" recycle-overrun
    expect_rc overrun $SEGV
    expect_line overrun 'recycled=yes'
    expect_line overrun 'last byte written'
    # The price: a freed buffer stays mapped, so a use after free of it does not fault.
    run uaf env "$FAKE" CUDADIAG_FENCE_RECYCLE_MB=64 "$PRELOAD" "$STATIC_RUNTIME" reuse-after-free
    expect_rc uaf 0
    expect_line uaf 'use after free: no fault'
    ;;

  reuse_after_free)
    run native env "$FAKE" "$STATIC_RUNTIME" reuse-after-free
    expect_rc native 0
    expect_line native 'use after free: no fault'
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$STATIC_RUNTIME" reuse-after-free
    expect_rc fenced $SEGV
    expect_line fenced 'fresh address=yes'
    # The second buffer has the first one's memory, as it was (cudaMalloc promises no
    # contents, and the driver's own allocator reuses memory the same way), mapped at a
    # fresh address: the first one's address still faults.
    expect_line fenced 'previous bytes=yes'
    dump_ring dump "$work/ring"
    expect_line dump 'handles_reused=1'
    expect_line dump 'driver_call.cuMemCreate=calls 1 .*'
    # A failed unmap leaves the mapping: that memory must never serve another buffer.
    run unmap_fails env "$FAKE" FAKE_CUDA_FAIL_UNMAP=1 FAKE_CUDA_STATS="$work/stats_unmap.out" "$PRELOAD" \
      "$STATIC_RUNTIME" reuse-after-free
    expect_rc unmap_fails 0
    expect_line unmap_fails 'previous bytes=no'
    expect_line stats_unmap 'cuMemCreate=2'
    expect_line stats_unmap 'cuMemRelease=1'
    ;;

  reuse_out_of_memory)
    # 256 KiB of device memory: three freed 64 KiB buffers are kept, a 256 KiB one needs
    # them back. It must still be fenced, not refused or left to the driver.
    run fenced env "$FAKE" FAKE_CUDA_MEMORY_KB=256 FAKE_CUDA_STATS="$work/stats.out" CUDADIAG_RING="$work/ring" \
      "$PRELOAD" "$STATIC_RUNTIME" big-after-small
    expect_rc fenced 0
    expect_line fenced 'big allocation ok'
    expect_line stats 'cuMemRelease=3'
    dump_ring dump "$work/ring"
    expect_line dump 'fenced=4'
    expect_line dump 'unfenced='
    ;;

  huge_allocation)
    # SIZE_MAX and sizes whose round-up to granules and a guard wraps: the driver answers.
    run native env "$FAKE" "$STATIC_RUNTIME" huge
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$STATIC_RUNTIME" huge
    expect_rc fenced 0
    expect_same native fenced
    grep -q 'rc=0' "$work/fenced.out" && fail "a huge allocation succeeded under the interposer"
    dump_ring dump "$work/ring"
    expect_line dump 'fenced=0'
    ;;

  ring_open_safety)
    # CUDADIAG_RING through a link: not followed (nothing created or written where it
    # points), the program unharmed.
    printf 'keep' >"$work/target"
    ln -s "$work/target" "$work/ring"
    ln -s "$work/made-through-a-link" "$work/dangling"
    run linked env "$FAKE" CUDADIAG_RING="$work/dangling" CUDADIAG_FENCE_DEBUG=1 "$PRELOAD" "$STATIC_RUNTIME" clean
    expect_rc linked 0
    [[ -e $work/made-through-a-link ]] && fail "a ring was created through a link"
    run linked2 env "$FAKE" CUDADIAG_RING="$work/ring" CUDADIAG_FENCE_DEBUG=1 "$PRELOAD" "$STATIC_RUNTIME" clean
    expect_rc linked2 0
    [[ $(cat "$work/target") == keep ]] || fail "the ring was written through a link"
    grep -q 'symbolic link: not followed' "$work/linked2.out" || fail "no word of the link"
    # A FIFO is not opened for writing as a ring (and never blocks the program).
    mkfifo "$work/fifo"
    run fifo timeout 20 env "$FAKE" CUDADIAG_RING="$work/fifo" "$PRELOAD" "$STATIC_RUNTIME" clean
    expect_rc fifo 0
    # The per-process file of a second CUDA process: created exclusively, never through a
    # link planted at its predictable name. The first program claims the ring; the second
    # (the shell's pid, kept by exec) finds the link at "<ring>.<pid>".
    rm -f "$work/ring"
    printf 'keep' >"$work/target2"
    run first env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$STATIC_RUNTIME" clean
    expect_rc first 0
    run second env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" bash -c \
      'ln -s "$1" "$2.$$"; exec "$3" clean' _ "$work/target2" "$work/ring" "$STATIC_RUNTIME"
    expect_rc second 0
    [[ $(cat "$work/target2") == keep ]] || fail "a per-process ring was written through a link"
    # A ring file of another user is refused.
    if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
      install -m 0666 -o 65534 /dev/null "$work/theirs"
      run theirs env "$FAKE" CUDADIAG_RING="$work/theirs" CUDADIAG_FENCE_DEBUG=1 "$PRELOAD" "$STATIC_RUNTIME" clean
      expect_rc theirs 0
      [[ ! -s $work/theirs ]] || fail "root wrote into a ring file of another user"
      grep -q 'belongs to another user' "$work/theirs.out" || fail "no word of the owner"
    else
      echo "SKIPPED: the other-user part needs root and setpriv"
    fi
    ;;

  ring_no_room)
    # TMPDIR on a 64 KiB tmpfs: the ring's blocks cannot be reserved. The program must
    # not die of SIGBUS; the fence stays on (an overrun still faults) and the ring says why
    # nothing was recorded.
    if [[ $(id -u) != 0 ]] || ! command -v unshare >/dev/null; then
      echo "SKIPPED: needs root and unshare for a private 64 KiB tmpfs"
      exit 0
    fi
    mkdir -p "$work/small"
    cat >"$work/inside.sh" <<'EOS'
set -u
mount -t tmpfs -o size=64k tmpfs "$1/small" || { echo "SKIPPED: cannot mount a tmpfs"; exit 0; }
# Others' files leave two pages free.
head -c 57344 /dev/zero >"$1/small/others"
env "$2" CUDADIAG_RING="$1/small/ring" "$3" "$4" clean >"$1/clean.out" 2>&1; echo $? >"$1/clean.rc"
env "$2" CUDADIAG_RING="$1/small/ring2" "$3" "$4" overrun >"$1/overrun.out" 2>&1; echo $? >"$1/overrun.rc"
"$5" "$1/small/ring" >"$1/dump.out" 2>&1; echo $? >"$1/dump.rc"
df -k "$1/small" >"$1/df.out"
# cudadiag run with its TMPDIR there: the program is not blamed, the report says why
# nothing was recorded. Room for a header: the fence counted, the run is judged.
rm -f "$1/small/ring" "$1/small/ring2"
env "$2" TMPDIR="$1/small" "$6" run --rungs fence --sanitize never --no-kernel-log -- "$4" clean \
  >"$1/run.out" 2>&1; echo $? >"$1/run.rc"
# No room at all: nothing could see, and it says why.
head -c 8192 /dev/zero >"$1/small/more" 2>/dev/null
env "$2" TMPDIR="$1/small" "$6" run --rungs fence --sanitize never --no-kernel-log -- "$4" clean \
  >"$1/full.out" 2>&1; echo $? >"$1/full.rc"
EOS
    unshare -m bash "$work/inside.sh" "$work" "$FAKE" "$PRELOAD" "$STATIC_RUNTIME" "$RING_DUMP" "$CUDADIAG" \
      >"$work/unshare.out" 2>&1 ||
      { echo "SKIPPED: unshare -m failed: $(head -c 300 "$work/unshare.out")"; exit 0; }
    if grep -q SKIPPED "$work/unshare.out"; then cat "$work/unshare.out"; exit 0; fi
    expect_rc clean 0
    expect_line clean 'clean ok'
    expect_rc overrun $SEGV
    expect_rc dump 0
    expect_line dump 'status=no_room'
    expect_line dump 'fenced=8'
    expect_line dump 'ring_note=the ring could not be written: no room in .*/small .*allocations and launches were not recorded'
    expect_rc run 0
    expect_line run 'Verdict: clean'
    grep -q 'fence: the ring could not be written: no room in' "$work/run.out" || fail "the run's report does not say why"
    expect_rc full 1
    expect_line full 'Verdict: inconclusive'
    grep -q 'the ring could not be written: no room in' "$work/full.out" || fail "the full run's report does not say why"
    ;;

  exec_env_cleared | spawn_empty_env)
    # A launcher that starts the program with a cleaned environment: the interposer puts
    # itself back, the overrun in the child faults, and the ring says so.
    how=env-i
    [[ $check == spawn_empty_env ]] && how=spawn-empty
    run native env "$FAKE" "$STATIC_RUNTIME" "$how" overrun
    expect_rc native 0
    expect_line native 'overrun: no fault'
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$STATIC_RUNTIME" "$how" overrun
    expect_rc fenced $SEGV
    expect_line fenced 'child killed by signal 11'
    dump_ring dump "$work/ring"
    expect_line dump 'preloads_restored=[1-9]'
    expect_line dump 'escapes=0'
    expect_line dump "process_event pid=[0-9]+ escaped=false program=.*(env|static_runtime) what=LD_PRELOAD restored"
    ;;

  exec_static_no_escape)
    # A statically linked program cannot load libcuda.so: it cannot use CUDA, so it did
    # not escape the fence (Triton runs the static /sbin/ldconfig).
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$STATIC_RUNTIME" exec "$STATIC_CHILD"
    expect_rc fenced 0
    expect_line fenced 'static child ran'
    dump_ring dump "$work/ring"
    expect_line dump 'escapes=0'
    if grep -q "escaped=true" "$work/dump.out"; then fail "a static program was recorded as an escape"; fi
    ;;

  deepbind_cuda)
    run native env "$FAKE" PROBE_DEEPBIND_LIBRARY="$DEEPBIND_LIBRARY" "$STATIC_RUNTIME" deepbind
    expect_rc native 0
    run fenced env "$FAKE" PROBE_DEEPBIND_LIBRARY="$DEEPBIND_LIBRARY" CUDADIAG_RING="$work/ring" "$PRELOAD" \
      "$STATIC_RUNTIME" deepbind
    expect_rc fenced 0
    expect_line fenced 'deepbind: no fault'
    dump_ring dump "$work/ring"
    expect_line dump 'cuda_seen=false'
    expect_line dump 'escapes=1'
    expect_line dump "process_event pid=[0-9]+ escaped=true program=.*deepbind_user.* what=CUDA loaded with RTLD_DEEPBIND: calls from it bypass the fence"
    ;;

  run_follows_exec)
    # cudadiag run: never clean when a process escaped or used CUDA unfenced; a child
    # the restored preload fences is exposed.
    export LD_LIBRARY_PATH="$FAKE_DRIVER_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    run envi "$CUDADIAG" run --rungs native,fence --sanitize never --no-kernel-log -- "$STATIC_RUNTIME" env-i overrun
    expect_rc envi 1
    expect_line envi 'Verdict: exposed'
    # A static program cannot use CUDA: no escape, and a run of nothing but it is clean.
    run static "$CUDADIAG" run --rungs native,fence --sanitize never --no-kernel-log -- "$STATIC_RUNTIME" exec \
      "$STATIC_CHILD"
    expect_rc static 0
    expect_line static 'Verdict: clean'
    if grep -q 'escaped' "$work/static.out"; then fail "a static program is named as an escape"; fi
    run deep env PROBE_DEEPBIND_LIBRARY="$DEEPBIND_LIBRARY" "$CUDADIAG" run --rungs native,fence --sanitize never \
      --no-kernel-log -- "$STATIC_RUNTIME" deepbind
    expect_rc deep 1
    expect_line deep 'Verdict: inconclusive'
    grep -q 'RTLD_DEEPBIND' "$work/deep.out" || fail "RTLD_DEEPBIND is not named"
    ;;

  run_installed_path_with_space)
    # Installed under a folder whose path holds a space and a colon: LD_PRELOAD would split
    # it; the run preloads a link at a safe path and the one-byte overrun is exposed.
    dir="$work/opt dir:x/bin"
    mkdir -p "$dir"
    cp "$CUDADIAG" "$INTERPOSER" "$dir"/
    export LD_LIBRARY_PATH="$FAKE_DRIVER_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    run spaced "$dir/cudadiag" run --rungs native,fence --sanitize never --no-kernel-log -- "$STATIC_RUNTIME" overrun
    expect_rc spaced 1
    expect_line spaced 'Verdict: exposed'
    # And with a TMPDIR that holds a space too.
    mkdir -p "$work/tmp dir"
    run spaced_tmp env TMPDIR="$work/tmp dir" "$dir/cudadiag" run --rungs native,fence --sanitize never \
      --no-kernel-log -- "$STATIC_RUNTIME" overrun
    expect_rc spaced_tmp 1
    expect_line spaced_tmp 'Verdict: exposed'
    ls -d /tmp/cudadiag-preload-* 2>/dev/null | grep -q . && fail "a private preload directory was left behind"
    ;;

  ring_dump_usage)
    run usage "$RING_DUMP" --no-such-flag
    expect_rc usage 2
    run none "$RING_DUMP"
    expect_rc none 2
    run help "$RING_DUMP" --help
    expect_rc help 0
    # A kernel name is the program's text: a control sequence in it is shown escaped.
    seed="$(dirname "$0")/../fuzz/seeds/ring_reader/records.ring"
    command -v python3 >/dev/null || { echo "SKIPPED: the escaping part needs python3"; exit 0; }
    python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); open(sys.argv[2],"wb").write(d.replace(b"kernel\0", b"\x1b[2Jk!\0"))' \
      "$seed" "$work/ring"
    run records "$RING_DUMP" "$work/ring" --records
    expect_rc records 0
    grep -q $'\x1b' "$work/records.out" && fail "a raw escape byte reached the output"
    grep -qF 'kernel=\x1b[2Jk!' "$work/records.out" || fail "the kernel name is not shown escaped"
    ;;

  ipc_legacy_unchanged)
    # A buffer handed to a child over CUDA IPC: the same with and without the interposer,
    # and with the fence off (the driver's own legacy handle, passed through unchanged).
    run native env "$FAKE" "$IPC_PROBE" legacy
    expect_rc native 0
    expect_line native 'importer: opened twice at one address: yes'
    expect_line native 'importer: first byte 7'
    expect_line native 'importer: closed; a third close: 1'
    expect_line native 'exporter: the child wrote the buffer: yes'
    run fenced env "$FAKE" "$PRELOAD" "$IPC_PROBE" legacy
    expect_rc fenced 0
    expect_same native fenced
    run off env "$FAKE" CUDADIAG_FENCE_SIDE=none CUDADIAG_RING="$work/ring" "$PRELOAD" "$IPC_PROBE" legacy
    expect_same native off
    child_ring=$(ls "$work"/ring.[0-9]*)
    dump_ring off_importer "$child_ring" --records
    # The driver's import is recorded, not fenced, with its size from the driver.
    expect_line off_importer 'ipc_imports=0'
    expect_line off_importer 'allocation seq=0 address=0x[0-9a-f]+ bytes=4000 .* side=none freed=true released=true api=cuIpcOpenMemHandle_v2 reason=imported over CUDA IPC, not fenced by its exporter'
    ;;

  ipc_fenced_handle)
    # A fenced buffer handed out with the interposer's own handle: the child maps it against
    # a guard of its own, and its ring names the exporter's process and allocation.
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$IPC_PROBE" legacy
    expect_rc fenced 0
    dump_ring exporter "$work/ring" --records
    expect_line exporter 'fenced=1'
    expect_line exporter 'ipc_exports=1'
    expect_line exporter 'ipc_failures=0'
    exporter_pid=$(sed -n 's/^owner_pid=//p' "$work/exporter.out")
    child_ring=$(ls "$work"/ring.[0-9]*)
    dump_ring importer "$child_ring" --records
    expect_line importer 'ipc_imports=1'
    expect_line importer 'fenced=1'
    expect_line importer 'ipc_failures=0'
    expect_line importer "allocation seq=0 address=0x[0-9a-f]+ bytes=4000 .* guard_begin=0x[1-9a-f][0-9a-f]* .* origin_pid=$exporter_pid origin_seq=0 guard_wanted=[0-9]+ side=back freed=true released=true api=cuIpcOpenMemHandle_v2 reason="
    # The guard sits right after the buffer in the child too.
    line=$(grep '^allocation seq=0 ' "$work/importer.out")
    address=$(sed -n 's/.* address=\(0x[0-9a-f]*\) .*/\1/p' <<<"$line")
    guard=$(sed -n 's/.* guard_begin=\(0x[0-9a-f]*\) .*/\1/p' <<<"$line")
    ((address + 4000 == guard)) || fail "the import ends at $((address + 4000)), its guard begins at $((guard))"
    # The launch passed the imported buffer is recorded with it.
    expect_line importer "launch seq=0 .* pointer_args=$address"
    ;;

  ipc_overrun_in_importer)
    # One byte past the imported buffer: silent without the interposer (the driver's
    # mapping has slack), a fault on the child's own guard under it.
    run native env "$FAKE" "$IPC_PROBE" legacy overrun
    expect_rc native 0
    expect_line native 'exporter: done'
    run fenced env "$FAKE" "$PRELOAD" "$IPC_PROBE" legacy overrun
    expect_rc fenced $SEGV
    expect_line fenced 'exporter: child killed by signal 11'
    # With the fake driver's kernel log: the launch fails with an illegal address, and the
    # Xid line names the child's pid and the guard's page.
    : >"$work/kmsg"
    run logged env "$FAKE" FAKE_CUDA_KMSG="$work/kmsg" CUDADIAG_RING="$work/ring" "$PRELOAD" "$IPC_PROBE" legacy overrun
    expect_rc logged 1
    expect_line logged 'importer: FAILED: cuLaunchKernel returned 700 \(CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered\)'
    child_ring=$(ls "$work"/ring.[0-9]*)
    child_pid=${child_ring##*.}
    dump_ring importer "$child_ring" --records
    guard=$(sed -n 's/^allocation seq=0 .* guard_begin=0x\([0-9a-f]*\) .*/\1/p' "$work/importer.out")
    page=$(printf '0x%x_%08x' $((0x$guard >> 32)) $((0x$guard & 0xffffffff)))
    grep -q "Xid (PCI:0000:00:06): 31, pid=$child_pid, .* faulted @ $page\." "$work/kmsg" ||
      fail "no Xid line of process $child_pid at $page: $(cat "$work/kmsg")"
    ;;

  ipc_not_exportable)
    # A device without POSIX file descriptor handles: fenced memory cannot be handed out;
    # the program gets the driver's answer for VMM memory, and the ring says why.
    run fenced env "$FAKE" FAKE_CUDA_NO_FD_HANDLES=1 CUDADIAG_RING="$work/ring" "$PRELOAD" "$IPC_PROBE" legacy
    expect_rc fenced 1
    expect_line fenced 'exporter: FAILED: cuIpcGetMemHandle returned 1 \(CUDA_ERROR_INVALID_VALUE\)'
    dump_ring dump "$work/ring"
    expect_line dump 'ipc_exports=0'
    expect_line dump 'ipc_failures=1'
    expect_line dump 'ipc_failure allocation_seq=0 pid=[0-9]+ peer_pid=0 result=1 cuMemExportToShareableHandle refused the fenced buffer.s memory'
    # Memory the program maps itself has no legacy handle, with or without the interposer.
    run native_own env "$FAKE" "$IPC_PROBE" own-legacy
    expect_line native_own 'exporter: cuIpcGetMemHandle of mapped memory: 1'
    run fenced_own env "$FAKE" "$PRELOAD" "$IPC_PROBE" own-legacy
    expect_same native_own fenced_own
    ;;

  ipc_retained_export)
    # cuMemRetainAllocationHandle and cuMemExportToShareableHandle on a fenced buffer: the
    # child maps its memory from the file descriptor; freed, that memory is not reused for
    # the next buffer of its size (the child may still map it).
    run native env "$FAKE" "$IPC_PROBE" retain
    expect_rc native 0
    expect_line native 'exporter: cuMemRetainAllocationHandle: 1 \(not VMM memory\)'
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$IPC_PROBE" retain
    expect_rc fenced 0
    expect_line fenced 'importer: mapped 65536 bytes and filled them'
    expect_line fenced 'exporter: the child wrote the buffer: yes'
    expect_line fenced 'exporter: a new buffer of its size holds what the child wrote: no'
    dump_ring dump "$work/ring"
    expect_line dump 'ipc_exports=1'
    expect_line dump 'handles_reused=0'
    # Without the export the freed buffer's memory serves the next one.
    run reuse env "$FAKE" CUDADIAG_RING="$work/ring2" "$PRELOAD" "$STATIC_RUNTIME" reuse-after-free
    dump_ring dump2 "$work/ring2"
    expect_line dump2 'handles_reused=1'
    ;;

  ipc_program_mappings)
    # Memory the program maps itself is recorded, not fenced, in both processes; the child
    # imports it through the driver's own shareable handle.
    run native env "$FAKE" "$IPC_PROBE" own
    expect_rc native 0
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$IPC_PROBE" own
    expect_rc fenced 0
    expect_same native fenced
    expect_line fenced 'exporter: the child wrote the buffer: yes'
    dump_ring exporter "$work/ring" --records
    expect_line exporter 'program_mappings=1'
    expect_line exporter 'fenced=0'
    expect_line exporter 'allocation seq=0 address=0x[0-9a-f]+ bytes=65536 .* device=0 .* side=none freed=true released=true api=cuMemMap reason=mapped by the program itself \(cuMemMap\)'
    child_ring=$(ls "$work"/ring.[0-9]*)
    dump_ring importer "$child_ring" --records
    expect_line importer 'program_mappings=1'
    expect_line importer 'allocation seq=0 .* bytes=65536 .* api=cuMemMap reason=mapped by the program itself \(cuMemMap\)'
    ;;

  free_waits_on_owner)
    # A buffer of device 0 freed while device 1 is current: its own context is waited for
    # (pushed, synchronized, popped) before its memory is unmapped, not device 1's.
    export FAKE_CUDA_DEVICES=2
    run fenced env "$FAKE" FAKE_CUDA_TRACE="$work/trace.out" "$PRELOAD" "$MULTI_GPU" cross-free
    expect_rc fenced 0
    expect_line fenced 'freed with device 1 current'
    buffer=$(sed -n 's/^buffer=//p' "$work/fenced.out")
    # The calls from the switch to device 1 on, in order.
    sed -n '/^cuCtxSetCurrent ctx=0x2$/,$p' "$work/trace.out" >"$work/after_switch.out"
    unmap=$(grep -n "^cuMemUnmap 0x[0-9a-f]* device=0$" "$work/after_switch.out" | head -1 | cut -d: -f1)
    sync=$(grep -n '^cuCtxSynchronize ctx=0x1$' "$work/after_switch.out" | head -1 | cut -d: -f1)
    [[ -n $unmap ]] || fail "device 0's buffer $buffer was not unmapped after device 1 became current"
    [[ -n $sync ]] || fail "device 0's context was never synchronized after device 1 became current"
    ((sync < unmap)) || fail "device 0's buffer was unmapped (line $unmap) before its context was synchronized (line $sync)"
    expect_line after_switch 'cuCtxPushCurrent ctx=0x1'
    expect_line after_switch 'cuCtxPopCurrent ctx=0x1'
    # The thread's own context is current again after the free.
    [[ $(tail -1 "$work/after_switch.out") != 'cuCtxPushCurrent ctx=0x1' ]] || fail "device 0's context left pushed"
    grep -q '^cuCtxSynchronize ctx=0x2$' "$work/after_switch.out" && fail "device 1's context was synchronized for device 0's buffer"
    ;;

  peer_access_followed)
    # A kernel on device 0 reading device 1's memory: an illegal address natively without
    # peer access, and so under the fence; after cuCtxEnablePeerAccess it works, for a
    # buffer made before and one made after, and after cuCtxDisablePeerAccess it faults
    # again; device 1 keeps its own buffers all along.
    export FAKE_CUDA_DEVICES=2
    run native env "$FAKE" "$MULTI_GPU" peer
    expect_rc native 0
    expect_line native 'device 0 writes device 1.s buffer without peer access: 700'
    expect_line native 'enabled again: 704'
    expect_line native 'with peer access, a buffer made before: 0'
    expect_line native 'with peer access, a buffer made after: 0'
    expect_line native 'after disabling peer access: 700 700'
    expect_line native 'device 1 writes its own buffers: 0 0'
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$MULTI_GPU" peer
    expect_rc fenced 0
    expect_same native fenced
    dump_ring dump "$work/ring"
    expect_line dump 'fenced=2'
    ;;

  threads_launch_recorded)
    # 8 threads on two devices, 500 launches each: every launch counted and kept (the ring
    # has room for all), each with its thread's device.
    export FAKE_CUDA_DEVICES=2
    run fenced env "$FAKE" CUDADIAG_RING="$work/ring" CUDADIAG_RING_LAUNCHES=8192 "$PRELOAD" "$MULTI_GPU" threads 8 500
    expect_rc fenced 0
    expect_line fenced 'launches=4000'
    dump_ring dump "$work/ring" --records
    expect_line dump 'launches=4000'
    [[ $(grep -c '^launch seq=' "$work/dump.out") == 4000 ]] || fail "$(grep -c '^launch seq=' "$work/dump.out") launch records kept of 4000"
    [[ $(sed -n 's/^launch seq=\([0-9]*\) .*/\1/p' "$work/dump.out" | sort -un | wc -l) == 4000 ]] ||
      fail "launch records do not hold 4000 distinct launches"
    [[ $(grep -c '^launch seq=.* context=0x1 .* device=0 .* returned=true' "$work/dump.out") == 2000 ]] ||
      fail "expected 2000 returned launches on device 0"
    [[ $(grep -c '^launch seq=.* context=0x2 .* device=1 .* returned=true' "$work/dump.out") == 2000 ]] ||
      fail "expected 2000 returned launches on device 1"
    ;;

  fork_exec_while_launching)
    # fork + exec and vfork + exec, 100 of each, while 4 threads launch and load and
    # unload a library: every child runs (none hangs on a lock another thread held at the
    # fork, none crashes in the hook between vfork and exec), and every one loaded the
    # interposer and recorded into the run's ring file.
    export FAKE_CUDA_DEVICES=2
    run fenced timeout 120 env "$FAKE" CUDADIAG_RING="$work/ring" "$PRELOAD" "$MULTI_GPU" fork-exec 100
    [[ $(rc_of fenced) != 124 ]] || fail "fork/vfork + exec hung"
    expect_rc fenced 0
    expect_line fenced 'fork\+exec children ok: 100 of 100'
    expect_line fenced 'vfork\+exec children ok: 100 of 100'
    dump_ring dump "$work/ring"
    expect_line dump 'processes_loaded=201'
    expect_line dump 'escapes=0'
    ;;

  *)
    fail "unknown check"
    ;;
esac
echo "ok ($check)"
