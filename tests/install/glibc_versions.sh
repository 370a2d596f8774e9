#!/usr/bin/env bash
# Every ELF file in the build's bin/ (what is installed and carried to GPU nodes: cudadiag,
# the interposer, the ring reader, the device probes) needs no glibc symbol version above
# MAX (2.28: Ubuntu 22.04, RHEL 8/9 and later start them). Reads each file's dynamic
# symbols (objdump -T) and version references (objdump -p) and fails listing every
# symbol and reference above MAX. apps/compat/glibc_symbols.def is where a new one goes.
#
#   glibc_versions.sh BIN_DIR MAX REQUIRED_FILE...
set -uo pipefail
BIN=$1
MAX=$2
shift 2
failed=0
fail() {
  failed=1
  echo "FAIL: $*"
}
command -v objdump >/dev/null || { echo "FAIL: objdump (binutils) is needed"; exit 1; }
for f in "$@"; do
  [ -f "$f" ] || fail "$f was not built"
done

# above VERSION: true when VERSION (2.36, 2.3.4) is above MAX.
above() {
  [ "$1" != "$MAX" ] && [ "$(printf '%s\n%s\n' "$1" "$MAX" | sort -V | tail -1)" = "$1" ]
}

checked=0
for f in "$BIN"/*; do
  [ -f "$f" ] || continue
  [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
  checked=$((checked + 1))
  bad=0
  # Undefined dynamic symbols: "... DF *UND* ... (GLIBC_2.34) pthread_create" (the version
  # is in parentheses for a needed symbol and bare for a defined default one).
  while read -r version name; do
    if above "$version"; then
      fail "$(basename "$f") needs $name@GLIBC_$version"
      bad=1
    fi
  done < <(objdump -T "$f" | awk '$0 ~ /\*UND\*/ && match($0, /GLIBC_[0-9.]+/) {
             print substr($0, RSTART + 6, RLENGTH - 6), $NF }')
  # The version references the loader checks before any symbol (a weak symbol too).
  while read -r version; do
    if above "$version"; then
      fail "$(basename "$f") has a version reference to GLIBC_$version"
      bad=1
    fi
  done < <(objdump -p "$f" | awk '/^Version References:/ { r = 1; next } r && /^[^ ]/ { r = 0 }
             r && match($0, /GLIBC_[0-9.]+/) { print substr($0, RSTART + 6, RLENGTH - 6) }')
  [ $bad = 0 ] && echo "ok: $(basename "$f") needs glibc $MAX or older"
done
[ "$checked" -gt 0 ] || fail "no ELF file in $BIN"
if [ $failed = 0 ]; then
  echo "PASS: $checked files in $BIN need no glibc symbol above $MAX"
  exit 0
fi
echo "(symbols above GLIBC_$MAX: bind them to an older version or define them in apps/compat/glibc_symbols.def)"
exit 1
