#!/usr/bin/env bash
# Install the build dependencies of cudadiag from Debian's packages.
# A no-op when everything is already present; never downloads anything else.
set -euo pipefail

# json-schema-test-suite: the official JSON Schema tests the report schema validator runs
# (tests/report/test_schema_suite.cpp; skipped with a printed reason when absent).
# libpugixml-dev (its static archive) and libutfcpp-dev (headers): linked statically or
# header-only, so the shipped binary depends on neither at run time.
packages=(cmake ninja-build g++ libcli11-dev libfmt-dev libspdlog-dev nlohmann-json3-dev catch2 json-schema-test-suite
          libpugixml-dev libutfcpp-dev)

not_installed() {  # PACKAGE...: prints those dpkg does not have installed
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

apt_install() {  # PACKAGE...
  echo "install-deps: installing $*" >&2
  local sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq && "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$@"
}

mapfile -t missing < <(not_installed "${packages[@]}")
if ((${#missing[@]})); then apt_install "${missing[@]}"; fi

# A test cluster for the Slurm tests (tests/slurm): optional. When the packages cannot
# be installed, those tests say so and are skipped; the build does not depend on them.
# The tests start daemons of their own (own config, key and ports), not the packages'.
mapfile -t slurm_missing < <(not_installed slurmctld slurmd slurm-client munge)
if ((${#slurm_missing[@]})) && ! apt_install "${slurm_missing[@]}"; then
  echo "install-deps: could not install ${slurm_missing[*]}: the Slurm tests will be skipped" >&2
fi

# The CUDA Toolkit is not a Debian package here: nvcc on PATH or under /usr/local/cuda.
if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "install-deps: nvcc not found (PATH or /usr/local/cuda/bin); install the CUDA Toolkit" >&2
  exit 1
fi
