#include "apps/interposer/settings.h"

#include <cstring>

#include "fence/guard_layout.h"
#include "fence/interposer_limits.h"

namespace cudadiag::interposer {
namespace {

void reject(Settings& s, const char* name, const char* value) noexcept {
  if (s.rejected >= Settings::kMaxRejected) return;
  s.rejected_name[s.rejected] = name;
  s.rejected_value[s.rejected] = value;
  ++s.rejected;
}

// Reads an unsigned variable into `out` when it is set and valid.
template <class T>
void read_number(Settings& s, EnvLookup lookup, const char* name, std::uint64_t min, std::uint64_t max, T& out) {
  const char* text = lookup(name);
  if (!text) return;
  std::uint64_t v = 0;
  if (parse_unsigned(text, min, max, v)) {
    out = static_cast<T>(v);
  } else {
    reject(s, name, text);
  }
}

}  // namespace

bool parse_unsigned(const char* text, std::uint64_t min, std::uint64_t max, std::uint64_t& out) noexcept {
  if (!text || *text == '\0') return false;
  std::uint64_t v = 0;
  for (const char* p = text; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
    const std::uint64_t digit = static_cast<std::uint64_t>(*p - '0');
    if (v > (~0ull - digit) / 10) return false;
    v = v * 10 + digit;
  }
  if (v < min || v > max) return false;
  out = v;
  return true;
}

Settings read_settings(EnvLookup lookup) noexcept {
  Settings s;
  const char* ring = lookup("CUDADIAG_RING");
  if (ring && *ring) s.ring_path = ring;

  std::uint32_t align = s.align;
  read_number(s, lookup, "CUDADIAG_FENCE_ALIGN", 1, kMaxAlign, align);
  if (fence::is_power_of_two(align)) {
    s.align = align;
  } else {
    reject(s, "CUDADIAG_FENCE_ALIGN", lookup("CUDADIAG_FENCE_ALIGN"));
  }

  if (const char* side = lookup("CUDADIAG_FENCE_SIDE")) {
    if (std::strcmp(side, "back") == 0) {
      s.side = ring::Side::back;
    } else if (std::strcmp(side, "front") == 0) {
      s.side = ring::Side::front;
    } else if (std::strcmp(side, "none") == 0) {
      s.side = ring::Side::none;
    } else {
      reject(s, "CUDADIAG_FENCE_SIDE", side);
    }
  }

  if (const char* guard = lookup("CUDADIAG_GUARD")) {
    if (std::strcmp(guard, "scaled") == 0) {
      s.guard = fence::GuardMode::scaled;
    } else if (std::strcmp(guard, "granule") == 0) {
      s.guard = fence::GuardMode::granule;
    } else {
      reject(s, "CUDADIAG_GUARD", guard);
    }
  }

  std::uint64_t quarantine_mb = s.quarantine_bytes >> 20;
  read_number(s, lookup, "CUDADIAG_FENCE_QUARANTINE_MB", 0, fence::kMaxQuarantineMb, quarantine_mb);
  s.quarantine_bytes = quarantine_mb << 20;

  std::uint64_t reuse_mb = s.reuse_bytes >> 20;
  read_number(s, lookup, "CUDADIAG_FENCE_REUSE_MB", 0, fence::kMaxReuseMb, reuse_mb);
  s.reuse_bytes = reuse_mb << 20;

  std::uint64_t recycle_mb = s.recycle_bytes >> 20;
  read_number(s, lookup, "CUDADIAG_FENCE_RECYCLE_MB", 0, fence::kMaxRecycleMb, recycle_mb);
  s.recycle_bytes = recycle_mb << 20;

  read_number(s, lookup, "CUDADIAG_RING_ALLOCATIONS", 1, ring::kMaxSlots, s.limits.allocations);
  read_number(s, lookup, "CUDADIAG_RING_LAUNCHES", 1, ring::kMaxSlots, s.limits.launches);
  read_number(s, lookup, "CUDADIAG_RING_TMA_MAPS", 1, ring::kMaxSlots, s.limits.tma_maps);
  std::uint32_t names_kb = s.limits.name_bytes >> 10;
  read_number(s, lookup, "CUDADIAG_RING_NAMES_KB", 1, ring::kMaxNameBytes >> 10, names_kb);
  s.limits.name_bytes = names_kb << 10;
  // 0 sites: no call stack is captured at allocation (nothing of its cost either).
  read_number(s, lookup, "CUDADIAG_RING_SITES", 0, ring::kMaxSiteSlots, s.limits.sites);
  read_number(s, lookup, "CUDADIAG_RING_MODULES", 1, ring::kMaxModuleSlots, s.limits.modules);

  const char* debug = lookup("CUDADIAG_FENCE_DEBUG");
  s.debug = debug && std::strcmp(debug, "1") == 0;
  return s;
}

}  // namespace cudadiag::interposer
