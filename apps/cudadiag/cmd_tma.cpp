// `cudadiag tma`: a TMA descriptor (from a CuTe/FlashInfer printout, or given
// explicitly) checked against the documented rules of cuTensorMapEncodeTiled on the
// host, then encoded by the real driver and loaded with cp.async.bulk.tensor in a
// child when a GPU is there. --sweep rebuilds the descriptor across a range (the
// seed's "seq_len 1 fails, seq_len 2 works" in one command); --table (hidden) runs the
// validator's rule table through the driver.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include "cli_common.h"
#include "commands.h"
#include "report/render.h"
#include "suite/executor.h"
#include "tma/printout.h"
#include "tma/rule_table.h"
#include "tma/sweep.h"
#include "tma/tma_json.h"
#include "tma/validator.h"
#include "util/errors.h"
#include "util/log.h"

namespace cudadiag::app {
namespace {

using json = report::json;

struct TmaOptions {
  CommonOptions common;
  std::string from_log;
  std::string dtype;
  std::vector<std::uint64_t> dims;
  std::vector<std::uint64_t> strides;
  std::vector<std::uint32_t> box;
  std::vector<std::uint32_t> element_strides;
  std::string interleave = "none";
  std::string swizzle = "none";
  std::string l2_promotion = "none";
  std::string oob_fill = "none";
  std::string address = "0x0";
  std::vector<std::string> sweeps;
  unsigned seq_dim = 1;
  unsigned heads_dim = 2;
  std::string size1_stride = "as-is";
  bool host_only = false;
  bool no_load = false;
  bool table = false;
  int target_cc = 0;  // --target-cc: major*10+minor; 0 = the device's when it runs, else unknown
  int timeout_s = 120;
};

struct Item {
  std::string id;       // case id: tma.<source>
  std::string label;    // row label in the matrix
  std::string source;   // where the descriptor came from
  json values = json::object();  // sweep values
  tma::Descriptor d;
  tma::Verdict v;
  std::optional<int> printed_result;     // the printout's "Failed to initialize ... N"
  const tma::TableRow* table_row = nullptr;  // --table: the row (its expectations)
  std::vector<std::string> table_errors;     // --table: the rule ids the row expects for the target
  std::string note;
  std::optional<report::Result> device;  // the child's result
};

std::string read_input(const std::string& path) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(std::cin), {});
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <typename E, typename Parse>
E parse_enum(const std::string& flag, const std::string& text, Parse parse, const char* names) {
  if (auto v = parse(text)) return *v;
  throw UsageError(flag + " '" + text + "': use one of " + names);
}

tma::Descriptor explicit_descriptor(const TmaOptions& o) {
  if (o.dtype.empty() || o.dims.empty() || o.box.empty())
    throw UsageError("the explicit form needs --dtype, --dims and --box (and --strides for rank 2+), "
                     "or use --from-log FILE");
  tma::Descriptor d;
  d.data_type = parse_enum<tma::DataType>("--dtype", o.dtype, tma::parse_data_type, tma::data_type_help().c_str());
  if (o.dims.size() > 8) throw UsageError("--dims: " + std::to_string(o.dims.size()) + " values; at most 5 dimensions");
  d.rank = static_cast<unsigned>(o.dims.size());
  d.dims = o.dims;
  if (o.strides.size() + 1 != d.rank) {
    std::string hint;
    if (o.strides.size() == d.rank && !o.strides.empty() && o.strides[0] == tma::bytes_of(d.data_type, 1))
      hint = " (this looks like the printout's form, which starts with the element stride: drop the first value)";
    throw UsageError("--strides: " + std::to_string(o.strides.size()) + " values given; rank " +
                     std::to_string(d.rank) + " needs " + std::to_string(d.rank - 1) +
                     " (bytes, for dimensions 1.." + std::to_string(d.rank - 1) + ", as the driver takes them)" + hint);
  }
  d.strides = o.strides;
  if (o.box.size() != d.rank)
    throw UsageError("--box: " + std::to_string(o.box.size()) + " values given; --dims has " + std::to_string(d.rank));
  d.box = o.box;
  d.element_strides = o.element_strides.empty() ? std::vector<std::uint32_t>(d.rank, 1) : o.element_strides;
  if (d.element_strides.size() != d.rank)
    throw UsageError("--element-strides: " + std::to_string(d.element_strides.size()) + " values given; --dims has " +
                     std::to_string(d.rank));
  d.interleave = parse_enum<tma::Interleave>("--interleave", o.interleave, tma::parse_interleave, "none, 16B, 32B");
  d.swizzle = parse_enum<tma::Swizzle>("--swizzle", o.swizzle, tma::parse_swizzle,
                                       "none, 32B, 64B, 128B, 128B_atom_32B, 128B_atom_32B_flip_8B, 128B_atom_64B");
  d.l2_promotion =
      parse_enum<tma::L2Promotion>("--l2-promotion", o.l2_promotion, tma::parse_l2_promotion, "none, 64B, 128B, 256B");
  d.oob_fill = parse_enum<tma::OobFill>("--oob-fill", o.oob_fill, tma::parse_oob_fill, "none, nan");
  size_t used = 0;
  try {
    d.address = std::stoull(o.address, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != o.address.size())
    throw UsageError("--address '" + o.address + "': expected a number such as 0x7f4c49e08800");
  return d;
}

std::vector<Item> collect_items(const TmaOptions& o) {
  std::vector<Item> items;
  if (o.table) {
    for (const auto& row : tma::rule_table()) {
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
  const bool explicit_form = !o.dtype.empty() || !o.dims.empty() || !o.box.empty() || !o.strides.empty();
  if (!o.from_log.empty() && explicit_form)
    throw UsageError("--from-log and the explicit form (--dtype/--dims/--strides/--box) exclude each other");
  std::vector<Item> bases;
  if (!o.from_log.empty()) {
    const std::string name = o.from_log == "-" ? "<stdin>" : o.from_log;
    const auto blocks = tma::parse_printout(read_input(o.from_log), name);
    if (blocks.empty())
      throw InputError(name, "", "no TMA descriptor block found (a block starts with 'TMA Desc Addr:')");
    for (size_t i = 0; i < blocks.size(); ++i) {
      Item it;
      it.id = "tma.log.block" + std::to_string(i + 1);
      it.label = "block " + std::to_string(i + 1) + " (line " + std::to_string(blocks[i].line) + ")";
      it.source = name + " line " + std::to_string(blocks[i].line);
      it.d = blocks[i].descriptor;
      it.printed_result = blocks[i].encode_result;
      bases.push_back(std::move(it));
    }
  } else {
    Item it;
    it.id = "tma.explicit";
    it.label = "descriptor";
    it.source = "command line";
    it.d = explicit_descriptor(o);
    bases.push_back(std::move(it));
  }
  if (o.sweeps.empty()) return bases;

  if (bases.size() > 1)
    spdlog::warn("--sweep: the log has {} blocks; sweeping the first ({})", bases.size(), bases.front().source);
  std::vector<tma::SweepAxis> axes;
  for (const auto& s : o.sweeps) axes.push_back(tma::parse_sweep_axis(s));
  const tma::SweepOptions so{o.seq_dim, o.heads_dim, tma::parse_size1_stride(o.size1_stride)};
  for (auto& p : tma::build_sweep(bases.front().d, axes, so)) {
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

report::Result host_result(const Item& it) {
  report::Result r;
  r.case_id = it.id;
  r.kernel = "tma";
  r.params = json{{"descriptor", tma::to_json(it.d)}, {"source", it.source}};
  if (!it.values.empty()) r.params["sweep"] = it.values;
  r.device = "host";
  r.outcome = it.v.valid() ? "host_valid" : "host_invalid";
  for (const auto& f : it.v.findings)
    if (f.severity == tma::Severity::error) {
      r.reason = f.rule + ": " + f.message;
      break;
    }
  r.details["validator"] = tma::to_json(it.v);
  if (it.printed_result) r.details["printed_encode_result"] = *it.printed_result;
  return r;
}

// --- GPU part -----------------------------------------------------------------------

void run_on_device(std::vector<Item>& items, const TmaOptions& o) {
  std::vector<cases::CaseSpec> specs;
  for (size_t i = 0; i < items.size(); ++i) {
    cases::CaseSpec s;
    s.index = static_cast<int>(i);
    s.case_id = items[i].id;
    s.kernel = "tma";
    s.params = json{{"descriptor", tma::to_json(items[i].d)}, {"load", !o.no_load && !o.table}};
    s.allocator = "direct";
    specs.push_back(std::move(s));
  }
  suite::ExecOptions eo;
  eo.self_exe = invocation().self_exe;
  eo.deadline = std::chrono::milliseconds(static_cast<long long>(o.timeout_s) * 1000);
  const auto results = suite::execute(specs, eo);
  for (size_t i = 0; i < results.size() && i < items.size(); ++i) items[i].device = results[i];
}

bool no_device(const std::vector<Item>& items) {
  for (const auto& it : items)
    if (it.device && it.device->details.value("no_device", false)) return true;
  return false;
}

// --- Rendering ----------------------------------------------------------------------

std::string short_rule(const std::string& id) { return id.rfind("tma.", 0) == 0 ? id.substr(4) : id; }

std::string validator_cell(const Item& it) {
  if (it.v.valid()) return it.v.warnings() ? "valid (" + std::to_string(it.v.warnings()) + " warning(s))" : "valid";
  std::string s = "INVALID:";
  for (const auto& id : it.v.rule_ids(tma::Severity::error)) s += " " + short_rule(id);
  return s;
}

std::string driver_cell(const Item& it) {
  if (!it.device) return "-";
  const auto& r = *it.device;
  if (!r.details.contains("encode")) return r.outcome == "skipped" ? "skipped" : r.outcome;
  const int rc = r.details["encode"].value("result", -1);
  std::string s = rc == 0 ? "accepted" : r.details["encode"].value("name", std::string("?")) + " (" + std::to_string(rc) + ")";
  if (r.outcome == "driver_disagrees") s += " DISAGREES";
  return s;
}

std::string load_cell(const Item& it) {
  if (!it.device || !it.device->details.contains("load")) return "-";
  const auto& l = it.device->details["load"];
  if (!l.value("ran", false)) return "not run";
  const auto mism = l.value("mismatches", std::uint64_t{0});
  if (mism) return "MISMATCH " + std::to_string(mism) + "/" + std::to_string(l.value("elements", std::uint64_t{0}));
  return "ok (" + std::to_string(l.value("boxes", std::uint64_t{0})) + " boxes, " +
         std::to_string(l.value("oob_elements", std::uint64_t{0})) + " filled)";
}

std::string table_text(const std::vector<std::vector<std::string>>& rows, bool md) {
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    for (size_t c = 0; c < r.size(); ++c) {
      std::string cell = r[c];
      if (md) {
        out += "| " + cell + " ";
      } else {
        cell.resize(width[c], ' ');
        out += (c ? "  " : "  ") + cell;
      }
    }
    out += md ? "|\n" : "\n";
    if (md && i == 0) {
      for (size_t c = 0; c < r.size(); ++c) out += "|---";
      out += "|\n";
    }
  }
  return out;
}

std::string render_items(const std::vector<Item>& items, const TmaOptions& o, const std::string& gpu_line, bool md) {
  std::string out = md ? "## cudadiag tma\n\n" : "cudadiag tma\n";
  out += (md ? "" : "  ") + gpu_line + "\n\n";
  const bool matrix = items.size() > 1;
  if (matrix) {
    std::vector<std::vector<std::string>> rows{{o.table ? "row" : "descriptor", "validator", "driver", "load"}};
    if (o.table) rows.front().insert(rows.front().begin() + 1, "expected");
    for (const auto& it : items) {
      std::vector<std::string> row{it.label, validator_cell(it), driver_cell(it), load_cell(it)};
      if (o.table) {
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
    const bool surprising = it.device && (it.device->outcome == "driver_disagrees" || it.device->outcome == "mismatch" ||
                                          it.device->outcome == "crashed" || it.device->outcome == "timeout");
    if (matrix && it.v.errors() == 0 && !surprising) continue;
    out += (md ? "### " : "") + it.label + " (" + it.source + ")\n";
    out += (md ? "\n    " : "  ") + tma::summary(it.d) + "\n";
    if (it.printed_result)
      out += std::string(md ? "\n" : "") + "  printed encode result: " + std::to_string(*it.printed_result) +
             (*it.printed_result == 1 ? " (CUDA_ERROR_INVALID_VALUE)" : "") + "\n";
    out += "  validator: " + validator_cell(it) + "\n";
    if (md) out += "\n```\n";
    out += tma::format_findings(it.v);
    if (md) out += "```\n";
    if (it.device) {
      out += "  driver: " + driver_cell(it) + "\n  load: " + load_cell(it) + "\n";
      out += "  device outcome: " + it.device->outcome + (it.device->reason.empty() ? "" : " - " + it.device->reason) + "\n";
    }
    out += "\n";
  }
  return out;
}

json tma_section(const std::vector<Item>& items, const TmaOptions& o, const std::string& mode) {
  json rows = json::array();
  for (const auto& it : items) {
    json row{{"label", it.label}, {"source", it.source}, {"descriptor", tma::to_json(it.d)},
             {"validator", tma::to_json(it.v)}};
    if (!it.values.empty()) row["sweep"] = it.values;
    if (it.printed_result) row["printed_encode_result"] = *it.printed_result;
    if (o.table) row["expected_errors"] = it.table_errors;
    if (!it.note.empty()) row["note"] = it.note;
    row["driver"] = it.device && it.device->details.contains("encode") ? it.device->details["encode"] : json(nullptr);
    row["load"] = it.device && it.device->details.contains("load") ? it.device->details["load"] : json(nullptr);
    row["device_outcome"] = it.device ? json(it.device->outcome) : json(nullptr);
    rows.push_back(std::move(row));
  }
  return json{{"mode", mode}, {"size1_stride", o.size1_stride}, {"rows", rows}};
}

// --- Verdict and exit code ------------------------------------------------------------

void run_tma(const TmaOptions& o) {
  configure_logging(o.common);
  auto items = collect_items(o);
  if (o.target_cc != 0 && (o.target_cc < 10 || o.target_cc > 999))
    throw UsageError("--target-cc " + std::to_string(o.target_cc) +
                     ": expected the compute capability as major*10+minor, e.g. 90 for sm_90 or 100 for sm_100");
  std::optional<int> target_cc;
  if (o.target_cc != 0) target_cc = o.target_cc;
  auto validate_all = [&items, &target_cc] {
    for (auto& it : items) {
      it.v = tma::validate(it.d, target_cc);
      if (it.table_row) it.table_errors = tma::expected_errors(*it.table_row, target_cc);
    }
  };
  validate_all();

  std::string gpu_line;
  bool gpu_ran = false;
  if (o.host_only) {
    gpu_line = "GPU part: not run (--host-only)";
  } else {
    run_on_device(items, o);
    gpu_ran = !no_device(items);
    // Without --target-cc the device is the target: judge with its compute capability, as
    // the child does when it compares with the driver.
    if (gpu_ran && !target_cc)
      for (const auto& it : items)
        if (it.device && it.device->details.contains("device") &&
            it.device->details["device"].contains("cc_number")) {
          target_cc = it.device->details["device"]["cc_number"].get<int>();
          validate_all();
          break;
        }
    gpu_line = gpu_ran ? "GPU part: cuTensorMapEncodeTiled" + std::string(o.table || o.no_load ? "" : " + TMA box loads") +
                             " in a child process"
                       : "GPU part: could not run - " + (items.empty() || !items.front().device ? std::string("?")
                                                                                                 : items.front().device->reason);
  }

  auto r = report::new_report(invocation().argv, "tma");
  r.environment = report::capture_environment(invocation().envp);
  r.gpu = json{{"ran", gpu_ran}};
  if (!gpu_ran) r.gpu["reason"] = o.host_only ? "--host-only" : gpu_line;
  std::vector<std::string> reasons;
  size_t invalid = 0, surprises = 0, table_mismatch = 0;
  for (const auto& it : items) {
    r.results.push_back(host_result(it));
    if (!it.v.valid()) ++invalid;
    if (o.table) {
      auto got = it.v.rule_ids(tma::Severity::error);
      auto want = it.table_errors;
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      if (got != want) {
        ++table_mismatch;
        reasons.push_back(it.label + ": the validator's rules differ from the table's expectation");
      }
    }
    if (it.device && gpu_ran) {
      r.results.push_back(*it.device);
      const auto& out = it.device->outcome;
      if (out == "driver_disagrees" || out == "mismatch" || out == "crashed" || out == "timeout" ||
          out == "no_result") {
        ++surprises;
        reasons.push_back(it.label + ": " + out + (it.device->reason.empty() ? "" : " - " + it.device->reason));
      }
    }
  }
  if (!o.table && invalid) reasons.insert(reasons.begin(), std::to_string(invalid) + " of " +
                                                                std::to_string(items.size()) +
                                                                " descriptor(s) break cuTensorMapEncodeTiled's rules");
  const std::string mode = o.table ? "table" : !o.sweeps.empty() ? "sweep" : !o.from_log.empty() ? "log" : "explicit";
  r.extra["tma"] = tma_section(items, o, mode);
  r.extra["tma"]["target_cc"] = target_cc ? json(*target_cc) : json(nullptr);
  gpu_line += std::string("\n") + (report::parse_format(o.common.format) == report::Format::md ? "" : "  ") + "target: " +
              (!target_cc ? std::string("unknown (give --target-cc; packed 16U4/16U6 types need sm_100+)")
                          : "sm_" + std::to_string(*target_cc) + (o.target_cc ? " (--target-cc)" : " (the device)"));

  const bool findings = surprises || table_mismatch || (!o.table && invalid);
  r.verdict.status = findings ? "findings" : (!gpu_ran && !o.host_only) ? "no_gpu" : "ok";
  r.verdict.reasons = reasons;
  report::finish_report(r);

  const auto format = report::parse_format(o.common.format);
  if (format == report::Format::json) {
    emit_report(r, o.common);
  } else {
    std::string text = render_items(items, o, gpu_line, format == report::Format::md);
    text += (format == report::Format::md ? "**verdict: " : "verdict: ") + r.verdict.status +
            (format == report::Format::md ? "**\n" : "\n");
    for (const auto& why : reasons) text += "  - " + why + "\n";
    emit_text(text, o.common);
  }
  set_exit_code(findings ? kExitFindings : (!gpu_ran && !o.host_only) ? kExitEnvironment : kExitOk);
}

}  // namespace

void set_tma_command(CLI::App& app) {
  auto opts = std::make_shared<TmaOptions>();
  auto* cmd = app.add_subcommand(
      "tma",
      "Check a TMA descriptor (cuTensorMapEncodeTiled) against the driver's rules, then encode it with the real "
      "driver and load every box on an sm_90 GPU");
  cmd->add_option("--from-log", opts->from_log,
                  "Read descriptor blocks printed by CuTe/FlashInfer ('TMA Desc Addr:' ...) from FILE, or - for stdin");
  cmd->add_option("--dtype", opts->dtype,
                  "Element type, by name, alias or CUtensorMapDataType code (case-insensitive): " +
                      tma::data_type_help());
  cmd->add_option("--dims", opts->dims, "globalDim, innermost first, e.g. 128,1,32")->delimiter(',');
  cmd->add_option("--strides", opts->strides,
                  "globalStrides in bytes for dimensions 1..rank-1, exactly as the driver takes them, e.g. 2,256")
      ->delimiter(',');
  cmd->add_option("--box", opts->box, "boxDim, e.g. 64,128,1")->delimiter(',');
  cmd->add_option("--element-strides", opts->element_strides, "elementStrides (default all 1)")->delimiter(',');
  cmd->add_option("--interleave", opts->interleave, "none|16B|32B")->capture_default_str();
  cmd->add_option("--swizzle", opts->swizzle, "none|32B|64B|128B|128B_atom_32B|128B_atom_32B_flip_8B|128B_atom_64B")
      ->capture_default_str();
  cmd->add_option("--l2-promotion", opts->l2_promotion, "none|64B|128B|256B")->capture_default_str();
  cmd->add_option("--oob-fill", opts->oob_fill, "none|nan")->capture_default_str();
  cmd->add_option("--address", opts->address,
                  "globalAddress; only its alignment (mod 256) is reproduced on the device")
      ->capture_default_str();
  cmd->add_option("--sweep", opts->sweeps,
                  "Rebuild the descriptor across a range: seq-len=0..8, heads=1,8,32, dtype=bf16,fp16 (repeatable)");
  cmd->add_option("--seq-dim", opts->seq_dim, "Dimension whose extent is the sequence length")->capture_default_str();
  cmd->add_option("--heads-dim", opts->heads_dim, "Dimension whose extent is the number of heads")->capture_default_str();
  cmd->add_option("--size1-stride", opts->size1_stride,
                  "Sweep: stride of a size-1 dimension: as-is (the framework's degenerate stride, as in the base) "
                  "or canonical (the dense stride)")
      ->check(CLI::IsMember({"as-is", "canonical"}))
      ->capture_default_str();
  cmd->add_option("--target-cc", opts->target_cc,
                  "Compute capability the descriptor is for, major*10+minor (90 = sm_90, 100 = sm_100); "
                  "default: the device's when the GPU part runs, else unknown (packed types then only warn)");
  cmd->add_flag("--host-only", opts->host_only, "Only the host validator: no child, no GPU");
  cmd->add_flag("--no-load", opts->no_load, "Encode with the driver but do not run the load kernel");
  cmd->add_option("--timeout", opts->timeout_s, "Seconds per descriptor in the child")->capture_default_str();
  cmd->add_flag("--table", opts->table, "Run the validator's rule table through the driver")->group("");
  add_common_options(cmd, opts->common);
  cmd->footer(
      "Exit: 0 valid (and the GPU agrees), 1 rule violations or a device surprise (driver disagrees, load mismatch), "
      "2 bad input, 3 the GPU part could not run.");
  cmd->callback([opts] { run_tma(*opts); });
}

}  // namespace cudadiag::app
