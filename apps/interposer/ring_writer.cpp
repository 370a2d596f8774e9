#include "apps/interposer/ring_writer.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cudadiag::interposer {
namespace {

template <class T>
std::atomic_ref<T> atomic(T& v) {
  return std::atomic_ref<T>(v);
}

// Holds an exclusive flock for the lifetime of the object: processes that start together
// lay out or check the file one at a time.
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    while (flock(fd_, LOCK_EX) != 0) {
      // EINTR: try again; anything else: go on unlocked (the checks below still hold).
      if (errno != EINTR) break;
    }
  }
  ~FileLock() { flock(fd_, LOCK_UN); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// A record is written between these two: a reader that finds the stamp complete finds
// every field (a process that died in between leaves a torn record, told apart).
template <class Slot>
void begin_record(Slot& s, std::uint64_t seq) {
  atomic(s.stamp).store(ring::writing_stamp(seq), std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  atomic(s.seq).store(seq, std::memory_order_relaxed);
}

template <class Slot>
void end_record(Slot& s, std::uint64_t seq) {
  atomic(s.stamp).store(ring::complete_stamp(seq), std::memory_order_release);
}

// Every field of a record's list, from the event into its slot.
void copy_fields(ring::AllocationSlot& to, const AllocationEvent& from) {
  CUDADIAG_RING_ALLOCATION_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_COPY)
}
void copy_fields(ring::LaunchSlot& to, const LaunchEvent& from) {
  CUDADIAG_RING_LAUNCH_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_COPY)
}
void copy_fields(ring::TmaSlot& to, const TmaEvent& from) {
  CUDADIAG_RING_TMA_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_COPY)
}
void copy_fields(ring::SlackWrite& to, const SlackWriteEvent& from) {
  CUDADIAG_RING_SLACK_WRITE_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_COPY)
}
void copy_fields(ring::IpcFailure& to, const IpcFailureEvent& from) {
  CUDADIAG_RING_IPC_FAILURE_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_COPY)
}
void copy_fields(ring::IdentitySlot& to, const IdentityEvent& from) {
  CUDADIAG_RING_IDENTITY_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_COPY)
}
void copy_fields(ring::DeviceSlot& to, const DeviceEvent& from) {
  CUDADIAG_RING_DEVICE_FIELDS(CUDADIAG_RING_COPY, CUDADIAG_RING_COPY)
}

}  // namespace

void SpinLock::lock() noexcept {
  int spins = 0;
  while (flag_.test_and_set(std::memory_order_acquire)) {
    if (++spins > 64) {
      sched_yield();
      spins = 0;
    }
  }
}

bool RingWriter::attach(const char* path, const ring::Capacities& limits, const RingSettings& settings, RingOpen how,
                        const char** why) noexcept {
  detach();
  const int flags = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK |
                    (how == RingOpen::exclusive ? O_EXCL : 0);
  const int fd = open(path, flags, 0600);
  if (fd < 0) {
    *why = errno == ELOOP   ? "the ring file is a symbolic link: not followed"
           : errno == EEXIST ? "the per-process ring file exists already: not reused"
                             : "cannot open the ring file";
    return false;
  }
  bool ok = false;
  {
    FileLock lock(fd);
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      *why = "cannot stat the ring file";
    } else if (!S_ISREG(st.st_mode)) {
      *why = "the ring file is not a regular file";
    } else if (st.st_uid != geteuid()) {
      *why = "the ring file belongs to another user";
    } else if (st.st_nlink != 1) {
      *why = "the ring file has more than one link";
    } else if (st.st_size == 0) {
      ok = lay_out(fd, limits, settings, why);
    } else {
      ok = check_existing(fd, static_cast<std::uint64_t>(st.st_size), why);
    }
  }
  close(fd);
  if (!ok) return false;
  const std::uint32_t capacity = header_->allocation_capacity;
  if (capacity > 0) {
    reusable_ = static_cast<RecordRef*>(std::calloc(capacity, sizeof(RecordRef)));
    if (!reusable_) {
      detach();
      *why = "out of memory";
      return false;
    }
  }
  const std::uint32_t sites = header_->site_capacity;
  if (sites > 0) {
    site_index_size_ = 2 * sites;
    site_index_ = static_cast<std::uint32_t*>(std::calloc(site_index_size_, sizeof(std::uint32_t)));
    if (!site_index_) site_index_size_ = 0;  // sites are then not shared: each takes a record
  }
  next_unused_ = 0;
  devices_seen_.store(0, std::memory_order_relaxed);
  reusable_head_ = 0;
  reusable_count_ = 0;
  return true;
}

bool RingWriter::lay_out(int fd, const ring::Capacities& limits, const RingSettings& settings, const char** why) noexcept {
  const ring::Layout l = ring::layout_for(limits);
  // Blocks first: a shared mapping of a sparse file raises SIGBUS in the program at the
  // first write the file system has no room for.
  const int rc = posix_fallocate(fd, 0, static_cast<off_t>(l.file_bytes));
  if (rc == 0) {
    if (!map(fd, l.file_bytes, why)) return false;
    write_header(limits, settings, ring::kRingReserved, 0, l.file_bytes);
    return true;
  }
  // No room (or no reservation possible): a header only, so that the counters still
  // count and the reader can say why nothing was recorded.
  if (ftruncate(fd, 0) != 0 || posix_fallocate(fd, 0, ring::kHeaderBytes) != 0) {
    [[maybe_unused]] const int emptied = ftruncate(fd, 0);  // an empty file: "nothing written"
    *why = "no room for the ring file, not even its header";
    return false;
  }
  if (!map(fd, ring::kHeaderBytes, why)) return false;
  write_header(ring::Capacities{}, settings, ring::kRingReserved | ring::kRingNoRoom, rc, l.file_bytes);
  *why = "no room for the ring's records: a header only";
  return true;
}

void RingWriter::write_header(const ring::Capacities& limits, const RingSettings& settings, std::uint32_t flags, int error,
                              std::uint64_t wanted) noexcept {
  const ring::Layout l = ring::layout_for(limits);
  ring::Header& h = *header_;
  h.version = ring::kVersion;
  h.header_bytes = ring::kHeaderBytes;
  h.allocation_slot_bytes = sizeof(ring::AllocationSlot);
  h.launch_slot_bytes = sizeof(ring::LaunchSlot);
  h.allocation_capacity = limits.allocations;
  h.launch_capacity = limits.launches;
  h.allocations_offset = l.allocations_offset;
  h.launches_offset = l.launches_offset;
  h.tma_capacity = limits.tma_maps;
  h.tma_offset = l.tma_offset;
  h.names_offset = l.names_offset;
  h.names_capacity = limits.name_bytes;
  h.site_capacity = limits.sites;
  h.module_capacity = limits.modules;
  h.sites_offset = l.sites_offset;
  h.modules_offset = l.modules_offset;
  h.fence_align = settings.fence_align;
  h.file_bytes = l.file_bytes;
  h.quarantine_limit_bytes = settings.quarantine_limit_bytes;
  h.recycle_limit_bytes = settings.recycle_limit_bytes;
  h.fence_side = static_cast<std::uint8_t>(settings.side);
  h.guard_mode = static_cast<std::uint8_t>(settings.guard_mode);
  h.guard_limit_bytes = settings.guard_limit_bytes;
  h.guard_total_limit_bytes = settings.guard_total_limit_bytes;
  h.ring_flags = flags;
  h.layout_errno = error;
  h.wanted_bytes = wanted;
  // The magic last: a reader that finds it finds a complete layout.
  atomic(h.magic).store(ring::kMagic, std::memory_order_release);
}

bool RingWriter::check_existing(int fd, std::uint64_t file_size, const char** why) noexcept {
  ring::Header h{};
  if (file_size < sizeof h || pread(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) {
    *why = "the file exists and is not a ring file (too short)";
    return false;
  }
  if (h.magic != ring::kMagic) {
    *why = "the file exists and is not a ring file (magic)";
    return false;
  }
  const ring::Layout l = ring::layout_for(ring::capacities_of(h));
  const bool header_only = (h.ring_flags & ring::kRingNoRoom) != 0;
  const bool capacities = header_only ? h.allocation_capacity == 0 && h.launch_capacity == 0 &&
                                            h.tma_capacity == 0 && h.names_capacity == 0 && h.site_capacity == 0 &&
                                            h.module_capacity == 0
                                      : h.allocation_capacity != 0 && h.launch_capacity != 0 && h.tma_capacity != 0;
  if (h.version != ring::kVersion || h.header_bytes != ring::kHeaderBytes ||
      h.allocation_slot_bytes != sizeof(ring::AllocationSlot) || h.launch_slot_bytes != sizeof(ring::LaunchSlot) ||
      h.allocations_offset != l.allocations_offset || h.launches_offset != l.launches_offset ||
      h.tma_offset != l.tma_offset || h.names_offset != l.names_offset || h.sites_offset != l.sites_offset ||
      h.modules_offset != l.modules_offset || h.file_bytes != l.file_bytes ||
      file_size < l.file_bytes || !capacities || (h.ring_flags & ring::kRingReserved) == 0) {
    *why = "the ring file has another version or layout";
    return false;
  }
  return map(fd, l.file_bytes, why);
}

bool RingWriter::map(int fd, std::uint64_t bytes, const char** why) noexcept {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    *why = "cannot map the ring file";
    return false;
  }
  base_ = static_cast<unsigned char*>(p);
  mapped_bytes_ = bytes;
  header_ = reinterpret_cast<ring::Header*>(base_);
  return true;
}

void RingWriter::detach() noexcept {
  if (base_) munmap(base_, mapped_bytes_);
  base_ = nullptr;
  header_ = nullptr;
  mapped_bytes_ = 0;
  std::free(reusable_);
  reusable_ = nullptr;
  std::free(site_index_);
  site_index_ = nullptr;
  site_index_size_ = 0;
}

bool RingWriter::claim(std::int32_t pid) noexcept {
  if (!header_) return false;
  std::int32_t expected = 0;
  auto owner = atomic(header_->owner_pid);
  return owner.compare_exchange_strong(expected, pid, std::memory_order_acq_rel) || expected == pid;
}

void RingWriter::add(std::uint64_t ring::Header::*counter, std::uint64_t delta) noexcept {
  if (header_) atomic(header_->*counter).fetch_add(delta, std::memory_order_relaxed);
}

void RingWriter::sub(std::uint64_t ring::Header::*counter, std::uint64_t delta) noexcept {
  if (header_) atomic(header_->*counter).fetch_sub(delta, std::memory_order_relaxed);
}

void RingWriter::set_cuda_seen() noexcept {
  if (header_) atomic(header_->cuda_seen).store(1, std::memory_order_relaxed);
}

void RingWriter::add_process_loaded() noexcept {
  if (header_) atomic(header_->processes_loaded).fetch_add(1, std::memory_order_relaxed);
}

void RingWriter::add_other_cuda_process() noexcept {
  if (header_) atomic(header_->other_cuda_processes).fetch_add(1, std::memory_order_relaxed);
}

void RingWriter::set_granularity(std::uint64_t bytes) noexcept {
  if (!header_) return;
  std::uint64_t none = 0;
  atomic(header_->granularity).compare_exchange_strong(none, bytes, std::memory_order_relaxed);
}

void RingWriter::set_end_wait_result(std::int32_t result) noexcept {
  if (header_) atomic(header_->end_wait_result).store(result, std::memory_order_relaxed);
}

ring::AllocationSlot* RingWriter::allocation_slot(std::uint32_t i) noexcept {
  return reinterpret_cast<ring::AllocationSlot*>(base_ + header_->allocations_offset) + i;
}

ring::LaunchSlot* RingWriter::launch_slot(std::uint32_t i) noexcept {
  return reinterpret_cast<ring::LaunchSlot*>(base_ + header_->launches_offset) + i;
}

ring::TmaSlot* RingWriter::tma_slot(std::uint32_t i) noexcept {
  return reinterpret_cast<ring::TmaSlot*>(base_ + header_->tma_offset) + i;
}

ring::SiteSlot* RingWriter::site_slot(std::uint32_t i) noexcept {
  return reinterpret_cast<ring::SiteSlot*>(base_ + header_->sites_offset) + i;
}

ring::ModuleSlot* RingWriter::module_slot(std::uint32_t i) noexcept {
  return reinterpret_cast<ring::ModuleSlot*>(base_ + header_->modules_offset) + i;
}

namespace {

// FNV-1a over the bytes that make a site: equal sites hash equal.
std::uint64_t site_hash(const SiteEvent& e) noexcept {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  mix(&e.frame_count, sizeof e.frame_count);
  mix(e.frames, e.frame_count * sizeof e.frames[0]);
  mix(&e.python_count, sizeof e.python_count);
  mix(&e.python_state, sizeof e.python_state);
  for (std::uint32_t i = 0; i < e.python_count && i < ring::kPythonFrames; ++i) {
    mix(&e.python[i].line, sizeof e.python[i].line);
    mix(e.python[i].file, strnlen(e.python[i].file, sizeof e.python[i].file));
    mix(e.python[i].function, strnlen(e.python[i].function, sizeof e.python[i].function));
  }
  return h;
}

bool same_site(const ring::SiteSlot& s, const SiteEvent& e) noexcept {
  if (s.frame_count != e.frame_count || s.python_count != e.python_count ||
      s.python_state != static_cast<std::uint8_t>(e.python_state))
    return false;
  if (std::memcmp(s.frames, e.frames, e.frame_count * sizeof e.frames[0]) != 0) return false;
  return std::memcmp(s.python, e.python, e.python_count * sizeof e.python[0]) == 0;
}

}  // namespace

std::uint32_t RingWriter::add_site(const SiteEvent& in) noexcept {
  if (!header_ || header_->site_capacity == 0) return ring::kNoSite;
  SiteEvent e = in;
  if (e.frame_count > ring::kSiteFrames) e.frame_count = ring::kSiteFrames;
  if (e.python_count > ring::kPythonFrames) e.python_count = ring::kPythonFrames;
  const std::uint64_t hash = site_hash(e);
  site_lock_.lock();
  std::uint32_t probe = site_index_size_ ? static_cast<std::uint32_t>(hash % site_index_size_) : 0;
  for (std::uint32_t n = 0; site_index_size_ && n < site_index_size_; ++n) {
    const std::uint32_t entry = site_index_[probe];
    if (entry == 0) break;
    const ring::SiteSlot& s = *site_slot(entry - 1);
    if (s.hash == hash && same_site(s, e)) {
      site_lock_.unlock();
      return entry - 1;
    }
    probe = (probe + 1) % site_index_size_;
  }
  const std::uint64_t used = header_->sites;
  if (used >= header_->site_capacity) {
    add(&ring::Header::sites_dropped, 1);
    site_lock_.unlock();
    return ring::kNoSite;
  }
  const auto index = static_cast<std::uint32_t>(used);
  ring::SiteSlot& s = *site_slot(index);
  begin_record(s, used);
  s.hash = hash;
  s.frame_count = e.frame_count;
  s.python_count = e.python_count;
  std::memcpy(s.frames, e.frames, sizeof s.frames);
  std::memcpy(s.python, e.python, sizeof s.python);
  s.python_state = static_cast<std::uint8_t>(e.python_state);
  end_record(s, used);
  atomic(header_->sites).store(used + 1, std::memory_order_release);
  if (site_index_size_) site_index_[probe] = index + 1;
  site_lock_.unlock();
  return index;
}

bool RingWriter::add_module(const ModuleEvent& e) noexcept {
  if (!header_ || header_->module_capacity == 0) return false;
  site_lock_.lock();
  const std::uint64_t used = header_->modules;
  if (used >= header_->module_capacity) {
    add(&ring::Header::modules_dropped, 1);
    site_lock_.unlock();
    return false;
  }
  ring::ModuleSlot& s = *module_slot(static_cast<std::uint32_t>(used));
  begin_record(s, used);
  s.begin = e.begin;
  s.end = e.end;
  s.bias = e.bias;
  std::memset(s.path, 0, sizeof s.path);
  const std::size_t n = e.path ? strnlen(e.path, sizeof s.path) : 0;
  if (n < sizeof s.path) std::memcpy(s.path, e.path, n);  // a path that does not fit stays empty
  end_record(s, used);
  atomic(header_->modules).store(used + 1, std::memory_order_release);
  site_lock_.unlock();
  return true;
}

void RingWriter::add_stack_flags(std::uint32_t flags) noexcept {
  if (header_) atomic(header_->stack_flags).fetch_or(flags, std::memory_order_relaxed);
}

// Caller holds allocation_lock_.
std::uint32_t RingWriter::take_allocation_slot() noexcept {
  const std::uint32_t capacity = header_->allocation_capacity;
  if (capacity == 0) return RecordRef::kNoSlot;
  if (next_unused_ < capacity) return next_unused_++;
  while (reusable_count_ > 0) {
    const RecordRef oldest = reusable_[reusable_head_];
    reusable_head_ = (reusable_head_ + 1) % capacity;
    --reusable_count_;
    if (atomic(allocation_slot(oldest.slot)->seq).load(std::memory_order_relaxed) == oldest.seq) {
      add(&ring::Header::dropped_allocations, 1);  // a freed record gives way
      return oldest.slot;
    }
  }
  return RecordRef::kNoSlot;
}

RecordRef RingWriter::add_allocation(const AllocationEvent& e) noexcept {
  RecordRef ref;
  if (!header_) return ref;
  allocation_lock_.lock();
  const std::uint64_t seq = atomic(header_->allocations).fetch_add(1, std::memory_order_relaxed);
  if (e.side != ring::Side::none) add(&ring::Header::fenced, 1);
  const std::uint32_t slot = take_allocation_slot();
  if (slot == RecordRef::kNoSlot) {
    add(&ring::Header::dropped_allocations, 1);  // every slot holds a live allocation
    allocation_lock_.unlock();
    return ref;
  }
  ring::AllocationSlot& s = *allocation_slot(slot);
  begin_record(s, seq);
  copy_fields(s, e);
  end_record(s, seq);
  allocation_lock_.unlock();
  ref.slot = slot;
  ref.seq = seq;
  return ref;
}

void RingWriter::set_state(RecordRef ref, ring::State state, ring::Api free_api) noexcept {
  if (!header_ || ref.slot == RecordRef::kNoSlot || ref.slot >= header_->allocation_capacity) return;
  allocation_lock_.lock();
  ring::AllocationSlot& s = *allocation_slot(ref.slot);
  if (atomic(s.seq).load(std::memory_order_relaxed) == ref.seq) {
    const bool was_live = s.state == ring::State::live;
    if (free_api != ring::Api::unknown) atomic(s.free_api).store(free_api);
    atomic(s.state).store(state, std::memory_order_release);
    if (was_live && state != ring::State::live && reusable_count_ < header_->allocation_capacity) {
      reusable_[(reusable_head_ + reusable_count_) % header_->allocation_capacity] = ref;
      ++reusable_count_;
    }
  }
  allocation_lock_.unlock();
}

NameRef RingWriter::add_name(const char* text, std::uint32_t length) noexcept {
  NameRef ref;
  if (!header_ || !text) return ref;
  name_lock_.lock();
  const std::uint64_t used = atomic(header_->names_used).load(std::memory_order_relaxed);
  if (used + length + 1 <= header_->names_capacity) {
    char* dst = reinterpret_cast<char*>(base_ + header_->names_offset + used);
    std::memcpy(dst, text, length);
    dst[length] = '\0';
    atomic(header_->names_used).store(used + length + 1, std::memory_order_release);
    ref.offset = static_cast<std::uint32_t>(used);
    ref.length = length;
  }
  name_lock_.unlock();
  return ref;
}

namespace {

// Launch slots are written without a lock: the sequence number picks the slot, and a
// compare-exchange of the slot's stamp from a complete (or never written) record of an
// older launch to "writing" makes the writer its only one. A slot whose stamp is odd (a
// writer is in it: an older launch still being copied, a ring lapped meanwhile) or names a
// newer launch keeps what it holds; the launch is counted all the same.
bool claim_launch_slot(ring::LaunchSlot& s, std::uint64_t seq) noexcept {
  auto stamp = atomic(s.stamp);
  std::uint64_t at = stamp.load(std::memory_order_acquire);
  for (;;) {
    if (at % 2 == 1 || (at != 0 && at / 2 - 1 >= seq)) return false;
    if (stamp.compare_exchange_weak(at, ring::writing_stamp(seq), std::memory_order_acq_rel)) break;
  }
  std::atomic_thread_fence(std::memory_order_release);
  atomic(s.seq).store(seq, std::memory_order_relaxed);
  return true;
}

}  // namespace

std::uint64_t RingWriter::add_launch(const LaunchEvent& e) noexcept {
  if (!header_) return kNoLaunch;
  const std::uint64_t seq = atomic(header_->launches).fetch_add(1, std::memory_order_relaxed);
  if (header_->launch_capacity == 0) return kNoLaunch;  // a header only: counted, not kept
  ring::LaunchSlot& s = *launch_slot(static_cast<std::uint32_t>(seq % header_->launch_capacity));
  if (!claim_launch_slot(s, seq)) return kNoLaunch;
  copy_fields(s, e);
  const std::uint32_t n = e.pointer_count < ring::kMaxPointerArgs ? e.pointer_count : ring::kMaxPointerArgs;
  s.pointer_count = static_cast<std::uint8_t>(n);
  for (std::uint32_t i = 0; i < ring::kMaxPointerArgs; ++i) s.pointer_args[i] = i < n ? e.pointer_args[i] : 0;
  s.name_offset = e.name.offset;
  s.name_length = e.name.length;
  // strncpy pads the rest with NULs; the last byte stays one.
  std::strncpy(s.name_prefix, e.name_text ? e.name_text : "", sizeof s.name_prefix - 1);
  s.name_prefix[sizeof s.name_prefix - 1] = '\0';
  end_record(s, seq);
  return seq;
}

void RingWriter::launch_returned(std::uint64_t seq) noexcept {
  if (!header_ || seq == kNoLaunch || header_->launch_capacity == 0) return;
  ring::LaunchSlot& s = *launch_slot(static_cast<std::uint32_t>(seq % header_->launch_capacity));
  // Still this launch's record: held for the mark (a newer launch's writer keeps off
  // meanwhile), then complete again. Taken by a newer launch: nothing to mark.
  std::uint64_t complete = ring::complete_stamp(seq);
  auto stamp = atomic(s.stamp);
  if (!stamp.compare_exchange_strong(complete, ring::writing_stamp(seq), std::memory_order_acq_rel)) return;
  atomic(s.returned).store(1, std::memory_order_relaxed);
  stamp.store(ring::complete_stamp(seq), std::memory_order_release);
}

void RingWriter::add_slack_watched() noexcept {
  if (header_) atomic(header_->slack_watched).fetch_add(1, std::memory_order_relaxed);
}

void RingWriter::add_slack_write(const SlackWriteEvent& e) noexcept {
  if (!header_) return;
  // Any process of the run may write here: the slot is the one its sequence number names.
  const std::uint64_t seq = atomic(header_->slack_writes).fetch_add(1, std::memory_order_acq_rel);
  if (seq >= ring::kMaxSlackWrites) return;
  ring::SlackWrite& w = header_->slack[seq];
  begin_record(w, seq);
  copy_fields(w, e);
  end_record(w, seq);
}

void RingWriter::add_tma_map(const TmaEvent& e) noexcept {
  if (!header_) return;
  if (e.flags & ring::kTmaNearGuard) add(&ring::Header::tma_near_guard, 1);
  tma_lock_.lock();
  const std::uint64_t seq = atomic(header_->tma_encodes).fetch_add(1, std::memory_order_relaxed);
  if (header_->tma_capacity == 0) {  // a header only: counted, not kept
    tma_lock_.unlock();
    return;
  }
  ring::TmaSlot& s = *tma_slot(static_cast<std::uint32_t>(seq % header_->tma_capacity));
  begin_record(s, seq);
  copy_fields(s, e);
  end_record(s, seq);
  tma_lock_.unlock();
}

void RingWriter::add_event(ring::EventKind kind, std::int32_t pid, const char* program) noexcept {
  if (!header_) return;
  if (kind == ring::EventKind::preload_restored) atomic(header_->preloads_restored).fetch_add(1);
  if (ring::event_escapes(kind)) atomic(header_->escapes).fetch_add(1);
  // Any process of the run may write here: the slot is the one its sequence number names.
  const std::uint32_t seq = atomic(header_->process_events).fetch_add(1, std::memory_order_acq_rel);
  if (seq >= ring::kMaxProcessEvents) return;
  ring::ProcessEvent& e = header_->events[seq];
  begin_record(e, seq);
  e.pid = pid;
  e.kind = static_cast<std::uint16_t>(kind);
  std::size_t n = 0;
  if (program)
    for (; program[n] && n + 1 < sizeof e.program; ++n) e.program[n] = program[n];
  std::memset(e.program + n, 0, sizeof e.program - n);
  end_record(e, seq);
}

void RingWriter::set_identity(const IdentityEvent& e) noexcept {
  if (!header_) return;
  ring::IdentitySlot& s = header_->identity;
  begin_record(s, 0);
  copy_fields(s, e);
  std::memset(s.reserved0, 0, sizeof s.reserved0);
  std::memset(s.exe, 0, sizeof s.exe);
  if (e.exe) {
    const std::size_t n = std::strlen(e.exe);
    const char* from = n < sizeof s.exe ? e.exe : e.exe + (n - (sizeof s.exe - 1));  // the last bytes name the file
    std::memcpy(s.exe, from, std::strlen(from));
  }
  end_record(s, 0);
}

bool RingWriter::has_device(std::int32_t ordinal) const noexcept {
  if (!header_ || ordinal < 0) return true;  // nothing to record
  if (ordinal < 64) return (devices_seen_.load(std::memory_order_acquire) >> ordinal) & 1u;
  const std::uint32_t n = std::min<std::uint32_t>(atomic(header_->devices).load(std::memory_order_acquire), ring::kMaxDevices);
  for (std::uint32_t i = 0; i < n; ++i)
    if (header_->device[i].ordinal == ordinal) return true;
  return false;
}

void RingWriter::add_device(const DeviceEvent& e) noexcept {
  if (!header_ || e.ordinal < 0) return;
  device_lock_.lock();
  if (has_device(e.ordinal)) {
    device_lock_.unlock();
    return;
  }
  const std::uint32_t seq = atomic(header_->devices).load(std::memory_order_relaxed);
  if (seq < ring::kMaxDevices) {
    ring::DeviceSlot& s = header_->device[seq];
    begin_record(s, seq);
    copy_fields(s, e);
    s.reserved0 = 0;
    std::memcpy(s.uuid, e.uuid, sizeof s.uuid);
    std::memcpy(s.pci_bus_id, e.pci_bus_id, sizeof s.pci_bus_id);
    s.pci_bus_id[sizeof s.pci_bus_id - 1] = '\0';
    end_record(s, seq);
  }
  atomic(header_->devices).store(seq + 1, std::memory_order_release);
  if (e.ordinal < 64) devices_seen_.fetch_or(std::uint64_t{1} << e.ordinal, std::memory_order_release);
  device_lock_.unlock();
}

void RingWriter::add_ipc_failure(const IpcFailureEvent& e) noexcept {
  if (!header_) return;
  // Without a lock: the slot is the one its sequence number names.
  const std::uint64_t seq = atomic(header_->ipc_failures).fetch_add(1, std::memory_order_acq_rel);
  if (seq >= ring::kMaxIpcFailures) return;
  ring::IpcFailure& f = header_->ipc_failure[seq];
  begin_record(f, seq);
  copy_fields(f, e);
  end_record(f, seq);
}

void RingWriter::add_driver_call(ring::DriverCall c, std::uint64_t ns) noexcept {
  const auto i = static_cast<std::uint32_t>(c);
  if (!header_ || i >= ring::kDriverCallKinds) return;
  atomic(header_->driver_calls[i]).fetch_add(1, std::memory_order_relaxed);
  atomic(header_->driver_ns[i]).fetch_add(ns, std::memory_order_relaxed);
}

void RingWriter::lock_all() noexcept {
  allocation_lock_.lock();
  tma_lock_.lock();
  name_lock_.lock();
  site_lock_.lock();
  device_lock_.lock();
}

void RingWriter::unlock_all() noexcept {
  device_lock_.unlock();
  site_lock_.unlock();
  name_lock_.unlock();
  tma_lock_.unlock();
  allocation_lock_.unlock();
}

}  // namespace cudadiag::interposer
