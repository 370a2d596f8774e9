#include "tma/conversion_probe.h"

#include <random>

namespace cudadiag::tma {

std::vector<std::uint32_t> conversion_probe_inputs(std::size_t count, std::uint64_t seed) {
  const std::uint32_t magnitudes[] = {
      0x3f801000u,  // 1 + half a tf32 ulp, kept bit even: a tie
      0x3f803000u,  // the same tie with the kept bit odd
      0x3f800fffu,  // just below half
      0x3f801001u,  // just above half
      0x3f800001u,  // the smallest fraction
      0x3f801fffu,  // just below the next tf32 value
      0x3f800000u,  // 1.0 exactly
      0x00001000u,  // subnormal tie, kept bit even
      0x00003000u,  // subnormal tie, kept bit odd
      0x00000001u,  // the smallest subnormal
      0x00000fffu,  // subnormal just below half
      0x00001001u,  // subnormal just above half
      0x007ff000u,  // the largest tie: rounds up to the smallest normal
      0x007fffffu,  // the largest subnormal
      0x7f7ff000u,  // a tie at the largest magnitude: rounds up to infinity
      0x7f7fefffu,  // just below it
      0x7f7fffffu,  // the largest finite value
      0x7f800000u,  // infinity
      0x7fc00000u,  // quiet NaN
      0x7f800001u,  // NaN whose payload tf32 would drop
      0x00000000u,  // zero
  };
  std::vector<std::uint32_t> out;
  for (const auto m : magnitudes) {
    out.push_back(m);
    out.push_back(m | 0x80000000u);
  }
  std::mt19937_64 rng(seed);
  while (out.size() < count) out.push_back(static_cast<std::uint32_t>(rng()));
  out.resize(count);
  return out;
}

Descriptor conversion_probe_descriptor(DataType t, std::uint64_t elements, std::uint32_t box) {
  Descriptor d;
  d.data_type = t;
  d.rank = 1;
  d.dims = {elements};
  d.box = {box};
  d.element_strides = {1};
  return d;
}

std::vector<CandidateFit> fit_conversion_models(const Descriptor& d, const LoadPlan& p,
                                                const std::vector<std::uint8_t>& source,
                                                const std::vector<std::uint8_t>& boxes) {
  std::vector<CandidateFit> fits;
  for (const auto r : {Tf32Rounding::truncate, Tf32Rounding::nearest_even, Tf32Rounding::nearest_away}) {
    for (const bool flush : {true, false}) {
      CandidateFit f;
      f.model = ConversionModel{r, flush};
      const auto check = check_load(d, p, source, boxes, f.model);
      f.mismatches = check.mismatches;
      f.first_mismatch = check.first_mismatch;
      fits.push_back(std::move(f));
    }
  }
  return fits;
}

std::string describe(const ConversionModel& m) {
  return to_string(m.tf32_rounding) + (m.ftz_flushes_subnormals ? ", subnormals flushed" : ", subnormals kept");
}

}  // namespace cudadiag::tma
