#pragma once
// The CUDA error a GPU core dump proves. The driver writes the dump at the moment of the
// exception and then aborts the process, so the program may print nothing: the dump's
// exception is the evidence, for `run`'s rungs and for the bundled cases' children alike.
#include <vector>

#include "report/fault_site.h"
#include "report/report.h"
#include "taxonomy/taxonomy.h"

namespace cudadiag::evidence {

// The first readable site that records an exception (a dump taken on request records none).
const report::FaultSite* exception_site(const std::vector<report::FaultSite>& sites);

// The site that says why a process the driver ended wrote its dump: the exception site,
// else the first readable site naming a kernel (a dump written at an exception it does
// not name: a trap's, seen on an H100 with driver 580.159.04). nullptr when neither.
const report::FaultSite* dumped_site(const std::vector<report::FaultSite>& sites);

// Taxonomy class of a dump's exception: memory_fault, misaligned, device_assert,
// illegal_instruction, unknown.
taxonomy::ErrorClass site_error_class(const report::FaultSite& s);

// The runtime error a program sees after such an exception (cudaErrorIllegalAddress,
// cudaErrorMisalignedAddress, cudaErrorAssert, cudaErrorIllegalInstruction; for a dump
// naming no exception, the unspecified launch failure a trap gives); nullptr for an
// exception of no known class.
const taxonomy::ErrorEntry* site_runtime_error(const report::FaultSite& s);

// The error of a case whose child the driver ended after writing the dump: the runtime
// error above (sticky, as every GPU exception is), surfaced at "coredump", its message
// naming the exception, the kernel and the line. Unknown classes keep code 0.
report::ErrorInfo site_error_info(const report::FaultSite& s);

}  // namespace cudadiag::evidence
