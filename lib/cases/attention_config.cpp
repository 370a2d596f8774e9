#include "cases/attention_config.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

#include "kernels/attention/attention_layout.h"

namespace cudadiag::cases {
namespace ak = cudadiag::attention;

void fill_default_strides(AttentionConfig& c) {
  const long long d = c.head_dim, s = c.seq_len, h = c.heads;
  for (auto& t : c.strides) {
    if (t.seq == 0) t.seq = d;
    if (t.head == 0) t.head = s * t.seq;
    if (t.batch == 0) t.batch = h * t.head;
  }
}

size_t tensor_extent_elems(const AttentionConfig& c, int tensor) {
  const auto& t = c.strides.at(static_cast<size_t>(tensor));
  const long long span = (c.batch - 1LL) * t.batch + (c.heads - 1LL) * t.head +
                         (c.seq_len - 1LL) * t.seq + c.head_dim;
  return span > 0 ? static_cast<size_t>(span) : 0;
}

size_t attention_smem_bytes(const AttentionConfig& c) {
  return ak::smem_bytes(c.block_m, c.block_n, c.head_dim);
}

int attention_threads(const AttentionConfig& c) { return c.warps * 32; }

double attention_tolerance(const std::string& dtype) {
  return dtype == "bf16" ? kToleranceBf16 : kToleranceFp16;
}

double attention_flops(const AttentionConfig& c) {
  const double f = 4.0 * c.batch * c.heads * static_cast<double>(c.seq_len) * c.seq_len * c.head_dim;
  return c.causal ? f / 2 : f;
}

namespace {

template <size_t N>
std::string list_of(const std::array<int, N>& set) {
  std::string out;
  for (int v : set) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return "{" + out + "}";
}

}  // namespace

std::vector<std::string> validate_attention(const AttentionConfig& c, size_t smem_limit) {
  std::vector<std::string> why;
  if (c.dtype != "fp16" && c.dtype != "bf16")
    why.push_back("dtype '" + c.dtype + "' is not supported (fp16, bf16)");
  if (!ak::contains(ak::kHeadDims, c.head_dim))
    why.push_back("head_dim " + std::to_string(c.head_dim) + " is not compiled " + list_of(ak::kHeadDims));
  if (c.batch < 1) why.push_back("batch " + std::to_string(c.batch) + " must be >= 1");
  if (c.heads < 1) why.push_back("heads " + std::to_string(c.heads) + " must be >= 1");
  if (c.seq_len < 1) why.push_back("seq_len " + std::to_string(c.seq_len) + " must be >= 1");
  if (c.block_m % ak::kSlabRows != 0 || c.block_m < ak::kSlabRows)
    why.push_back("block_m " + std::to_string(c.block_m) + " is not a positive multiple of 16 (the rows of one warp's mma slab)");
  if (!ak::contains(ak::kBlockMs, c.block_m))
    why.push_back("block_m " + std::to_string(c.block_m) + " is not compiled " + list_of(ak::kBlockMs));
  if (!ak::contains(ak::kBlockNs, c.block_n))
    why.push_back("block_n " + std::to_string(c.block_n) + " is not compiled " + list_of(ak::kBlockNs));
  if (!ak::contains(ak::kWarpCounts, c.warps))
    why.push_back("warps " + std::to_string(c.warps) + " is not compiled " + list_of(ak::kWarpCounts));
  if (c.warps < 1 || attention_threads(c) > 1024)
    why.push_back("threads per block " + std::to_string(attention_threads(c)) + " outside 1..1024");
  if (c.head_dim > 0 && c.block_m > 0 && c.block_n > 0) {
    const size_t smem = attention_smem_bytes(c);
    if (smem > smem_limit)
      why.push_back("shared memory " + std::to_string(smem) + " bytes exceeds the device's opt-in limit of " +
                    std::to_string(smem_limit) + " bytes");
  }
  // cp.async moves 16 bytes: rows must start on 16-byte boundaries. The misalign
  // knob exists to break exactly this, so only its own offset is exempt.
  if (c.misalign_bytes < 0) why.push_back("misalign_bytes " + std::to_string(c.misalign_bytes) + " must be >= 0");
  for (size_t i = 0; i < c.strides.size(); ++i) {
    const auto& t = c.strides[i];
    for (auto [name, v] : {std::pair{"batch", t.batch}, std::pair{"head", t.head}, std::pair{"seq", t.seq}}) {
      if (v < 0)
        why.push_back(std::string(kTensorNames[i]) + " stride " + name + " " + std::to_string(v) + " is negative");
      else if ((v * ak::kElemBytes) % ak::kVectorBytes != 0)
        why.push_back(std::string(kTensorNames[i]) + " stride " + name + " " + std::to_string(v) +
                      " elements is not a multiple of 16 bytes");
    }
    if (t.seq != 0 && t.seq < c.head_dim)
      why.push_back(std::string(kTensorNames[i]) + " seq stride " + std::to_string(t.seq) +
                    " is smaller than head_dim: rows overlap");
  }
  return why;
}

json attention_params_to_json(const AttentionConfig& c) {
  json strides = json::object();
  for (size_t i = 0; i < c.strides.size(); ++i)
    strides[kTensorNames[i]] = {c.strides[i].batch, c.strides[i].head, c.strides[i].seq};
  return json{{"dtype", c.dtype},         {"batch", c.batch},
              {"heads", c.heads},         {"seq_len", c.seq_len},
              {"head_dim", c.head_dim},   {"causal", c.causal},
              {"block_m", c.block_m},     {"block_n", c.block_n},
              {"warps", c.warps},         {"strides", strides},
              {"misalign_bytes", c.misalign_bytes}, {"no_tail_mask", c.no_tail_mask},
              {"drop_barrier", c.drop_barrier},     {"smem_overflow", c.smem_overflow}};
}

namespace {

int int_param(const json& p, const char* key, int def) {
  if (!p.contains(key)) return def;
  const auto& v = p[key];
  if (!v.is_number_integer()) throw std::invalid_argument(std::string(key) + ": expected an integer, got " + v.dump());
  return v.get<int>();
}

bool bool_param(const json& p, const char* key, bool def) {
  if (!p.contains(key)) return def;
  const auto& v = p[key];
  if (!v.is_boolean()) throw std::invalid_argument(std::string(key) + ": expected true or false, got " + v.dump());
  return v.get<bool>();
}

}  // namespace

AttentionConfig attention_config_from_json(const json& p) {
  if (!p.is_object()) throw std::invalid_argument("attention parameters: expected an object");
  static const std::set<std::string> known = {
      "dtype", "batch", "heads", "seq_len", "head_dim", "causal", "block_m", "block_n", "warps",
      "strides", "misalign_bytes", "no_tail_mask", "drop_barrier", "smem_overflow",
      "bench", "seed", "repeat"};
  for (const auto& [k, v] : p.items())
    if (!known.count(k)) throw std::invalid_argument("unknown attention parameter '" + k + "'");
  AttentionConfig c;
  if (p.contains("dtype")) {
    if (!p["dtype"].is_string()) throw std::invalid_argument("dtype: expected a string, got " + p["dtype"].dump());
    c.dtype = p["dtype"].get<std::string>();
  }
  c.batch = int_param(p, "batch", c.batch);
  c.heads = int_param(p, "heads", c.heads);
  c.seq_len = int_param(p, "seq_len", c.seq_len);
  c.head_dim = int_param(p, "head_dim", c.head_dim);
  c.causal = bool_param(p, "causal", c.causal);
  c.block_m = int_param(p, "block_m", c.block_m);
  c.block_n = int_param(p, "block_n", c.block_n);
  c.warps = int_param(p, "warps", c.warps);
  c.misalign_bytes = int_param(p, "misalign_bytes", c.misalign_bytes);
  c.no_tail_mask = bool_param(p, "no_tail_mask", c.no_tail_mask);
  c.drop_barrier = bool_param(p, "drop_barrier", c.drop_barrier);
  c.smem_overflow = bool_param(p, "smem_overflow", c.smem_overflow);
  if (p.contains("strides")) {
    const auto& s = p["strides"];
    if (!s.is_object()) throw std::invalid_argument("strides: expected an object {q,k,v,o: [batch, head, seq]}");
    for (const auto& [k, v] : s.items()) {
      const auto it = std::find_if(kTensorNames.begin(), kTensorNames.end(), [&key = k](const char* n) { return key == n; });
      if (it == kTensorNames.end()) throw std::invalid_argument("strides: unknown tensor '" + k + "' (q, k, v, o)");
      if (!v.is_array() || v.size() != 3 || !std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number_integer(); }))
        throw std::invalid_argument("strides." + k + ": expected [batch, head, seq] integers, got " + v.dump());
      auto& t = c.strides[static_cast<size_t>(it - kTensorNames.begin())];
      t = {v[0].get<long long>(), v[1].get<long long>(), v[2].get<long long>()};
    }
  }
  if (c.head_dim > 0 && c.seq_len > 0 && c.heads > 0) fill_default_strides(c);
  return c;
}

std::string attention_expectation(const AttentionConfig& c, const std::string& allocator) {
  const bool misaligned = c.misalign_bytes % ak::kVectorBytes != 0;
  const bool tail = c.no_tail_mask && c.seq_len % c.block_n != 0;
  const int knobs = int(misaligned) + int(tail) + int(c.drop_barrier) + int(c.smem_overflow);
  if (knobs == 0) return "ok";
  if (knobs > 1) return "any";
  if (misaligned) return "error:misaligned";
  // Rows past the end of K/V: valid memory in a pool or a 2 MiB cudaMalloc granule,
  // unmapped address space right after a fenced buffer.
  if (tail) return allocator == "fence-back" || allocator == "fence" ? "error:memory_fault" : "silent";
  if (c.drop_barrier) return "ok|mismatch";
  return "mismatch|error";
}

}  // namespace cudadiag::cases
