#include "cases/catalog.h"

namespace cudadiag::cases {

KernelFamily index_select_family() {
  return KernelFamily{"index_select", "(not built yet)", [] { return std::vector<CaseDef>{}; },
                      [](const json& p) { return p; }};
}

}  // namespace cudadiag::cases
