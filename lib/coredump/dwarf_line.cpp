#include "coredump/dwarf_line.h"

#include <fmt/format.h>

namespace cudadiag::coredump {
namespace {

constexpr std::size_t kMaxRows = 1u << 20;
constexpr std::size_t kMaxFiles = 1u << 16;

struct Fail {
  std::string what;
};

std::uint64_t need(const std::optional<std::uint64_t>& v, const char* what) {
  if (!v) throw Fail{what};
  return *v;
}

// One unit of the section, [start, end).
void decode_unit(const Bytes& b, std::uint64_t start, std::uint64_t end, LineTable& t) {
  std::uint64_t o = start;
  const auto version = b.u16(o);
  if (!version || *version < 2 || *version > 4) throw Fail{fmt::format("line table version {} not read", version ? *version : 0)};
  o += 2;
  const std::uint64_t header_length = need(b.u32(o), "header length");
  o += 4;
  const std::uint64_t program = o + header_length;
  if (program > end) throw Fail{"header runs past its unit"};
  const auto min_inst = b.u8(o);
  std::uint64_t p = o + 1;
  if (*version >= 4) ++p;  // maximum_operations_per_instruction (VLIW only)
  const auto default_is_stmt = b.u8(p);
  const auto line_base_u = b.u8(p + 1);
  const auto line_range = b.u8(p + 2);
  const auto opcode_base = b.u8(p + 3);
  if (!min_inst || !default_is_stmt || !line_base_u || !line_range || !opcode_base || *line_range == 0 || *opcode_base == 0)
    throw Fail{"bad header"};
  const auto line_base = static_cast<std::int8_t>(*line_base_u);
  std::vector<std::uint8_t> arg_counts(*opcode_base, 0);
  p += 4;
  for (unsigned i = 1; i < *opcode_base; ++i) {
    const auto n = b.u8(p++);
    if (!n) throw Fail{"opcode lengths past the end"};
    arg_counts[i] = *n;
  }
  std::vector<std::string> dirs{""};
  while (p < program) {
    const auto s = b.cstring(p, 4096);
    if (!s) throw Fail{"include directory not terminated"};
    p += s->size() + 1;
    if (s->empty()) break;
    if (dirs.size() >= kMaxFiles) throw Fail{"too many directories"};
    dirs.emplace_back(*s);
  }
  t.files = {""};
  while (p < program) {
    const auto s = b.cstring(p, 4096);
    if (!s) throw Fail{"file name not terminated"};
    p += s->size() + 1;
    if (s->empty()) break;
    const std::uint64_t dir = need(read_uleb(b, &p), "file directory");
    need(read_uleb(b, &p), "file time");
    need(read_uleb(b, &p), "file size");
    std::string name(*s);
    if (!name.empty() && name[0] != '/' && dir > 0 && dir < dirs.size()) name = dirs[dir] + "/" + name;
    if (t.files.size() >= kMaxFiles) throw Fail{"too many files"};
    t.files.push_back(std::move(name));
  }

  std::uint64_t address = 0;
  std::uint32_t file = 1;
  std::int64_t line = 1;
  auto emit = [&](bool end_sequence) {
    if (t.rows.size() >= kMaxRows) throw Fail{"too many rows"};
    t.rows.push_back({address, file, static_cast<std::uint32_t>(line < 0 ? 0 : line), end_sequence});
  };
  p = program;
  while (p < end) {
    const std::uint8_t op = *b.u8(p++);
    if (op >= *opcode_base) {
      const unsigned adjusted = op - *opcode_base;
      address += static_cast<std::uint64_t>(adjusted / *line_range) * *min_inst;
      line += line_base + static_cast<int>(adjusted % *line_range);
      emit(false);
      continue;
    }
    switch (op) {
      case 0: {  // extended
        const std::uint64_t len = need(read_uleb(b, &p), "extended opcode length");
        if (len == 0 || len > end - p) throw Fail{"extended opcode runs past its unit"};
        const std::uint64_t next = p + len;
        const std::uint8_t sub = *b.u8(p);
        if (sub == 1) {
          emit(true);
          address = 0;
          file = 1;
          line = 1;
        } else if (sub == 2) {
          if (len == 9) address = need(b.u64(p + 1), "set_address");
          else if (len == 5) address = need(b.u32(p + 1), "set_address");
          else throw Fail{"set_address of an odd size"};
        }
        p = next;
        break;
      }
      case 1: emit(false); break;
      case 2: address += need(read_uleb(b, &p), "advance_pc") * *min_inst; break;
      case 3: {
        const auto d = read_sleb(b, &p);
        if (!d) throw Fail{"advance_line"};
        line += *d;
        break;
      }
      case 4: file = static_cast<std::uint32_t>(need(read_uleb(b, &p), "set_file")); break;
      case 5: need(read_uleb(b, &p), "set_column"); break;
      case 6: case 7: case 10: case 11: break;
      case 8: address += static_cast<std::uint64_t>((255 - *opcode_base) / *line_range) * *min_inst; break;
      case 9: {
        const auto v = b.u16(p);
        if (!v) throw Fail{"fixed_advance_pc"};
        address += *v;
        p += 2;
        break;
      }
      default:  // an opcode this decoder does not know: skip its ULEB arguments
        for (unsigned i = 0; i < arg_counts[op]; ++i) need(read_uleb(b, &p), "operand");
    }
  }
}

}  // namespace

DecodedLines decode_debug_line(Bytes section) {
  DecodedLines out;
  std::uint64_t o = 0;
  while (o < section.size()) {
    const auto len = section.u32(o);
    if (!len) {
      out.error = fmt::format("unit header at offset {} past the end", o);
      break;
    }
    if (*len >= 0xfffffff0u) {
      out.error = "64-bit DWARF line tables are not read";
      break;
    }
    const std::uint64_t start = o + 4;
    if (*len > section.size() - start) {
      out.error = fmt::format("unit at offset {} runs past the section", o);
      break;
    }
    const std::uint64_t end = start + *len;
    LineTable t;
    try {
      decode_unit(section, start, end, t);
    } catch (const Fail& f) {
      out.error = fmt::format("unit at offset {}: {}", o, f.what);
    }
    out.tables.push_back(std::move(t));
    if (!out.error.empty()) break;
    o = end;
  }
  return out;
}

std::optional<SourceLine> line_for_pc(const DecodedLines& lines, std::uint64_t pc) {
  for (const auto& t : lines.tables) {
    const LineRow* best = nullptr;
    for (std::size_t i = 0; i + 1 < t.rows.size(); ++i) {
      const auto& r = t.rows[i];
      if (r.end_sequence) continue;
      // A row covers [its address, the next row's address) within one sequence.
      const auto& next = t.rows[i + 1];
      if (r.address <= pc && pc < next.address) best = &r;
    }
    if (best != nullptr && best->line > 0) {
      SourceLine s;
      s.file = best->file < t.files.size() ? t.files[best->file] : fmt::format("<file {}>", best->file);
      s.line = best->line;
      return s;
    }
  }
  return std::nullopt;
}

}  // namespace cudadiag::coredump
