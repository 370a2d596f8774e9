#pragma once
// Which rank of a job a process is, as its launcher told it in the environment: torchrun
// and torch.distributed set RANK, LOCAL_RANK and WORLD_SIZE; Open MPI, MPICH (PMI) and
// srun set their own. The interposer reads them once when it starts and writes them into
// the ring it records into (ring_format.h, IdentitySlot). Pure and header-only: the
// interposer has no C++ library, the tests hand in an environment of their own.
#include <cstdint>

#include "fence/ring_format.h"

namespace cudadiag::fence {

struct LauncherIdentity {
  std::int32_t rank = -1;        // -1: no launcher variable set it
  std::int32_t local_rank = -1;
  std::int32_t world_size = -1;
  ring::LauncherVar rank_from = ring::LauncherVar::none;
  ring::LauncherVar local_rank_from = ring::LauncherVar::none;
  ring::LauncherVar world_size_from = ring::LauncherVar::none;
};

// A launcher's number: decimal digits only (no sign, no blanks), at most 2^31 - 1; -1 for
// anything else (unset, empty, "1a", "-1").
constexpr std::int32_t parse_launcher_number(const char* text) {
  if (!text || !*text) return -1;
  std::int64_t v = 0;
  for (const char* p = text; *p; ++p) {
    if (*p < '0' || *p > '9') return -1;
    v = v * 10 + (*p - '0');
    if (v > 0x7fffffff) return -1;
  }
  return static_cast<std::int32_t>(v);
}

namespace detail {

// The first of `vars` whose value is a launcher's number.
template <class Getenv, std::size_t N>
void first_of(Getenv&& get, const ring::LauncherVar (&vars)[N], std::int32_t& value, ring::LauncherVar& from) {
  for (const ring::LauncherVar v : vars) {
    const std::int32_t n = parse_launcher_number(get(ring::launcher_var_name(v)));
    if (n < 0) continue;
    value = n;
    from = v;
    return;
  }
}

}  // namespace detail

// `get(name)` is getenv's answer for `name` (null: unset). torchrun's variables first, then
// Open MPI's, PMI's and Slurm's: a launcher inside another (torchrun under srun) sets its own.
template <class Getenv>
LauncherIdentity launcher_identity(Getenv&& get) {
  using V = ring::LauncherVar;
  constexpr V kRank[] = {V::rank, V::ompi_rank, V::pmi_rank, V::slurm_procid};
  constexpr V kLocal[] = {V::local_rank, V::ompi_local_rank, V::slurm_localid};
  constexpr V kSize[] = {V::world_size, V::ompi_size, V::pmi_size, V::slurm_ntasks};
  LauncherIdentity id;
  detail::first_of(get, kRank, id.rank, id.rank_from);
  detail::first_of(get, kLocal, id.local_rank, id.local_rank_from);
  detail::first_of(get, kSize, id.world_size, id.world_size_from);
  return id;
}

}  // namespace cudadiag::fence
