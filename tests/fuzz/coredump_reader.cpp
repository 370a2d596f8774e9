// Fuzz target: the GPU core dump reader (ELF section table, .cudbg tables, relocated
// cubins with their symbols and DWARF line programs), the fault site built from it and
// its JSON; and the same bytes as nvdisasm text through the SASS parser and the address
// proof. Unreadable dumps are a typed error (exit 2), caught here.
#include "coredump/core_dump.h"
#include "coredump/fault_address.h"
#include "coredump/fault_site.h"
#include "coredump/fault_site_json.h"
#include "coredump/render_site.h"
#include "coredump/sass.h"
#include "fuzz_target.h"
#include "report/report.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cudadiag::coredump;
  try {
    const CoreDump dump = read_core_dump(Bytes(data, size));
    const FaultSite site = analyze_dump(dump, {}, "fuzzing");
    (void)cudadiag::report::dump_json(to_json(site));
    (void)render_site_text(site);
  } catch (const UnreadableDump&) {
  }
  // The same bytes as a disassembly listing: parse, then prove from every instruction to
  // the last, with registers that echo their number.
  const auto listing = parse_disassembly(fuzz_text(data, size), 4096);
  if (!listing.empty()) {
    const RegisterRead regs = [](unsigned r) -> std::optional<std::uint32_t> { return r * 0x01010101u; };
    for (std::size_t i = 0; i < listing.size() && i < 64; ++i)
      (void)prove_address_in_listing(listing, listing[i].address, listing.back().address, regs);
  }
  return 0;
}
