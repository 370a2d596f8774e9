#pragma once
// The JSON form of a fault site, versioned on its own (kFaultSiteVersion, semver) so that
// it can become a report section unchanged. Members (absent when unknown):
//   file, file_bytes, unreadable (only member besides file when the dump could not be read)
//   device, sm_type
//   exception: {code, id, name, reported_by: "lanes"|"sm"} or null (no exception recorded)
//   kernel: {name, mangled, grid: [x,y,z], block: [x,y,z]}
//   pc: {address: "0x..", basis: warp_error_pc|sm_error_pc|instruction_before_lane_pc|lane_pc,
//        function, offset}
//   line: {file, line} or null, line_note
//   faulting: {warps, lanes, blocks, block_list: [[x,y,z]...] (at most 16)}
//   first: thread (below)
//   thread_note: why there is no first thread (the SM reports the exception, its warp had exited)
//   access: {instruction, status: proven|not_recoverable|not_memory|unsupported|no_registers|
//            not_attempted, kind: read|write|atomic, space, bytes, address: "0x.." (proven only),
//            alignment, note}
//   threads: [{block, thread, sm, warp, lane, pc: "0x..", address: "0x.." (proven only)}]
//   disassembler, notes: [..]
// Addresses are hex strings: JSON numbers lose 64-bit precision in many readers.
#include <string>

#include "coredump/fault_site.h"
#include "report/report.h"

namespace cudadiag::coredump {

inline constexpr const char* kFaultSiteVersion = "1.1.0";

report::json to_json(const FaultSite& s);
// Throws InputError (via report::JsonReader) naming `source` and the JSON pointer.
FaultSite fault_site_from_json(const report::json& j, const std::string& source);

// The document `cudadiag coredump --format json` prints: {"fault_site_version", "sites": [...]}.
report::json sites_document(const std::vector<FaultSite>& sites);

}  // namespace cudadiag::coredump
