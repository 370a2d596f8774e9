#pragma once
// The program's end: the fence rungs run without CUDA_LAUNCH_BLOCKING, so a kernel that
// faulted on a guard may still be unseen when the program ends, if it never waited for its
// GPU work after that launch. Once main returns (or at exit()), a process that records
// into a ring and used CUDA waits for its current context's work, as the driver's teardown
// would, and records a failed wait in the ring (end_wait_result): the parent judges the
// fault the program never saw. Nothing else changes: the program's exit status stays its
// own.
namespace cudadiag::interposer {

// Once per process; does nothing without a ring, a driver or a current context.
void wait_at_program_end() noexcept;

}  // namespace cudadiag::interposer
