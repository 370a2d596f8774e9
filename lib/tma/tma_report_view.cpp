#include "tma/tma_report_view.h"

#include "report/vocabulary.h"
#include "tma/tma_json.h"
#include "util/errors.h"
#include "util/printable.h"
#include "util/text_layout.h"

namespace cudadiag::tma {
namespace {

using report::json;

// Malformed input: names the file and the member of report.tma.
struct Malformed {
  const std::string& file;
  [[noreturn]] void operator()(const std::string& member, const std::string& what) const {
    throw InputError(file, "tma" + (member.empty() ? std::string() : "." + member), what);
  }
};

std::string string_member(const json& j, const char* key, const std::string& where, const Malformed& malformed) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_string()) malformed(where + "." + key, "expected a string");
  return it->get<std::string>();
}

// The device's answer for one row, as the child's result carried it.
std::optional<report::Result> device_of(const json& row, const std::string& where, const Malformed& malformed) {
  const auto outcome = row.find("device_outcome");
  if (outcome == row.end() || outcome->is_null()) return std::nullopt;
  if (!outcome->is_string()) malformed(where + ".device_outcome", "expected an outcome word");
  const auto parsed = report::parse_outcome(outcome->get<std::string>());
  if (!parsed) malformed(where + ".device_outcome", "'" + outcome->get<std::string>() + "' is no outcome");
  report::Result r;
  r.outcome = *parsed;
  r.reason = string_member(row, "device_reason", where, malformed);
  for (const char* key : {"driver", "load"}) {
    const auto it = row.find(key);
    if (it != row.end() && !it->is_null())
      r.details.set(key == std::string("driver") ? "encode" : "load", report::value_from_json(*it));
  }
  return r;
}

}  // namespace

ReportItems items_from_report(const report::Report& r, const std::string& file) {
  const Malformed malformed{file};
  const report::Value* section = r.extra.find("tma");
  if (!section) malformed("", "the report has no tma section");
  const json tma = report::to_json(*section);
  const auto rows = tma.find("rows");
  if (rows == tma.end() || !rows->is_array()) malformed("rows", "expected an array");
  std::optional<int> target_cc;
  if (const auto t = tma.find("target_cc"); t != tma.end() && !t->is_null()) {
    if (!t->is_number_integer()) malformed("target_cc", "expected an integer");
    target_cc = t->get<int>();
  }
  std::vector<std::string> host_ids;
  for (const auto& res : r.results)
    if (res.outcome == report::Outcome::host_valid || res.outcome == report::Outcome::host_invalid)
      host_ids.push_back(res.case_id);
  ReportItems out;
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const json& row = (*rows)[i];
    const std::string where = "rows[" + std::to_string(i) + "]";
    if (!row.is_object()) malformed(where, "expected an object");
    Item it;
    it.id = string_member(row, "id", where, malformed);
    it.label = string_member(row, "label", where, malformed);
    // A report written before rows kept their case id: the validator's result of the same
    // row (one per row, in row order).
    if (it.id.empty() && i < host_ids.size()) it.id = host_ids[i];
    if (it.id.empty()) it.id = it.label;
    it.source = string_member(row, "source", where, malformed);
    it.note = string_member(row, "note", where, malformed);
    const auto d = row.find("descriptor");
    if (d == row.end()) malformed(where + ".descriptor", "missing");
    try {
      it.d = descriptor_from_json(*d);
    } catch (const std::exception& e) {
      malformed(where + ".descriptor", e.what());
    }
    if (const auto s = row.find("sweep"); s != row.end()) it.values = *s;
    if (const auto p = row.find("printed_encode_result"); p != row.end() && p->is_number_integer())
      it.printed_result = p->get<int>();
    if (const auto e = row.find("expected_errors"); e != row.end() && e->is_array()) {
      out.table_mode = true;
      for (const auto& id : *e)
        if (id.is_string()) it.table_errors.push_back(id.get<std::string>());
    }
    it.v = validate(it.d, target_cc);
    it.device = device_of(row, where, malformed);
    out.items.push_back(std::move(it));
  }
  return out;
}

std::string render_tma_report(const report::Report& r, bool md, const std::string& file) {
  const auto [items, table_mode] = items_from_report(r, file);
  const json tma = report::to_json(*r.extra.find("tma"));
  std::string gpu_line = tma.value("gpu_part", std::string());
  if (gpu_line.empty()) {  // a report written before the section kept the command's own line
    const std::string reason = r.gpu.reason.value_or("?");
    gpu_line = r.gpu.ran                              ? "GPU part: cuTensorMapEncodeTiled in a child process"
               : reason.rfind("GPU part:", 0) == 0 ? reason
               : reason.rfind("--", 0) == 0        ? "GPU part: not run (" + reason + ")"
                                                      : "GPU part: could not run - " + reason;
  }
  if (const std::string target = tma.value("target_text", std::string()); !target.empty())
    gpu_line += "\ntarget: " + target;
  std::string text = render_items(items, table_mode, gpu_line, md);
  text += (md ? "**verdict: " : "verdict: ") + std::string(report::to_string(r.verdict.status)) + (md ? "**\n" : "\n");
  for (const auto& why : r.verdict.reasons) text += text::hanging("  - ", "    ", printable(why));
  return text;
}

}  // namespace cudadiag::tma
