#include "tma/validator.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace cudadiag::tma {
namespace {

constexpr std::uint64_t kMaxGlobalDim = std::uint64_t{1} << 32;   // inclusive
constexpr std::uint64_t kStrideLimit = std::uint64_t{1} << 40;    // exclusive
constexpr std::uint32_t kMaxBoxDim = 256;
constexpr std::uint32_t kMaxElementStride = 8;

class Checker {
 public:
  explicit Checker(const Descriptor& d) : d_(d) {}

  void error(std::string rule, std::string field, int index, std::string value, std::string message,
             std::string fix) {
    add(Severity::error, std::move(rule), std::move(field), index, std::move(value), std::move(message),
        std::move(fix));
  }
  void warning(std::string rule, std::string field, int index, std::string value, std::string message,
               std::string fix) {
    add(Severity::warning, std::move(rule), std::move(field), index, std::move(value),
        std::move(message), std::move(fix));
  }
  Verdict take() { return std::move(v_); }
  const Descriptor& d() const { return d_; }

 private:
  void add(Severity s, std::string rule, std::string field, int index, std::string value,
           std::string message, std::string fix) {
    v_.findings.push_back(Finding{std::move(rule), s, std::move(field), index, std::move(value),
                                  std::move(message), std::move(fix)});
  }
  const Descriptor& d_;
  Verdict v_;
};

std::string str(std::uint64_t v) { return std::to_string(v); }
std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
std::uint64_t round_up(std::uint64_t v, std::uint64_t m) { return (v + m - 1) / m * m; }

void check_enums(Checker& c) {
  const auto& d = c.d();
  if (!is_known(d.data_type))
    c.error("tma.data_type.valid", "tensorDataType", -1, std::to_string(static_cast<int>(d.data_type)),
            "tensorDataType must be a CUtensorMapDataType value (0.." + std::to_string(kDataTypeCount - 1) + ")",
            "use one of: " + data_type_names());
  if (!is_known(d.interleave))
    c.error("tma.interleave.valid", "interleave", -1, std::to_string(static_cast<int>(d.interleave)),
            "interleave must be NONE (0), 16B (1) or 32B (2)", "use interleave none unless the layout is NC/8HWC8 or NC/16HWC16");
  if (!is_known(d.swizzle))
    c.error("tma.swizzle.valid", "swizzle", -1, std::to_string(static_cast<int>(d.swizzle)),
            "swizzle must be a CUtensorMapSwizzle value (0..6)", "use swizzle none, 32B, 64B or 128B");
  if (!is_known(d.l2_promotion))
    c.error("tma.l2_promotion.valid", "l2Promotion", -1, std::to_string(static_cast<int>(d.l2_promotion)),
            "l2Promotion must be NONE (0), 64B (1), 128B (2) or 256B (3)", "use l2Promotion 128B or 256B");
  if (!is_known(d.oob_fill))
    c.error("tma.oob_fill.valid", "oobFill", -1, std::to_string(static_cast<int>(d.oob_fill)),
            "oobFill must be NONE (0) or NAN_REQUEST_ZERO_FMA (1)", "use oobFill none (zero fill)");
}

// Returns false when the arrays do not fit the rank: nothing per-index can be checked then.
bool check_rank(Checker& c) {
  const auto& d = c.d();
  if (d.rank < 1 || d.rank > kMaxRank) {
    c.error("tma.rank.range", "tensorRank", -1, std::to_string(d.rank),
            "tensorRank must be between 1 and 5", "describe the tensor with 1 to 5 dimensions (merge or split dimensions)");
    return false;
  }
  if (d.interleave != Interleave::none && is_known(d.interleave) && d.rank < 3)
    c.error("tma.rank.interleave_min3", "tensorRank", -1, std::to_string(d.rank),
            "with an interleaved layout tensorRank must be at least 3",
            "add the interleave dimensions (e.g. N, C/8, H*W, C8) or use interleave none");
  bool ok = true;
  auto need = [&](size_t have, size_t want, const char* field) {
    if (have == want) return;
    c.error("tma.arrays.length", field, -1, std::to_string(have),
            std::string(field) + " must have " + std::to_string(want) + " entries for tensorRank " +
                std::to_string(d.rank),
            "give exactly one value per dimension (globalStrides: one per dimension after the first)");
    ok = false;
  };
  need(d.dims.size(), d.rank, "globalDim");
  need(d.strides.size(), d.rank - 1, "globalStrides");
  need(d.box.size(), d.rank, "boxDim");
  need(d.element_strides.size(), d.rank, "elementStrides");
  return ok;
}

void check_address(Checker& c) {
  const auto& d = c.d();
  if (d.address % 16 != 0) {
    c.error("tma.address.align16", "globalAddress", -1, hex(d.address),
            "globalAddress must be 16-byte aligned", "start the tensor at a 16-byte aligned address (check the storage offset of the view)");
    return;
  }
  const bool need32 = d.interleave == Interleave::b32 || is_packed_align16(d.data_type);
  if (need32 && d.address % 32 != 0)
    c.error("tma.address.align32", "globalAddress", -1, hex(d.address),
            "globalAddress must be 32-byte aligned with interleave 32B or a 16U4/16U6 ALIGN16B type",
            "start the tensor at a 32-byte aligned address");
}

void check_dims(Checker& c) {
  const auto& d = c.d();
  for (unsigned i = 0; i < d.rank; ++i) {
    const auto v = d.dims[i];
    if (v == 0)
      c.error("tma.global_dim.nonzero", "globalDim", static_cast<int>(i), "0",
              "globalDim[" + std::to_string(i) + "] must be non-zero",
              "do not encode a descriptor for an empty tensor: skip the launch when this extent is 0");
    else if (v > kMaxGlobalDim)
      c.error("tma.global_dim.max", "globalDim", static_cast<int>(i), str(v),
              "globalDim[" + std::to_string(i) + "] must be at most 2^32", "split this dimension in two");
  }
  if (is_packed_align16(d.data_type) && d.dims[0] % 128 != 0)
    c.error("tma.global_dim.packed_multiple_128", "globalDim", 0, str(d.dims[0]),
            "with a 16U4/16U6 ALIGN16B type globalDim[0] must be a multiple of 128",
            "pad the inner dimension to " + str(round_up(d.dims[0], 128)) + " values");
  if (d.data_type == DataType::u4x16_align8b && d.dims[0] % 2 != 0)
    c.error("tma.global_dim.packed_multiple_2", "globalDim", 0, str(d.dims[0]),
            "with 16U4_ALIGN8B globalDim[0] must be a multiple of 2",
            "pad the inner dimension to " + str(round_up(d.dims[0], 2)) + " values");
}

void check_strides(Checker& c) {
  const auto& d = c.d();
  const bool need32 = d.interleave == Interleave::b32 || is_packed_align16(d.data_type);
  for (unsigned i = 0; i + 1 < d.rank; ++i) {
    const auto s = d.strides[i];
    const int idx = static_cast<int>(i);
    const std::string which = "globalStrides[" + std::to_string(i) + "] (the stride of dimension " +
                              std::to_string(i + 1) + ")";
    if (s % 16 != 0)
      c.error("tma.global_stride.multiple_of_16", "globalStrides", idx, str(s),
              which + " is " + str(s) + " bytes; every stride must be a multiple of 16 bytes",
              "make the stride a multiple of 16 bytes (pad the inner dimension to " +
                  str(round_up(s, 16)) + " bytes, or fix the stride of a size-1 dimension)");
    else if (need32 && s % 32 != 0)
      c.error("tma.global_stride.multiple_of_32", "globalStrides", idx, str(s),
              which + " is " + str(s) +
                  " bytes; with interleave 32B or a 16U4/16U6 ALIGN16B type every stride must be a multiple of 32 bytes",
              "pad to " + str(round_up(s, 32)) + " bytes");
    if (s >= kStrideLimit)
      c.error("tma.global_stride.max", "globalStrides", idx, str(s),
              which + " must be less than 2^40 bytes", "split the tensor into several descriptors");
  }
}

void check_box(Checker& c) {
  const auto& d = c.d();
  for (unsigned i = 0; i < d.rank; ++i) {
    const auto b = d.box[i];
    if (b == 0 || b > kMaxBoxDim)
      c.error("tma.box_dim.range", "boxDim", static_cast<int>(i), str(b),
              "boxDim[" + std::to_string(i) + "] must be between 1 and 256", "use a box of 1..256 elements per dimension (tile larger boxes)");
  }
  const std::uint64_t inner_bits = std::uint64_t{d.box[0]} * element_bits(d.data_type);
  if (d.interleave == Interleave::none && is_known(d.data_type) && d.box[0] != 0 &&
      inner_bits % (16 * 8) != 0)
    c.error("tma.box_dim.inner_bytes_multiple_of_16", "boxDim", 0, str(d.box[0]),
            "without interleave, boxDim[0] x element size must be a multiple of 16 bytes (it is " +
                str(inner_bits / 8) + (inner_bits % 8 ? ".5" : "") + " bytes)",
            "make boxDim[0] a multiple of " + str(128 / std::max(1u, element_bits(d.data_type))) + " elements");
  if (is_packed_align16(d.data_type) && d.box[0] != 128)
    c.error("tma.box_dim.packed_128", "boxDim", 0, str(d.box[0]),
            "with a 16U4/16U6 ALIGN16B type boxDim[0] must be 128", "set boxDim[0] to 128");
}

void check_element_strides(Checker& c) {
  const auto& d = c.d();
  for (unsigned i = 0; i < d.rank; ++i) {
    const auto e = d.element_strides[i];
    if (e == 0 || e > kMaxElementStride)
      c.error("tma.element_stride.range", "elementStrides", static_cast<int>(i), str(e),
              "elementStrides[" + std::to_string(i) + "] must be between 1 and 8", "use 1 (every element) unless a strided traversal is intended");
  }
  // Documented as ignored for dimension 0 without interleave: a value other than 1 there
  // means the caller expected a strided inner traversal it will not get.
  if (d.interleave == Interleave::none && d.element_strides[0] > 1 && d.element_strides[0] <= kMaxElementStride)
    c.warning("tma.element_stride.inner_ignored", "elementStrides", 0, str(d.element_strides[0]),
              "elementStrides[0] is ignored without interleave; TMA always reads dimension 0 contiguously",
              "set elementStrides[0] to 1 and stride the inner dimension in the kernel");
}

std::uint64_t swizzle_span(Swizzle s) {
  switch (s) {
    case Swizzle::b32: return 32;
    case Swizzle::b64: return 64;
    case Swizzle::none: return 0;
    default: return 128;  // 128B and the 128B atom variants
  }
}

void check_layout_modes(Checker& c) {
  const auto& d = c.d();
  if (!is_known(d.swizzle) || !is_known(d.interleave)) return;
  if (d.interleave == Interleave::none && d.swizzle != Swizzle::none && is_known(d.data_type)) {
    const std::uint64_t inner = bytes_of(d.data_type, d.box[0]);
    const std::uint64_t span = swizzle_span(d.swizzle);
    if (inner > span)
      c.error("tma.swizzle.inner_box_span", "boxDim", 0, str(d.box[0]),
              "with swizzle " + to_string(d.swizzle) + " the inner box (boxDim[0] x element size = " + str(inner) +
                  " bytes) must be at most " + str(span) + " bytes",
              "use boxDim[0] <= " + str(span * 8 / std::max(1u, element_bits(d.data_type))) +
                  " and load the row in several boxes, or a wider swizzle");
  }
  // A warning, not an error: the documentation pairs interleave 32B with swizzle 32B,
  // but the driver accepts interleave 32B with swizzle none (seen on H100, driver
  // 580.159.04). Other swizzles with interleave 32B are still flagged the same way.
  if (d.interleave == Interleave::b32 && d.swizzle != Swizzle::b32)
    c.warning("tma.interleave32.requires_swizzle32", "swizzle", -1, to_string(d.swizzle),
              "with interleave 32B the documentation pairs swizzle 32B (it is " + to_string(d.swizzle) +
                  "); the driver accepts swizzle none, but the shared-memory layout is then unswizzled",
              "set swizzle 32B unless the kernel reads the unswizzled interleaved layout");
  if (d.data_type == DataType::u6x16_align16b && d.interleave != Interleave::none)
    c.error("tma.packed.u6_requires_no_interleave", "interleave", -1, to_string(d.interleave),
            "16U6_ALIGN16B requires interleave none", "set interleave none");
  // Swizzle modes the packed ALIGN16B types support for loads (the descriptor does not
  // know whether it will be used for a load or a store; 128B_ATOM_64B is store-only for
  // 16U6, so it is accepted for 16U6 here).
  if (is_packed_align16(d.data_type)) {
    const bool ok = d.swizzle == Swizzle::none || d.swizzle == Swizzle::b128 ||
                    d.swizzle == Swizzle::b128_atom_32b ||
                    (d.data_type == DataType::u6x16_align16b && d.swizzle == Swizzle::b128_atom_64b);
    if (!ok)
      c.error("tma.packed.swizzle_mode", "swizzle", -1, to_string(d.swizzle),
              to_string(d.data_type) + " supports only swizzle none, 128B or 128B_atom_32B" +
                  (d.data_type == DataType::u6x16_align16b ? " (128B_atom_64B for stores)" : ""),
              "use swizzle 128B");
  }
}

// The packed 16U4/16U6 types exist for compute capability 10.0+ (Blackwell): the driver
// rejects them on sm_90 with CUDA_ERROR_INVALID_VALUE (seen on H100, driver 580.159.04).
void check_target(Checker& c, std::optional<int> target_cc) {
  const auto& d = c.d();
  if (!is_packed(d.data_type)) return;
  if (!target_cc) {
    c.warning("tma.data_type.packed_target_unknown", "tensorDataType", -1, to_string(d.data_type),
              to_string(d.data_type) + " is a packed type for compute capability 10.0+ (sm_100); the target is "
                  "unknown, so whether the driver accepts it is not checked",
              "give the target (--target-cc 100 or 90); on sm_90 and older use an unpacked type such as uint8");
    return;
  }
  if (*target_cc < 100)
    c.error("tma.data_type.packed_requires_sm100", "tensorDataType", -1, to_string(d.data_type),
            to_string(d.data_type) + " needs compute capability 10.0+ (sm_100); the target is sm_" +
                std::to_string(*target_cc) + ", where the driver rejects it",
            "on sm_" + std::to_string(*target_cc) +
                " unpack the data to an unpacked type (e.g. uint8) before the TMA load, or run on sm_100+");
}

void check_oob_fill(Checker& c) {
  const auto& d = c.d();
  if (d.oob_fill == OobFill::nan_request_zero_fma && is_known(d.data_type) && !is_floating(d.data_type))
    c.error("tma.oob_fill.nan_requires_float", "oobFill", -1, "nan",
            "oobFill NaN is only allowed for floating-point types (" + to_string(d.data_type) + " is not)",
            "use oobFill none (zero fill)");
}

// Warnings: legal for the driver (believed; the device check confirms) but wrong.
// The seed's failure: a dimension of extent 1 is never stepped, so frameworks (PyTorch)
// allow any stride for it and often report a degenerate one (1 element). TMA still checks
// that stride. Reported only when it is what breaks a stride rule, as the explanation.
void check_size1_strides(Checker& c) {
  const auto& d = c.d();
  const std::uint64_t align = (d.interleave == Interleave::b32 || is_packed_align16(d.data_type)) ? 32 : 16;
  for (unsigned dim = 1; dim < d.rank; ++dim) {
    if (d.dims[dim] != 1) continue;
    const auto s = d.strides[dim - 1];
    if (s % align == 0) continue;
    auto canonical = dense_stride(d, dim);
    if (canonical % align != 0) canonical = round_up(canonical, align);
    c.warning("tma.size1_stride.noncanonical", "globalStrides", static_cast<int>(dim - 1), str(s),
              "dimension " + std::to_string(dim) + " has extent 1 and a non-canonical stride of " + str(s) +
                  " bytes: frameworks allow any stride for a size-1 dimension, but TMA still requires a multiple of " +
                  str(align) + " bytes (a dense layout gives " + str(canonical) + ")",
              "canonicalise the strides of size-1 dimensions before encoding: set globalStrides[" +
                  std::to_string(dim - 1) + "] to " + str(canonical) +
                  " bytes (inner extent x inner stride; any multiple of " + str(align) +
                  " works because a size-1 dimension is never stepped)");
  }
}

void check_box_vs_tensor(Checker& c) {
  const auto& d = c.d();
  // Not enforced by the driver (believed): a box may pass the tensor's edge, TMA fills
  // the out-of-bounds part. A box larger than the whole dimension loads mostly fill,
  // which usually means the box was sized for a different shape.
  for (unsigned i = 0; i < d.rank; ++i)
    if (d.dims[i] != 0 && d.box[i] != 0 && d.box[i] <= kMaxBoxDim && d.box[i] > d.dims[i])
      c.warning("tma.box_dim.exceeds_global_dim", "boxDim", static_cast<int>(i), str(d.box[i]),
                "boxDim[" + std::to_string(i) + "] = " + str(d.box[i]) + " is larger than globalDim[" +
                    std::to_string(i) + "] = " + str(d.dims[i]) + "; every load of this box is partly out of bounds (filled)",
                "expected for a short tail (e.g. seq_len smaller than the tile); otherwise size the box to the tensor");
}

void check_overlap(Checker& c) {
  const auto& d = c.d();
  // Not enforced by the driver (believed): strides are not required to grow, and
  // permuted layouts (e.g. NHD read as (D, N, H)) are legal. What signals a bug is two
  // dimensions whose elements alias: sorted by stride, each dimension must start past
  // the end of the previous one. Aliasing is harmless for loads but corrupts stores.
  struct Dim {
    unsigned index;
    std::uint64_t stride;
    std::uint64_t extent_bytes;
  };
  std::vector<Dim> dims;
  const std::uint64_t esize_bits = element_bits(d.data_type);
  if (esize_bits == 0) return;
  if (d.dims[0] > 1) dims.push_back({0, bytes_of(d.data_type, 1), bytes_of(d.data_type, d.dims[0])});
  for (unsigned i = 1; i < d.rank; ++i)
    if (d.dims[i] > 1) dims.push_back({i, d.strides[i - 1], d.strides[i - 1] * d.dims[i]});
  std::stable_sort(dims.begin(), dims.end(), [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  for (size_t k = 1; k < dims.size(); ++k) {
    const auto& inner = dims[k - 1];
    const auto& outer = dims[k];
    if (outer.stride >= inner.extent_bytes) continue;
    if (outer.index == 0) continue;  // dimension 0 has no stride field to blame
    c.warning("tma.global_stride.overlap", "globalStrides", static_cast<int>(outer.index - 1), str(outer.stride),
              "the stride of dimension " + std::to_string(outer.index) + " (" + str(outer.stride) +
                  " bytes) is smaller than the extent of dimension " + std::to_string(inner.index) + " (" +
                  str(inner.extent_bytes) + " bytes): elements of different coordinates alias",
              "check the shape/stride order; for a dense layout the stride would be at least " +
                  str(inner.extent_bytes) + " bytes");
  }
}

}  // namespace

const char* to_string(Severity s) { return s == Severity::error ? "error" : "warning"; }

bool Verdict::valid() const { return errors() == 0; }

size_t Verdict::errors() const {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(),
                                           [](const Finding& f) { return f.severity == Severity::error; }));
}

size_t Verdict::warnings() const { return findings.size() - errors(); }

std::vector<std::string> Verdict::rule_ids(Severity s) const {
  std::vector<std::string> out;
  for (const auto& f : findings)
    if (f.severity == s && std::find(out.begin(), out.end(), f.rule) == out.end()) out.push_back(f.rule);
  return out;
}

bool Verdict::has(const std::string& rule) const {
  return std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.rule == rule; });
}

std::uint64_t dense_stride(const Descriptor& d, unsigned dim) {
  if (dim == 0 || dim > d.dims.size() || dim > d.strides.size() + 1) return 0;
  if (dim == 1) return bytes_of(d.data_type, d.dims[0]);
  return d.strides[dim - 2] * d.dims[dim - 1];
}

Verdict validate(const Descriptor& d, std::optional<int> target_cc) {
  Checker c(d);
  check_enums(c);
  check_target(c, target_cc);
  if (check_rank(c)) {
    check_address(c);
    check_dims(c);
    check_strides(c);
    check_box(c);
    check_element_strides(c);
    check_layout_modes(c);
    check_oob_fill(c);
    check_size1_strides(c);
    check_box_vs_tensor(c);
    check_overlap(c);
  }
  return c.take();
}

}  // namespace cudadiag::tma
