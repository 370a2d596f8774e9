# The start both interposer device scripts share (interposer-probe.sh, fence-bench.sh):
#   source scripts/device/interposer-env.sh NAME
# from the repository root. Sets OUT (default ./NAME-out), BIN (build/bin), LIB (the
# interposer), DUMP (cudadiag-ring-dump), NVCC, PYTHON, PROGRAMS; checks that the built
# tools are there (exit 2 otherwise); makes a work folder ($work, with logs/, rings/,
# bin/; removed on exit) and notes the start ($started); prints the header line and
# the GPU.
interposer_env_name=${1:?usage: source scripts/device/interposer-env.sh NAME}
OUT=${OUT:-$PWD/$interposer_env_name-out}
BIN=${BIN:-$PWD/build/bin}
LIB=$BIN/libcudadiag_fence.so
DUMP=$BIN/cudadiag-ring-dump
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
PYTHON=${PYTHON:-python3}  # the one with torch (and triton, jax, cupy)
PROGRAMS=tests/programs
mkdir -p "$OUT"
for f in "$LIB" "$DUMP" "$NVCC"; do
  [[ -x $f || -f $f ]] || {
    echo "$interposer_env_name: $f not found (build cudadiag_fence and cudadiag-ring-dump first)" >&2
    exit 2
  }
done
work=$(mktemp -d "/tmp/$interposer_env_name.XXXXXX")
trap 'rm -rf "$work"' EXIT
logs=$work/logs
rings=$work/rings
mkdir -p "$logs" "$rings" "$work/bin"
started=$(date +%s)

echo "== $interposer_env_name on $(hostname) at $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "nvidia-smi not available"
