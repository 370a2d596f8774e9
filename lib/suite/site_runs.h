#pragma once
// Site runs of the bundled cases. With GPU core dumps armed a program is not told of a
// store's fault: on an H100 (driver 580.159.04) its synchronize returned cudaSuccess and
// the driver wrote the dump later, only while the process stayed alive
// (fence/dump_linger.h). So the children whose results make the verdict run unarmed, and
// see what a program sees; a result that failed then runs once more, alone in its own
// child, armed and waiting at its end for the dump, and that dump's sites join the
// original result. The original's outcome, error and reason stay the unarmed run's.
// This file decides which results get a site run and how its sites join; the executor
// (suite/executor.h) runs them in its one pool.
#include <cstdint>
#include <string>

#include "report/report.h"

namespace cudadiag::suite {

// Which results of a command get a site run.
enum class SitePolicy : std::uint8_t {
  none,                // no site runs (--no-coredump)
  missed_expectation,  // repro: a fault that missed its expectation (an expected fault needs no site)
  every_failure,       // fault, index-select, attention: every fault
};

// A failure a GPU core dump can locate: a crash, a timeout (the dump asked for through
// the driver's pipe says where the warps wait), or a CUDA error of a GPU exception's
// class (taxonomy::is_gpu_exception). A mismatch is not a fault, and neither is a launch
// the runtime refused.
bool is_dumpable_failure(const report::Result& r);

// Whether `r`, judged, gets a site run under `policy`.
bool wants_site_run(const report::Result& r, SitePolicy policy);

// Joins what the site run gave to the original result: its dumps' sites become the
// original's fault_sites, and details "coredump" says {"site_run": <the site run's
// outcome>, "dumps": <how many>}. Outcome, error and reason stay as they were (the site
// run, armed, may even have seen success where the unarmed run faulted). A site run
// without a dump leaves no site. Returns whether a site came.
bool merge_site_run(report::Result& original, const report::Result& site_run);

// The verdict line naming a result's site ("fault site (a second run with GPU core dumps
// armed): ..."), or "" when it has none.
std::string site_reason(const report::Result& r);

}  // namespace cudadiag::suite
