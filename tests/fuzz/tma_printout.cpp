// Fuzz target: the CuTe/FlashInfer TMA descriptor printout parser (`tma --from-log`),
// then the validator on whatever it parsed.
#include "fuzz_target.h"
#include "tma/printout.h"
#include "tma/tma_json.h"
#include "tma/validator.h"
#include "util/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    for (const auto& block : cudadiag::tma::parse_printout(fuzz_text(data, size), "fuzz.log")) {
      const auto verdict = cudadiag::tma::validate(block.descriptor, 90);
      (void)cudadiag::tma::format_findings(verdict);
      (void)cudadiag::tma::summary(block.descriptor);
    }
  } catch (const cudadiag::UsageError&) {
  }
  return 0;
}
