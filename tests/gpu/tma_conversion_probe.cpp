// tma-conversion-probe: which conversion does the TMA copy engine apply to tf32 and
// _ftz elements? Loads inputs that tell the candidates apart (lib/tma/conversion_probe.h)
// with the same cp.async.bulk.tensor kernel `cudadiag tma` uses, as fp32 (the control:
// bit for bit), fp32_ftz, tf32 and tf32_ftz, and prints, per type, the candidates that
// fit every element and the element-by-element answers for the chosen inputs.
//
// Exit: 0 the default model (lib/tma/element_conversion.h) fits every type; 1 it does
// not (the output names the candidate that does); 2 a CUDA failure; 3 no sm_90 device.
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/runtime/gpu_runtime.h"
#include "kernels/tma/tma_device.h"
#include "tma/conversion_probe.h"

namespace {

using namespace cudadiag;

constexpr std::uint64_t kElements = 4096;
constexpr std::uint32_t kBox = 256;
constexpr std::size_t kShown = 42;  // the chosen inputs (both signs); the rest are random

gpu::tma::TiledSpec spec_of(const tma::Descriptor& d) {
  gpu::tma::TiledSpec s;
  s.data_type = static_cast<int>(d.data_type);
  s.rank = d.rank;
  s.dims[0] = d.dims[0];
  s.box[0] = d.box[0];
  s.element_strides[0] = 1;
  return s;
}

std::uint32_t word(const std::vector<std::uint8_t>& bytes, std::size_t i) {
  std::uint32_t v = 0;
  std::memcpy(&v, bytes.data() + 4 * i, 4);
  return v;
}

struct TypeResult {
  tma::DataType type;
  bool default_fits = false;
  std::vector<tma::CandidateFit> fits;
  std::vector<std::uint8_t> loaded;
};

TypeResult probe_type(tma::DataType t, const std::vector<std::uint32_t>& inputs) {
  TypeResult r{t, false, {}, {}};
  const auto d = tma::conversion_probe_descriptor(t, kElements, kBox);
  const auto plan = tma::plan_load(d);
  if (!plan.possible) throw std::runtime_error("load plan: " + plan.reason);
  gpu::tma::LoadRequest req;
  req.spec = spec_of(d);
  req.boxes = plan.boxes;
  req.box_bytes = plan.box_bytes;
  req.box_counts = plan.box_counts;
  req.source.resize(plan.source_bytes);
  std::memcpy(req.source.data(), inputs.data(), plan.source_bytes);
  gpu::Session session(gpu::AllocatorMode::direct);
  const auto run = gpu::tma::run_tiled_load(session, req);
  if (run.encode_result != 0)
    throw std::runtime_error("cuTensorMapEncodeTiled(" + tma::to_string(t) + ") returned " +
                             std::to_string(run.encode_result));
  r.loaded = run.boxes;
  r.fits = tma::fit_conversion_models(d, plan, req.source, run.boxes);
  r.default_fits = tma::check_load(d, plan, req.source, run.boxes).mismatches == 0;
  return r;
}

void print_elements(const std::vector<std::uint32_t>& inputs, const std::vector<TypeResult>& results) {
  std::printf("\n%-10s", "input");
  for (const auto& r : results) std::printf("  %-12s", tma::to_string(r.type).c_str());
  std::printf("  %-10s  %-10s  %-10s\n", "trunc", "near_even", "near_away");
  for (std::size_t i = 0; i < kShown && i < inputs.size(); ++i) {
    std::printf("0x%08x", inputs[i]);
    for (const auto& r : results) std::printf("    0x%08x", word(r.loaded, i));
    for (const auto m : {tma::Tf32Rounding::truncate, tma::Tf32Rounding::nearest_even, tma::Tf32Rounding::nearest_away})
      std::printf("  0x%08x", tma::to_tf32(inputs[i], m));
    std::printf("\n");
  }
}

}  // namespace

int main() {
  const auto info = gpu::tma::probe_device(0);
  if (!info.usable || info.cc_major < 9) {
    std::printf("GPU-TEST-SKIPPED: the probe needs an sm_90+ device (%s)\n",
                info.usable ? (info.name + " is sm_" + std::to_string(info.cc_major * 10 + info.cc_minor)).c_str()
                            : info.error.c_str());
    return 3;
  }
  std::printf("device: %s (sm_%d%d)\n", info.name.c_str(), info.cc_major, info.cc_minor);
  const auto inputs = tma::conversion_probe_inputs(kElements, 20240601);
  std::vector<TypeResult> results;
  try {
    for (const auto t : {tma::DataType::float32, tma::DataType::float32_ftz, tma::DataType::tfloat32,
                         tma::DataType::tfloat32_ftz})
      results.push_back(probe_type(t, inputs));
  } catch (const gpu::CudaError& e) {
    std::printf("CUDA failure: %s at %s (%s)\n", e.failure().name.c_str(), e.failure().api_call.c_str(),
                e.failure().message.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::printf("probe failure: %s\n", e.what());
    return 2;
  }
  print_elements(inputs, results);

  std::printf("\n%-10s %-38s %s\n", "TYPE", "CANDIDATE", "MISMATCHES (of 4096)");
  bool all_default = true;
  for (const auto& r : results) {
    for (const auto& f : r.fits)
      std::printf("%-10s %-38s %llu\n", tma::to_string(r.type).c_str(), tma::describe(f.model).c_str(),
                  static_cast<unsigned long long>(f.mismatches));
    all_default = all_default && r.default_fits;
  }
  std::printf("\n");
  for (const auto& r : results) {
    std::string fitting;
    for (const auto& f : r.fits)
      if (f.mismatches == 0) fitting += (fitting.empty() ? "" : " | ") + tma::describe(f.model);
    std::printf("%-10s fits: %s; default model (%s): %s\n", tma::to_string(r.type).c_str(),
                fitting.empty() ? "NONE" : fitting.c_str(), tma::describe(tma::ConversionModel{}).c_str(),
                r.default_fits ? "fits" : "DOES NOT FIT");
  }
  std::printf("RESULT: %s\n", all_default ? "the default conversion model matches the device"
                                          : "the default conversion model does not match: set kTf32Rounding / "
                                            "ConversionModel in lib/tma/element_conversion.h to the fitting candidate");
  return all_default ? 0 : 1;
}
