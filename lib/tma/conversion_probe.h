#pragma once
// The host half of the tf32 probe (scripts/device/tma-tf32-probe.sh): inputs chosen so
// that every candidate conversion (element_conversion.h) predicts a different result
// for some of them, and the fit of each candidate to what the device loaded. Pure, so
// that the choice of inputs is tested without a GPU: each candidate, taken as the
// truth, must be the only one that fits.
#include <cstdint>
#include <vector>

#include "tma/element_conversion.h"
#include "tma/load_reference.h"

namespace cudadiag::tma {

// fp32 bit patterns: exact ties with an even and with an odd kept bit, values just
// below and above half a tf32 ulp, subnormals (ties, the largest, the smallest),
// the largest finite values (which may round to infinity), infinities, NaNs, zeros,
// each with both signs; then seeded random patterns up to `count`.
std::vector<std::uint32_t> conversion_probe_inputs(std::size_t count, std::uint64_t seed);

// A 1D descriptor of `elements` elements of type t, loaded in boxes of `box`.
Descriptor conversion_probe_descriptor(DataType t, std::uint64_t elements, std::uint32_t box);

struct CandidateFit {
  ConversionModel model;
  std::uint64_t mismatches = 0;
  std::string first_mismatch;
};

// Every candidate (three roundings, subnormals flushed or not) checked against the
// boxes the device loaded from `source`.
std::vector<CandidateFit> fit_conversion_models(const Descriptor& d, const LoadPlan& p,
                                                const std::vector<std::uint8_t>& source,
                                                const std::vector<std::uint8_t>& boxes);

// "nearest_even, subnormals flushed"
std::string describe(const ConversionModel& m);

}  // namespace cudadiag::tma
