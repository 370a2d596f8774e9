// Child side of the fault catalog: the reproducer is prepared once (its buffers from the
// case's allocator, so the allocator decides whether an overrun is silent or faults);
// each run generates its input on the device from the run's seed, poisons the output
// and counts mismatches on the device (faults::FaultRunner), a whole batch per wait.
// Run 0 is checked on the host as well.
#include <memory>
#include <string>

#include "cases/catalog.h"
#include "child_families.h"
#include "kernels/faults/faults.h"
#include "repeat/series.h"

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

// A check in the details: the device's and the host's are written alike, so that they
// agree exactly when their JSON is equal.
json check_json(const faults::FaultCheck& c) {
  json j{{"checked", c.checked}, {"mismatches", c.mismatches}};
  if (!c.first_bad.empty()) j["first_bad"] = c.first_bad;
  return j;
}

class FaultCase : public CaseRun {
 public:
  explicit FaultCase(const suite::CaseSpec& spec)
      : session_(open_session(spec)),
        runner_(*session_, fault_params_of(cases::normalize_params(cases::Family::fault, spec.params)),
                repeat::kMaxBatch) {}

  Trial run(std::uint64_t seed) override { return run_alone(*this, seed); }

  Batch run_batch(const std::vector<std::uint64_t>& seeds) override {
    gpu::BatchResult done = runner_.run(seeds);
    Batch b;
    b.error = std::move(done.error);
    b.trials.reserve(done.counters.size());
    for (size_t i = 0; i < done.counters.size(); ++i) {
      const faults::FaultCheck c = runner_.describe(done.counters[i], seeds[i]);
      Trial t;
      t.outcome = c.mismatches == 0 ? report::Outcome::ok : report::Outcome::mismatch;
      t.reason = c.first_bad;
      t.details = check_json(c);
      b.trials.push_back(std::move(t));
    }
    return b;
  }

  // The output copied back and every expected value recomputed on the host from the
  // seed: the same counts and the same first element as the device check, or the
  // device check is broken.
  std::optional<HostCheck> host_check(std::uint64_t seed, const Trial& device) override {
    HostCheck hc;
    hc.details = check_json(runner_.host_check(seed));
    hc.agrees = hc.details == device.details;
    if (!hc.agrees) hc.disagreement = "the device check disagrees with the host check of run 0";
    return hc;
  }

  const gpu::Session* session() const override { return session_.get(); }

  json facts() const override {
    json j = json::object();
    for (const auto& [key, value] : runner_.facts()) j[key] = value;
    return j;
  }

 private:
  std::unique_ptr<gpu::Session> session_;
  faults::FaultRunner runner_;
};

}  // namespace

std::unique_ptr<CaseRun> make_fault_run(const suite::CaseSpec& spec) { return std::make_unique<FaultCase>(spec); }

}  // namespace cudadiag::app::child
