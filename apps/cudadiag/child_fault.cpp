#include <stdexcept>

#include "child_cases.h"

namespace cudadiag::app::child {

json run_fault_case(const cases::CaseSpec& spec) {
  return json{{"outcome", "skipped"}, {"reason", "kernel family '" + spec.kernel + "' is not built yet"}};
}

}  // namespace cudadiag::app::child
