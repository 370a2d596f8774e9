#pragma once
// The child's half of the family table: each family of CUDADIAG_FAMILIES has one factory,
// make_<family>_run (child_<family>.cpp); the declarations and the dispatch are generated
// from the list, so a family without a child side does not link.
#include "cases/family.h"
#include "child_harness.h"

namespace cudadiag::app::child {

#define CUDADIAG_FAMILY_FACTORY(name) std::unique_ptr<CaseRun> make_##name##_run(const suite::CaseSpec& spec);
CUDADIAG_FAMILIES(CUDADIAG_FAMILY_FACTORY)
#undef CUDADIAG_FAMILY_FACTORY

CaseFactory factory_for(cases::Family f);

}  // namespace cudadiag::app::child
