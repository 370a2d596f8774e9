#pragma once
// Sweeps: descriptors across a range of one or more parameters, built the way a
// framework builds them, e.g. the seed's "seq_len 1 fails, seq_len 2 works".
//
// The base descriptor fixes the dimension order in memory (dimension 0 innermost, the
// others by stride, size-1 dimensions outermost). Each point rebuilds the strides as a
// dense layout in that order. A dimension of extent 1 gets, with Size1Stride::as_is, the
// stride the base had for it when its extent was 1 there (else one element), as
// frameworks report a degenerate stride for size-1 dimensions; with canonical, the dense
// stride.
#include <cstdint>
#include <string>
#include <vector>

#include "report/report.h"
#include "tma/descriptor.h"

namespace cudadiag::tma {

enum class Size1Stride { as_is, canonical };

// What a --sweep axis varies: the sequence length's dimension, the heads' dimension, or
// the element type.
enum class SweepParam : std::uint8_t { seq_len, heads, dtype };
// "seq-len" | "heads" | "dtype": the word --sweep takes (and the point's label uses).
const char* to_string(SweepParam p);

struct SweepAxis {
  SweepParam name = SweepParam::seq_len;
  std::vector<std::string> values;  // expanded: "0".."8", or dtype names
};

struct SweepOptions {
  unsigned seq_dim = 1;    // dimension whose extent is the sequence length
  unsigned heads_dim = 2;  // dimension whose extent is the number of heads
  Size1Stride size1 = Size1Stride::as_is;
};

struct SweepPoint {
  report::json values = report::json::object();  // {"seq-len": 1, "dtype": "bf16"}
  std::string label;                             // "seq-len=1 dtype=bf16"
  Descriptor descriptor;
};

// "seq-len=0..8", "heads=1,8,32", "dtype=bf16,fp16", "seq-len=0..4,16". Throws
// cudadiag::UsageError naming what is wrong.
SweepAxis parse_sweep_axis(const std::string& text);
Size1Stride parse_size1_stride(const std::string& text);

// The cartesian product of the axes, first axis outermost. Throws UsageError when a
// dimension index is outside the base's rank.
std::vector<SweepPoint> build_sweep(const Descriptor& base, const std::vector<SweepAxis>& axes,
                                    const SweepOptions& opts);

// Dimensions 1..rank-1 from innermost to outermost in memory, as the base lays them out.
std::vector<unsigned> memory_order(const Descriptor& base);

}  // namespace cudadiag::tma
