#pragma once
// Where an allocation was made: the host call stack of the allocating thread (return
// addresses, the interposer's own frames left out; stack_unwind.h) and, in a Python
// program, its innermost Python frame and the innermost one of the user's own code, read
// from the thread's own frames whether it holds the interpreter's lock or not
// (python_stack.h). Kept once per distinct site in the ring (ring_format.h, SiteSlot),
// with the loaded objects those addresses lie in (ModuleSlot), so that the parent can
// name functions from the files' own symbols after the program ended. A site seen before
// is found from its two stacks' addresses alone. Nothing is captured when the ring has no
// room for sites (CUDADIAG_RING_SITES=0).
#include <cstdint>

#include "apps/interposer/ring_writer.h"

namespace cudadiag::interposer {

// Loads the unwinder once, outside any allocation (the library's constructor calls it).
void init_allocation_sites() noexcept;

// The site of the allocation being made now, recorded in `ring`; ring::kNoSite when none
// could be kept.
std::uint32_t capture_allocation_site(RingWriter& ring) noexcept;

// A library is being loaded: the next return address outside every known module makes
// the table of modules be read again.
void note_library_load() noexcept;

// Around fork(): the table of modules is not left locked in the child.
void lock_allocation_sites_for_fork() noexcept;
void unlock_allocation_sites_after_fork() noexcept;

}  // namespace cudadiag::interposer
