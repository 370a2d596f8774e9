// Fuzz target: NVIDIA Xid lines from the kernel log (kmsg records, dmesg lines, bare
// text), then the events as they go into a report.
#include "fuzz_target.h"
#include "host/xid.h"
#include "report/report.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto events = cudadiag::host::parse_xid_text(fuzz_text(data, size));
  (void)cudadiag::report::dump_json(cudadiag::host::to_json(events));
  return 0;
}
