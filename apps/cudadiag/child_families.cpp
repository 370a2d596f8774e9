#include "child_families.h"

namespace cudadiag::app::child {

CaseFactory factory_for(cases::Family f) {
  switch (f) {
    case cases::Family::fault: return make_fault_run;
    case cases::Family::index_select: return make_index_select_run;
    case cases::Family::attention: return make_attention_run;
    case cases::Family::tma: return make_tma_run;
    case cases::Family::program: break;  // `run`'s results: never a child of ours
  }
  return nullptr;
}

}  // namespace cudadiag::app::child
