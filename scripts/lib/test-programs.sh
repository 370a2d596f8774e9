# Sourced by device scripts: builds the nvcc programs of tests/programs for the GPU of
# this machine, in parallel.
#   build_test_runs BIN_DIR LOG_DIR
# BIN_DIR gets oob_static (nvcc's default: static cudart), oob_shared (-cudart shared),
# use_after_free, misaligned, device_assert, clean, coverage_bugs, and libwrite_past_end.so (the kernel
# of torch_custom_op.py); LOG_DIR gets build.NAME.log for each. NVCC overrides the
# compiler (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc). A failed build is
# named on stdout; the program is then missing.
build_test_runs() {
  local bin=$1 logs=$2
  local programs nvcc
  programs="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/programs"
  nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  mkdir -p "$bin" "$logs"
  one() {  # NAME NVCC-ARGS...
    local name=$1
    shift
    "$nvcc" -O2 -arch=native -o "$bin/$name" "$@" >"$logs/build.$name.log" 2>&1 ||
      echo "building $name failed (see $logs/build.$name.log)"
  }
  one oob_static "$programs/oob_write.cu" &
  one oob_shared -cudart shared "$programs/oob_write.cu" &
  one use_after_free "$programs/use_after_free.cu" &
  one misaligned "$programs/misaligned.cu" &
  one device_assert "$programs/device_assert.cu" &
  one clean "$programs/clean.cu" &
  one coverage_bugs "$programs/coverage_bugs.cu" &
  one libwrite_past_end.so -shared -Xcompiler -fPIC "$programs/write_past_end.cu" &
  wait
}
