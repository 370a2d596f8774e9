// Fuzz target: a suite file as `repro --suite FILE` reads it (every case validated
// against the catalog and its parameters normalised), then its JSON summary.
#include "fuzz_target.h"
#include "report/report.h"
#include "suite/suite.h"
#include "util/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto s = cudadiag::suite::parse_suite(fuzz_text(data, size), "fuzz.json");
    (void)cudadiag::report::dump_json(cudadiag::suite::suite_json(s));
  } catch (const cudadiag::UsageError&) {
  }
  return 0;
}
