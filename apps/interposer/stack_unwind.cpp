#include "apps/interposer/stack_unwind.h"

#if defined(__x86_64__)

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "apps/interposer/frame_rule.h"

extern "C" void* __libc_stack_end;  // ld.so: the initial thread's stack pointer at start

namespace cudadiag::interposer {
namespace {

using namespace frame_rule;

// --- rules kept ------------------------------------------------------------------------
// Open addressing, filled once per address and never overwritten (a reader that sees an
// address sees its rule: the rule is stored before the address is published); dropped
// whole when a library was loaded. A full neighbourhood keeps nothing more: the rule is
// then worked out each time.

constexpr std::uint32_t kRuleSlots = 1u << 14;
constexpr std::uint32_t kRuleProbes = 8;
constexpr std::uint64_t kClaimed = 1;  // an address being filled in

struct RuleSlot {
  std::atomic<std::uint64_t> pc;
  std::atomic<std::uint64_t> rule;
};
RuleSlot g_rules[kRuleSlots];
std::atomic<std::uint32_t> g_rules_loads{~0u};

std::uint32_t rule_home(std::uint64_t pc) noexcept {
  return static_cast<std::uint32_t>((pc * 0x9e3779b97f4a7c15ull) >> 50) & (kRuleSlots - 1);
}

void forget_rules() noexcept {
  for (auto& s : g_rules) {
    s.pc.store(0, std::memory_order_relaxed);
    s.rule.store(0, std::memory_order_relaxed);
  }
}

std::uint64_t rule_for(std::uint64_t pc) noexcept {
  const std::uint32_t home = rule_home(pc);
  for (std::uint32_t i = 0; i < kRuleProbes; ++i) {
    RuleSlot& s = g_rules[(home + i) & (kRuleSlots - 1)];
    const std::uint64_t at = s.pc.load(std::memory_order_acquire);
    if (at == pc) {
      const std::uint64_t r = s.rule.load(std::memory_order_relaxed);
      if (r) return r;
      break;  // dropped meanwhile
    }
    if (at == 0) break;
  }
  const std::uint64_t r = frame_rule_at(pc);
  for (std::uint32_t i = 0; i < kRuleProbes; ++i) {
    RuleSlot& s = g_rules[(home + i) & (kRuleSlots - 1)];
    std::uint64_t expected = 0;
    if (s.pc.compare_exchange_strong(expected, kClaimed, std::memory_order_acq_rel)) {
      s.rule.store(r, std::memory_order_relaxed);
      s.pc.store(pc, std::memory_order_release);
      break;
    }
    if (expected == pc) break;
  }
  return r;
}

// --- the thread's stack --------------------------------------------------------------------

// initial-exec: the library is preloaded, and a TLS access must never allocate.
__attribute__((tls_model("initial-exec"))) thread_local std::uint64_t t_stack_low = 0;
__attribute__((tls_model("initial-exec"))) thread_local std::uint64_t t_stack_high = 0;  // 0: not looked at yet
constexpr std::uint64_t kNoStack = ~0ull;
constexpr std::uint64_t kMaxStack = 1ull << 30;

// The calling thread's stack, once a thread: the initial thread's ends above where the
// program started (__libc_stack_end; its arguments and environment lie above that) and
// reaches down by the stack limit; another thread's is what glibc made for it. False
// when `sp` lies on neither (a signal's alternate stack, a coroutine's): then nothing
// above it is known to be readable.
bool stack_bounds(std::uint64_t sp, std::uint64_t& top) noexcept {
  if (t_stack_high == 0) {
    std::uint64_t low = 0, high = kNoStack;
    if (syscall(SYS_gettid) == getpid()) {
      const auto start = reinterpret_cast<std::uint64_t>(__libc_stack_end);
      rlimit limit{};
      std::uint64_t reach = kMaxStack;
      if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < reach)
        reach = limit.rlim_cur;
      if (start > reach) {
        low = start - reach;
        high = start + 64;
      }
    } else {
      pthread_attr_t attr;
      if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void* address = nullptr;
        size_t size = 0;
        if (pthread_attr_getstack(&attr, &address, &size) == 0 && address) {
          low = reinterpret_cast<std::uint64_t>(address);
          high = low + size;
        }
        pthread_attr_destroy(&attr);
      }
    }
    t_stack_low = low;
    t_stack_high = high;
  }
  if (t_stack_high == kNoStack || sp < t_stack_low || sp >= t_stack_high) return false;
  top = t_stack_high;
  return true;
}

}  // namespace

void init_stack_unwind() noexcept { init_frame_rules(); }

__attribute__((noinline)) int unwind_stack(std::uint64_t* out, int max, std::uint32_t loads) noexcept {
  std::uint64_t pc, sp, rbp;
  asm volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1\n\tmovq %%rbp, %2" : "=r"(pc), "=r"(sp), "=r"(rbp));
  if (g_rules_loads.load(std::memory_order_acquire) != loads) {
    forget_rules();
    g_rules_loads.store(loads, std::memory_order_release);
  }
  std::uint64_t top = 0;
  if (!stack_bounds(sp, top)) return -1;
  const auto on_stack = [&](std::uint64_t address, std::uint64_t low) { return address >= low && address + 8 <= top; };
  const auto word = [](std::uint64_t address) {
    std::uint64_t v;
    std::memcpy(&v, reinterpret_cast<const void*>(address), sizeof v);
    return v;
  };
  int n = 0;  // this function's own frame is not returned: the first address is in its caller
  for (bool exact = true; n < max; exact = false) {
    // A return address follows its call: the rule is the call's (the byte before it).
    const std::uint64_t rule = rule_for(exact ? pc : pc - 1);
    if (rule == kOutermost) break;
    if (rule == kUnknown) return -1;
    std::uint64_t cfa = 0;
    if (cfa_kind(rule) == kCfaRsp) {
      cfa = sp + cfa_offset(rule);
    } else if (cfa_kind(rule) == kCfaRbp) {
      cfa = rbp + cfa_offset(rule);
    } else {
      const std::uint64_t at = rbp + cfa_offset(rule);
      if (!on_stack(at, sp)) break;
      cfa = word(at);
    }
    // Each caller's frame lies above its callee's, on this stack.
    if (cfa <= sp || (cfa & 7) != 0 || !on_stack(cfa - 8, sp)) break;
    const std::uint64_t ra = word(cfa - 8);
    if (rbp_kind(rule) != kRbpSame) {
      const std::uint64_t at = (rbp_kind(rule) == kRbpAtCfa ? cfa : rbp) + rbp_offset(rule);
      if (!on_stack(at, sp)) break;
      rbp = word(at);
    }
    sp = cfa;
    pc = ra;
    if (pc == 0) break;
    out[n++] = pc;
  }
  return n;
}

}  // namespace cudadiag::interposer

#else  // not x86-64: backtrace for every stack

namespace cudadiag::interposer {
void init_stack_unwind() noexcept {}
int unwind_stack(std::uint64_t*, int, std::uint32_t) noexcept { return -1; }
}  // namespace cudadiag::interposer

#endif
