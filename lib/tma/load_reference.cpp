#include "tma/load_reference.h"

#include <cstdio>
#include <cstring>

namespace cudadiag::tma {
namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

std::string hex_bytes(const std::uint8_t* p, unsigned n) {
  std::string s = "0x";
  char buf[4];
  for (unsigned i = n; i-- > 0;) {  // little-endian: print the value
    std::snprintf(buf, sizeof buf, "%02x", p[i]);
    s += buf;
  }
  return s;
}

bool is_nan_bits(DataType t, const std::uint8_t* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, element_bits(t) / 8);
  switch (t) {
    case DataType::float16: return (v & 0x7c00) == 0x7c00 && (v & 0x03ff) != 0;
    case DataType::bfloat16: return (v & 0x7f80) == 0x7f80 && (v & 0x007f) != 0;
    case DataType::float32:
    case DataType::float32_ftz:
    case DataType::tfloat32:
    case DataType::tfloat32_ftz: return (v & 0x7f800000u) == 0x7f800000u && (v & 0x007fffffu) != 0;
    case DataType::float64:
      return (v & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (v & 0x000fffffffffffffull) != 0;
    default: return false;
  }
}

std::string coords(const std::vector<std::uint64_t>& x) {
  std::string s = "(";
  for (size_t i = 0; i < x.size(); ++i) s += (i ? "," : "") + std::to_string(x[i]);
  return s + ")";
}

}  // namespace

LoadPlan plan_load(const Descriptor& d) {
  LoadPlan p;
  auto no = [&p](std::string why) {
    p.possible = false;
    p.reason = std::move(why);
    return p;
  };
  if (d.rank < 1 || d.rank > kMaxRank || d.dims.size() != d.rank || d.strides.size() + 1 != d.rank ||
      d.box.size() != d.rank || d.element_strides.size() != d.rank)
    return no("the descriptor's arrays do not fit its rank");
  if (d.interleave != Interleave::none) return no("the load check covers interleave none only");
  const unsigned bits = element_bits(d.data_type);
  if (bits == 0 || bits % 8 != 0 || is_packed(d.data_type))
    return no("the load check covers 1/2/4/8-byte element types only (not " + to_string(d.data_type) + ")");
  if (d.swizzle != Swizzle::none && d.swizzle != Swizzle::b32 && d.swizzle != Swizzle::b64 &&
      d.swizzle != Swizzle::b128)
    return no("the load check models swizzle none/32B/64B/128B only (not " + to_string(d.swizzle) + ")");
  p.element_bytes = bits / 8;
  std::uint64_t last = 0;
  for (unsigned i = 0; i < d.rank; ++i) {
    if (d.dims[i] == 0 || d.box[i] == 0 || d.element_strides[i] == 0) return no("a zero extent");
    const std::uint64_t stride = i == 0 ? p.element_bytes : d.strides[i - 1];
    last += (d.dims[i] - 1) * stride;
    if (last > kMaxLoadSourceBytes) return no("the tensor spans more than 512 MiB");
  }
  p.source_bytes = last + p.element_bytes;
  p.box_bytes = p.element_bytes;
  p.boxes = 1;
  for (unsigned i = 0; i < d.rank; ++i) {
    // Dimension 0 ignores its element stride without interleave.
    const std::uint32_t n = i == 0 ? d.box[0] : static_cast<std::uint32_t>(ceil_div(d.box[i], d.element_strides[i]));
    p.smem_extent.push_back(n);
    p.box_bytes *= n;
    p.box_counts.push_back(static_cast<std::uint32_t>(ceil_div(d.dims[i], d.box[i])));
    p.boxes *= p.box_counts.back();
    if (p.box_bytes > kMaxBoxBytes) return no("one box needs more than 200 KiB of shared memory");
    if (p.boxes > (1u << 24)) return no("more than 16M boxes");
  }
  if (p.boxes * p.box_bytes > kMaxLoadOutputBytes) return no("all boxes together exceed 512 MiB");
  p.possible = true;
  return p;
}

std::vector<std::int32_t> box_origin(const Descriptor& d, const LoadPlan& p, std::uint64_t b) {
  std::vector<std::int32_t> c(d.rank);
  for (unsigned i = 0; i < d.rank; ++i) {
    c[i] = static_cast<std::int32_t>((b % p.box_counts[i]) * d.box[i]);
    b /= p.box_counts[i];
  }
  return c;
}

std::uint64_t swizzled_offset(Swizzle s, std::uint64_t logical) {
  std::uint64_t mask = 0;
  switch (s) {
    case Swizzle::b32: mask = 1; break;
    case Swizzle::b64: mask = 3; break;
    case Swizzle::b128: mask = 7; break;
    default: return logical;
  }
  return logical ^ (((logical >> 7) & mask) << 4);
}

LoadCheck check_load(const Descriptor& d, const LoadPlan& p, const std::vector<std::uint8_t>& source,
                     const std::vector<std::uint8_t>& boxes, const ConversionModel& model) {
  LoadCheck r;
  const unsigned eb = p.element_bytes;
  const bool nan_fill = d.oob_fill == OobFill::nan_request_zero_fma;
  std::uint64_t per_box = 1;
  for (auto n : p.smem_extent) per_box *= n;
  std::vector<std::uint64_t> k(d.rank), x(d.rank);
  static const std::uint8_t zeros[8] = {};
  const bool convert = converts_on_load(d.data_type) && eb == 4;
  for (std::uint64_t b = 0; b < p.boxes; ++b) {
    const auto origin = box_origin(d, p, b);
    const std::uint8_t* box = boxes.data() + b * p.box_bytes;
    for (std::uint64_t e = 0; e < per_box; ++e) {
      std::uint64_t rest = e;
      bool in_bounds = true;
      std::uint64_t src = 0;
      for (unsigned i = 0; i < d.rank; ++i) {
        k[i] = rest % p.smem_extent[i];
        rest /= p.smem_extent[i];
        x[i] = static_cast<std::uint64_t>(origin[i]) + k[i] * (i == 0 ? 1 : d.element_strides[i]);
        if (x[i] >= d.dims[i]) in_bounds = false;
        src += x[i] * (i == 0 ? eb : d.strides[i - 1]);
      }
      const std::uint8_t* got = box + swizzled_offset(d.swizzle, e * eb);
      bool ok;
      std::string expected;
      if (in_bounds && convert) {
        std::uint32_t in = 0, out = 0;
        std::memcpy(&in, source.data() + src, 4);
        std::memcpy(&out, got, 4);
        const std::uint32_t want = loaded_bits(d.data_type, in, model);
        ok = is_fp32_nan(in) ? is_fp32_nan(out) : out == want;
        if (!ok) expected = is_fp32_nan(in) ? "NaN" : hex_bytes(reinterpret_cast<const std::uint8_t*>(&want), 4);
        if (!ok && want != in) expected += " (" + to_string(d.data_type) + " of " + hex_bytes(source.data() + src, eb) + ")";
      } else if (in_bounds) {
        ok = std::memcmp(got, source.data() + src, eb) == 0;
        if (!ok) expected = hex_bytes(source.data() + src, eb);
      } else {
        ++r.oob_elements;
        ok = nan_fill ? is_nan_bits(d.data_type, got) : std::memcmp(got, zeros, eb) == 0;
        if (!ok) expected = nan_fill ? "NaN (out-of-bounds fill)" : "0 (out-of-bounds fill)";
      }
      ++r.elements;
      if (ok) continue;
      if (r.mismatches++ == 0) {
        std::vector<std::uint64_t> o(origin.begin(), origin.end());
        r.first_mismatch = "box " + std::to_string(b) + " at " + coords(o) + ", element " + coords(x) + ": got " +
                           hex_bytes(got, eb) + ", expected " + expected;
      }
    }
  }
  return r;
}

}  // namespace cudadiag::tma
