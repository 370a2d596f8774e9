#pragma once
// glibc's own dlsym (the interposer replaces the exported one), and the scope that marks
// the interposer's internal work: dlsym calls made meanwhile, by the interposer or by
// the driver it calls, pass straight through.
namespace cudadiag::interposer {

using DlsymFn = void* (*)(void* handle, const char* name);

// Null only while it is being looked up on this thread (a lookup that recursed).
DlsymFn real_dlsym() noexcept;

class InternalScope {
 public:
  InternalScope() noexcept;
  ~InternalScope();
  InternalScope(const InternalScope&) = delete;
  InternalScope& operator=(const InternalScope&) = delete;
};

bool in_internal_scope() noexcept;

}  // namespace cudadiag::interposer
