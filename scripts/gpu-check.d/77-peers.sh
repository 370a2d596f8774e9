#!/usr/bin/env bash
# Several GPUs and several host threads under `cudadiag run --rungs native,fence` (nvcc
# programs written here, built with nvcc's default static cudart):
#   peer_no_enable    GPU 0's kernel reads a buffer of GPU 1 without cudaDeviceEnablePeerAccess:
#                     an illegal address natively, and under the fence too (its buffers are
#                     granted to the peers the program enabled, no more): the verdict is not
#                     clean and neither rung is ok
#   peer_enabled      the same read after cudaDeviceEnablePeerAccess(1): clean on both rungs
#   free_other_device the buffer GPU 0's running kernel writes is freed while GPU 1 is current
#                     (cudaSetDevice(1); cudaFree): the free waits for GPU 0's work before the
#                     fence unmaps it; clean on both rungs
#   threads_launch    one GPU: 4 host threads, each launching 1,000 small kernels on a stream of
#                     its own: clean, and the fence rung counted all 4,000 launches
# The first three need two GPUs (on one: "skipped: needs 2 GPUs", and the section passes).
# Reports under $OUT/77-peers.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
dir="$OUT/77-peers"
rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/progs"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')

cat >"$dir/progs/peers.cu" <<'CU'
// peers no-enable | enable | free-other-device
#include <cstdio>
#include <cstring>

#define CHECK(call)                                                                     \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      std::printf("%s failed: %s (%d)\n", #call, cudaGetErrorString(e_), (int)e_);     \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

__global__ void sum_into(const float* in, float* out, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int r = 0; r < rounds; ++r) acc += in[(i + r) % n];
  out[i] = acc;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  if (count < 2) {
    std::printf("needs 2 GPUs, found %d\n", count);
    return 3;
  }
  const int n = 1 << 20;
  float *remote = nullptr, *local = nullptr;
  CHECK(cudaSetDevice(1));
  CHECK(cudaMalloc(&remote, n * sizeof(float)));
  CHECK(cudaMemset(remote, 0, n * sizeof(float)));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaSetDevice(0));
  CHECK(cudaMalloc(&local, n * sizeof(float)));
  const bool enable = std::strcmp(mode, "no-enable") != 0;
  if (enable) {
    int can = 0;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
    if (!can) {
      std::printf("GPU 0 cannot access GPU 1 as a peer\n");
      return 3;
    }
    CHECK(cudaDeviceEnablePeerAccess(1, 0));
  }
  const int rounds = std::strcmp(mode, "free-other-device") == 0 ? 20000 : 4;
  sum_into<<<n / 256, 256>>>(remote, local, n, rounds);
  CHECK(cudaGetLastError());
  if (std::strcmp(mode, "free-other-device") == 0) {
    // GPU 0's kernel still runs: freed from GPU 1, its output must stay until it ends.
    CHECK(cudaSetDevice(1));
    CHECK(cudaFree(local));
    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceSynchronize());
    std::printf("freed from GPU 1 while GPU 0's kernel ran\n");
  } else {
    CHECK(cudaDeviceSynchronize());
    float first = -1.0f;
    CHECK(cudaMemcpy(&first, local, sizeof first, cudaMemcpyDeviceToHost));
    std::printf("read GPU 1's buffer from GPU 0: first sum %.1f\n", first);
    CHECK(cudaFree(local));
  }
  CHECK(cudaSetDevice(1));
  CHECK(cudaFree(remote));
  return 0;
}
CU

cat >"$dir/progs/threads_launch.cu" <<'CU'
// 4 host threads, each launching 1,000 small kernels on a stream of its own.
#include <cstdio>
#include <thread>
#include <vector>

__global__ void add_one(int* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += 1;
}

int main() {
  constexpr int kThreads = 4, kLaunches = 1000, kN = 1024;
  std::vector<int> ok(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &ok] {
      cudaStream_t s = nullptr;
      int* v = nullptr;
      if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return;
      if (cudaMallocAsync(&v, kN * sizeof(int), s) != cudaSuccess) return;
      if (cudaMemsetAsync(v, 0, kN * sizeof(int), s) != cudaSuccess) return;
      for (int i = 0; i < kLaunches; ++i) add_one<<<kN / 256, 256, 0, s>>>(v, kN);
      int host[kN];
      if (cudaMemcpyAsync(host, v, sizeof host, cudaMemcpyDeviceToHost, s) != cudaSuccess) return;
      if (cudaStreamSynchronize(s) != cudaSuccess) return;
      bool right = true;
      for (int i = 0; i < kN; ++i) right = right && host[i] == kLaunches;
      ok[t] = right && cudaFreeAsync(v, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess &&
              cudaStreamDestroy(s) == cudaSuccess;
    });
  }
  for (auto& th : threads) th.join();
  int good = 0;
  for (int v : ok) good += v;
  std::printf("threads with every launch counted on the GPU: %d of %d\n", good, kThreads);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("sync: %s\n", cudaGetErrorString(e));
  return good == kThreads && e == cudaSuccess ? 0 : 1;
}
CU

build() {  # NAME SOURCE
  "$nvcc" -O2 -lineinfo -arch=native -o "$dir/bin/$1" "$2" >"$dir/build.$1.log" 2>&1 ||
    echo "building $1 failed (see $dir/build.$1.log)"
}
build peers "$dir/progs/peers.cu" &
build threads_launch "$dir/progs/threads_launch.cu" &
wait

run() {  # NAME CMD...: the report in NAME.json
  local name=$1
  shift
  "$CUDADIAG" run --rungs native,fence --sanitize never --timeout 180 --format json -o "$dir/$name.json" -- "$@" \
    >"$dir/$name.out" 2>"$dir/$name.err"
  echo $? >"$dir/$name.rc"
  echo "$name: exit $(cat "$dir/$name.rc"); verdict $(status "$name"); rungs $(rungs "$name")"
}
status() { jget "$dir/$1.json" 'd["verdict"]["status"]'; }
rungs() { jget "$dir/$1.json" '",".join(r["profile"] + "=" + r["outcome"] for r in d["results"])'; }
outcome() { jget "$dir/$1.json" "[r['outcome'] for r in d['results'] if r['profile'] == '$2'][0]"; }
launches() {
  jget "$dir/$1.json" "[r['details']['fence']['summary']['launches'] for r in d['results'] if r['profile'] == 'fence'][0]"
}

echo
if [[ -x $dir/bin/threads_launch ]]; then
  run threads_launch "$dir/bin/threads_launch"
else
  echo "threads_launch was not built"
fi
if ((gpus >= 2)); then
  for mode in no-enable enable free-other-device; do
    [[ -x $dir/bin/peers ]] && run "peers_$mode" "$dir/bin/peers" "$mode"
  done
fi

echo
printf "%-40s %-40s %-40s %s\n" CHECK OBSERVED EXPECTED RESULT
row "threads_launch verdict" "$(status threads_launch)" clean
row "threads_launch native rung" "$(outcome threads_launch native)" ok
row "threads_launch fence rung" "$(outcome threads_launch fence)" ok
row "threads_launch launches counted (fence)" "$(launches threads_launch)" 4000
if ((gpus >= 2)); then
  verdict=$(status peers_no-enable)
  row "peer_no_enable verdict not clean" "$([[ $verdict != clean && $verdict != '?' ]] && echo yes || echo "no ($verdict)")" yes
  native=$(outcome peers_no-enable native)
  fenced=$(outcome peers_no-enable fence)
  row "peer_no_enable native rung not ok" "$([[ $native != ok && $native != '?' ]] && echo yes || echo "no ($native)")" yes
  row "peer_no_enable fence rung not ok" "$([[ $fenced != ok && $fenced != '?' ]] && echo yes || echo "no ($fenced)")" yes
  row "peer_enabled verdict" "$(status peers_enable)" clean
  row "peer_enabled fence rung" "$(outcome peers_enable fence)" ok
  row "free_other_device verdict" "$(status peers_free-other-device)" clean
  row "free_other_device fence rung" "$(outcome peers_free-other-device fence)" ok
  for n in peers_no-enable peers_enable peers_free-other-device; do
    echo "--- $n: $(head -c 300 "$dir/$n.out" | tr '\n' ' ')"
  done
else
  echo "peers: skipped: needs 2 GPUs ($gpus here)"
fi
exit $fail
