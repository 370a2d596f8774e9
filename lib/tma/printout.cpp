#include "tma/printout.h"

#include <cctype>
#include <charconv>
#include <limits>

#include "util/errors.h"

namespace cudadiag::tma {
namespace {

constexpr std::string_view kHeader = "TMA Desc Addr:";
constexpr std::string_view kErrorLine = "Error: Failed to initialize the TMA descriptor";
// The enum fields are C enums (int) in cuda.h: a larger value cannot have been passed.
constexpr std::uint64_t kMaxEnum = static_cast<std::uint64_t>(std::numeric_limits<int>::max());

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    auto line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (end == text.size()) {
      if (!line.empty()) lines.push_back(line);  // no empty "line" after a final newline
      break;
    }
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

class BlockReader {
 public:
  BlockReader(const std::vector<std::string_view>& lines, size_t header, std::string_view prefix,
              const std::string& source)
      : lines_(lines), pos_(header + 1), prefix_(prefix), source_(source) {}

  // The value text after `key` on the next line; throws naming the line when absent.
  std::string_view field(std::string_view key, std::string_view expected) {
    if (pos_ >= lines_.size())
      fail(static_cast<int>(lines_.size()), "the TMA block ends early: expected '" + std::string(key) + " " +
                                                std::string(expected) + "'");
    std::string_view line = lines_[pos_];
    if (line.substr(0, prefix_.size()) == prefix_) line.remove_prefix(prefix_.size());
    line = trim(line);
    const int no = static_cast<int>(pos_ + 1);
    if (line.substr(0, key.size()) != key ||
        (line.size() > key.size() && !std::isspace(static_cast<unsigned char>(line[key.size()]))))
      fail(no, "expected '" + std::string(key) + " " + std::string(expected) + "', found '" + std::string(line) + "'");
    ++pos_;
    last_ = no;
    return trim(line.substr(key.size()));
  }

  // A number no larger than `max` (the width of the driver's parameter).
  std::uint64_t number(std::string_view key, std::uint64_t max) {
    const auto v = field(key, "<number>");
    return in_range(parse_number(v, key), key, max);
  }

  std::uint64_t address(std::string_view key) {
    auto v = field(key, "<0x address>");
    if (v == "(nil)" || v == "0") return 0;
    if (v.substr(0, 2) == "0x" || v.substr(0, 2) == "0X") {
      std::uint64_t out = 0;
      const auto digits = v.substr(2);
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out, 16);
      if (ec == std::errc() && p == digits.data() + digits.size() && !digits.empty()) return out;
    }
    fail(last_, "'" + std::string(key) + "' is not a hexadecimal address: '" + std::string(v) + "'");
  }

  std::vector<std::uint64_t> tuple(std::string_view key, std::uint64_t max) {
    auto v = field(key, "(a,b,c,...)");
    if (v.size() < 2 || v.front() != '(' || v.back() != ')')
      fail(last_, "'" + std::string(key) + "' must be a parenthesised list like (128,1,32,1,1), found '" +
                      std::string(v) + "'");
    v = v.substr(1, v.size() - 2);
    std::vector<std::uint64_t> out;
    while (true) {
      const size_t comma = v.find(',');
      const auto item = trim(v.substr(0, comma));
      if (item.empty() && comma == std::string_view::npos && !out.empty()) break;  // trailing comma
      out.push_back(in_range(parse_number(item, key), key, max));
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
    return out;
  }

  size_t position() const { return pos_; }
  [[noreturn]] void fail(int line, const std::string& what) const {
    throw InputError(source_, "line " + std::to_string(line), what);
  }

 private:
  // The driver takes 32-bit fields (enums, boxDim, elementStrides): a larger printed
  // value is not that descriptor, and casting it down would invent another one.
  std::uint64_t in_range(std::uint64_t v, std::string_view key, std::uint64_t max) const {
    if (v > max)
      fail(last_, "'" + std::string(key) + "': " + std::to_string(v) + " is out of range (at most " +
                      std::to_string(max) + ")");
    return v;
  }

  std::uint64_t parse_number(std::string_view v, std::string_view key) const {
    std::uint64_t out = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out, 10);
    if (v.empty() || ec != std::errc() || p != v.data() + v.size())
      fail(last_ ? last_ : static_cast<int>(pos_), "'" + std::string(key) + "': '" + std::string(v) +
                                                        "' is not a non-negative decimal number");
    return out;
  }

  const std::vector<std::string_view>& lines_;
  size_t pos_;
  std::string_view prefix_;
  const std::string& source_;
  int last_ = 0;
};

template <typename T>
std::vector<T> first_n(const std::vector<std::uint64_t>& v, size_t n) {
  std::vector<T> out;
  for (size_t i = 0; i < n && i < v.size(); ++i) out.push_back(static_cast<T>(v[i]));
  return out;
}

}  // namespace

std::vector<PrintedDescriptor> parse_printout(std::string_view text, const std::string& source) {
  const auto lines = split_lines(text);
  std::vector<PrintedDescriptor> out;
  size_t i = 0;
  while (i < lines.size()) {
    const auto at = lines[i].find(kHeader);
    if (at == std::string_view::npos) {
      // An encode error line after a block belongs to the most recent block.
      const auto e = lines[i].find(kErrorLine);
      if (e != std::string_view::npos && !out.empty() && out.back().error_line == 0) {
        auto rest = trim(lines[i].substr(e + kErrorLine.size()));
        int code = 0;
        auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), code);
        if (ec == std::errc() && p == rest.data() + rest.size()) out.back().encode_result = code;
        else
          throw InputError(source, "line " + std::to_string(i + 1),
                           "expected a CUresult number after '" + std::string(kErrorLine) + "', found '" +
                               std::string(rest) + "'");
        out.back().error_line = static_cast<int>(i + 1);
      }
      ++i;
      continue;
    }
    PrintedDescriptor pd;
    pd.line = static_cast<int>(i + 1);
    pd.desc_address = std::string(trim(lines[i].substr(at + kHeader.size())));
    BlockReader r(lines, i, lines[i].substr(0, at), source);
    auto& d = pd.descriptor;
    d.data_type = static_cast<DataType>(r.number("format", kMaxEnum));
    const auto rank = r.number("dim", kMaxEnum);
    const int rank_line = static_cast<int>(r.position());
    if (rank < 1 || rank > kMaxRank) r.fail(rank_line, "'dim' must be 1..5, found " + std::to_string(rank));
    d.rank = static_cast<unsigned>(rank);
    d.address = r.address("gmem_address");
    auto need = [&](const std::vector<std::uint64_t>& v, const char* key) {
      if (v.size() < rank)
        r.fail(static_cast<int>(r.position()), std::string("'") + key + "' has " + std::to_string(v.size()) +
                                                   " entries, fewer than dim = " + std::to_string(rank));
    };
    constexpr auto kU64 = std::numeric_limits<std::uint64_t>::max();
    constexpr auto kU32 = std::numeric_limits<std::uint32_t>::max();
    const auto dims = r.tuple("globalDim", kU64);
    need(dims, "globalDim");
    pd.printed_strides = r.tuple("globalStrides", kU64);
    need(pd.printed_strides, "globalStrides");
    const auto box = r.tuple("boxDim", kU32);
    need(box, "boxDim");
    const auto estr = r.tuple("elementStrides", kU32);
    need(estr, "elementStrides");
    d.interleave = static_cast<Interleave>(r.number("interleave", kMaxEnum));
    d.swizzle = static_cast<Swizzle>(r.number("swizzle", kMaxEnum));
    d.l2_promotion = static_cast<L2Promotion>(r.number("l2Promotion", kMaxEnum));
    d.oob_fill = static_cast<OobFill>(r.number("oobFill", kMaxEnum));
    d.dims = first_n<std::uint64_t>(dims, rank);
    // Entry 0 is the element stride; the driver receives entries 1..rank-1.
    d.strides.assign(pd.printed_strides.begin() + 1, pd.printed_strides.begin() + static_cast<long>(rank));
    d.box = first_n<std::uint32_t>(box, rank);
    d.element_strides = first_n<std::uint32_t>(estr, rank);
    out.push_back(std::move(pd));
    i = r.position();
  }
  return out;
}

}  // namespace cudadiag::tma
