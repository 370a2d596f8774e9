// Child side of the tma family: the host validator's verdict, the real
// cuTensorMapEncodeTiled beside it, and (sm_90+) the box-load check.
#include <random>
#include <stdexcept>

#include "child_families.h"
#include "kernels/runtime/driver_api.h"
#include "kernels/tma/tma_device.h"
#include "tma/load_reference.h"
#include "tma/tma_json.h"
#include "tma/validator.h"

namespace cudadiag::app::child {
namespace {

namespace dev = gpu::tma;

dev::TiledSpec spec_of(const tma::Descriptor& d) {
  dev::TiledSpec s;
  s.data_type = static_cast<int>(d.data_type);
  s.rank = d.rank;
  for (size_t i = 0; i < d.dims.size() && i < dev::kSpecMaxRank; ++i) s.dims[i] = d.dims[i];
  for (size_t i = 0; i < d.strides.size() && i < dev::kSpecMaxRank; ++i) s.strides[i] = d.strides[i];
  for (size_t i = 0; i < d.box.size() && i < dev::kSpecMaxRank; ++i) s.box[i] = d.box[i];
  for (size_t i = 0; i < d.element_strides.size() && i < dev::kSpecMaxRank; ++i)
    s.element_strides[i] = d.element_strides[i];
  s.interleave = static_cast<int>(d.interleave);
  s.swizzle = static_cast<int>(d.swizzle);
  s.l2_promotion = static_cast<int>(d.l2_promotion);
  s.oob_fill = static_cast<int>(d.oob_fill);
  return s;
}

json encode_json(int rc) {
  return json{{"result", rc}, {"name", rc == 0 ? std::string("CUDA_SUCCESS") : gpu::driver_error_name(rc)}};
}

gpu::CudaFailure encode_failure(int rc) {
  gpu::CudaFailure f;
  f.code = rc;
  f.driver = true;
  f.name = gpu::driver_error_name(rc);
  f.message = gpu::driver_error_string(rc);
  f.surfaced_at = "encode";
  f.api_call = "cuTensorMapEncodeTiled";
  return f;
}

json validator_summary(const tma::Verdict& v) {
  return json{{"valid", v.valid()},
              {"errors", v.rule_ids(tma::Severity::error)},
              {"warnings", v.rule_ids(tma::Severity::warning)}};
}

// Runs the load check; fills details["load"] and returns the outcome ("ok", "mismatch",
// "skipped") with a reason.
std::string run_load(gpu::Session& s, const tma::Descriptor& d, const dev::DeviceInfo& info, json& details,
                     std::string& reason, int& encode_rc, std::uint64_t seed) {
  const auto plan = tma::plan_load(d);
  if (info.cc_major < 9) {
    reason = "TMA loads need compute capability 9.0 or newer (this device is " + std::to_string(info.cc_major) + "." +
             std::to_string(info.cc_minor) + ")";
    details["load"] = json{{"ran", false}, {"reason", reason}};
    return "skipped";
  }
  if (!plan.possible) {
    details["load"] = json{{"ran", false}, {"reason", plan.reason}};
    return "";  // nothing to load: the encode decides
  }
  dev::LoadRequest req;
  req.spec = spec_of(d);
  req.address_offset = d.address % 256;
  req.boxes = plan.boxes;
  req.box_bytes = plan.box_bytes;
  req.box_counts = plan.box_counts;
  req.source.resize(plan.source_bytes);
  std::mt19937_64 rng(seed);
  for (auto& b : req.source) b = static_cast<std::uint8_t>(rng() | 1);  // never zero: a stray fill shows
  const auto run = dev::run_tiled_load(s, req);
  encode_rc = run.encode_result;
  if (run.encode_result != 0) return "";
  const auto check = tma::check_load(d, plan, req.source, run.boxes);
  details["load"] = json{{"ran", true},
                         {"boxes", plan.boxes},
                         {"box_bytes", plan.box_bytes},
                         {"elements", check.elements},
                         {"oob_elements", check.oob_elements},
                         {"mismatches", check.mismatches},
                         {"seed", seed},
                         {"grid", run.grid},
                         {"block", run.block},
                         {"dynamic_smem", run.dynamic_smem}};
  if (check.mismatches == 0) return "ok";
  details["load"]["first_mismatch"] = check.first_mismatch;
  reason = std::to_string(check.mismatches) + " of " + std::to_string(check.elements) +
           " elements differ; first: " + check.first_mismatch;
  return "mismatch";
}

class TmaRun : public CaseRun {
 public:
  explicit TmaRun(const suite::CaseSpec& spec)
      : spec_(spec), d_(tma::descriptor_from_json(spec.params.at("descriptor"))), load_(spec.params.value("load", true)) {}

  Trial run(std::uint64_t seed) override {
    Trial t;
    const auto info = dev::probe_device(0);
    if (!info.usable) {
      t.outcome = report::Outcome::skipped;
      t.reason = "no usable CUDA device: " + info.error;
      t.details = json{{"validator", validator_summary(tma::validate(d_))}, {"no_device", true}};
      return t;
    }
    // The driver's answer depends on the architecture (packed types need sm_100+), so the
    // verdict it is compared with is the validator's for this device.
    const int device_cc = info.cc_major * 10 + info.cc_minor;
    const auto verdict = tma::validate(d_, device_cc);
    json& details = t.details;
    details["validator"] = validator_summary(verdict);
    details["validator"]["target_cc"] = device_cc;
    details["device"] = json{{"name", info.name},
                             {"cc", std::to_string(info.cc_major) + "." + std::to_string(info.cc_minor)},
                             {"cc_number", device_cc}};

    session_ = open_session(spec_);
    std::string outcome, reason;
    int rc = 0;
    if (load_) outcome = run_load(*session_, d_, info, details, reason, rc, seed);
    if (!details.contains("load") || !details["load"].value("ran", false)) {
      // Encode only, on a real buffer with the descriptor's alignment (the encode does
      // not read the memory).
      void* base = dev::offset_buffer(*session_, "tma_encode_target", 4096, d_.address % 256);
      alignas(128) unsigned char map[128] = {};
      rc = dev::encode_tiled(spec_of(d_), base, map);
    }
    details["encode"] = encode_json(rc);

    const bool driver_ok = rc == 0;
    if (driver_ok != verdict.valid()) {
      t.outcome = report::Outcome::driver_disagrees;
      t.reason = driver_ok ? "the driver accepted a descriptor the validator rejects (" +
                                 verdict.rule_ids(tma::Severity::error).front() + ")"
                           : "the driver rejected (" + gpu::driver_error_name(rc) +
                                 ") a descriptor the validator accepts";
      if (!driver_ok) t.error = error_info(encode_failure(rc));
    } else if (!driver_ok) {
      t.outcome = report::Outcome::cuda_error;
      t.reason = "cuTensorMapEncodeTiled returned " + gpu::driver_error_name(rc) +
                 (verdict.valid() ? "" : "; the validator agrees: " + verdict.rule_ids(tma::Severity::error).front());
      t.error = error_info(encode_failure(rc));
    } else if (outcome.empty()) {
      t.outcome = report::Outcome::ok;
      if (details.contains("load") && !details["load"].value("ran", false))
        t.reason = "encoded; load not checked: " + details["load"].value("reason", std::string());
    } else {
      t.outcome = *report::parse_outcome(outcome);
      t.reason = reason;
    }
    return t;
  }

  const gpu::Session* session() const override { return session_.get(); }

 private:
  suite::CaseSpec spec_;
  tma::Descriptor d_;
  bool load_ = true;
  std::unique_ptr<gpu::Session> session_;
};

}  // namespace

std::unique_ptr<CaseRun> make_tma_run(const suite::CaseSpec& spec) { return std::make_unique<TmaRun>(spec); }

}  // namespace cudadiag::app::child
