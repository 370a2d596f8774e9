#pragma once
// index_select on a sliced view (the ring-attention seed): K and V are [B, S, H, D];
// the case slices heads [:, :, h0:h1] and gathers positions offset, offset + N, ...
// along S. Everything decidable without a GPU lives here: parameters and their
// validation, the index list, the layouts' pointer/stride choice, the CPU reference and
// the bit-exact comparison.
//
// Layouts (how the view reaches the gather kernel, which itself honours any strides):
//   stride             the view's real strides (S*H*D, H*D, D): correct on any view
//   assume-contiguous  the view's base pointer with packed strides of [B, S, h1-h0, D]:
//                      the buggy pattern; reads the wrong elements, always inside K
//   copy               copies the slice to a contiguous buffer first (the seed's fix)
//   offset-twice       the view's base pointer plus the head offset again (storage
//                      offset applied twice): on the last gathered row of the last batch
//                      it reads past the end of K when h0 + h1 > H
#include <cstdint>
#include <string>
#include <vector>

#include "profiles/allocator.h"
#include "report/report.h"
#include "util/choices.h"

namespace cudadiag::index_select {

enum class Indices { valid, oob, negative };
enum class Layout { stride, assume_contiguous, copy, offset_twice };
enum class Bounds { checked, unchecked };
enum class ElementType { fp16, bf16, fp32 };
enum class IndexType { int32, int64 };

inline constexpr ChoiceTable<Indices, 3> kIndices{{{Indices::valid, "valid"}, {Indices::oob, "oob"},
                                                   {Indices::negative, "negative"}}};
inline constexpr ChoiceTable<Layout, 4> kLayouts{{{Layout::stride, "stride"},
                                                  {Layout::assume_contiguous, "assume-contiguous"},
                                                  {Layout::copy, "copy"},
                                                  {Layout::offset_twice, "offset-twice"}}};
inline constexpr ChoiceTable<Bounds, 2> kBounds{{{Bounds::checked, "checked"}, {Bounds::unchecked, "unchecked"}}};
inline constexpr ChoiceTable<ElementType, 3> kElementTypes{
    {{ElementType::fp16, "fp16"}, {ElementType::bf16, "bf16"}, {ElementType::fp32, "fp32"}}};
inline constexpr ChoiceTable<IndexType, 2> kIndexTypes{{{IndexType::int32, "int32"}, {IndexType::int64, "int64"}}};

struct IndexSelectParams {
  long long B = 2, S = 512, H = 8, D = 64;
  long long h0 = 4, h1 = 8;
  long long dilation = 2;
  long long offset = 1;               // first gathered position; default (S-1) % dilation, so the last is S-1
  Indices indices = Indices::valid;
  Layout layout = Layout::stride;
  Bounds bounds = Bounds::checked;      // checked: device assert, like PyTorch
  ElementType dtype = ElementType::fp16;
  IndexType index_dtype = IndexType::int64;

  long long heads() const { return h1 - h0; }
  long long positions() const { return (S - offset + dilation - 1) / dilation; }
  int element_bytes() const { return dtype == ElementType::fp32 ? 4 : 2; }
  long long source_elements() const { return B * S * H * D; }
  long long output_elements() const { return B * positions() * heads() * D; }
};

// Throws std::invalid_argument naming the parameter and what is wrong.
IndexSelectParams index_select_params_from_json(const report::json& j);
report::json to_json(const IndexSelectParams& p);
// "2,512,8,64" -> {2,512,8,64}; "4:8" -> {4,8}. Throw std::invalid_argument.
std::vector<long long> parse_shape(const std::string& text);
std::pair<long long, long long> parse_heads(const std::string& text);

// offset, offset + N, ...; with indices=oob the last one becomes S (one past the end),
// with indices=negative it becomes -1.
std::vector<long long> gather_indices(const IndexSelectParams& p);
bool index_valid(const IndexSelectParams& p, long long index);

// Where the gather kernel reads: element offset of its base pointer from K's start and
// the strides (in elements) for b, s, h; d has stride 1. For copy: the contiguous copy.
struct GatherSource {
  long long base_offset = 0;
  long long stride_b = 0, stride_s = 0, stride_h = 0;
  bool from_copy = false;
};
GatherSource gather_source(const IndexSelectParams& p);

// What the gather reads, lowest and highest element offset over the whole output,
// relative to the first element of the buffer it reads (K itself, or its contiguous
// copy): below 0 is an underrun, at or above `elements` an overrun.
struct ReadExtent {
  std::string buffer;  // "k" or "k_contig"
  long long elements = 0;
  long long lo = 0, hi = 0;
};
ReadExtent read_extent(const IndexSelectParams& p);

// The outcome a healthy host gives for these parameters under an allocator (pool,
// direct, fence-back, fence-front), as an expectation expression (cases/expectation.h).
std::string index_select_expectation(const IndexSelectParams& p, profiles::Allocator allocator);

// Fresh random element bits for one tensor: finite, non-zero, never the 0xFF poison.
std::vector<std::uint8_t> random_tensor(const IndexSelectParams& p, long long elements, std::uint64_t seed);

// out[b, j, h, d] = src[b, idx[j], h0 + h, d] on raw element bits; rows whose index is
// invalid are left as 0xFF bytes (the poison: nothing correct can be there).
std::vector<std::uint8_t> reference_gather(const IndexSelectParams& p, const std::vector<std::uint8_t>& src,
                                           const std::vector<long long>& idx);

struct GatherComparison {
  long long compared = 0;
  long long mismatches = 0;
  long long invalid_rows = 0;  // output elements whose index is invalid (counted as mismatches)
  report::json first_bad = nullptr;  // {tensor, index:[b,j,h,d], position, got, expected, got_bits, expected_bits}
};
// Bit-exact comparison; elements of rows with an invalid index always count as mismatches.
GatherComparison compare_gather(const IndexSelectParams& p, const std::string& tensor,
                                const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& expected,
                                const std::vector<long long>& idx);

// The value of one element's bits as a double (fp16 / bf16 / fp32), for messages.
double element_value(ElementType dtype, std::uint32_t bits);

// "index_select.<layout>.<indices>.<bounds>": the id of a one-off run of these parameters.
std::string case_id_for(const IndexSelectParams& p);

}  // namespace cudadiag::index_select
