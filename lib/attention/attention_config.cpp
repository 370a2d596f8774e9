#include "attention/attention_config.h"

#include <algorithm>
#include <climits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "kernels/attention/attention_layout.h"

namespace cudadiag::attention {
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
  return c.engine == Engine::wgmma ? ak::wgmma_smem_bytes(c.block_n) : ak::smem_bytes(c.block_m, c.block_n, c.head_dim);
}

int attention_threads(const AttentionConfig& c) { return c.warps * 32; }

double attention_tolerance(DType dtype) {
  return dtype == DType::bf16 ? kToleranceBf16 : kToleranceFp16;
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

std::string compiled_list(Knob k) {
  std::string s;
  switch (k) {
    case Knob::head_dim: s = list_of(ak::kHeadDims); break;
    case Knob::block_m: s = list_of(ak::kBlockMs); break;
    case Knob::block_n: s = list_of(ak::kBlockNs); break;
    case Knob::warps: s = list_of(ak::kWarpCounts); break;
  }
  return s.substr(1, s.size() - 2);
}

std::vector<std::string> validate_attention(const AttentionConfig& c, size_t smem_limit) {
  std::vector<std::string> why;
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
  if (c.engine == Engine::wgmma) {
    const std::string w = "the wgmma engine is compiled for ";
    if (c.head_dim != ak::kWgmmaHeadDim) why.push_back(w + "head_dim " + std::to_string(ak::kWgmmaHeadDim) + " only");
    if (c.block_m != ak::kWgmmaBlockM) why.push_back(w + "block_m " + std::to_string(ak::kWgmmaBlockM) + " only");
    if (c.warps != ak::kWgmmaWarps) why.push_back(w + std::to_string(ak::kWgmmaWarps) + " warps only (two warpgroups)");
    if (!ak::contains(ak::kWgmmaBlockNs, c.block_n)) why.push_back(w + "block_n " + list_of(ak::kWgmmaBlockNs) + " only");
    if (c.no_tail_mask || c.drop_barrier || c.smem_overflow)
      why.push_back("the wgmma engine has no fault knob but --misalign-bytes");
  }
  if (c.race_window < 0 || c.race_window > ak::kMaxRaceWindowCycles)
    why.push_back("race_window " + std::to_string(c.race_window) + " cycles is outside 0.." +
                  std::to_string(ak::kMaxRaceWindowCycles));
  if (!(c.race_rate >= 0.0 && c.race_rate <= 1.0))
    why.push_back("race_rate " + std::to_string(c.race_rate) + " is not a probability (0..1)");
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
  json j{{"dtype", to_string(c.dtype)}, {"batch", c.batch},
         {"heads", c.heads},         {"seq_len", c.seq_len},
         {"head_dim", c.head_dim},   {"causal", c.causal},
         {"block_m", c.block_m},     {"block_n", c.block_n},
         {"warps", c.warps},         {"strides", strides},
         {"misalign_bytes", c.misalign_bytes}, {"no_tail_mask", c.no_tail_mask},
         {"drop_barrier", c.drop_barrier},     {"smem_overflow", c.smem_overflow}};
  if (c.engine != Engine::mma) j["engine"] = to_string(c.engine);
  if (c.drop_barrier) {
    j["race_window"] = c.race_window;
    j["race_rate"] = c.race_rate;
  }
  return j;
}

namespace {

int int_param(const json& p, const char* key, int def) {
  if (!p.contains(key)) return def;
  const auto& v = p[key];
  if (!v.is_number_integer()) throw std::invalid_argument(std::string(key) + ": expected an integer, got " + v.dump());
  // A value the parameter cannot hold is refused, never wrapped.
  const bool fits = v.is_number_unsigned() ? v.get<unsigned long long>() <= static_cast<unsigned long long>(INT_MAX)
                                           : v.get<long long>() >= INT_MIN && v.get<long long>() <= INT_MAX;
  if (!fits)
    throw std::invalid_argument(std::string(key) + ": " + v.dump() + " is outside " + std::to_string(INT_MIN) + ".." +
                                std::to_string(INT_MAX));
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
      "race_window", "race_rate", "engine", "bench", "seed", "repeat"};
  for (const auto& [k, v] : p.items())
    if (!known.count(k)) throw std::invalid_argument("unknown attention parameter '" + k + "'");
  AttentionConfig c;
  if (p.contains("dtype")) {
    if (!p["dtype"].is_string()) throw std::invalid_argument("dtype: expected a string, got " + p["dtype"].dump());
    const auto dtype = parse_choice(kDTypeChoices, p["dtype"].get<std::string>());
    if (!dtype)
      throw std::invalid_argument("dtype '" + p["dtype"].get<std::string>() + "' is not supported (" +
                                  choice_list(kDTypeChoices, ", ") + ")");
    c.dtype = *dtype;
  }
  if (p.contains("engine")) {
    const auto engine = p["engine"].is_string() ? parse_choice(kEngineChoices, p["engine"].get<std::string>())
                                                : std::nullopt;
    if (!engine)
      throw std::invalid_argument("engine: expected one of " + choice_list(kEngineChoices, ", ") + ", got " +
                                  p["engine"].dump());
    c.engine = *engine;
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
  c.race_window = int_param(p, "race_window", c.race_window);
  if (p.contains("race_rate")) {
    if (!p["race_rate"].is_number()) throw std::invalid_argument("race_rate: expected a number, got " + p["race_rate"].dump());
    c.race_rate = p["race_rate"].get<double>();
  }
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
  if (const auto bad = malformed_attention(c); !bad.empty()) throw std::invalid_argument(bad.front());
  fill_default_strides(c);
  return c;
}

std::vector<std::string> malformed_attention(const AttentionConfig& c) {
  std::vector<std::string> bad;
  const std::pair<const char*, int> sizes[] = {{"batch", c.batch},     {"heads", c.heads},     {"seq_len", c.seq_len},
                                               {"head_dim", c.head_dim}, {"block_m", c.block_m}, {"block_n", c.block_n},
                                               {"warps", c.warps}};
  for (const auto& [name, v] : sizes)
    if (v < 1) bad.push_back(std::string(name) + ": " + std::to_string(v) + " must be at least 1");
  if (c.misalign_bytes < 0) bad.push_back("misalign_bytes: " + std::to_string(c.misalign_bytes) + " must be >= 0");
  if (c.race_window < 0 || c.race_window > ak::kMaxRaceWindowCycles)
    bad.push_back("race_window: " + std::to_string(c.race_window) + " is outside 0.." +
                  std::to_string(ak::kMaxRaceWindowCycles));
  if (!(c.race_rate >= 0.0 && c.race_rate <= 1.0))
    bad.push_back("race_rate: " + std::to_string(c.race_rate) + " is outside 0..1");
  if (bad.empty()) {
    // One tensor's elements must be addressable: B*H*S*D below 2^48.
    const double elems = static_cast<double>(c.batch) * c.heads * c.seq_len * c.head_dim;
    if (elems >= 281474976710656.0)
      bad.push_back("seq_len: " + std::to_string(c.batch) + "x" + std::to_string(c.heads) + "x" +
                    std::to_string(c.seq_len) + "x" + std::to_string(c.head_dim) + " elements per tensor is too large");
  }
  return bad;
}

std::string attention_expectation(const AttentionConfig& c, profiles::Allocator allocator) {
  const bool misaligned = c.misalign_bytes % ak::kVectorBytes != 0;
  const bool tail = c.no_tail_mask && c.seq_len % c.block_n != 0;
  const int knobs = int(misaligned) + int(tail) + int(c.drop_barrier) + int(c.smem_overflow);
  if (knobs == 0) return "ok";
  if (knobs > 1) return "any";
  if (misaligned) return "error:misaligned";
  // Rows past the end of K/V: valid memory in a pool or a 2 MiB cudaMalloc granule,
  // unmapped address space right after a fenced buffer.
  if (tail) return allocator == profiles::Allocator::fence_back ? "error:memory_fault" : "silent";
  if (c.drop_barrier) return "ok|mismatch";
  return "mismatch|error";
}

std::string case_id_of(const AttentionConfig& c) {
  return "attention." + std::string(to_string(c.dtype)) + ".d" + std::to_string(c.head_dim) + ".bm" + std::to_string(c.block_m) + "-bn" +
         std::to_string(c.block_n) + "-w" + std::to_string(c.warps) +
         (c.engine == Engine::mma ? "" : "." + std::string(to_string(c.engine)));
}

double estimate_run_ms(const AttentionConfig& c) {
  constexpr double kRunMs = 30;  // a small launch, its reference and the check
  const double s = c.seq_len;
  return kRunMs + kRunMs * (s * s) / (256.0 * 256.0);
}

}  // namespace cudadiag::attention
