// A library that allocates on a thread of its own, as PyTorch's autograd engine does in
// backward: the allocating thread runs no Python code, whatever its caller runs.
#include <pthread.h>

#include <cstddef>
#include <cstdint>

namespace {

using AllocFn = int (*)(std::uint64_t* pointer, std::size_t bytes);  // cuMemAlloc_v2

struct Job {
  AllocFn alloc;
  std::size_t bytes;
  std::uint64_t pointer;
  int result;
};

void* run_job(void* p) {
  auto* job = static_cast<Job*>(p);
  job->result = job->alloc(&job->pointer, job->bytes);
  return nullptr;
}

}  // namespace

// `alloc` called with `bytes` on a new thread; the pointer it made (0: it failed).
extern "C" __attribute__((visibility("default"))) std::uint64_t alloc_on_own_thread(void* alloc, std::size_t bytes) {
  Job job{reinterpret_cast<AllocFn>(alloc), bytes, 0, -1};
  pthread_t thread;
  if (pthread_create(&thread, nullptr, &run_job, &job) != 0) return 0;
  pthread_join(thread, nullptr);
  return job.result == 0 ? job.pointer : 0;
}
