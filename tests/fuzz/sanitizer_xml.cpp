// Fuzz target: compute-sanitizer's memcheck XML (the XML reader and the findings
// parser), then the findings as they go into a report.
#include "fuzz_target.h"
#include "report/report.h"
#include "sanitizer/memcheck.h"
#include "sanitizer/xml.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto r = cudadiag::sanitizer::parse_memcheck_xml(fuzz_text(data, size));
    (void)cudadiag::report::dump_json(cudadiag::sanitizer::to_json(r));
  } catch (const cudadiag::sanitizer::XmlError&) {
  }
  return 0;
}
