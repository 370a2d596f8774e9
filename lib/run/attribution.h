#pragma once
// Which allocation a fault hit, from what the interposer recorded (InterposerLog) and
// the faulting address: an Xid 31 names the faulting 4 KiB page (host::MmuFault), a
// sanitizer report names the byte. Also whether the fence could have seen the fault at
// all (fence_effective) and whether the fence itself may have caused it.
// Pure: plain data in, plain data out.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/allocation_origin.h"
#include "run/allocation.h"
#include "fence/ring_format.h"

namespace cudadiag::run {

enum class Relation {
  past_end,        // after the allocation's end (the back guard, or just past an unfenced one)
  before_start,    // before its start (the front guard, or just before an unfenced one)
  use_after_free,  // inside an allocation the program had freed (quarantined range)
  inside_live,     // inside a live allocation: not a guard fault, something else
  unknown,         // no allocation near the address (or no address)
};
const char* to_string(Relation r);

enum class AddressPrecision {
  exact,  // the accessed byte (compute-sanitizer)
  page,   // the faulting page (Xid 31): the byte lies in [address, address + 4 KiB)
};

struct Attribution {
  Relation relation = Relation::unknown;
  // The address lies in the allocation's guard or its still-quarantined freed range,
  // which only that allocation's fault can reach; false: only the nearest allocation.
  bool certain = false;
  std::optional<AllocationRecord> allocation;
  std::optional<std::uint64_t> fault_address;
  AddressPrecision precision = AddressPrecision::exact;
  // past_end: bytes past the end; before_start: bytes before the start. With page
  // precision the byte is unknown within the page: [distance_min, distance_max].
  std::uint64_t distance_min = 0;
  std::uint64_t distance_max = 0;
  // The kernel most likely at fault: the newest launch passed this allocation, else the
  // newest launch recorded.
  std::optional<LaunchRecord> suspect;
  bool suspect_uses_allocation = false;
  std::vector<LaunchRecord> last_launches;  // newest last, at most kLastLaunches
  std::string summary;                      // one line
  // Whose fault: the process whose allocations were searched (the ring's owner), and the
  // GPU of the allocation (else of the suspect launch) as that ring recorded it.
  std::optional<ProcessIdentity> process;
  std::optional<int> device;                // the ordinal, also when the ring has no record of it
  std::optional<DeviceIdentity> gpu;
  // The summary names them: the run recorded several processes, a launcher set a rank, or
  // the process used several GPUs (a one-process, one-GPU run is not told what it knows).
  bool names_owner = false;
  report::AllocationOrigin allocated_at;    // where `allocation` was made (filled by the caller that can read files)
};

inline constexpr std::size_t kLastLaunches = 8;
// A fault within this distance of an allocation that has no guard there is attributed
// to it as the nearest allocation (certain == false); farther away it is unknown.
inline constexpr std::uint64_t kNearestWindow = 2u << 20;
// Addresses below this are a null (or near-null) pointer, not any allocation's.
inline constexpr std::uint64_t kNullPage = 64u << 10;

Attribution attribute_fault(const InterposerLog& log, std::optional<std::uint64_t> address,
                            AddressPrecision precision);

// "rank 1 (pid 1703) on GPU 1 (0000:00:07.0)", "pid 1703 on GPU 0", "GPU 1 (0000:07:00.0)";
// "" when nothing is known.
std::string owner_text(const std::optional<ProcessIdentity>& process, std::optional<int> device,
                       const std::optional<DeviceIdentity>& gpu);
std::string owner_text(const Attribution& a);
// The same sentence rebuilt after the owner's GPU was learnt elsewhere (the Xid's bus).
void refresh_summary(Attribution& a);

// "between 0 and 4095 bytes past the end" (a page) / "4 bytes before the start" (a byte)
std::string describe_distance(const Attribution& a);

// Whether the fence could have caught an overrun in this program. Not effective: the
// interposer did not load, the program never used CUDA through it, no allocation was
// fenced, or a handful of fenced allocations served many launches (a pool: the fence
// guards the slab, not the pieces the program overruns).
// A program that never used CUDA (the interposer loaded and saw no driver entry point
// resolved) had nothing to fence: not effective, but no blind spot either (cuda_unused).
struct FenceEffect {
  bool effective = false;
  bool cuda_unused = false;
  std::string reason;  // one line, with the counts
};
inline constexpr std::uint64_t kFewFenced = 8;
inline constexpr std::uint64_t kManyLaunches = 1000;
inline constexpr std::uint64_t kLaunchesPerFenced = 100;
FenceEffect fence_effective(const InterposerSummary& s);
// The same, with the launches the ring kept: few buffers against many launches is no pool
// when the kernels' pointer arguments are those buffers' first bytes (a program that
// allocates its few buffers once and launches on them), and still is when they point
// inside the buffers more often than at their starts (pieces of a slab).
FenceEffect fence_effective(const InterposerLog& log);

// A fault under the fence that the fence may have caused: the program encoded TMA
// descriptors whose base lies less than 128 KiB before a fence's guard (TMA's
// out-of-bounds handling in its 128 KiB address mode may touch that far from the base,
// whatever the tensor's extent), and the fault is near a guard or could not be placed.
// The reason, or nullopt.
inline constexpr std::uint64_t kTmaOutOfBoundsReach = ring::kTmaOutOfBoundsReach;
std::optional<std::string> fence_suspicion(const InterposerSummary& s, const Attribution& a);

}  // namespace cudadiag::run
