// Child side of the fault catalog: each run opens a fresh session (the reproducer's
// buffers come from the case's allocator) with fresh inputs.
#include <memory>
#include <string>

#include "cases/catalog.h"
#include "child_families.h"
#include "kernels/faults/faults.h"

namespace cudadiag::app::child {
namespace {

faults::FaultParams fault_params_of(const json& p) {
  faults::FaultParams fp;
  fp.reproducer = p.at("reproducer").get<std::string>();
  fp.elements = p.value("elements", fp.elements);
  fp.k = p.value("k", fp.k);
  fp.offset_bytes = p.value("offset_bytes", fp.offset_bytes);
  return fp;
}

class FaultRun : public CaseRun {
 public:
  explicit FaultRun(const runner::CaseSpec& spec)
      : spec_(spec), params_(fault_params_of(cases::normalize_params(cases::Family::fault, spec.params))) {}

  Trial run(std::uint64_t seed) override {
    session_ = open_session(spec_);
    params_.seed = seed;
    const faults::FaultRun f = faults::run_fault(*session_, params_);
    Trial t;
    t.outcome = f.mismatches == 0 ? report::Outcome::ok : report::Outcome::mismatch;
    t.reason = f.first_bad;
    t.details = json{{"checked", f.checked}, {"mismatches", f.mismatches}};
    if (!f.first_bad.empty()) t.details["first_bad"] = f.first_bad;
    for (const auto& [key, value] : f.facts) t.details[key] = value;
    return t;
  }

  const gpu::Session* session() const override { return session_.get(); }

 private:
  runner::CaseSpec spec_;
  faults::FaultParams params_;
  std::unique_ptr<gpu::Session> session_;
};

}  // namespace

std::unique_ptr<CaseRun> make_fault_run(const runner::CaseSpec& spec) { return std::make_unique<FaultRun>(spec); }

}  // namespace cudadiag::app::child
