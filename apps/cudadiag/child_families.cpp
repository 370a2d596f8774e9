#include "child_families.h"

namespace cudadiag::app::child {

CaseFactory factory_for(cases::Family f) {
  switch (f) {
#define CUDADIAG_FAMILY_CASE(name) \
  case cases::Family::name: return make_##name##_run;
    CUDADIAG_FAMILIES(CUDADIAG_FAMILY_CASE)
#undef CUDADIAG_FAMILY_CASE
    case cases::Family::program: break;  // `run`'s results: never a child of ours
  }
  return nullptr;
}

}  // namespace cudadiag::app::child
