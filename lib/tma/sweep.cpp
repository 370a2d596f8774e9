#include "tma/sweep.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "util/errors.h"

namespace cudadiag::tma {
namespace {

constexpr std::uint64_t kMaxSweepPoints = 4096;

std::uint64_t parse_u64(const std::string& s, const std::string& what) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size())
    throw UsageError("--sweep " + what + ": '" + s + "' is not a non-negative integer");
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}

void apply_dense_strides(Descriptor& d, const Descriptor& base, const std::vector<unsigned>& order,
                         Size1Stride size1) {
  d.strides.assign(d.rank > 0 ? d.rank - 1 : 0, 0);
  std::uint64_t running = bytes_of(d.data_type, d.dims[0]);
  for (unsigned dim : order) {
    const std::uint64_t extent = d.dims[dim];
    std::uint64_t stride = running;
    if (extent == 1 && size1 == Size1Stride::as_is) {
      // The base's own degenerate stride, unless it was simply one element (then one
      // element of this point's type).
      const bool base_degenerate = base.dims[dim] == 1 && base.strides[dim - 1] != bytes_of(base.data_type, 1);
      stride = base_degenerate ? base.strides[dim - 1] : bytes_of(d.data_type, 1);
    }
    d.strides[dim - 1] = stride;
    running *= std::max<std::uint64_t>(extent, 1);
  }
}

}  // namespace

const char* to_string(SweepParam p) {
  switch (p) {
    case SweepParam::seq_len: return "seq-len";
    case SweepParam::heads: return "heads";
    case SweepParam::dtype: return "dtype";
  }
  return "?";
}

SweepAxis parse_sweep_axis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError("--sweep '" + text + "': expected NAME=VALUES, e.g. seq-len=0..8, heads=1,8,32, dtype=bf16,fp16");
  SweepAxis axis;
  const std::string name = text.substr(0, eq);
  const std::string values = text.substr(eq + 1);
  std::optional<SweepParam> param;
  for (const SweepParam p : {SweepParam::seq_len, SweepParam::heads, SweepParam::dtype})
    if (name == to_string(p)) param = p;
  if (name == "seq_len") param = SweepParam::seq_len;  // the underscore spelling is accepted too
  if (!param) throw UsageError("--sweep '" + text + "': unknown parameter '" + name + "' (use seq-len, heads or dtype)");
  axis.name = *param;
  const std::string axis_name = to_string(axis.name);
  for (const auto& item : split(values, ',')) {
    if (axis.name == SweepParam::dtype) {
      if (!parse_data_type(item))
        throw UsageError("--sweep dtype: unknown type '" + item + "' (use " + data_type_names() + ")");
      axis.values.push_back(to_string(*parse_data_type(item)));
      continue;
    }
    const auto dots = item.find("..");
    if (dots == std::string::npos) {
      axis.values.push_back(std::to_string(parse_u64(item, axis_name)));
      continue;
    }
    const auto lo = parse_u64(item.substr(0, dots), axis_name);
    const auto hi = parse_u64(item.substr(dots + 2), axis_name);
    if (hi < lo) throw UsageError("--sweep " + axis_name + ": range '" + item + "' runs backwards");
    if (hi - lo >= kMaxSweepPoints)
      throw UsageError("--sweep " + axis_name + ": range '" + item + "' has more than " +
                       std::to_string(kMaxSweepPoints) + " values");
    for (auto v = lo; v <= hi; ++v) axis.values.push_back(std::to_string(v));
  }
  return axis;
}

Size1Stride parse_size1_stride(const std::string& text) {
  if (text == "as-is") return Size1Stride::as_is;
  if (text == "canonical") return Size1Stride::canonical;
  throw UsageError("--size1-stride '" + text + "': use as-is or canonical");
}

std::vector<unsigned> memory_order(const Descriptor& base) {
  std::vector<unsigned> wide, size1;
  for (unsigned i = 1; i < base.rank; ++i) (base.dims[i] == 1 ? size1 : wide).push_back(i);
  std::stable_sort(wide.begin(), wide.end(),
                   [&](unsigned a, unsigned b) { return base.strides[a - 1] < base.strides[b - 1]; });
  wide.insert(wide.end(), size1.begin(), size1.end());
  return wide;
}

std::vector<SweepPoint> build_sweep(const Descriptor& base, const std::vector<SweepAxis>& axes,
                                    const SweepOptions& opts) {
  if (base.rank < 1 || base.dims.size() != base.rank || base.strides.size() + 1 != base.rank)
    throw UsageError("--sweep: the base descriptor's dims/strides do not fit its rank");
  for (const auto& a : axes) {
    const unsigned dim = a.name == SweepParam::seq_len ? opts.seq_dim : a.name == SweepParam::heads ? opts.heads_dim : 1;
    if (a.name != SweepParam::dtype && (dim == 0 || dim >= base.rank))
      throw UsageError("--sweep " + std::string(to_string(a.name)) + ": dimension " + std::to_string(dim) +
                       " is not one of the base's outer dimensions 1.." + std::to_string(base.rank - 1) +
                       " (choose it with --" + (a.name == SweepParam::seq_len ? "seq-dim" : "heads-dim") + ")");
  }
  auto sweeps = [&](SweepParam p) {
    return std::count_if(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.name == p; });
  };
  for (const SweepParam p : {SweepParam::seq_len, SweepParam::heads, SweepParam::dtype})
    if (sweeps(p) > 1) throw UsageError(std::string("--sweep ") + to_string(p) + " is given twice");
  if (sweeps(SweepParam::seq_len) && sweeps(SweepParam::heads) && opts.seq_dim == opts.heads_dim)
    throw UsageError("--sweep seq-len and heads both set dimension " + std::to_string(opts.seq_dim) +
                     ": give them different dimensions with --seq-dim and --heads-dim");
  std::uint64_t total = 1;
  for (const auto& a : axes) total *= std::max<size_t>(a.values.size(), 1);
  if (total > kMaxSweepPoints) throw UsageError("--sweep: more than " + std::to_string(kMaxSweepPoints) + " points");

  const auto order = memory_order(base);
  std::vector<SweepPoint> out;
  std::vector<size_t> idx(axes.size(), 0);
  for (std::uint64_t n = 0; n < total; ++n) {
    SweepPoint p;
    p.descriptor = base;
    auto& d = p.descriptor;
    for (size_t k = 0; k < axes.size(); ++k) {
      const auto& a = axes[k];
      const auto& v = a.values[idx[k]];
      const std::string name = to_string(a.name);
      if (a.name == SweepParam::dtype) {
        d.data_type = *parse_data_type(v);
        p.values[name] = v;
      } else {
        d.dims[a.name == SweepParam::seq_len ? opts.seq_dim : opts.heads_dim] = std::stoull(v);
        p.values[name] = std::stoull(v);
      }
      p.label += (p.label.empty() ? "" : " ") + name + "=" + v;
    }
    apply_dense_strides(d, base, order, opts.size1);
    out.push_back(std::move(p));
    for (size_t k = axes.size(); k-- > 0;) {  // odometer: last axis fastest
      if (++idx[k] < axes[k].values.size()) break;
      idx[k] = 0;
    }
  }
  return out;
}

}  // namespace cudadiag::tma
