#include "tma/tma_check.h"
#include "util/text_layout.h"

#include <algorithm>

#include "tma/printout.h"
#include "tma/tma_json.h"
#include "util/errors.h"
#include "util/log.h"
#include "util/printable.h"

namespace cudadiag::tma {
namespace {

using report::json;
using report::Outcome;

template <typename E, typename Parse>
E parse_enum(const std::string& flag, const std::string& text, Parse parse, const std::string& names) {
  if (auto v = parse(text)) return *v;
  throw UsageError(flag + " '" + text + "': use one of " + names);
}

std::string short_rule(const std::string& id) { return id.rfind("tma.", 0) == 0 ? id.substr(4) : id; }

std::string validator_cell(const Item& it) {
  if (it.v.valid()) return it.v.warnings() ? "valid (" + std::to_string(it.v.warnings()) + " warning(s))" : "valid";
  std::string s = "INVALID:";
  for (const auto& id : it.v.rule_ids(Severity::error)) s += " " + short_rule(id);
  return s;
}

std::string driver_cell(const Item& it) {
  if (!it.device) return "-";
  const auto& r = *it.device;
  const report::Fields* encode = r.details.fields_of("encode");
  if (!encode) return r.outcome == Outcome::skipped ? "skipped" : std::string(report::to_string(r.outcome));
  const long long rc = encode->int_or("result", -1);
  std::string s = rc == 0 ? "accepted" : encode->string_or("name", "?") + " (" + std::to_string(rc) + ")";
  if (r.outcome == Outcome::driver_disagrees) s += " DISAGREES";
  return s;
}

std::string load_cell(const Item& it) {
  const report::Fields* l = it.device ? it.device->details.fields_of("load") : nullptr;
  if (!l) return "-";
  if (!l->bool_or("ran", false)) return "not run";
  const auto mism = l->int_or("mismatches", 0);
  if (mism) return "MISMATCH " + std::to_string(mism) + "/" + std::to_string(l->int_or("elements", 0));
  return "ok (" + std::to_string(l->int_or("boxes", 0)) + " boxes, " + std::to_string(l->int_or("oob_elements", 0)) +
         " filled)";
}

bool surprising(Outcome o) {
  return o == Outcome::driver_disagrees || o == Outcome::mismatch || o == Outcome::crashed ||
         o == Outcome::timeout || o == Outcome::no_result;
}

std::string table_text(const std::vector<std::vector<std::string>>& rows, bool md) {
  // Text: as wide as the line; a cell is never cut. A table that cannot fit becomes a
  // list: each row's first cell on its own line, the others under it with their header.
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], text::display_width(r[c]));
  size_t total = 0;
  for (const auto w : width) total += w + 2;
  std::string out;
  if (!md && total > text::columns()) {
    const auto& head = rows.front();
    size_t label_width = 0;
    for (size_t c = 1; c < head.size(); ++c) label_width = std::max(label_width, text::display_width(head[c]));
    for (size_t i = 1; i < rows.size(); ++i) {
      out += text::hanging("  ", rows[i].front());
      for (size_t c = 1; c < rows[i].size(); ++c) out += text::labelled("      ", head[c], label_width, rows[i][c]);
    }
    return out;
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    for (size_t c = 0; c < r.size(); ++c) {
      std::string cell = r[c];
      if (md) {
        out += "| " + cell + " ";
      } else {
        out += "  " + text::pad_right(cell, width[c]);
      }
    }
    if (!md) out.erase(out.find_last_not_of(' ') + 1);
    out += md ? "|\n" : "\n";
    if (md && i == 0) {
      for (size_t c = 0; c < r.size(); ++c) out += "|---";
      out += "|\n";
    }
  }
  return out;
}

}  // namespace

Descriptor descriptor_from_flags(const ExplicitForm& f) {
  if (f.dtype.empty() || f.dims.empty() || f.box.empty())
    throw UsageError("the explicit form needs --dtype, --dims and --box (and --strides for rank 2+), "
                     "or use --from-log FILE");
  Descriptor d;
  d.data_type = parse_enum<DataType>("--dtype", f.dtype, parse_data_type, data_type_help());
  if (f.dims.size() > 5) throw UsageError("--dims: " + std::to_string(f.dims.size()) + " values; at most 5 dimensions");
  d.rank = static_cast<unsigned>(f.dims.size());
  d.dims = f.dims;
  if (f.strides.size() + 1 != d.rank) {
    std::string hint;
    if (f.strides.size() == d.rank && !f.strides.empty() && f.strides[0] == bytes_of(d.data_type, 1))
      hint = " (this looks like the printout's form, which starts with the element stride: drop the first value)";
    throw UsageError("--strides: " + std::to_string(f.strides.size()) + " values given; rank " +
                     std::to_string(d.rank) + " needs " + std::to_string(d.rank - 1) +
                     " (bytes, for dimensions 1.." + std::to_string(d.rank - 1) + ", as the driver takes them)" + hint);
  }
  d.strides = f.strides;
  if (f.box.size() != d.rank)
    throw UsageError("--box: " + std::to_string(f.box.size()) + " values given; --dims has " + std::to_string(d.rank));
  d.box = f.box;
  d.element_strides = f.element_strides.empty() ? std::vector<std::uint32_t>(d.rank, 1) : f.element_strides;
  if (d.element_strides.size() != d.rank)
    throw UsageError("--element-strides: " + std::to_string(d.element_strides.size()) + " values given; --dims has " +
                     std::to_string(d.rank));
  d.interleave = parse_enum<Interleave>("--interleave", f.interleave, parse_interleave, "none, 16B, 32B");
  d.swizzle = parse_enum<Swizzle>("--swizzle", f.swizzle, parse_swizzle,
                                  "none, 32B, 64B, 128B, 128B_atom_32B, 128B_atom_32B_flip_8B, 128B_atom_64B");
  d.l2_promotion = parse_enum<L2Promotion>("--l2-promotion", f.l2_promotion, parse_l2_promotion, "none, 64B, 128B, 256B");
  d.oob_fill = parse_enum<OobFill>("--oob-fill", f.oob_fill, parse_oob_fill, "none, nan");
  size_t used = 0;
  try {
    d.address = std::stoull(f.address, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != f.address.size())
    throw UsageError("--address '" + f.address + "': expected a number such as 0x7f4c49e08800");
  return d;
}

std::vector<Item> collect_items(const CheckRequest& req) {
  std::vector<Item> items;
  if (req.table) {
    for (const auto& row : rule_table()) {
      Item it;
      it.id = "tma.table." + row.name;
      it.label = row.name;
      it.source = "rule table";
      it.d = row.descriptor;
      it.table_row = &row;
      it.note = row.note;
      items.push_back(std::move(it));
    }
    return items;
  }
  const bool from_log = !req.log_name.empty();
  if (from_log && req.explicit_form.given())
    throw UsageError("--from-log and the explicit form (--dtype/--dims/--strides/--box) exclude each other");
  std::vector<Item> bases;
  if (from_log) {
    const auto blocks = parse_printout(req.log_text, req.log_name);
    if (blocks.empty())
      throw InputError(req.log_name, "", "no TMA descriptor block found (a block starts with 'TMA Desc Addr:')");
    for (size_t i = 0; i < blocks.size(); ++i) {
      Item it;
      it.id = "tma.log.block" + std::to_string(i + 1);
      it.label = "block " + std::to_string(i + 1) + " (line " + std::to_string(blocks[i].line) + ")";
      it.source = req.log_name + " line " + std::to_string(blocks[i].line);
      it.d = blocks[i].descriptor;
      it.printed_result = blocks[i].encode_result;
      bases.push_back(std::move(it));
    }
  } else {
    Item it;
    it.id = "tma.explicit";
    it.label = "descriptor";
    it.source = "command line";
    it.d = descriptor_from_flags(req.explicit_form);
    bases.push_back(std::move(it));
  }
  if (req.sweeps.empty()) return bases;

  if (bases.size() > 1)
    spdlog::warn("--sweep: the log has {} blocks; sweeping the first ({})", bases.size(), bases.front().source);
  std::vector<SweepAxis> axes;
  for (const auto& s : req.sweeps) axes.push_back(parse_sweep_axis(s));
  for (auto& p : build_sweep(bases.front().d, axes, req.sweep_options)) {
    Item it;
    it.id = "tma.sweep";
    for (auto& [k, v] : p.values.items()) it.id += "." + k + "-" + (v.is_string() ? v.get<std::string>() : v.dump());
    it.label = p.label;
    it.source = "sweep of " + bases.front().source;
    it.values = p.values;
    it.d = p.descriptor;
    items.push_back(std::move(it));
  }
  return items;
}

void validate_items(std::vector<Item>& items, std::optional<int> target_cc) {
  for (auto& it : items) {
    it.v = validate(it.d, target_cc);
    if (it.table_row) it.table_errors = expected_errors(*it.table_row, target_cc);
  }
}

bool no_device(const std::vector<Item>& items) {
  for (const auto& it : items)
    if (it.device && it.device->details.bool_or("no_device", false)) return true;
  return false;
}

std::optional<int> device_cc(const std::vector<Item>& items) {
  for (const auto& it : items)
    if (const report::Fields* d = it.device ? it.device->details.fields_of("device") : nullptr)
      if (const report::Value* cc = d->find("cc_number"); cc && cc->as_int()) return static_cast<int>(*cc->as_int());
  return std::nullopt;
}

report::Result host_result(const Item& it) {
  report::Result r;
  r.case_id = it.id;
  r.kernel = cases::Family::tma;
  r.params = report::Fields{{"descriptor", report::value_from_json(to_json(it.d))}, {"source", it.source}};
  if (!it.values.empty()) r.params.set("sweep", report::value_from_json(json(it.values)));
  r.device = report::Device::host_only();
  r.outcome = it.v.valid() ? Outcome::host_valid : Outcome::host_invalid;
  for (const auto& f : it.v.findings)
    if (f.severity == Severity::error) {
      r.reason = f.rule + ": " + f.message;
      break;
    }
  r.details.set("validator", report::value_from_json(to_json(it.v)));
  if (it.printed_result) r.details.set("printed_encode_result", *it.printed_result);
  return r;
}

std::string render_items(const std::vector<Item>& items, bool table_mode, const std::string& gpu_line, bool md) {
  std::string out = md ? "## cudadiag tma\n\n" : "cudadiag tma\n";
  // The GPU part's lines (what ran, the target), each wrapped to the width in text.
  for (std::size_t at = 0; at <= gpu_line.size();) {
    const std::size_t end = std::min(gpu_line.find('\n', at), gpu_line.size());
    std::string_view line(gpu_line.data() + at, end - at);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    out += md ? std::string(line) + "\n" : text::hanging("  ", "    ", line);
    at = end + 1;
  }
  out += "\n";
  const bool matrix = items.size() > 1;
  if (matrix) {
    // Rows by case id, as the report's results name them.
    std::vector<std::vector<std::string>> rows{{"case", "validator", "driver", "load"}};
    if (table_mode) rows.front().insert(rows.front().begin() + 1, "expected");
    for (const auto& it : items) {
      std::vector<std::string> row{printable(it.id), validator_cell(it), driver_cell(it), load_cell(it)};
      if (table_mode) {
        std::string e;
        for (const auto& id : it.table_errors) e += (e.empty() ? "" : " ") + short_rule(id);
        row.insert(row.begin() + 1, e.empty() ? "valid" : e);
      }
      rows.push_back(std::move(row));
    }
    out += table_text(rows, md) + "\n";
  }
  // Details: every descriptor once; in a matrix only those with findings or a surprise.
  for (const auto& it : items) {
    const bool surprise = it.device && surprising(it.device->outcome);
    if (matrix && it.v.errors() == 0 && !surprise) continue;
    // The log name comes from the user: shown inert (controls, bidi overrides).
    out += md ? "### " + printable(it.id) + " (" + printable(it.source) + ")\n"
              : text::hanging("", "  ", printable(it.id) + " (" + printable(it.source) + ")");
    out += md ? "\n    " + summary(it.d) + "\n" : text::hanging("  ", "    ", summary(it.d));
    if (it.printed_result)
      out += std::string(md ? "\n" : "") + "  printed encode result: " + std::to_string(*it.printed_result) +
             (*it.printed_result == 1 ? " (CUDA_ERROR_INVALID_VALUE)" : "") + "\n";
    out += "  validator: " + validator_cell(it) + "\n";
    if (md) out += "\n```\n";
    out += format_findings(it.v);
    if (md) out += "```\n";
    if (it.device) {
      out += text::hanging("  driver: ", "    ", driver_cell(it)) + text::hanging("  load: ", "    ", load_cell(it));
      out += text::hanging("  device outcome: ", "    ",
                           std::string(report::to_string(it.device->outcome)) +
                               (it.device->reason.empty() ? "" : " - " + it.device->reason));
    }
    out += "\n";
  }
  return out;
}

json tma_section(const std::vector<Item>& items, bool table_mode, const std::string& size1_stride,
                 const std::string& mode) {
  json rows = json::array();
  for (const auto& it : items) {
    json row{{"id", it.id},
             {"label", it.label},
             {"source", it.source},
             {"descriptor", to_json(it.d)},
             {"validator", to_json(it.v)}};
    if (!it.values.empty()) row["sweep"] = it.values;
    if (it.printed_result) row["printed_encode_result"] = *it.printed_result;
    if (table_mode) row["expected_errors"] = it.table_errors;
    if (!it.note.empty()) row["note"] = it.note;
    const report::Value* encode = it.device ? it.device->details.find("encode") : nullptr;
    const report::Value* load = it.device ? it.device->details.find("load") : nullptr;
    row["driver"] = encode ? report::to_json(*encode) : json(nullptr);
    row["load"] = load ? report::to_json(*load) : json(nullptr);
    row["device_outcome"] = it.device ? json(report::to_string(it.device->outcome)) : json(nullptr);
    if (it.device && !it.device->reason.empty()) row["device_reason"] = it.device->reason;
    rows.push_back(std::move(row));
  }
  return json{{"mode", mode}, {"size1_stride", size1_stride}, {"rows", rows}};
}

CheckOutcome judge_items(const std::vector<Item>& items, bool table_mode, bool gpu_wanted, bool gpu_ran) {
  CheckOutcome out;
  std::vector<std::string> reasons;
  size_t invalid = 0, surprises = 0, table_mismatch = 0;
  for (const auto& it : items) {
    out.results.push_back(host_result(it));
    if (!it.v.valid()) ++invalid;
    if (table_mode) {
      auto got = it.v.rule_ids(Severity::error);
      auto want = it.table_errors;
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      if (got != want) {
        ++table_mismatch;
        reasons.push_back(it.label + ": the validator's rules differ from the table's expectation");
      }
    }
    // A device part skipped because CUDA could not start is listed with its reason.
    if (it.device && (gpu_ran || it.device->outcome == Outcome::skipped)) {
      out.results.push_back(*it.device);
      if (surprising(it.device->outcome)) {
        ++surprises;
        reasons.push_back(it.label + ": " + std::string(report::to_string(it.device->outcome)) +
                          (it.device->reason.empty() ? "" : " - " + it.device->reason));
      }
    }
  }
  if (!table_mode && invalid)
    reasons.insert(reasons.begin(), std::to_string(invalid) + " of " + std::to_string(items.size()) +
                                        " descriptor(s) break cuTensorMapEncodeTiled's rules");
  const bool findings = surprises || table_mismatch || (!table_mode && invalid);
  out.verdict.status = findings                  ? report::VerdictStatus::findings
                       : (gpu_wanted && !gpu_ran) ? report::VerdictStatus::no_gpu
                                                  : report::VerdictStatus::ok;
  out.verdict.reasons = reasons;
  return out;
}

}  // namespace cudadiag::tma
