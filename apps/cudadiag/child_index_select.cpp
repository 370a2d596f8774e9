// Child side of index_select: each run opens a fresh session with fresh random K and V
// and compares both outputs bit-exactly with the CPU reference.
#include <memory>
#include <string>

#include "child_families.h"
#include "index_select/index_select_params.h"
#include "kernels/index_select/index_select.h"

namespace cudadiag::app::child {
namespace {

namespace is = cudadiag::index_select;

is::GatherProblem problem_of(const is::IndexSelectParams& p) {
  is::GatherProblem g;
  g.B = p.B;
  g.S = p.S;
  g.H = p.H;
  g.D = p.D;
  g.h0 = p.h0;
  g.h1 = p.h1;
  g.dtype = p.dtype == is::ElementType::fp32   ? is::Dtype::fp32
            : p.dtype == is::ElementType::bf16 ? is::Dtype::bf16
                                               : is::Dtype::fp16;
  g.index64 = p.index_dtype == is::IndexType::int64;
  g.checked = p.bounds == is::Bounds::checked;
  const is::GatherSource src = is::gather_source(p);
  g.via_copy = src.from_copy;
  g.base_offset = src.base_offset;
  g.stride_b = src.stride_b;
  g.stride_s = src.stride_s;
  g.stride_h = src.stride_h;
  return g;
}

json setup_details(const is::IndexSelectParams& p, const std::vector<long long>& idx) {
  const is::ReadExtent r = is::read_extent(p);
  const is::GatherSource g = is::gather_source(p);
  return json{{"positions", idx.size()},
              {"first_position", idx.front()},
              {"last_position", idx.back()},
              {"source_strides", {g.stride_b, g.stride_s, g.stride_h, 1}},
              {"source_offset", g.base_offset},
              {"read_extent", {{"buffer", r.buffer}, {"elements", r.elements}, {"lo", r.lo}, {"hi", r.hi}}}};
}

class IndexSelectRun : public CaseRun {
 public:
  explicit IndexSelectRun(const suite::CaseSpec& spec)
      : spec_(spec),
        params_(is::index_select_params_from_json(spec.params)),
        problem_(problem_of(params_)),
        idx_(is::gather_indices(params_)) {}

  Trial run(std::uint64_t seed) override {
    const auto k = is::random_tensor(params_, params_.source_elements(), seed);
    const auto v = is::random_tensor(params_, params_.source_elements(), seed ^ 0x9e3779b97f4a7c15ull);
    session_ = open_session(spec_);
    std::vector<std::uint8_t> k_out, v_out;
    is::run_gather_pair(*session_, problem_, k, v, idx_, k_out, v_out);
    const auto ck = is::compare_gather(params_, "k", k_out, is::reference_gather(params_, k, idx_), idx_);
    const auto cv = is::compare_gather(params_, "v", v_out, is::reference_gather(params_, v, idx_), idx_);
    const long long mismatches = ck.mismatches + cv.mismatches;
    Trial t;
    t.outcome = mismatches == 0 ? report::Outcome::ok : report::Outcome::mismatch;
    t.details["compared"] = ck.compared + cv.compared;
    t.details["mismatches"] = mismatches;
    t.details["invalid_index_elements"] = ck.invalid_rows + cv.invalid_rows;
    if (!ck.first_bad.is_null()) t.details["first_bad"] = ck.first_bad;
    else if (!cv.first_bad.is_null()) t.details["first_bad"] = cv.first_bad;
    if (mismatches > 0)
      t.reason = std::to_string(mismatches) + " of " + std::to_string(ck.compared + cv.compared) +
                 " output elements differ from the CPU reference";
    return t;
  }

  const gpu::Session* session() const override { return session_.get(); }
  json facts() const override { return setup_details(params_, idx_); }

 private:
  suite::CaseSpec spec_;
  is::IndexSelectParams params_;
  is::GatherProblem problem_;
  std::vector<long long> idx_;
  std::unique_ptr<gpu::Session> session_;
};

}  // namespace

std::unique_ptr<CaseRun> make_index_select_run(const suite::CaseSpec& spec) {
  return std::make_unique<IndexSelectRun>(spec);
}

}  // namespace cudadiag::app::child
