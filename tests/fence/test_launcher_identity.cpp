#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "fence/launcher_identity.h"

using namespace cudadiag;
using fence::launcher_identity;
using fence::parse_launcher_number;
using ring::LauncherVar;

namespace {

// An environment of the test's own, asked as getenv is.
fence::LauncherIdentity identity_in(const std::map<std::string, std::string>& env) {
  return launcher_identity([&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

static_assert(parse_launcher_number("17") == 17);

TEST_CASE("launcher numbers: decimal digits only, up to 2^31 - 1", "[launcher_identity]") {
  CHECK(parse_launcher_number("0") == 0);
  CHECK(parse_launcher_number("2147483647") == 2147483647);
  CHECK(parse_launcher_number("2147483648") == -1);
  CHECK(parse_launcher_number(nullptr) == -1);
  CHECK(parse_launcher_number("") == -1);
  CHECK(parse_launcher_number("-1") == -1);
  CHECK(parse_launcher_number(" 1") == -1);
  CHECK(parse_launcher_number("1a") == -1);
}

TEST_CASE("torchrun's RANK, LOCAL_RANK and WORLD_SIZE name the process", "[launcher_identity]") {
  const auto id = identity_in({{"RANK", "1"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "2"}});
  CHECK(id.rank == 1);
  CHECK(id.local_rank == 1);
  CHECK(id.world_size == 2);
  CHECK(id.rank_from == LauncherVar::rank);
  CHECK(id.local_rank_from == LauncherVar::local_rank);
  CHECK(id.world_size_from == LauncherVar::world_size);
  CHECK(std::string(ring::launcher_var_name(id.rank_from)) == "RANK");
}

TEST_CASE("no launcher: nothing set", "[launcher_identity]") {
  const auto id = identity_in({{"HOME", "/root"}});
  CHECK(id.rank == -1);
  CHECK(id.local_rank == -1);
  CHECK(id.world_size == -1);
  CHECK(id.rank_from == LauncherVar::none);
  CHECK(std::string(ring::launcher_var_name(id.rank_from)).empty());
}

TEST_CASE("torchrun's variables win over the launcher it runs under; each falls back on its own",
          "[launcher_identity]") {
  // torchrun under srun: Slurm's task 0 runs ranks 2 and 3.
  const auto under_srun = identity_in({{"RANK", "3"},
                                       {"LOCAL_RANK", "1"},
                                       {"WORLD_SIZE", "4"},
                                       {"SLURM_PROCID", "0"},
                                       {"SLURM_LOCALID", "0"},
                                       {"SLURM_NTASKS", "2"}});
  CHECK(under_srun.rank == 3);
  CHECK(under_srun.local_rank == 1);
  CHECK(under_srun.world_size == 4);

  const auto ompi = identity_in({{"OMPI_COMM_WORLD_RANK", "5"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                 {"OMPI_COMM_WORLD_SIZE", "8"},
                                 {"SLURM_PROCID", "0"}});
  CHECK(ompi.rank == 5);
  CHECK(ompi.rank_from == LauncherVar::ompi_rank);
  CHECK(ompi.local_rank == 1);
  CHECK(ompi.local_rank_from == LauncherVar::ompi_local_rank);
  CHECK(ompi.world_size == 8);
  CHECK(std::string(ring::launcher_var_name(ompi.world_size_from)) == "OMPI_COMM_WORLD_SIZE");

  const auto pmi = identity_in({{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}});
  CHECK(pmi.rank == 2);
  CHECK(pmi.rank_from == LauncherVar::pmi_rank);
  CHECK(pmi.world_size == 4);
  CHECK(pmi.local_rank == -1);

  const auto slurm = identity_in({{"SLURM_PROCID", "7"}, {"SLURM_LOCALID", "3"}, {"SLURM_NTASKS", "8"}});
  CHECK(slurm.rank == 7);
  CHECK(slurm.rank_from == LauncherVar::slurm_procid);
  CHECK(slurm.local_rank == 3);
  CHECK(slurm.local_rank_from == LauncherVar::slurm_localid);
  CHECK(slurm.world_size == 8);
  CHECK(slurm.world_size_from == LauncherVar::slurm_ntasks);

  // A value no launcher writes is passed over for the next variable.
  const auto bad = identity_in({{"RANK", "one"}, {"OMPI_COMM_WORLD_RANK", "4"}, {"LOCAL_RANK", ""}});
  CHECK(bad.rank == 4);
  CHECK(bad.rank_from == LauncherVar::ompi_rank);
  CHECK(bad.local_rank == -1);
}
