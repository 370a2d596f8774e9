#!/usr/bin/env bash
# The install layout a GPU node gets, from the build tree (no GPU, no root needed):
#   1. `cmake --install` into an empty prefix gives bin/cudadiag, bin/cudadiag-ring-dump,
#      lib/cudadiag/libcudadiag_fence.so and the Slurm files;
#   2. the installed binary finds the interposer in ../lib/cudadiag (run's report names it
#      and never says it is missing), and writes a report that `compare` reads;
#   3. the man page and the bash completion, made from the binary's options, are
#      installed and work (subcommands, a subcommand's options, an option's choices;
#      hidden commands never offered);
#   4. the CPack archive and the .deb hold the same layout;
#   5. the README and docs/*.md are installed side by side, so the README's links resolve.
#
#   install_test.sh BUILD_DIR [CPACK]   # CPACK: the CPack of the configuring CMake
set -uo pipefail
BUILD=$1
CPACK=${2:-$(command -v cpack)}
T=$(mktemp -d "${TMPDIR:-/tmp}/cudadiag-install-test.XXXXXX")
failed=0
trap 'if [ $failed = 0 ]; then rm -rf "$T"; else echo "(files kept in $T)"; fi' EXIT
fail() {
  failed=1
  echo "FAIL: $*"
}

PREFIX=$T/prefix
cmake --install "$BUILD" --prefix "$PREFIX" >"$T/install.log" 2>&1 || fail "cmake --install: $(tail -3 "$T/install.log")"
for f in bin/cudadiag bin/cudadiag-ring-dump lib/cudadiag/libcudadiag_fence.so \
         share/cudadiag/slurm/cudadiag-fleet.sbatch share/cudadiag/slurm/cudadiag-healthcheck \
         share/cudadiag/slurm/nhc/cudadiag.nhc share/doc/cudadiag/README.md \
         share/man/man1/cudadiag.1 share/bash-completion/completions/cudadiag; do
  [ -e "$PREFIX/$f" ] || fail "installed prefix lacks $f"
done
[ -x "$PREFIX/bin/cudadiag" ] || fail "bin/cudadiag is not executable"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
for doc in "$SRC"/docs/*.md; do
  cmp -s "$doc" "$PREFIX/share/doc/cudadiag/docs/$(basename "$doc")" ||
    fail "installed prefix lacks share/doc/cudadiag/docs/$(basename "$doc") (or it differs from docs/)"
done
for link in $(grep -o '](docs/[^)#]*' "$SRC/README.md" | sed 's/^](//' | sort -u); do
  [ -e "$PREFIX/share/doc/cudadiag/$link" ] || fail "the installed README links to $link, which is not installed"
done

# The installed binary, run from elsewhere, preloads the installed interposer.
cd "$T" || exit 1
"$PREFIX/bin/cudadiag" run --rungs native,fence --sanitize never -o "$T/run.json" -- /bin/true 2>"$T/run.err"
rc=$?
[ $rc -le 3 ] || fail "installed cudadiag run exited $rc: $(tail -3 "$T/run.err")"
[ -s "$T/run.json" ] || fail "installed cudadiag run wrote no report (-o run.json)"
if grep -q 'interposer was not found' "$T/run.json"; then
  fail "the installed binary did not find lib/cudadiag/libcudadiag_fence.so: $(grep -m1 -o '"missing_reason": "[^"]*"' "$T/run.json")"
fi
grep -q "lib/cudadiag/libcudadiag_fence.so" "$T/run.json" || fail "run's report does not name the installed interposer"
"$PREFIX/bin/cudadiag" compare "$T/run.json" "$T/run.json" >/dev/null 2>"$T/compare.err"
[ $? -le 1 ] || fail "compare of the installed binary's report: $(tail -2 "$T/compare.err")"

# The man page: every subcommand a section, options with their roff-escaped dashes.
MAN=$PREFIX/share/man/man1/cudadiag.1
for want in '^\.TH CUDADIAG 1' '^\.SS cudadiag repro' '^\.SS cudadiag run' '^\.SS cudadiag show' \
            '^\.B \\-o, \\-\\-output FILE' '^\.SH EXIT STATUS'; do
  grep -q "$want" "$MAN" || fail "man page lacks $want"
done
grep -q '^\.SS cudadiag docs\|^\.SS cudadiag run\-case' "$MAN" && fail "man page shows a hidden command"
if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
  [ -z "$warnings" ] || fail "groff warns about the man page: $(head -3 <<<"$warnings")"
fi

# The completion, as bash runs it.
complete_words() {  # WORD... : the COMPREPLY for the last word
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cudadiag; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$PREFIX/share/bash-completion/completions/cudadiag" "$@"
}
complete_words cudadiag re | grep -qx repro || fail "completion: 'cudadiag re' does not offer repro"
complete_words cudadiag "" | grep -qx docs && fail "completion offers the hidden docs command"
complete_words cudadiag run --fen | grep -qx -- --fence-front || fail "completion: 'run --fen' does not offer --fence-front"
[ "$(complete_words cudadiag repro --format "" | sort | tr '\n' ' ')" = "json md text " ] ||
  fail "completion: 'repro --format' offers '$(complete_words cudadiag repro --format "" | tr '\n' ' ')'"

# Packages.
if [ ! -x "$CPACK" ]; then
  echo "skipped: the packages: $CPACK (the CPack of the CMake that configured this build) is not on this machine"
else
  (cd "$T" && "$CPACK" --config "$BUILD/CPackConfig.cmake" -B "$T/pkg" >"$T/cpack.log" 2>&1) ||
    fail "cpack: $(tail -5 "$T/cpack.log")"
  tgz=$(ls "$T"/pkg/cudadiag-*.tar.gz 2>/dev/null | head -1)
  if [ -z "$tgz" ]; then
    fail "cpack wrote no .tar.gz"
  else
    # As the README installs it: into an empty prefix, one level stripped.
    mkdir -p "$T/from-archive"
    tar -C "$T/from-archive" --strip-components=1 -xzf "$tgz" || fail "tar could not unpack $(basename "$tgz")"
    for f in bin/cudadiag bin/cudadiag-ring-dump lib/cudadiag/libcudadiag_fence.so share/cudadiag/slurm; do
      [ -e "$T/from-archive/$f" ] || fail "$(basename "$tgz") unpacked with --strip-components=1 lacks $f"
    done
    "$T/from-archive/bin/cudadiag" --version >/dev/null || fail "the archive's bin/cudadiag does not start"
  fi
  deb=$(ls "$T"/pkg/cudadiag*.deb 2>/dev/null | head -1)
  if [ -z "$deb" ]; then
    fail "cpack wrote no .deb"
  elif command -v dpkg-deb >/dev/null; then
    list=$(dpkg-deb -c "$deb")
    for f in opt/cudadiag/bin/cudadiag opt/cudadiag/lib/cudadiag/libcudadiag_fence.so; do
      grep -q "\./$f\$" <<<"$list" || fail "$(basename "$deb") lacks /$f"
    done
  fi
fi
[ $failed = 0 ] && echo "PASS: install layout, installed run finds its interposer, archive and .deb"
exit $failed
