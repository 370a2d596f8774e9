#include "suite/site_runs.h"

#include "evidence/site_error.h"
#include "taxonomy/taxonomy.h"

namespace cudadiag::suite {

using report::Outcome;

bool is_dumpable_failure(const report::Result& r) {
  switch (r.outcome) {
    case Outcome::crashed:
    case Outcome::timeout: return true;
    case Outcome::cuda_error: return r.error && taxonomy::is_gpu_exception(r.error->error_class);
    default: return false;
  }
}

bool wants_site_run(const report::Result& r, SitePolicy policy) {
  switch (policy) {
    case SitePolicy::none: return false;
    case SitePolicy::missed_expectation: return r.expectation_met == false && is_dumpable_failure(r);
    case SitePolicy::every_failure: return is_dumpable_failure(r);
  }
  return false;
}

bool merge_site_run(report::Result& original, const report::Result& site_run) {
  original.fault_sites = site_run.fault_sites;
  report::json c{{"site_run", std::string(report::to_string(site_run.outcome))},
                 {"dumps", site_run.fault_sites.size()}};
  original.details.set("coredump", report::value_from_json(c));
  return !original.fault_sites.empty();
}

std::string site_reason(const report::Result& r) {
  const report::FaultSite* s = evidence::exception_site(r.fault_sites);
  if (!s)
    for (const auto& x : r.fault_sites)
      if (x.unreadable.empty() && (!x.kernel.empty() || !x.waiting.empty())) {
        s = &x;
        break;
      }
  if (!s) return "";
  return "fault site (a second run with GPU core dumps armed): " + report::site_line(*s);
}

}  // namespace cudadiag::suite
