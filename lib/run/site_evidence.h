#pragma once
// The fault sites of a run's GPU core dumps as evidence: the CUDA error a dump proves
// when the program's output names none (with skip_abort the program may see
// cudaSuccess), the proven faulting address placed among the fence's allocations, and
// where the kernel log's Xid page and the dump disagree. Pure: plain data in and out.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evidence/site_error.h"
#include "host/xid.h"
#include "report/fault_site.h"
#include "run/allocation.h"
#include "run/attribution.h"
#include "taxonomy/taxonomy.h"

namespace cudadiag::run {

using evidence::exception_site;
// The first readable site without an exception that names where warps wait (a hang).
const report::FaultSite* waiting_site(const std::vector<report::FaultSite>& sites);
// The proven faulting address of the first exception site.
std::optional<std::uint64_t> proven_address(const std::vector<report::FaultSite>& sites);

// "8704 bytes into allocation #0 (8388608 bytes), freed before the launch",
// "4 bytes past the end of allocation #3 (4096 bytes)", "16 bytes before the start of
// allocation #1 (256 bytes)"; with " (nearest allocation, not a guard)" when not certain.
// Exact attributions only (a byte, not a page); empty when the address is near nothing.
std::string placement_text(const Attribution& a);

// Places every site's proven address in the log's allocation table (site.placement),
// and says in the site's notes (and the returned lines) when an Xid 31's page does not
// hold the dump's address.
std::vector<std::string> place_sites(std::vector<report::FaultSite>& sites, const InterposerLog* log,
                                     const std::optional<host::MmuFault>& xid_fault);

}  // namespace cudadiag::run
