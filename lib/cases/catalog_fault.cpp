#include "cases/catalog.h"

namespace cudadiag::cases {

KernelFamily fault_family() {
  return KernelFamily{"fault", "(not built yet)", [] { return std::vector<CaseDef>{}; },
                      [](const json& p) { return p; }};
}

}  // namespace cudadiag::cases
