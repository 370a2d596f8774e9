// index_select cases: the ring-attention seed (heads sliced, dilated positions gathered)
// in each layout, and bad indices with and without the bounds assert. Expectations are
// derived from the parameters (index_select_expectation), per allocator.
#include <string>

#include "cases/catalog.h"
#include "cases/run_expectation.h"
#include "cases/index_select_params.h"

namespace cudadiag::cases {
namespace {

json normalize(const json& params) { return to_json(index_select_params_from_json(params)); }

CaseDef make_case(const std::string& id, const std::string& title, const json& overrides,
                  const std::string& fence_allocator) {
  const IndexSelectParams p = index_select_params_from_json(overrides);
  CaseDef c;
  c.id = "index_select." + id;
  c.kernel = "index_select";
  c.title = title;
  c.params = to_json(p);
  c.fence_allocator = fence_allocator;
  const std::string other = fence_allocator == "fence-back" ? "fence-front" : "fence-back";
  c.expected["default"] = index_select_expectation(p, "pool");
  c.expected["nocache"] = index_select_expectation(p, "direct");
  c.expected["fence"] = index_select_expectation(p, fence_allocator);
  c.expected[other] = index_select_expectation(p, other);
  // memcheck sees the pool's slabs as single allocations: what is silent under the pool
  // stays silent; errors are reported with the tool's own code.
  const std::string pool = c.expected["default"];
  c.expected["sanitizer"] = pool.rfind("error", 0) == 0 ? "error" : pool;
  c.expects_fault = c.expected["fence"].find("error") != std::string::npos;
  add_blocking_variants(c.expected);
  c.tags = {"seed:ring-attention"};
  return c;
}

std::vector<CaseDef> index_select_cases() {
  return {
      make_case("head-slice-stride", "heads sliced, dilated gather, stride-aware kernel: correct on the view",
                json{{"layout", "stride"}}, "fence-back"),
      make_case("head-slice-copy", "heads sliced, made contiguous first, then gathered: the seed's fix",
                json{{"layout", "copy"}}, "fence-back"),
      make_case("head-slice-assume-contiguous",
                "heads sliced, kernel assumes packed strides: wrong elements, silently",
                json{{"layout", "assume-contiguous"}}, "fence-back"),
      make_case("head-slice-offset-twice",
                "heads sliced, view offset applied twice: wrong elements and a read past the end of K",
                json{{"layout", "offset-twice"}}, "fence-back"),
      make_case("oob-index-checked", "index S (one past the end) with the bounds assert: device assert (710)",
                json{{"indices", "oob"}, {"bounds", "checked"}}, "fence-back"),
      make_case("oob-index-unchecked", "index S without a bounds check: reads past the end of K",
                json{{"indices", "oob"}, {"bounds", "unchecked"}}, "fence-back"),
      make_case("negative-index-unchecked", "index -1 without a bounds check: reads before the start of K",
                json{{"indices", "negative"}, {"bounds", "unchecked"}}, "fence-front"),
  };
}

}  // namespace

KernelFamily index_select_family() {
  KernelFamily f;
  f.kernel = "index_select";
  f.description = "index_select along S of [B,S,H,D] K and V on a heads slice (ring-attention seed)";
  f.cases = index_select_cases;
  f.normalize_params = normalize;
  return f;
}

}  // namespace cudadiag::cases
