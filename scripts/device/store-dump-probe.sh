#!/usr/bin/env bash
# When does the driver write a GPU core dump for a store onto unmapped memory? (run on the
# device; not a test). tests/coredump/data/guard_write.cu stores one element past a buffer
# that ends flush against an unmapped granule; it runs armed in several ways, and so does
# tests/programs/oob_write.cu under `cudadiag run` (its fence rung's site run), three times.
# Prints one line per try: how it was armed, the program's exit and sync result, the dump's
# size. Dumps and outputs land in $OUT/store-dumps.tar.gz.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-./gpu-check-out}
mkdir -p "$OUT"
work=$(mktemp -d)
d="$work/store-dumps"
mkdir -p "$d"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDADIAG=${CUDADIAG:-$PWD/build/bin/cudadiag}
"$NVCC" -O2 -lineinfo -arch=native -o "$work/guard_write" tests/coredump/data/guard_write.cu -lcuda || exit 1
light=skip_nonrelocated_elf_images,skip_global_memory,skip_shared_memory,skip_local_memory,skip_constbank_memory
try() {  # NAME FLAGS LINGER [ENV=VALUE...]
  local name=$1 flags=$2 linger=$3
  shift 3
  env "$@" CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 CUDA_COREDUMP_FILE="$d/$name.nvcudmp" \
    CUDA_COREDUMP_GENERATION_FLAGS="$flags" timeout 60 "$work/guard_write" "$linger" >"$d/$name.out" 2>&1
  local rc=$?
  sleep 1
  printf '%-28s exit %-3s %-28s dump %s bytes\n' "$name" "$rc" "$(grep -o 'sync: .*' "$d/$name.out")" \
    "$(stat -c %s "$d/$name.nvcudmp" 2>/dev/null || echo 0)"
}
timeout 60 "$work/guard_write" 0 >"$d/unarmed.out" 2>&1
printf '%-28s exit %-3s %s\n' unarmed "$?" "$(grep -o 'sync: .*' "$d/unarmed.out")"
try abort-exit "$light" 0
try abort-linger5 "$light" 5
try skipabort-exit "$light,skip_abort" 0
try skipabort-linger5 "$light,skip_abort" 5
try full-abort-linger5 "" 5
try lightweight-linger5 "$light" 5 CUDA_ENABLE_LIGHTWEIGHT_COREDUMP=1
if [[ -x $CUDADIAG ]]; then
  "$NVCC" -O2 -lineinfo -arch=native -I tests/programs -o "$work/oob_write" tests/programs/oob_write.cu || exit 1
  for i in 1 2 3; do
    mkdir -p "$d/run$i"
    "$CUDADIAG" run --rungs native,fence --coredump --keep-dumps "$d/run$i" --format json \
      -o "$d/run$i.json" -- "$work/oob_write" >"$d/run$i.out" 2>&1
    printf '%-28s dumps: %s\n' "cudadiag-run-$i" "$(ls -l "$d/run$i" | grep -c nvcudmp)"
  done
fi
for f in "$d"/*.nvcudmp "$d"/run*/*.nvcudmp; do
  [[ -s $f ]] && timeout 60 cuda-gdb -batch -ex "target cudacore $f" -ex 'p $errorpc' -ex 'x/3i $errorpc' >"$f.cuda-gdb.txt" 2>&1
done
tar -C "$work" -czf "$OUT/store-dumps.tar.gz" store-dumps
rm -rf "$work"
