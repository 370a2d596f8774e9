#include "apps/interposer/peer_access.h"

#include <atomic>

namespace cudadiag::interposer {
namespace {

// g_enabled[accessor][owner]; zero-initialised before any constructor runs.
constinit std::atomic<bool> g_enabled[kMaxPeerDevices][kMaxPeerDevices] = {};
constinit std::atomic<std::uint64_t> g_generation{0};

bool in_range(int device) { return device >= 0 && device < kMaxPeerDevices; }

}  // namespace

bool peer_access_enabled(int accessor, int owner) noexcept {
  if (!in_range(accessor) || !in_range(owner) || accessor == owner) return false;
  return g_enabled[accessor][owner].load(std::memory_order_acquire);
}

bool set_peer_access(int accessor, int owner, bool enabled) noexcept {
  if (!in_range(accessor) || !in_range(owner) || accessor == owner) return false;
  g_enabled[accessor][owner].store(enabled, std::memory_order_seq_cst);
  g_generation.fetch_add(1, std::memory_order_seq_cst);
  return true;
}

std::uint64_t peer_access_generation() noexcept { return g_generation.load(std::memory_order_seq_cst); }

}  // namespace cudadiag::interposer
