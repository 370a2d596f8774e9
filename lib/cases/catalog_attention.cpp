#include "cases/catalog.h"

namespace cudadiag::cases {

KernelFamily attention_family() {
  return KernelFamily{"attention", "(not built yet)", [] { return std::vector<CaseDef>{}; },
                      [](const json& p) { return p; }};
}

}  // namespace cudadiag::cases
