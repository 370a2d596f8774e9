#pragma once
// The devices a process used, each recorded into its ring the first time a context on it
// is current in an allocation or a launch: the ordinal as the process sees it, the GPU's
// UUID and PCI bus id (the parent matches the kernel log's Xid lines to the GPU by bus id).
// After the first time, one bit test per call.
#include <cstdint>

#include "apps/interposer/ring_writer.h"

namespace cudadiag::interposer {

void note_device(RingWriter& ring, std::int32_t ordinal) noexcept;

}  // namespace cudadiag::interposer
