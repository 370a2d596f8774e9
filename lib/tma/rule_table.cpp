#include "tma/rule_table.h"

#include <cstdint>

namespace cudadiag::tma {
namespace {

using u64 = std::uint64_t;

// A dense descriptor: strides from the extents, unit element strides, no swizzle.
Descriptor dense(DataType t, std::vector<u64> dims, std::vector<std::uint32_t> box) {
  Descriptor d;
  d.data_type = t;
  d.rank = static_cast<unsigned>(dims.size());
  u64 stride = bytes_of(t, dims.empty() ? 0 : dims[0]);
  for (size_t i = 1; i < dims.size(); ++i) {
    d.strides.push_back(stride);
    stride *= dims[i];
  }
  d.dims = std::move(dims);
  d.box = std::move(box);
  d.element_strides.assign(d.rank, 1);
  return d;
}

template <typename F>
Descriptor with(Descriptor d, F&& edit) {
  edit(d);
  return d;
}

// The seed: q of [seq, heads=32, head_dim=128] bf16 (NHD) read as (head_dim, seq, heads).
Descriptor seed(u64 seq_len, u64 seq_stride) {
  Descriptor d;
  d.data_type = DataType::bfloat16;
  d.rank = 3;
  d.dims = {128, seq_len, 32};
  d.strides = {seq_stride, 256};
  d.box = {64, 128, 1};
  d.element_strides = {1, 1, 1};
  d.swizzle = Swizzle::b128;
  d.l2_promotion = L2Promotion::b128;
  return d;
}

Descriptor interleaved(Interleave il, Swizzle sw) {
  // NC/8HWC8-like: (C8=8, HW=64, C/8=4, N=2) bf16; the inner 8 channels are 16 bytes.
  auto d = dense(DataType::bfloat16, {8, 64, 4, 2}, {8, 32, 2, 1});
  if (il == Interleave::b32) {  // NC/16HWC16: 16 channels = 32 bytes
    d = dense(DataType::bfloat16, {16, 64, 4, 2}, {16, 32, 2, 1});
  }
  d.interleave = il;
  d.swizzle = sw;
  return d;
}

std::vector<TableRow> build() {
  const auto I = Interleave::none;
  (void)I;
  std::vector<TableRow> t;
  auto add = [&t](std::string name, Descriptor d, std::vector<std::string> errors,
                  std::vector<std::string> warnings = {}, std::string note = {}) {
    t.push_back(TableRow{std::move(name), std::move(d), std::move(errors), std::move(warnings), std::move(note)});
  };
  const auto base2d = with(dense(DataType::bfloat16, {128, 64}, {64, 64}),
                           [](Descriptor& d) { d.swizzle = Swizzle::b128; d.l2_promotion = L2Promotion::b128; });

  // Valid descriptors.
  add("valid.2d.bf16.swizzle128", base2d, {});
  add("valid.seed.seq2", seed(2, 8192), {}, {"tma.box_dim.exceeds_global_dim"});
  add("valid.seed.seq1.canonical", seed(1, 256), {}, {"tma.box_dim.exceeds_global_dim"});
  add("valid.1d.fp32", dense(DataType::float32, {1000}, {256}), {});
  add("valid.5d.uint8", dense(DataType::uint8, {64, 4, 4, 4, 4}, {64, 2, 2, 2, 2}), {});
  add("valid.global_dim.2pow32", dense(DataType::bfloat16, {8, u64{1} << 32}, {8, 4}), {});
  add("valid.stride.below_2pow40",
      with(dense(DataType::bfloat16, {8, 2}, {8, 2}), [](Descriptor& d) { d.strides = {(u64{1} << 40) - 16}; }), {});
  add("valid.box.256", dense(DataType::uint8, {512, 512}, {256, 256}), {});
  add("valid.element_stride.2", with(base2d, [](Descriptor& d) { d.element_strides = {1, 2}; }), {});
  add("valid.swizzle64.inner64B", with(dense(DataType::bfloat16, {128, 64}, {32, 64}),
                                       [](Descriptor& d) { d.swizzle = Swizzle::b64; }), {});
  add("valid.swizzle32.inner32B", with(dense(DataType::float32, {64, 64}, {8, 8}),
                                       [](Descriptor& d) { d.swizzle = Swizzle::b32; }), {});
  add("valid.interleave16", interleaved(Interleave::b16, Swizzle::none), {});
  add("valid.interleave32.swizzle32", interleaved(Interleave::b32, Swizzle::b32), {});
  add("valid.oob_nan.fp16", with(dense(DataType::float16, {64, 64}, {64, 64}),
                                 [](Descriptor& d) { d.oob_fill = OobFill::nan_request_zero_fma; }), {});
  add("valid.box_exceeds_tensor", dense(DataType::float32, {20, 3}, {32, 8}), {}, {"tma.box_dim.exceeds_global_dim"});
  add("valid.permuted.nhd", with(dense(DataType::bfloat16, {128, 4, 8}, {64, 4, 1}),
                                 [](Descriptor& d) { d.strides = {128 * 2 * 8, 256}; }), {});
  add("valid.overlapping_strides", with(dense(DataType::float32, {16, 8}, {16, 8}),
                                        [](Descriptor& d) { d.strides = {32}; }),
      {}, {"tma.global_stride.overlap"}, "aliasing rows: legal for the driver, wrong for a store");

  // The seed's failure: seq_len 1 with the degenerate stride of the size-1 dimension.
  add("seed.seq1.as_printed", seed(1, 2), {"tma.global_stride.multiple_of_16"},
      {"tma.size1_stride.noncanonical", "tma.box_dim.exceeds_global_dim"});

  // One rule each.
  add("bad.data_type", with(base2d, [](Descriptor& d) { d.data_type = static_cast<DataType>(16); }),
      {"tma.data_type.valid"});
  add("bad.rank.zero", with(base2d, [](Descriptor& d) {
        d.rank = 0;
        d.dims.clear(); d.strides.clear(); d.box.clear(); d.element_strides.clear();
      }), {"tma.rank.range"});
  add("bad.rank.six", dense(DataType::uint8, {16, 2, 2, 2, 2, 2}, {16, 1, 1, 1, 1, 1}), {"tma.rank.range"});
  add("bad.rank.interleave_rank2", with(dense(DataType::bfloat16, {8, 64}, {8, 8}),
                                        [](Descriptor& d) { d.interleave = Interleave::b16; }),
      {"tma.rank.interleave_min3"});
  add("bad.address.align16", with(base2d, [](Descriptor& d) { d.address = 8; }), {"tma.address.align16"});
  add("bad.address.align32.interleave32",
      with(interleaved(Interleave::b32, Swizzle::b32), [](Descriptor& d) { d.address = 16; }),
      {"tma.address.align32"});
  add("bad.global_dim.zero", dense(DataType::bfloat16, {128, 0}, {64, 1}), {"tma.global_dim.nonzero"});
  add("bad.global_dim.over_2pow32",
      with(dense(DataType::bfloat16, {8, 4}, {8, 4}), [](Descriptor& d) { d.dims[1] = (u64{1} << 32) + 1; }),
      {"tma.global_dim.max"});
  add("bad.global_stride.not16", dense(DataType::float32, {10, 4}, {4, 4}), {"tma.global_stride.multiple_of_16"});
  add("bad.global_stride.not32.interleave32",
      with(interleaved(Interleave::b32, Swizzle::b32), [](Descriptor& d) { d.strides[0] = 48; d.dims[1] = 64; }),
      {"tma.global_stride.multiple_of_32"}, {"tma.global_stride.overlap"});
  add("bad.global_stride.2pow40",
      with(dense(DataType::bfloat16, {8, 2}, {8, 2}), [](Descriptor& d) { d.strides = {u64{1} << 40}; }),
      {"tma.global_stride.max"});
  add("bad.box.zero", with(base2d, [](Descriptor& d) { d.box[1] = 0; }), {"tma.box_dim.range"});
  add("bad.box.257", dense(DataType::uint8, {512, 512}, {256, 257}), {"tma.box_dim.range"});
  add("bad.box.inner_8_bytes", dense(DataType::bfloat16, {128, 64}, {4, 64}), {"tma.box_dim.inner_bytes_multiple_of_16"});
  add("bad.element_stride.zero", with(base2d, [](Descriptor& d) { d.element_strides[1] = 0; }),
      {"tma.element_stride.range"});
  add("bad.element_stride.nine", with(base2d, [](Descriptor& d) { d.element_strides[1] = 9; }),
      {"tma.element_stride.range"});
  add("warn.element_stride.inner_ignored", with(base2d, [](Descriptor& d) { d.element_strides[0] = 2; }), {},
      {"tma.element_stride.inner_ignored"});
  add("bad.swizzle128.inner_256B", with(dense(DataType::bfloat16, {256, 64}, {128, 64}),
                                        [](Descriptor& d) { d.swizzle = Swizzle::b128; }),
      {"tma.swizzle.inner_box_span"});
  add("bad.swizzle32.inner_64B", with(dense(DataType::float32, {64, 64}, {16, 8}),
                                      [](Descriptor& d) { d.swizzle = Swizzle::b32; }),
      {"tma.swizzle.inner_box_span"});
  // Documented as a pair, but the driver accepts interleave 32B with swizzle none (H100,
  // driver 580.159.04): a warning.
  add("warn.interleave32.swizzle_none", interleaved(Interleave::b32, Swizzle::none), {},
      {"tma.interleave32.requires_swizzle32"});
  add("bad.oob_nan.int32", with(dense(DataType::int32, {64, 64}, {64, 64}),
                                [](Descriptor& d) { d.oob_fill = OobFill::nan_request_zero_fma; }),
      {"tma.oob_fill.nan_requires_float"});
  add("bad.enum.interleave", with(base2d, [](Descriptor& d) { d.interleave = static_cast<Interleave>(3); }),
      {"tma.interleave.valid"});
  add("bad.enum.swizzle", with(base2d, [](Descriptor& d) { d.swizzle = static_cast<Swizzle>(7); }),
      {"tma.swizzle.valid"});
  add("bad.enum.l2_promotion", with(base2d, [](Descriptor& d) { d.l2_promotion = static_cast<L2Promotion>(4); }),
      {"tma.l2_promotion.valid"});
  add("bad.enum.oob_fill", with(base2d, [](Descriptor& d) { d.oob_fill = static_cast<OobFill>(2); }),
      {"tma.oob_fill.valid"});

  // Packed sub-byte types (CUDA 12.8+) are for sm_100+: the driver rejects even the
  // valid one on sm_90 (H100, driver 580.159.04). The expectations below are for an
  // unknown target; expected_errors() adds tma.data_type.packed_requires_sm100 for an
  // older one, expected_warnings() tma.data_type.packed_target_unknown for an unknown one;
  // needs_sm100 marks them.
  const size_t packed_first = t.size();
  const std::string packed_note = "packed 16U4/16U6 types: sm_100+ only; on sm_90 every row is invalid";
  const auto packed = dense(DataType::u4x16_align16b, {256, 4}, {128, 4});
  add("valid.packed.u4_align16b", packed, {}, {}, packed_note);
  add("bad.packed.dim_not_128", with(packed, [](Descriptor& d) { d.dims[0] = 192; d.strides[0] = 128; }),
      {"tma.global_dim.packed_multiple_128"}, {}, packed_note);
  add("bad.packed.u4_align8b.odd_dim", with(dense(DataType::u4x16_align8b, {256, 4}, {64, 4}),
                                            [](Descriptor& d) { d.dims[0] = 255; }),
      {"tma.global_dim.packed_multiple_2"}, {}, packed_note);
  add("bad.packed.box_not_128", with(packed, [](Descriptor& d) { d.box[0] = 64; }), {"tma.box_dim.packed_128"}, {},
      packed_note);
  add("bad.packed.stride_not32", with(packed, [](Descriptor& d) { d.strides[0] = 144; }),
      {"tma.global_stride.multiple_of_32"}, {}, packed_note);
  add("bad.packed.address_align32", with(packed, [](Descriptor& d) { d.address = 16; }), {"tma.address.align32"}, {},
      packed_note);
  add("bad.packed.swizzle_mode", with(packed, [](Descriptor& d) { d.swizzle = Swizzle::b128_atom_64b; }),
      {"tma.packed.swizzle_mode"}, {}, packed_note);
  add("bad.packed.u6_interleave", with(dense(DataType::u6x16_align16b, {128, 4, 2}, {128, 4, 1}),
                                       [](Descriptor& d) { d.interleave = Interleave::b16; }),
      {"tma.packed.u6_requires_no_interleave"}, {}, packed_note);
  for (size_t i = packed_first; i < t.size(); ++i) t[i].needs_sm100 = true;
  return t;
}

}  // namespace

const std::vector<TableRow>& rule_table() {
  static const std::vector<TableRow> table = build();
  return table;
}

std::vector<std::string> expected_errors(const TableRow& row, std::optional<int> target_cc) {
  auto ids = row.errors;
  if (row.needs_sm100 && target_cc && *target_cc < 100) ids.push_back("tma.data_type.packed_requires_sm100");
  return ids;
}

std::vector<std::string> expected_warnings(const TableRow& row, std::optional<int> target_cc) {
  auto ids = row.warnings;
  if (row.needs_sm100 && !target_cc) ids.push_back("tma.data_type.packed_target_unknown");
  return ids;
}

const std::vector<std::string>& error_rule_ids() {
  static const std::vector<std::string> ids = {
      "tma.data_type.valid", "tma.interleave.valid", "tma.swizzle.valid", "tma.l2_promotion.valid",
      "tma.oob_fill.valid", "tma.rank.range", "tma.rank.interleave_min3", "tma.arrays.length",
      "tma.address.align16", "tma.address.align32", "tma.global_dim.nonzero", "tma.global_dim.max",
      "tma.global_dim.packed_multiple_128", "tma.global_dim.packed_multiple_2",
      "tma.global_stride.multiple_of_16", "tma.global_stride.multiple_of_32", "tma.global_stride.max",
      "tma.box_dim.range", "tma.box_dim.inner_bytes_multiple_of_16", "tma.box_dim.packed_128",
      "tma.element_stride.range", "tma.swizzle.inner_box_span", "tma.data_type.packed_requires_sm100",
      "tma.packed.u6_requires_no_interleave", "tma.packed.swizzle_mode", "tma.oob_fill.nan_requires_float"};
  return ids;
}

const std::vector<std::string>& warning_rule_ids() {
  static const std::vector<std::string> ids = {"tma.size1_stride.noncanonical", "tma.box_dim.exceeds_global_dim",
                                               "tma.global_stride.overlap", "tma.element_stride.inner_ignored",
                                               "tma.interleave32.requires_swizzle32",
                                               "tma.data_type.packed_target_unknown"};
  return ids;
}

}  // namespace cudadiag::tma
