// TMA descriptor cases: the seed's descriptors decided by the host validator (no GPU),
// and the real driver encode plus the cp.async.bulk.tensor load check on sm_90.
#include <stdexcept>

#include "cases/catalog.h"
#include "tma/descriptor.h"
#include "tma/tma_json.h"
#include "tma/validator.h"

namespace cudadiag::cases {
namespace {

using tma::Descriptor;

constexpr const char* kSeedTag = "seed:flashinfer-tma-seqlen1";

// The seed: q [seq, 32 heads, 128] bf16 (NHD) read as (head_dim, seq, heads), 64x128x1 box.
Descriptor seed_descriptor(std::uint64_t seq_len, std::uint64_t seq_stride) {
  Descriptor d;
  d.data_type = tma::DataType::bfloat16;
  d.rank = 3;
  d.dims = {128, seq_len, 32};
  d.strides = {seq_stride, 256};
  d.box = {64, 128, 1};
  d.element_strides = {1, 1, 1};
  d.swizzle = tma::Swizzle::b128;
  d.l2_promotion = tma::L2Promotion::b128;
  return d;
}

Descriptor plain(tma::DataType t, std::vector<std::uint64_t> dims, std::vector<std::uint32_t> box) {
  Descriptor d;
  d.data_type = t;
  d.rank = static_cast<unsigned>(dims.size());
  std::uint64_t stride = tma::bytes_of(t, dims[0]);
  for (size_t i = 1; i < dims.size(); ++i) {
    d.strides.push_back(stride);
    stride *= dims[i];
  }
  d.dims = std::move(dims);
  d.box = std::move(box);
  d.element_strides.assign(d.rank, 1);
  return d;
}

CaseDef make_case(std::string id, std::string title, const Descriptor& d, bool load, std::string expected) {
  CaseDef c;
  c.id = std::move(id);
  c.family = Family::tma;
  c.title = std::move(title);
  c.params = json{{"descriptor", tma::to_json(d)}, {"load", load}};
  c.expected.otherwise = std::move(expected);
  c.tags = {"catalog"};
  return c;
}

std::vector<CaseDef> tma_cases() {
  std::vector<CaseDef> out;
  auto seq1 = make_case("tma.seed-seq1.host", "seed: seq_len 1 descriptor (size-1 stride 2 bytes) rejected by the rules",
                        seed_descriptor(1, 2), false, "host_invalid");
  seq1.host_only = true;
  seq1.tags.push_back(kSeedTag);
  out.push_back(seq1);
  auto seq2 = make_case("tma.seed-seq2.host", "seed: seq_len 2 descriptor (stride 8192 bytes) passes the rules",
                        seed_descriptor(2, 8192), false, "host_valid");
  seq2.host_only = true;
  seq2.tags.push_back(kSeedTag);
  out.push_back(seq2);

  auto enc1 = make_case("tma.seed-seq1.encode",
                        "seed: the driver rejects the seq_len 1 descriptor (CUDA_ERROR_INVALID_VALUE)",
                        seed_descriptor(1, 2), true, "error:invalid_value|error:1");
  enc1.tags.push_back(kSeedTag);
  out.push_back(enc1);
  auto load3 = make_case("tma.seed-seq2.load",
                         "seed: seq_len 2 encodes and loads; the 128-row box passes the 2-row tensor (zero fill)",
                         seed_descriptor(2, 8192), true, "ok");
  load3.tags.push_back(kSeedTag);
  out.push_back(load3);

  auto d2 = plain(tma::DataType::bfloat16, {256, 96}, {64, 32});
  d2.swizzle = tma::Swizzle::b128;
  d2.l2_promotion = tma::L2Promotion::b128;
  out.push_back(make_case("tma.load-2d", "2D bf16 tensor, 64x32 boxes, 128B swizzle: encode and load every box", d2,
                          true, "ok"));
  auto d3 = plain(tma::DataType::float32, {64, 40, 6}, {32, 16, 4});
  out.push_back(make_case("tma.load-3d", "3D fp32 tensor with partial boxes at every edge: encode and load", d3, true,
                          "ok"));
  auto big = plain(tma::DataType::float32, {20, 3}, {32, 8});
  big.oob_fill = tma::OobFill::nan_request_zero_fma;
  out.push_back(make_case("tma.box-larger-than-tensor",
                          "box 32x8 over a 20x3 fp32 tensor: the load must fill the rest with NaN", big, true, "ok"));
  return out;
}

report::Result evaluate_tma_on_host(const CaseDef& c) {
  report::Result r;
  r.case_id = c.id;
  r.kernel = c.family;
  r.params = report::fields_from_json(c.params);
  r.device = report::Device::host_only();
  const auto v = tma::validate(tma::descriptor_from_json(c.params.at("descriptor")));
  r.outcome = v.valid() ? report::Outcome::host_valid : report::Outcome::host_invalid;
  for (const auto& f : v.findings)
    if (f.severity == tma::Severity::error) {
      r.reason = f.rule + ": " + f.message;
      break;
    }
  r.details.set("validator", report::value_from_json(tma::to_json(v)));
  return r;
}

json normalize_tma_params(const json& p) {
  if (!p.is_object()) throw std::invalid_argument("tma parameters: expected an object");
  if (!p.contains("descriptor")) throw std::invalid_argument("descriptor: missing");
  json out;
  try {
    out["descriptor"] = tma::to_json(tma::descriptor_from_json(p["descriptor"]));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("descriptor.") + e.what());
  }
  out["load"] = p.value("load", true);
  if (p.contains("seed")) out["seed"] = p["seed"];
  return out;
}

}  // namespace

KernelFamily tma_family() {
  KernelFamily f;
  f.id = Family::tma;
  f.description = "TMA descriptors: host rule validator, cuTensorMapEncodeTiled, cp.async.bulk.tensor box loads";
  f.cases = tma_cases;
  f.normalize_params = normalize_tma_params;
  f.host_eval = evaluate_tma_on_host;
  return f;
}

}  // namespace cudadiag::cases
