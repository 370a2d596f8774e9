// `cudadiag coredump FILE...`: the fault site of GPU core dumps that already exist (a
// production job armed with CUDA_ENABLE_COREDUMP_ON_EXCEPTION): exception, kernel, line,
// block/thread and, when provable, the faulting address; no cuda-gdb needed. The logic is
// in lib/coredump; this file parses flags and prints.
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "coredump/disassembler.h"
#include "coredump/fault_site.h"
#include "coredump/fault_site_json.h"
#include "coredump/render_site.h"
#include "report/render.h"
#include "util/errors.h"
#include "util/log.h"
#include "util/printable.h"

namespace cudadiag::app {
namespace {

struct CoredumpOptions {
  CommonOptions common;
  std::vector<std::string> files;
  std::string nvdisasm;
  bool no_disassemble = false;
};

void run_coredump(const CoredumpOptions& o) {
  configure_logging(o.common);
  coredump::DisassembleFn disassemble;
  std::string no_tool_reason = "--no-disassemble";
  coredump::Disassembler tool;
  if (!o.no_disassemble) {
    tool = coredump::find_nvdisasm(o.nvdisasm);
    if (!o.nvdisasm.empty() && tool.path.empty()) throw UsageError(tool.reason);
    no_tool_reason = tool.reason;
    disassemble = coredump::disassemble_with(tool);
  }
  std::vector<coredump::FaultSite> sites;
  bool unreadable = false;
  for (const auto& f : o.files) {
    auto site = coredump::read_fault_site(f, disassemble, no_tool_reason);
    if (!site.unreadable.empty()) {
      unreadable = true;
      print_usage_error("coredump", f + ": " + site.unreadable);
    } else if (!site.instruction.empty()) {
      site.disassembler = tool.path;
    }
    sites.push_back(std::move(site));
  }
  std::string out;
  switch (report::parse_format(o.common.format)) {
    case report::Format::json: out = report::dump_json(coredump::sites_document(sites), 2) + "\n"; break;
    case report::Format::md:
      for (const auto& s : sites) out += coredump::render_site_markdown(s);
      break;
    case report::Format::text:
      for (std::size_t i = 0; i < sites.size(); ++i) out += (i ? "\n" : "") + coredump::render_site_text(sites[i]);
      break;
  }
  emit_text(out, o.common);
  set_exit_code(unreadable ? kExitUsage : kExitOk);
}

}  // namespace

void set_coredump_command(CLI::App& app) {
  auto opts = std::make_shared<CoredumpOptions>();
  auto* cmd = app.add_subcommand(
      "coredump",
      "Read GPU core dumps (CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1) and print the fault site: exception, kernel, source "
      "line, faulting blocks and threads, the faulting instruction and, when provable, its address. No cuda-gdb "
      "needed; nvdisasm (toolkit, or `pip install nvidia-cuda-nvdisasm`) decodes the instruction");
  cmd->add_option("files", opts->files, "Core dump files (.nvcudmp)")->required();
  cmd->add_option("--nvdisasm", opts->nvdisasm, "nvdisasm to use (default: searched on PATH, CUDA_HOME, /usr/local/cuda, "
                                                "Python environments)");
  cmd->add_flag("--no-disassemble", opts->no_disassemble,
                "Do not run nvdisasm: no faulting instruction and no address");
  add_common_options(cmd, opts->common);
  set_help_footer(cmd,
                  "Exit codes: 0 every dump was read, 2 a file is not a readable GPU core dump (named on stderr) "
                  "or bad flags.",
                  {"cudadiag coredump core_*.nvcudmp            # the fault site of each dump"});
  cmd->callback([opts] { run_coredump(*opts); });
}

}  // namespace cudadiag::app
