#include "coredump/report_site.h"

#include "coredump/exception_kind.h"

namespace cudadiag::coredump {
namespace {

report::Triple triple(const Dim3& d) { return {d.x, d.y, d.z}; }

}  // namespace

report::FaultSite to_report_site(const FaultSite& s) {
  report::FaultSite r;
  r.dump = s.file;
  r.dump_bytes = s.file_bytes;
  r.unreadable = s.unreadable;
  if (!s.unreadable.empty()) return r;
  r.device = s.device;
  if (s.has_exception) {
    r.exception = s.exception.empty() ? "exception " + std::to_string(s.exception_code) : s.exception;
    r.exception_id = exception_info(s.exception_code).kind;
  }
  r.kernel = s.kernel;
  if (s.grid_dim) r.grid = triple(*s.grid_dim);
  if (s.block_dim) r.block_dim = triple(*s.block_dim);
  r.function = s.function;
  r.function_offset = s.function_offset;
  r.pc = s.pc;
  if (s.line) {
    r.file = s.line->file;
    r.line = s.line->line;
  }
  r.line_note = s.line_note;
  r.faulting_warps = s.faulting_warps;
  r.faulting_lanes = s.faulting_lanes;
  r.faulting_blocks = s.faulting_blocks;
  if (s.first) {
    r.block = triple(s.first->block);
    r.thread = triple(s.first->thread);
  }
  r.thread_note = s.thread_note;
  r.instruction = s.instruction;
  r.address_status = s.address_status.value_or(report::AddressStatus::not_attempted);
  r.access = s.access;
  r.access_bytes = s.access_bytes;
  if (r.address_status == report::AddressStatus::proven) r.address = s.address;
  r.alignment = s.alignment;
  r.address_note = s.address_note;
  if (r.address_status == report::AddressStatus::proven)
    for (const auto& t : s.threads)
      if (t.address) r.lane_addresses.push_back({triple(t.block), triple(t.thread), *t.address});
  for (const auto& w : s.waiting) {
    report::WaitingPc o;
    o.kernel = w.kernel;
    o.function = w.function;
    o.offset = w.function_offset;
    if (w.line) {
      o.file = w.line->file;
      o.line = w.line->line;
    }
    o.warps = w.warps;
    o.lanes = w.lanes;
    r.waiting.push_back(std::move(o));
  }
  r.notes = s.notes;
  return r;
}

}  // namespace cudadiag::coredump
