#include "apps/interposer/real_dlsym.h"

#include <dlfcn.h>

#include <atomic>

namespace cudadiag::interposer {
namespace {

// The base symbol version of dlsym on this architecture (dlsym itself moved into libc
// with glibc 2.34 and kept the old version as well).
#if defined(__x86_64__)
constexpr const char* kDlsymBaseVersion = "GLIBC_2.2.5";
#elif defined(__aarch64__)
constexpr const char* kDlsymBaseVersion = "GLIBC_2.17";
#else
#error "the interposer knows dlsym's symbol version on x86_64 and aarch64 only"
#endif

std::atomic<DlsymFn> g_real_dlsym{nullptr};
// initial-exec: the library is preloaded, and a TLS access must never allocate.
__attribute__((tls_model("initial-exec"))) thread_local int t_resolving = 0;
__attribute__((tls_model("initial-exec"))) thread_local int t_internal = 0;

}  // namespace

DlsymFn real_dlsym() noexcept {
  DlsymFn f = g_real_dlsym.load(std::memory_order_acquire);
  if (f || t_resolving) return f;
  ++t_resolving;
  void* p = dlvsym(RTLD_NEXT, "dlsym", kDlsymBaseVersion);
  if (!p) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  --t_resolving;
  f = reinterpret_cast<DlsymFn>(p);
  if (f) g_real_dlsym.store(f, std::memory_order_release);
  return f;
}

InternalScope::InternalScope() noexcept { ++t_internal; }
InternalScope::~InternalScope() { --t_internal; }
bool in_internal_scope() noexcept { return t_internal > 0; }

}  // namespace cudadiag::interposer
