#pragma once
// The child's half of the family table: each cases::Family has one factory here
// (child_<family>.cpp). The switch in child_families.cpp covers every enumerator, so a
// family added to cases::Family without a child side does not compile (-Wswitch).
#include "cases/family.h"
#include "child_harness.h"

namespace cudadiag::app::child {

std::unique_ptr<CaseRun> make_fault_run(const runner::CaseSpec& spec);
std::unique_ptr<CaseRun> make_index_select_run(const runner::CaseSpec& spec);
std::unique_ptr<CaseRun> make_attention_run(const runner::CaseSpec& spec);
std::unique_ptr<CaseRun> make_tma_run(const runner::CaseSpec& spec);

CaseFactory factory_for(cases::Family f);

}  // namespace cudadiag::app::child
