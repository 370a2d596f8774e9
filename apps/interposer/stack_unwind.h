#pragma once
// The calling thread's return addresses, read with the loaded objects' own unwind tables
// as glibc's backtrace reads them, but with the rule each return address needs
// (frame_rule.h) kept once worked out: a stack seen before costs a table look-up and a
// load or two a frame instead of a walk of the unwind tables (the allocating stacks of
// PyTorch, 40 frames deep, took about 28 us each with backtrace). Every load from the
// stack is checked to lie between the stack pointer and the top of the thread's stack.
// x86-64 only; elsewhere, on a stack other than the thread's own (a signal's alternate
// one), and on any frame without a rule of the kinds frame_rule.h reads (a signal frame,
// a frame held in another register), it answers -1 and the caller asks backtrace.
#include <cstdint>

namespace cudadiag::interposer {

// Loads what the reader needs outside any allocation (the library's constructor calls it).
void init_stack_unwind() noexcept;

// Up to `max` return addresses, innermost first, the first one in the caller of this
// function; -1 when the stack needs backtrace. `loads` counts the libraries loaded so
// far: when it changed, the rules kept are dropped (an address may now hold other code).
int unwind_stack(std::uint64_t* out, int max, std::uint32_t loads) noexcept;

}  // namespace cudadiag::interposer
