// index_select cases: the ring-attention seed (heads sliced, dilated positions gathered)
// in each layout, and bad indices with and without the bounds assert. Expectations are
// derived from the parameters (index_select_expectation), per allocator.
#include <string>

#include "cases/catalog.h"
#include "cases/run_expectation.h"
#include "index_select/index_select_params.h"

namespace cudadiag::cases {
namespace {

using index_select::IndexSelectParams;
using profiles::Allocator;

json normalize_index_select_params(const json& params) {
  return index_select::to_json(index_select::index_select_params_from_json(params));
}

CaseDef make_case(const std::string& id, const std::string& title, const json& overrides, Allocator fence_allocator) {
  const IndexSelectParams p = index_select::index_select_params_from_json(overrides);
  CaseDef c;
  c.id = "index_select." + id;
  c.family = Family::index_select;
  c.title = title;
  c.params = index_select::to_json(p);
  c.fence_allocator = fence_allocator;
  const Allocator other = profiles::other_fence(fence_allocator);
  c.expected.by_profile["default"] = index_select::index_select_expectation(p, Allocator::pool);
  c.expected.by_profile["nocache"] = index_select::index_select_expectation(p, Allocator::direct);
  c.expected.by_profile["fence"] = index_select::index_select_expectation(p, fence_allocator);
  c.expected.by_profile[std::string(profiles::to_string(other))] = index_select::index_select_expectation(p, other);
  // memcheck sees the pool's slabs as single allocations: what is silent under the pool
  // stays silent; errors are reported with the tool's own code.
  const std::string pool = c.expected.by_profile["default"];
  c.expected.by_profile["sanitizer"] = Expectation::parse(pool).requires_error() ? "error" : pool;
  c.expects_fault = Expectation::parse(c.expected.by_profile["fence"]).allows_error();
  add_blocking_variants(c.expected);
  c.tags = {"seed:ring-attention"};
  return c;
}

std::vector<CaseDef> index_select_cases() {
  return {
      make_case("head-slice-stride", "heads sliced, dilated gather, stride-aware kernel: correct on the view",
                json{{"layout", "stride"}}, Allocator::fence_back),
      make_case("head-slice-copy", "heads sliced, made contiguous first, then gathered: the seed's fix",
                json{{"layout", "copy"}}, Allocator::fence_back),
      make_case("head-slice-assume-contiguous",
                "heads sliced, kernel assumes packed strides: wrong elements, silently",
                json{{"layout", "assume-contiguous"}}, Allocator::fence_back),
      make_case("head-slice-offset-twice",
                "heads sliced, view offset applied twice: wrong elements and a read past the end of K",
                json{{"layout", "offset-twice"}}, Allocator::fence_back),
      make_case("oob-index-checked", "index S (one past the end) with the bounds assert: device assert (710)",
                json{{"indices", "oob"}, {"bounds", "checked"}}, Allocator::fence_back),
      make_case("oob-index-unchecked", "index S without a bounds check: reads past the end of K",
                json{{"indices", "oob"}, {"bounds", "unchecked"}}, Allocator::fence_back),
      make_case("negative-index-unchecked", "index -1 without a bounds check: reads before the start of K",
                json{{"indices", "negative"}, {"bounds", "unchecked"}}, Allocator::fence_front),
  };
}

}  // namespace

KernelFamily index_select_family() {
  KernelFamily f;
  f.id = Family::index_select;
  f.description = "index_select along S of [B,S,H,D] K and V on a heads slice (ring-attention seed)";
  f.cases = index_select_cases;
  f.normalize_params = normalize_index_select_params;
  return f;
}

}  // namespace cudadiag::cases
