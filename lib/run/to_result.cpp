#include "run/to_result.h"

#include <fmt/format.h>

#include "evidence/child_info.h"
#include "host/xid.h"
#include "taxonomy/taxonomy.h"
#include "util/utf8.h"
#include "util/hex.h"

namespace cudadiag::run {
namespace {

using report::json;

using util::hex;

// Text from the program or the kernel log may be any bytes; the JSON writer takes UTF-8 only.
void make_valid(json& j) {
  if (j.is_string()) {
    j = to_valid_utf8(j.get_ref<const std::string&>());
  } else if (j.is_structured()) {
    for (auto& v : j) make_valid(v);
  }
}

// The report's outcome for a run; the run's own outcome stays in details.run_outcome.
report::Outcome outcome_of(RunOutcome o) {
  switch (o) {
    case RunOutcome::clean:
    case RunOutcome::fence_not_effective: return report::Outcome::ok;
    case RunOutcome::cuda_error:
    case RunOutcome::slack_write: return report::Outcome::cuda_error;  // an out-of-bounds write, seen without a fault
    case RunOutcome::crashed:
    case RunOutcome::exit_code: return report::Outcome::crashed;  // died, or exited non-zero without a CUDA error
    case RunOutcome::timeout: return report::Outcome::timeout;
    case RunOutcome::does_not_start: return report::Outcome::skipped;
  }
  return report::Outcome::ok;
}

const char* side_name(FenceSide s) {
  return s == FenceSide::back ? "back" : s == FenceSide::front ? "front" : "none";
}

}  // namespace

std::string run_next_step(Rung rung, std::string_view taxonomy_step) {
  // The taxonomy's advice is repro's: "re-run with the `fence` profile ...". A rung of
  // `run` names the rungs that look further instead, or what it already holds.
  constexpr std::string_view kProfileAdvice = "re-run with the `";
  const auto at = taxonomy_step.find(kProfileAdvice);
  if (at == std::string_view::npos) return std::string(taxonomy_step);
  std::string own;
  switch (rung) {
    case Rung::native:
    case Rung::blocking:
      own = "this run's fence rung faults at the first out-of-bounds byte and names the buffer, and its sanitizer "
            "rung names the kernel, thread and PC (`--rungs native,blocking,fence` and `--sanitize always` where they "
            "did not run)";
      break;
    case Rung::fence:
    case Rung::fence_front:
      own = std::string("this rung already fenced the buffers (a fault on a guard names the buffer above); the "
                        "sanitizer rung names the exact kernel, thread and PC (`--sanitize always` where it did not "
                        "run)") +
            (rung == Rung::fence ? "; the fence-front rung guards the buffers' starts" : "");
      break;
    case Rung::sanitizer:
      own = "memcheck's records of this rung name the kernel, thread and PC; build the kernels with -lineinfo for "
            "the source line";
      break;
  }
  const auto clause_end = taxonomy_step.find("; ", at);
  std::string out(taxonomy_step.substr(0, at));
  out += own;
  if (clause_end != std::string_view::npos) out += taxonomy_step.substr(clause_end);
  return out;
}

namespace {

report::ErrorInfo error_info(const CudaErrorEvidence& e, const RunJudgement& j) {
  report::ErrorInfo info;
  info.code = e.code.value_or(-1);  // -1: the evidence names no CUDA error code (Xid, memcheck access record)
  info.name = e.name.empty() ? "unknown" : e.name;
  info.source = taxonomy::ErrorSource::runtime;
  info.error_class = e.error_class.value_or(taxonomy::ErrorClass::unknown);
  // Where it surfaced: the program's own run, or the fence's wait at its end (the
  // program never saw it).
  info.surfaced_at = e.source == EvidenceSource::end_wait ? "end_wait" : "program";
  info.api_call = e.api_call;
  info.message = e.line;
  if (e.code) {
    if (const auto* t = taxonomy::find_runtime(*e.code)) {
      info.sticky = t->sticky;
      info.meaning = std::string(t->meaning);
      info.next_step = run_next_step(j.rung, t->next_step);
    }
  }
  if (j.attribution && j.attribution->suspect) info.last_kernel = j.attribution->suspect->kernel;
  else info.last_kernel = e.kernel;
  return info;
}

json allocation_json(const AllocationRecord& a) {
  return json{{"seq", a.seq},
              {"address", hex(a.address)},
              {"bytes", a.bytes},
              {"api", a.api},
              {"side", side_name(a.side)},
              {"freed", a.freed},
              {"unfenced_reason", a.unfenced_reason},
              {"device", a.device >= 0 ? json(a.device) : json(nullptr)}};
}

// A launcher's number, or null when none was set (-1).
json set_or_null(std::int32_t v) { return v >= 0 ? json(v) : json(nullptr); }

// report.schema.json: process_identity.
json process_json(const ProcessIdentity& p) {
  return json{{"pid", p.pid},
              {"exe", p.exe},
              {"rank", set_or_null(p.rank)},
              {"local_rank", set_or_null(p.local_rank)},
              {"world_size", set_or_null(p.world_size)},
              {"rank_from", p.rank_from},
              {"recorded", p.recorded}};
}

// report.schema.json: gpu_identity.
json gpu_json(std::optional<int> device, const std::optional<DeviceIdentity>& gpu) {
  const int ordinal = device ? *device : gpu ? gpu->ordinal : -1;
  return json{{"ordinal", ordinal >= 0 ? json(ordinal) : json(nullptr)},
              {"uuid", gpu && !gpu->uuid.empty() ? json(gpu->uuid) : json(nullptr)},
              {"pci_bus_id", gpu && !gpu->pci_bus_id.empty() ? json(gpu->pci_bus_id) : json(nullptr)}};
}

// report.schema.json: faulting_process.
json faulting_process_json(const FaultingProcess& f) {
  json j{{"pid", f.pid ? json(*f.pid) : json(nullptr)},
         {"xid", f.xid.xid},
         {"pci", f.xid.pci},
         {"fault_address", f.xid.mmu_fault ? json(hex(f.xid.mmu_fault->address)) : json(nullptr)},
         {"recorded", f.ring.has_value()}};
  j["process"] = f.process ? process_json(*f.process) : json(nullptr);
  j["gpu"] = f.gpu ? gpu_json(std::nullopt, f.gpu) : json(nullptr);
  return j;
}

json launch_json(const LaunchRecord& l) {
  return json{{"seq", l.seq},
              {"kernel", l.kernel.empty() ? std::string("?") : l.kernel},
              {"grid", {l.grid[0], l.grid[1], l.grid[2]}},
              {"block", {l.block[0], l.block[1], l.block[2]}},
              {"dynamic_smem", l.dynamic_smem},
              {"api", l.api},
              {"device", l.device >= 0 ? json(l.device) : json(nullptr)}};
}

report::LaunchRecord launch_record(const LaunchRecord& l) {
  report::LaunchRecord r;
  r.seq = l.seq;
  r.kernel = to_valid_utf8(l.kernel.empty() ? std::string("?") : l.kernel);
  r.grid = {l.grid[0], l.grid[1], l.grid[2]};
  r.block = {l.block[0], l.block[1], l.block[2]};
  r.dynamic_smem = l.dynamic_smem;
  r.api = to_valid_utf8(l.api);
  return r;
}

void make_valid(std::string& s) { s = to_valid_utf8(s); }

void make_valid(sanitizer::Frame& f) {
  for (std::string* s : {&f.function, &f.file, &f.module, &f.pc}) make_valid(*s);
}

// Every string memcheck wrote, as the JSON writer takes it (UTF-8 only).
void make_valid(sanitizer::MemcheckReport& m) {
  for (auto& f : m.findings) {
    for (std::string* s : {&f.record_kind, &f.level, &f.message, &f.space, &f.direction, &f.address, &f.error,
                           &f.kernel, &f.device_function, &f.pc, &f.file})
      make_valid(*s);
    if (f.nearest)
      for (std::string* s : {&f.nearest->relation, &f.nearest->address, &f.nearest->buffer}) make_valid(*s);
    if (f.api)
      for (std::string* s : {&f.api->call, &f.api->error_name, &f.api->description}) make_valid(*s);
    for (auto& fr : f.host_frames) make_valid(fr);
    for (auto& fr : f.device_frames) make_valid(fr);
  }
}

json attribution_json(const Attribution& a) {
  json j{{"relation", to_string(a.relation)},
         {"certain", a.certain},
         {"fault_address", a.fault_address ? json(hex(*a.fault_address)) : json(nullptr)},
         {"precision", a.precision == AddressPrecision::page ? "page" : "exact"},
         {"distance_min", a.distance_min},
         {"distance_max", a.distance_max},
         {"summary", a.summary}};
  j["allocation"] = a.allocation ? allocation_json(*a.allocation) : json(nullptr);
  j["suspect"] = a.suspect ? launch_json(*a.suspect) : json(nullptr);
  j["suspect_uses_allocation"] = a.suspect_uses_allocation;
  if (!a.allocated_at.empty()) j["allocated_at"] = to_json(a.allocated_at);
  // Whose fault, always (the text names them only where the run had several processes,
  // a rank or several GPUs).
  j["process"] = a.process ? process_json(*a.process) : json(nullptr);
  j["gpu"] = gpu_json(a.device, a.gpu);
  j["owner"] = owner_text(a);
  return j;
}

json fence_json(const RunObservation& obs, const RunJudgement& j) {
  json f{{"effective", j.fence->effective}, {"reason", j.fence->reason}};
  if (obs.interposer) {
    const auto& s = obs.interposer->summary;
    f["summary"] = json{{"loaded", s.loaded},
                        {"cuda_seen", s.cuda_seen},
                        {"allocations", s.allocations},
                        {"fenced", s.fenced},
                        {"frees", s.frees},
                        {"launches", s.launches},
                        {"quarantined_bytes", s.quarantined_bytes},
                        {"recycle_limit_bytes", s.recycle_limit_bytes},
                        {"recycled", s.recycled},
                        {"guard", s.guard_mode == fence::GuardMode::granule ? "granule" : "scaled"},
                        {"guard_limit_bytes", s.guard_limit_bytes},
                        {"guards_cut", s.guards_cut},
                        {"tma_encodes", s.tma_encodes},
                        {"dropped_allocations", s.dropped_allocations},
                        {"dropped_launches", s.dropped_launches},
                        {"fence_align", s.fence_align}};
  } else if (!obs.interposer_error.empty()) {
    f["error"] = obs.interposer_error;
  }
  if (j.fence_suspicion) f["possibly_the_fence"] = *j.fence_suspicion;
  return f;
}

json finding_json(const ErrorFinding& f) {
  json j{{"kind", to_string(f.kind)},
         {"framework", to_string(f.framework)},
         {"stream", to_string(f.stream)},
         {"line_number", f.line_number},
         {"line", f.line}};
  if (f.code) j["code"] = *f.code;
  if (!f.name.empty()) j["name"] = f.name;
  if (f.error_class) j["class"] = taxonomy::to_string(*f.error_class);
  if (!f.signal_name.empty()) j["signal"] = f.signal_name;
  if (f.assertion) {
    const auto& a = *f.assertion;
    json aj{{"expression", a.expression}, {"file", a.file}, {"function", a.function}};
    aj["line"] = a.line ? json(*a.line) : json(nullptr);
    if (a.block) aj["block"] = *a.block;
    if (a.thread) aj["thread"] = *a.thread;
    j["assert"] = aj;
  }
  return j;
}

// Findings worth a line in the report: every kind, at most this many.
constexpr std::size_t kReportedLines = 20;

json details_json(const RunObservation& obs, const RunJudgement& j) {
  json d{{"run_outcome", to_string(j.outcome)}, {"argv", obs.argv}};
  if (j.fence) d["fence"] = fence_json(obs, j);
  if (j.attribution) d["attribution"] = attribution_json(*j.attribution);
  if (!j.other_attributions.empty()) {
    json others = json::array();
    for (const auto& a : j.other_attributions) others.push_back(attribution_json(a));
    d["other_attributions"] = others;
  }
  if (!j.faulting_processes.empty()) {
    json faults = json::array();
    for (const auto& f : j.faulting_processes) faults.push_back(faulting_process_json(f));
    d["faulting_processes"] = faults;
  }
  if (j.mmu_fault) {
    const auto& m = *j.mmu_fault;
    d["mmu_fault"] = json{{"address", hex(m.address)}, {"engine", m.engine},         {"client", m.client},
                          {"fault_type", m.fault_type}, {"access_type", m.access_type}, {"access", host::to_string(m.access)}};
  }
  if (!j.text.findings.empty()) {
    json lines = json::array();
    for (std::size_t i = 0; i < j.text.findings.size() && i < kReportedLines; ++i) lines.push_back(finding_json(j.text.findings[i]));
    d["error_lines"] = lines;
    d["error_lines_total"] = j.text.findings.size() + j.text.dropped;
  }
  if (j.text.async_hint_stream)
    d["async_hint"] = json{{"stream", to_string(*j.text.async_hint_stream)}, {"line_number", j.text.async_hint_line}};
  if (j.text.sanitizer_error_count) d["sanitizer_error_summary"] = *j.text.sanitizer_error_count;
  if (!obs.sanitizer_error.empty()) d["sanitizer_error"] = obs.sanitizer_error;
  if (!j.machine_xids.empty()) d["machine_xids"] = j.machine_xids;
  return d;
}

}  // namespace

report::Result to_result(const RunObservation& obs, const RunJudgement& j) {
  report::Result r;
  const std::string rung = to_string(j.rung);
  r.case_id = "program." + rung;
  r.kernel = cases::Family::program;
  report::Value::List command;
  for (const auto& arg : obs.command) command.emplace_back(to_valid_utf8(arg));
  r.params = report::Fields{{"command", std::move(command)}, {"rung", rung}, {"repeat", j.repeat_index}};
  r.profile = rung;
  if (is_fence(obs.rung) && obs.interposer) {
    for (const auto& a : obs.interposer->allocations) {
      if (a.side == FenceSide::none) continue;
      r.allocator = a.side == FenceSide::back ? profiles::Allocator::fence_back : profiles::Allocator::fence_front;
      break;
    }
  }
  r.outcome = outcome_of(j.outcome);
  r.reason = to_valid_utf8(j.reason);
  if (j.error) {
    r.error = error_info(*j.error, j);
    for (std::string* s : {&r.error->name, &r.error->api_call, &r.error->message, &r.error->last_kernel})
      *s = to_valid_utf8(*s);
  }
  r.duration_ms = obs.child.wall_ms;
  r.child = evidence::child_info(obs.child);
  r.xid = host::to_xid_lines(obs.xid);
  for (auto& x : r.xid) {
    make_valid(x.pci);
    make_valid(x.message);
    if (x.process) make_valid(*x.process);
  }
  if (j.sanitizer) {
    r.sanitizer = report::SanitizerFindings{"memcheck", *j.sanitizer, ""};
    make_valid(*r.sanitizer->memcheck);
  }
  if (j.attribution) {
    for (const auto& l : j.attribution->last_launches) r.launch_log.push_back(launch_record(l));
    const auto& a = *j.attribution;
    if (a.allocation && a.certain && (a.relation == Relation::past_end || a.relation == Relation::before_start)) {
      report::FaultingBuffer f;
      f.name = fmt::format("allocation #{}", a.allocation->seq);
      f.bytes = a.allocation->bytes;
      f.direction = a.relation == Relation::past_end ? report::BufferDirection::end_overrun
                                                     : report::BufferDirection::start_underrun;
      r.faulting_buffer = f;
    }
  }
  r.fault_sites = j.sites;
  for (auto& site : r.fault_sites)
    for (std::string* t : {&site.kernel, &site.function, &site.file, &site.instruction, &site.dump}) make_valid(*t);
  json details = details_json(obs, j);
  if (obs.coredump_armed || !obs.coredump_notes.empty() || !obs.site_run_outcome.empty()) {
    json c{{"armed", obs.coredump_armed}, {"dumps", obs.sites.size()}};
    if (!obs.site_run_outcome.empty()) c["site_run"] = obs.site_run_outcome;
    if (j.error_unseen_by_program) c["program_saw_error"] = false;
    if (!j.site_notes.empty()) c["notes"] = j.site_notes;
    details["coredump"] = c;
  }
  make_valid(details);
  r.details = report::fields_from_json(details);
  return r;
}

report::Verdict to_report_verdict(const RunVerdict& v) {
  report::Verdict out;
  out.status = v.kind;
  out.reasons.push_back(to_valid_utf8(v.reason));
  if (!v.evidence.empty() && v.reason.find(v.evidence) == std::string::npos) out.reasons.push_back(to_valid_utf8(v.evidence));
  for (const auto& n : v.notes) out.reasons.push_back(to_valid_utf8(n));
  report::VerdictCoverage c;
  if (v.coverage.past_end) c.directions.push_back(report::GuardedEnd::past_end);
  if (v.coverage.before_start) c.directions.push_back(report::GuardedEnd::before_start);
  c.allocations = v.coverage.allocations;
  c.fenced = v.coverage.fenced;
  if (v.coverage.past_end || v.coverage.before_start) {
    c.guard = v.coverage.guard_scaled ? "scaled" : "granule";
    c.guard_reach_bytes = v.coverage.guard_reach_bytes;
    if (v.coverage.guard_scaled && v.coverage.guards_cut > 0) c.guards_cut = v.coverage.guards_cut;
  }
  for (const auto& line : v.coverage.seen) c.seen.push_back(to_valid_utf8(line));
  for (const auto& line : v.coverage.unseen) c.unseen.push_back(to_valid_utf8(line));
  out.coverage = std::move(c);
  return out;
}

}  // namespace cudadiag::run
