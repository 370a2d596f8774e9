#include "apps/interposer/alloc_site.h"

#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "apps/interposer/debug_log.h"
#include "apps/interposer/python_stack.h"
#include "apps/interposer/real_dlsym.h"
#include "apps/interposer/stack_unwind.h"

namespace cudadiag::interposer {
namespace {

// --- modules -----------------------------------------------------------------------

struct Range {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

// The modules recorded into the ring `g_modules_ring` names, sorted by begin: a return
// address found in one of them needs no new look at the loaded objects. The lock guards
// these variables only, for a look-up or an insertion: nothing is allocated and no other
// lock is waited for while it is held but the ring's own, for a copy; it is never taken
// inside dl_iterate_phdr (the loader's lock), and it is held across fork, so that a
// child never starts with it taken.
pthread_mutex_t g_modules_lock = PTHREAD_MUTEX_INITIALIZER;
struct ModulesLocked {
  ModulesLocked() { pthread_mutex_lock(&g_modules_lock); }
  ~ModulesLocked() { pthread_mutex_unlock(&g_modules_lock); }
  ModulesLocked(const ModulesLocked&) = delete;
  ModulesLocked& operator=(const ModulesLocked&) = delete;
};
std::uint64_t g_modules_ring = 0;               // ring_identity() of that ring
Range* g_known = nullptr;
std::uint32_t g_known_count = 0;
std::uint32_t g_known_capacity = 0;
std::uint32_t g_scanned_loads = ~0u;            // g_loads at the last look
Range g_self;                                   // the interposer's own code (set at load)
std::atomic<std::uint32_t> g_loads{0};          // libraries loaded (note_library_load)
char g_exe[ring::kModulePathBytes];             // the program's own file

// Which ring a site index refers to: a process of its own after fork records into
// another file, possibly through the same writer.
std::uint64_t ring_identity(RingWriter& ring) noexcept {
  return reinterpret_cast<std::uint64_t>(ring.header()) ^
         (static_cast<std::uint64_t>(static_cast<std::uint32_t>(ring.header()->owner_pid)) << 47);
}

// Caller holds g_modules_lock.
bool known(std::uint64_t pc) noexcept {
  std::uint32_t lo = 0, hi = g_known_count;
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (g_known[mid].end <= pc) lo = mid + 1;
    else hi = mid;
  }
  return lo < g_known_count && g_known[lo].begin <= pc && pc < g_known[lo].end;
}

// Caller holds g_modules_lock.
void insert_known(Range r) noexcept {
  if (g_known_count == g_known_capacity) return;
  std::uint32_t i = g_known_count;
  while (i > 0 && g_known[i - 1].begin > r.begin) {
    g_known[i] = g_known[i - 1];
    --i;
  }
  g_known[i] = r;
  ++g_known_count;
}

// Makes the table mirror `ring` (empty for a new one); the table is allocated unlocked.
void adopt_ring(RingWriter& ring, std::uint64_t identity) noexcept {
  {
    ModulesLocked lock;
    if (g_modules_ring == identity) return;
  }
  const std::uint32_t capacity = ring.header()->module_capacity;
  auto* fresh = static_cast<Range*>(std::calloc(capacity ? capacity : 1, sizeof(Range)));
  Range* old = nullptr;
  {
    ModulesLocked lock;
    if (g_modules_ring != identity) {
      old = g_known;
      g_known = fresh;
      g_known_capacity = fresh ? capacity : 0;
      g_known_count = 0;
      g_scanned_loads = ~0u;
      g_modules_ring = identity;
      fresh = nullptr;
    }
  }
  std::free(old);
  std::free(fresh);
}

Range load_range(const dl_phdr_info* info) noexcept {
  std::uint64_t lo = ~0ull, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    lo = ph.p_vaddr < lo ? ph.p_vaddr : lo;
    hi = ph.p_vaddr + ph.p_memsz > hi ? ph.p_vaddr + ph.p_memsz : hi;
  }
  return lo < hi ? Range{info->dlpi_addr + lo, info->dlpi_addr + hi} : Range{};
}

// The loaded objects, read in batches: the loader's callback only copies (it takes no
// lock of the interposer's); what it found is recorded after dl_iterate_phdr returned.
constexpr int kScanBatch = 32;
struct Found {
  Range range;
  std::uint64_t bias = 0;
  char path[ring::kModulePathBytes];
};
struct Scan {
  std::uint32_t skip = 0;  // objects an earlier batch went through
  std::uint32_t seen = 0;
  int count = 0;
  Found found[kScanBatch];
};

int on_object(dl_phdr_info* info, size_t, void* data) {
  auto* scan = static_cast<Scan*>(data);
  if (scan->seen < scan->skip) {
    ++scan->seen;
    return 0;
  }
  if (scan->count == kScanBatch) return 1;  // this object starts the next batch
  ++scan->seen;
  const Range r = load_range(info);
  if (r.begin >= r.end || r.begin == g_self.begin) return 0;  // the interposer's frames are never kept
  Found& f = scan->found[scan->count++];
  f.range = r;
  f.bias = info->dlpi_addr;
  const char* path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : g_exe;
  const std::size_t n = strnlen(path, sizeof f.path);
  if (n < sizeof f.path) {
    std::memcpy(f.path, path, n + 1);
  } else {
    f.path[0] = '\0';  // a path that does not fit stays empty, as in the ring
  }
  return 0;
}

void record_found(RingWriter& ring, std::uint64_t identity, const Scan& scan) noexcept {
  for (int i = 0; i < scan.count; ++i) {
    const Found& f = scan.found[i];
    ModuleEvent e;
    e.begin = f.range.begin;
    e.end = f.range.end;
    e.bias = f.bias;
    e.path = f.path;
    ModulesLocked lock;
    if (g_modules_ring == identity && !known(f.range.begin) && ring.add_module(e)) insert_known(f.range);
  }
}

int on_object_for_self(dl_phdr_info* info, size_t, void* data) {
  const auto pc = *static_cast<std::uint64_t*>(data);
  const Range r = load_range(info);
  if (r.begin <= pc && pc < r.end) {
    g_self = r;
    return 1;
  }
  return 0;
}

// Records the modules of the site's return addresses that `ring` does not hold yet: the
// loaded objects are looked at again only after a library was loaded.
void note_modules(RingWriter& ring, std::uint64_t identity, const SiteEvent& e, std::uint32_t loads) noexcept {
  adopt_ring(ring, identity);
  bool look = false;
  {
    ModulesLocked lock;
    bool unknown = false;
    for (std::uint32_t i = 0; i < e.frame_count && !unknown; ++i) unknown = !known(e.frames[i]);
    look = unknown && g_scanned_loads != loads;
    if (look) g_scanned_loads = loads;
  }
  if (!look) return;
  Scan scan;
  do {
    scan.skip = scan.seen;
    scan.seen = 0;
    scan.count = 0;
    dl_iterate_phdr(&on_object, &scan);
    record_found(ring, identity, scan);
  } while (scan.count == kScanBatch);
}

// --- host frames -------------------------------------------------------------------

// What the capture cost, for the debug log at exit.
std::atomic<std::uint64_t> g_new_keys{0};      // sites worked out in full
std::atomic<std::uint64_t> g_by_backtrace{0};  // host stacks read by backtrace

void host_frames(SiteEvent& e, std::uint32_t loads) noexcept {
  constexpr int kRaw = static_cast<int>(ring::kSiteFrames) + 16;  // the interposer's own frames come first
  std::uint64_t raw[kRaw];
  int n = unwind_stack(raw, kRaw, loads);
  if (n < 0) {
    g_by_backtrace.fetch_add(1, std::memory_order_relaxed);
    void* frames[kRaw];
    n = backtrace(frames, kRaw);
    for (int i = 0; i < n; ++i) raw[i] = reinterpret_cast<std::uint64_t>(frames[i]);
  }
  for (int i = 0; i < n && e.frame_count < ring::kSiteFrames; ++i) {
    if (g_self.begin <= raw[i] && raw[i] < g_self.end) continue;  // the interposer's own frames
    e.frames[e.frame_count++] = raw[i];
  }
}

// --- sites seen before ---------------------------------------------------------------
// The site index of each (ring, host frames, Python frames' code and offset) seen, under
// two 64-bit hashes of them: a site seen before costs the two walks and a look-up, not
// the reading of Python's strings and lines or the ring's own comparison. Filled once
// per key and never overwritten (the value is stored before the key is published); when
// a key's neighbourhood is full it is not kept and its site is worked out each time.

struct SiteKey {
  std::uint64_t a = 0x243f6a8885a308d3ull;
  std::uint64_t b = 0x13198a2e03707344ull;
  void mix(std::uint64_t v) noexcept {
    a = (a ^ v) * 0x9e3779b97f4a7c15ull;
    a ^= a >> 29;
    b = (b ^ v) * 0xc2b2ae3d27d4eb4full;
    b ^= b >> 31;
  }
};

SiteKey site_key(std::uint64_t identity, const SiteEvent& e, const PythonStack& py) noexcept {
  SiteKey k;
  k.mix(identity);
  k.mix(e.frame_count);
  for (std::uint32_t i = 0; i < e.frame_count; ++i) k.mix(e.frames[i]);
  k.mix(static_cast<std::uint64_t>(py.state) << 32 | py.depth);
  for (std::uint32_t i = 0; i < py.depth; ++i) {
    k.mix(reinterpret_cast<std::uint64_t>(py.code[i]));
    k.mix(static_cast<std::uint32_t>(py.offset[i]));
  }
  if (k.a < 2) k.a += 2;  // 0: an empty slot, 1: one being filled
  return k;
}

constexpr std::uint32_t kKeySlots = 1u << 14;
constexpr std::uint32_t kKeyProbes = 8;

struct KeySlot {
  std::atomic<std::uint64_t> key;    // SiteKey::a
  std::atomic<std::uint64_t> value;  // SiteKey::b's high half, the site index
};
KeySlot g_keys[kKeySlots];

std::uint32_t key_home(const SiteKey& k) noexcept { return static_cast<std::uint32_t>(k.b) & (kKeySlots - 1); }
std::uint64_t key_value(const SiteKey& k, std::uint32_t site) noexcept { return (k.b & ~0xffffffffull) | site; }

std::uint32_t known_site(const SiteKey& k) noexcept {
  for (std::uint32_t i = 0; i < kKeyProbes; ++i) {
    KeySlot& s = g_keys[(key_home(k) + i) & (kKeySlots - 1)];
    const std::uint64_t at = s.key.load(std::memory_order_acquire);
    if (at == 0) break;
    if (at != k.a) continue;
    const std::uint64_t v = s.value.load(std::memory_order_relaxed);
    if ((v & ~0xffffffffull) == (k.b & ~0xffffffffull)) return static_cast<std::uint32_t>(v);
  }
  return ring::kNoSite;
}

void keep_site(const SiteKey& k, std::uint32_t site) noexcept {
  for (std::uint32_t i = 0; i < kKeyProbes; ++i) {
    KeySlot& s = g_keys[(key_home(k) + i) & (kKeySlots - 1)];
    std::uint64_t expected = 0;
    if (s.key.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      s.value.store(key_value(k, site), std::memory_order_relaxed);
      s.key.store(k.a, std::memory_order_release);
      return;
    }
    if (expected == k.a) return;  // another thread kept it
  }
}

__attribute__((destructor)) void log_site_costs() {
  const std::uint64_t keys = g_new_keys.load(std::memory_order_relaxed);
  if (keys)
    debug_log("allocation sites: %llu worked out in full, %llu host stacks read by backtrace",
              static_cast<unsigned long long>(keys),
              static_cast<unsigned long long>(g_by_backtrace.load(std::memory_order_relaxed)));
}

}  // namespace

void init_allocation_sites() noexcept {
  // glibc's backtrace loads the unwinder on its first call: here, not inside an allocation.
  void* frames[2];
  (void)backtrace(frames, 2);
  init_stack_unwind();
  auto self_pc = reinterpret_cast<std::uint64_t>(&init_allocation_sites);
  dl_iterate_phdr(&on_object_for_self, &self_pc);
  const ssize_t n = readlink("/proc/self/exe", g_exe, sizeof g_exe - 1);
  g_exe[n > 0 ? n : 0] = '\0';
}

void lock_allocation_sites_for_fork() noexcept { pthread_mutex_lock(&g_modules_lock); }
void unlock_allocation_sites_after_fork() noexcept { pthread_mutex_unlock(&g_modules_lock); }

void note_library_load() noexcept { g_loads.fetch_add(1, std::memory_order_acq_rel); }

std::uint32_t capture_allocation_site(RingWriter& ring) noexcept {
  if (!ring.header() || ring.header()->site_capacity == 0) return ring::kNoSite;
  InternalScope internal;  // dlsym calls made meanwhile pass straight through
  const std::uint32_t loads = g_loads.load(std::memory_order_acquire);
  const std::uint64_t identity = ring_identity(ring);
  SiteEvent e;
  host_frames(e, loads);
  PythonStack py;
  walk_python_stack(py, loads);
  e.python_state = py.state;
  const SiteKey key = site_key(identity, e, py);
  const std::uint32_t seen = known_site(key);
  if (seen != ring::kNoSite) return seen;

  g_new_keys.fetch_add(1, std::memory_order_relaxed);
  note_modules(ring, identity, e, loads);
  e.python_count = describe_python_stack(py, e.python);
  ring.add_stack_flags(ring::kStacksHost | (e.python_count ? ring::kStacksPython : 0));
  const std::uint32_t site = ring.add_site(e);
  if (site != ring::kNoSite) keep_site(key, site);
  return site;
}

}  // namespace cudadiag::interposer
