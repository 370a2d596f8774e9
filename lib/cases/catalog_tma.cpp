#include "cases/catalog.h"

namespace cudadiag::cases {

KernelFamily tma_family() {
  return KernelFamily{"tma", "(not built yet)", [] { return std::vector<CaseDef>{}; },
                      [](const json& p) { return p; }};
}

}  // namespace cudadiag::cases
