#include "index_select/index_select_params.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

namespace cudadiag::index_select {
namespace {

constexpr long long kMaxElements = 1ll << 30;  // per tensor; keeps int32 indices and memory sane

long long parse_int(const std::string& text, const std::string& what) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size()) throw std::invalid_argument("trailing characters");
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument(what + ": '" + text + "' is not an integer");
  }
}

long long int_field(const report::json& j, const char* key, long long fallback) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_number_integer()) throw std::invalid_argument(std::string(key) + ": expected an integer");
  return j[key].get<long long>();
}

template <typename E, size_t N>
E choice_field(const report::json& j, const char* key, E fallback, const ChoiceTable<E, N>& table) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_string()) throw std::invalid_argument(std::string(key) + ": expected a string");
  const std::string v = j[key].get<std::string>();
  if (auto e = parse_choice(table, v)) return *e;
  throw std::invalid_argument(std::string(key) + ": unknown '" + v + "' (expected " + choice_list(table) + ")");
}

std::uint32_t load_bits(const std::vector<std::uint8_t>& data, long long i, int bytes) {
  std::uint32_t v = 0;
  std::memcpy(&v, data.data() + i * bytes, static_cast<size_t>(bytes));  // little-endian hosts
  return v;
}

}  // namespace

std::vector<long long> parse_shape(const std::string& text) {
  std::vector<long long> dims;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) dims.push_back(parse_int(part, "shape"));
  if (dims.size() != 4 || text.empty() || text.back() == ',')
    throw std::invalid_argument("shape: '" + text + "' must be four comma-separated sizes B,S,H,D");
  return dims;
}

std::pair<long long, long long> parse_heads(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw std::invalid_argument("heads: '" + text + "' must be h0:h1");
  return {parse_int(text.substr(0, colon), "heads"), parse_int(text.substr(colon + 1), "heads")};
}

IndexSelectParams index_select_params_from_json(const report::json& j) {
  if (!j.is_object()) throw std::invalid_argument("index_select parameters: expected an object");
  static const std::set<std::string> known = {"shape", "heads", "dilation", "offset", "indices", "layout",
                                              "bounds", "dtype", "index_dtype"};
  for (const auto& [key, value] : j.items())
    if (!known.count(key)) throw std::invalid_argument("unknown index_select parameter '" + key + "'");
  IndexSelectParams p;
  if (j.contains("shape")) {
    const auto& s = j["shape"];
    if (!s.is_array() || s.size() != 4 || !std::all_of(s.begin(), s.end(), [](const auto& v) {
          return v.is_number_integer();
        }))
      throw std::invalid_argument("shape: expected four integers [B, S, H, D]");
    p.B = s[0].get<long long>();
    p.S = s[1].get<long long>();
    p.H = s[2].get<long long>();
    p.D = s[3].get<long long>();
  }
  const char* names[] = {"B", "S", "H", "D"};
  const long long dims[] = {p.B, p.S, p.H, p.D};
  for (int i = 0; i < 4; ++i)
    if (dims[i] < 1 || dims[i] > kMaxElements)
      throw std::invalid_argument(std::string("shape: ") + names[i] + " = " + std::to_string(dims[i]) +
                                  " must be 1..2^30");
  if (p.B * p.S > kMaxElements || p.B * p.S * p.H > kMaxElements || p.source_elements() > kMaxElements)
    throw std::invalid_argument("shape: more than 2^30 elements per tensor");
  if (j.contains("heads")) {
    const auto& h = j["heads"];
    if (!h.is_array() || h.size() != 2 || !h[0].is_number_integer() || !h[1].is_number_integer())
      throw std::invalid_argument("heads: expected [h0, h1]");
    p.h0 = h[0].get<long long>();
    p.h1 = h[1].get<long long>();
  } else {
    p.h0 = p.H / 2;  // the second half of the heads: the tail of the tensor
    p.h1 = p.H;
  }
  if (p.h0 < 0 || p.h1 > p.H || p.h0 >= p.h1)
    throw std::invalid_argument("heads: " + std::to_string(p.h0) + ":" + std::to_string(p.h1) +
                                " is outside 0.." + std::to_string(p.H) + " or empty");
  p.dilation = int_field(j, "dilation", p.dilation);
  if (p.dilation < 1 || p.dilation > p.S)
    throw std::invalid_argument("dilation: " + std::to_string(p.dilation) + " is outside 1.." + std::to_string(p.S));
  p.offset = int_field(j, "offset", (p.S - 1) % p.dilation);
  if (p.offset < 0 || p.offset >= p.S)
    throw std::invalid_argument("offset: " + std::to_string(p.offset) + " is outside 0.." + std::to_string(p.S - 1));
  p.indices = choice_field(j, "indices", p.indices, kIndices);
  p.layout = choice_field(j, "layout", p.layout, kLayouts);
  p.bounds = choice_field(j, "bounds", p.bounds, kBounds);
  p.dtype = choice_field(j, "dtype", p.dtype, kElementTypes);
  p.index_dtype = choice_field(j, "index_dtype", p.index_dtype, kIndexTypes);
  return p;
}

report::json to_json(const IndexSelectParams& p) {
  return report::json{{"shape", {p.B, p.S, p.H, p.D}},
                      {"heads", {p.h0, p.h1}},
                      {"dilation", p.dilation},
                      {"offset", p.offset},
                      {"indices", choice_name(kIndices, p.indices)},
                      {"layout", choice_name(kLayouts, p.layout)},
                      {"bounds", choice_name(kBounds, p.bounds)},
                      {"dtype", choice_name(kElementTypes, p.dtype)},
                      {"index_dtype", choice_name(kIndexTypes, p.index_dtype)}};
}

std::string case_id_for(const IndexSelectParams& p) {
  return "index_select." + std::string(choice_name(kLayouts, p.layout)) + "." +
         std::string(choice_name(kIndices, p.indices)) + "." + std::string(choice_name(kBounds, p.bounds));
}

std::vector<long long> gather_indices(const IndexSelectParams& p) {
  std::vector<long long> idx;
  for (long long s = p.offset; s < p.S; s += p.dilation) idx.push_back(s);
  if (p.indices == Indices::oob) idx.back() = p.S;
  if (p.indices == Indices::negative) idx.back() = -1;
  return idx;
}

bool index_valid(const IndexSelectParams& p, long long index) { return index >= 0 && index < p.S; }

GatherSource gather_source(const IndexSelectParams& p) {
  GatherSource g;
  if (p.layout == Layout::copy) {
    g.from_copy = true;  // [B, S, h1-h0, D] packed, made by the copy kernel
    g.stride_b = p.S * p.heads() * p.D;
    g.stride_s = p.heads() * p.D;
    g.stride_h = p.D;
    return g;
  }
  g.base_offset = p.h0 * p.D;  // the view's data pointer
  if (p.layout == Layout::assume_contiguous) {
    g.stride_b = p.S * p.heads() * p.D;
    g.stride_s = p.heads() * p.D;
    g.stride_h = p.D;
  } else {
    g.stride_b = p.S * p.H * p.D;
    g.stride_s = p.H * p.D;
    g.stride_h = p.D;
    if (p.layout == Layout::offset_twice) g.base_offset += p.h0 * p.D;
  }
  return g;
}

ReadExtent read_extent(const IndexSelectParams& p) {
  const auto idx = gather_indices(p);
  const auto [lo_idx, hi_idx] = std::minmax_element(idx.begin(), idx.end());
  const GatherSource g = gather_source(p);
  ReadExtent r;
  r.buffer = g.from_copy ? "k_contig" : "k";
  r.elements = g.from_copy ? p.B * p.S * p.heads() * p.D : p.source_elements();
  r.lo = g.base_offset + *lo_idx * g.stride_s;
  r.hi = g.base_offset + (p.B - 1) * g.stride_b + *hi_idx * g.stride_s + (p.heads() - 1) * g.stride_h + p.D - 1;
  return r;
}

std::string index_select_expectation(const IndexSelectParams& p, profiles::Allocator allocator) {
  const auto idx = gather_indices(p);
  const bool invalid = std::any_of(idx.begin(), idx.end(), [&](long long i) { return !index_valid(p, i); });
  if (invalid && p.bounds == Bounds::checked) return "error:710";
  // A slice of every head starting at 0 is contiguous: then the packed strides are right.
  const bool whole = p.h0 == 0 && p.h1 == p.H;
  const bool wrong_data = invalid || (p.layout == Layout::assume_contiguous && !whole) || (p.layout == Layout::offset_twice && p.h0 > 0);
  const std::string quiet = wrong_data ? "mismatch" : "ok";
  const ReadExtent r = read_extent(p);
  const long long bytes = p.element_bytes();
  const long long slack = (r.elements * bytes + 15) / 16 * 16 - r.elements * bytes;  // fence-back rounding
  const long long over = r.hi >= r.elements ? (r.hi - r.elements + 1) * bytes : 0;
  const long long under = r.lo < 0 ? -r.lo * bytes : 0;
  switch (allocator) {
    case profiles::Allocator::fence_back: return over > slack ? "error:memory_fault" : quiet;
    case profiles::Allocator::fence_front: return under > 0 ? "error:memory_fault" : quiet;
    case profiles::Allocator::pool:
      // Overruns land in the next buffer or the slab's megabytes of slack; underruns of the
      // first buffer in the pool's 4 KiB lead-in.
      if (under > 4096 || over > (2ll << 20)) return quiet + "|error:memory_fault";
      return quiet;
    case profiles::Allocator::direct:
      // Past either end of a cudaMalloc'ed buffer: mapped or not depends on its placement
      // in the driver's 2 MiB pages.
      return over > 0 || under > 0 ? quiet + "|error:memory_fault" : quiet;
  }
  return quiet;
}

std::vector<std::uint8_t> random_tensor(const IndexSelectParams& p, long long elements, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int bytes = p.element_bytes();
  std::vector<std::uint8_t> out(static_cast<size_t>(elements * bytes));
  for (long long i = 0; i < elements; ++i) {
    const std::uint64_t r = rng();
    std::uint32_t bits = 0;
    // Normal numbers of moderate magnitude: exponent field kept away from 0 (zero and
    // subnormals) and from all-ones (inf/NaN, and the 0xFF poison).
    if (p.dtype == ElementType::fp16) {
      bits = static_cast<std::uint32_t>((r & 0x83FFu) | ((10 + (r >> 16) % 11) << 10));
    } else if (p.dtype == ElementType::bf16) {
      bits = static_cast<std::uint32_t>((r & 0x807Fu) | ((120 + (r >> 16) % 15) << 7));
    } else {
      bits = static_cast<std::uint32_t>((r & 0x807FFFFFu) | ((120 + (r >> 32) % 15) << 23));
    }
    std::memcpy(out.data() + i * bytes, &bits, static_cast<size_t>(bytes));
  }
  return out;
}

std::vector<std::uint8_t> reference_gather(const IndexSelectParams& p, const std::vector<std::uint8_t>& src,
                                           const std::vector<long long>& idx) {
  const int bytes = p.element_bytes();
  const long long n = static_cast<long long>(idx.size());
  const long long row = p.heads() * p.D * bytes;  // one gathered row: heads h0..h1, all of D
  std::vector<std::uint8_t> out(static_cast<size_t>(p.B * n * row), 0xFF);
  for (long long b = 0; b < p.B; ++b)
    for (long long j = 0; j < n; ++j) {
      if (!index_valid(p, idx[static_cast<size_t>(j)])) continue;
      const long long s = idx[static_cast<size_t>(j)];
      const std::uint8_t* from = src.data() + ((b * p.S + s) * p.H + p.h0) * p.D * bytes;
      std::memcpy(out.data() + (b * n + j) * row, from, static_cast<size_t>(row));
    }
  return out;
}

double element_value(ElementType dtype, std::uint32_t bits) {
  if (dtype == ElementType::fp32) return static_cast<double>(std::bit_cast<float>(bits));
  if (dtype == ElementType::bf16) return static_cast<double>(std::bit_cast<float>(bits << 16));
  const int sign = (bits >> 15) & 1;
  const int exp = (bits >> 10) & 0x1F;
  const int man = bits & 0x3FF;
  double v = 0.0;
  if (exp == 0) v = std::ldexp(man, -24);
  else if (exp == 31) v = man ? std::nan("") : INFINITY;
  else v = std::ldexp(1024 + man, exp - 25);
  return sign ? -v : v;
}

GatherComparison compare_gather(const IndexSelectParams& p, const std::string& tensor,
                                const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& expected,
                                const std::vector<long long>& idx) {
  GatherComparison c;
  const int bytes = p.element_bytes();
  const long long n = static_cast<long long>(idx.size());
  const long long total = p.B * n * p.heads() * p.D;
  if (static_cast<long long>(got.size()) != total * bytes || expected.size() != got.size())
    throw std::invalid_argument("compare_gather: output sizes do not match the parameters");
  for (long long e = 0; e < total; ++e) {
    const long long d = e % p.D;
    const long long h = (e / p.D) % p.heads();
    const long long j = (e / (p.D * p.heads())) % n;
    const long long b = e / (p.D * p.heads() * n);
    const bool valid = index_valid(p, idx[static_cast<size_t>(j)]);
    const std::uint32_t g = load_bits(got, e, bytes);
    const std::uint32_t x = load_bits(expected, e, bytes);
    ++c.compared;
    if (!valid) ++c.invalid_rows;
    if (valid && g == x) continue;
    if (c.mismatches == 0) {
      char gb[16], xb[16];
      std::snprintf(gb, sizeof gb, "0x%0*x", bytes * 2, g);
      std::snprintf(xb, sizeof xb, "0x%0*x", bytes * 2, x);
      c.first_bad = report::json{{"tensor", tensor},
                                 {"index", {b, j, h, d}},
                                 {"position", idx[static_cast<size_t>(j)]},
                                 {"index_valid", valid},
                                 {"got", element_value(p.dtype, g)},
                                 {"got_bits", gb}};
      if (valid) {
        c.first_bad["expected"] = element_value(p.dtype, x);
        c.first_bad["expected_bits"] = xb;
      }
    }
    ++c.mismatches;
  }
  return c;
}

}  // namespace cudadiag::index_select
