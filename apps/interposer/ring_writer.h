#pragma once
// Records into a ring file (lib/fence/ring_format.h) so that a parent can read what
// happened after the process died at any instruction: lays the file out (or attaches to
// one already laid out), keeps live allocations' records and overwrites freed ones
// oldest first, keeps the latest launches and encoded TMA descriptors in rings, stores
// kernel names once, and counts and times the interposer's own driver calls.
// No C++ library and no CUDA: compiled into the preloaded interposer and into the tests.
#include <atomic>
#include <cstdint>

#include "fence/ring_format.h"

namespace cudadiag::interposer {

// Written into the header of a file this writer lays out.
struct RingSettings {
  std::uint32_t fence_align = 16;
  ring::Side side = ring::Side::back;
  std::uint64_t quarantine_limit_bytes = 0;
  std::uint64_t recycle_limit_bytes = 0;
  fence::GuardMode guard_mode = fence::GuardMode::scaled;
  std::uint64_t guard_limit_bytes = 0;
  std::uint64_t guard_total_limit_bytes = 0;
};

// The fields of each record the writer is handed (ring_format.h, its lists).
struct AllocationEvent {
  CUDADIAG_RING_ALLOCATION_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_MEMBER)
};

// Where an allocation was made (ring_format.h, SiteSlot): frames innermost first.
struct SiteEvent {
  std::uint64_t frames[ring::kSiteFrames] = {};
  std::uint32_t frame_count = 0;
  ring::PythonFrame python[ring::kPythonFrames] = {};
  std::uint32_t python_count = 0;
  ring::PythonState python_state = ring::PythonState::none;
};

// A loaded object of the process (ring_format.h, ModuleSlot).
struct ModuleEvent {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t bias = 0;
  const char* path = nullptr;
};

// Which slot holds an allocation's record, and which record it was (a slot is reused).
struct RecordRef {
  static constexpr std::uint32_t kNoSlot = 0xffffffffu;
  std::uint32_t slot = kNoSlot;
  std::uint64_t seq = 0;
};

struct NameRef {
  std::uint32_t offset = ring::kNoName;
  std::uint32_t length = 0;
};

struct LaunchEvent {
  CUDADIAG_RING_LAUNCH_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_MEMBER)
  std::uint32_t pointer_count = 0;
  std::uint64_t pointer_args[ring::kMaxPointerArgs] = {};
  NameRef name;                    // in the names region, when it fit
  const char* name_text = nullptr; // the name itself (its first bytes go into every record)
};

struct TmaEvent {
  CUDADIAG_RING_TMA_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_MEMBER)
};

// Bytes of a fenced buffer's slack that lost their canary.
struct SlackWriteEvent {
  CUDADIAG_RING_SLACK_WRITE_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_MEMBER)
};

// A CUDA IPC hand-over of fenced memory that failed.
struct IpcFailureEvent {
  CUDADIAG_RING_IPC_FAILURE_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_MEMBER)
};

// Who records into the ring (ring_format.h, IdentitySlot).
struct IdentityEvent {
  CUDADIAG_RING_IDENTITY_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_MEMBER)
  const char* exe = nullptr;  // cut to its last bytes when long
};

// A device the process used (ring_format.h, DeviceSlot).
struct DeviceEvent {
  CUDADIAG_RING_DEVICE_FIELDS(CUDADIAG_RING_MEMBER, CUDADIAG_RING_MEMBER)
  std::uint8_t uuid[ring::kUuidBytes] = {};
  char pci_bus_id[ring::kBusIdBytes] = {};
};

inline constexpr std::uint64_t kNoLaunch = ~0ull;

// A tiny spinlock: the critical sections copy one record.
class SpinLock {
 public:
  void lock() noexcept;
  void unlock() noexcept { flag_.clear(std::memory_order_release); }

 private:
  std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

// How a ring file is opened. Neither follows a symbolic link, and neither writes into
// anything but a regular file of this user with a single link.
enum class RingOpen : std::uint8_t {
  shared,     // the file CUDADIAG_RING names: created if missing, else attached to
  exclusive,  // a per-process "<file>.<pid>": created here, never one that exists
};

class RingWriter {
 public:
  // Opens `path` as `how` says. An empty file is laid out with `limits`: its blocks are
  // reserved first, and when there is no room it becomes a header only (no records,
  // kRingNoRoom; the counters still count). A file that already holds a ring of this
  // version is attached to as it is (another process laid it out); anything else is left
  // untouched and false is returned with *why saying what was wrong.
  bool attach(const char* path, const ring::Capacities& limits, const RingSettings& settings, RingOpen how,
              const char** why) noexcept;
  // Unmaps the file (it stays on disk with everything written so far).
  void detach() noexcept;
  bool attached() const noexcept { return header_ != nullptr; }
  ring::Header* header() noexcept { return header_; }

  // The first process to call this with its pid owns the file's records; true for it.
  bool claim(std::int32_t pid) noexcept;

  void add(std::uint64_t ring::Header::*counter, std::uint64_t delta) noexcept;
  void sub(std::uint64_t ring::Header::*counter, std::uint64_t delta) noexcept;
  void set_cuda_seen() noexcept;
  void add_process_loaded() noexcept;
  void add_other_cuda_process() noexcept;
  void set_granularity(std::uint64_t bytes) noexcept;
  void set_end_wait_result(std::int32_t result) noexcept;

  // Counts the allocation (and the fenced one) and records it; the record is lost
  // (dropped_allocations) when every slot holds a live allocation.
  RecordRef add_allocation(const AllocationEvent& e) noexcept;
  // A freed record becomes the oldest candidate for reuse; later states only update it.
  void set_state(RecordRef ref, ring::State state, ring::Api free_api) noexcept;

  // The site's index in the table of sites: an equal site recorded before is shared;
  // kNoSite (and sites_dropped counted) when the table is full.
  std::uint32_t add_site(const SiteEvent& e) noexcept;
  // Records a loaded object; false when the table is full (modules_dropped counted).
  bool add_module(const ModuleEvent& e) noexcept;
  void add_stack_flags(std::uint32_t flags) noexcept;

  // Copies a kernel name into the names region once; kNoName when the region is full.
  NameRef add_name(const char* text, std::uint32_t length) noexcept;
  // Counts the launch and records it over the oldest one, without a lock (launches of
  // many threads never wait on each other); its seq (kNoLaunch: not kept, when its slot
  // is still being written by a launch a whole ring older).
  std::uint64_t add_launch(const LaunchEvent& e) noexcept;
  // The driver's call for launch `seq` returned: marked in its record unless a newer
  // launch took the slot.
  void launch_returned(std::uint64_t seq) noexcept;
  // Counts a slack write and keeps it while the header has room.
  void add_slack_write(const SlackWriteEvent& e) noexcept;
  // One more fenced buffer whose slack holds canaries.
  void add_slack_watched() noexcept;
  // Counts the encode (and one near a guard) and records it over the oldest one.
  void add_tma_map(const TmaEvent& e) noexcept;
  // What happened to a process of the run (ring_format.h, EventKind): counted, and kept
  // while there is a free event slot. `program` is cut to fit.
  void add_event(ring::EventKind kind, std::int32_t pid, const char* program) noexcept;
  // Who records here: written once, by the process that claimed the ring.
  void set_identity(const IdentityEvent& e) noexcept;
  // Whether device `ordinal` has its record (a bit test for ordinals below 64): the
  // caller asks the driver for its UUID and bus id only the first time.
  bool has_device(std::int32_t ordinal) const noexcept;
  // Records a device once (a second record of the same ordinal is dropped); counted, and
  // kept while the header has room.
  void add_device(const DeviceEvent& e) noexcept;
  // Counts a failed CUDA IPC hand-over and keeps it while the header has room.
  void add_ipc_failure(const IpcFailureEvent& e) noexcept;
  // One driver call of the interposer's own and the nanoseconds it took.
  void add_driver_call(ring::DriverCall c, std::uint64_t ns) noexcept;

  // Around fork(): hold every lock so that the child does not inherit one mid-update.
  void lock_all() noexcept;
  void unlock_all() noexcept;

 private:
  bool lay_out(int fd, const ring::Capacities& limits, const RingSettings& settings, const char** why) noexcept;
  void write_header(const ring::Capacities& limits, const RingSettings& settings, std::uint32_t flags, int error,
                    std::uint64_t wanted) noexcept;
  bool check_existing(int fd, std::uint64_t file_size, const char** why) noexcept;
  bool map(int fd, std::uint64_t bytes, const char** why) noexcept;
  ring::AllocationSlot* allocation_slot(std::uint32_t i) noexcept;
  ring::LaunchSlot* launch_slot(std::uint32_t i) noexcept;
  ring::TmaSlot* tma_slot(std::uint32_t i) noexcept;
  ring::SiteSlot* site_slot(std::uint32_t i) noexcept;
  ring::ModuleSlot* module_slot(std::uint32_t i) noexcept;
  std::uint32_t take_allocation_slot() noexcept;

  ring::Header* header_ = nullptr;
  unsigned char* base_ = nullptr;
  std::uint64_t mapped_bytes_ = 0;
  SpinLock allocation_lock_;
  SpinLock tma_lock_;  // launches take none (add_launch)
  SpinLock name_lock_;
  SpinLock site_lock_;
  SpinLock device_lock_;
  std::atomic<std::uint64_t> devices_seen_{0};  // bit d: device d has its record
  // Sites by hash: open addressing over 2 * site_capacity entries of site index + 1 (0: empty).
  std::uint32_t* site_index_ = nullptr;
  std::uint32_t site_index_size_ = 0;
  // Allocation slots: never used ones first, then freed records, oldest first.
  std::uint32_t next_unused_ = 0;
  RecordRef* reusable_ = nullptr;  // FIFO of freed records, allocation_capacity entries
  std::uint32_t reusable_head_ = 0;
  std::uint32_t reusable_count_ = 0;
};

}  // namespace cudadiag::interposer
