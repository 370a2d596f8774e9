#pragma once
// The calling thread's Python frames, read from the interpreter's own structures without
// its lock (CPython 3.9 to 3.13, builds with the GIL). Only the thread itself pushes and
// pops its frames, and while it runs C code (an extension that allocates, with the lock
// released or not) they stand still: faulthandler prints them the same way, from a
// signal handler. The reading allocates nothing, takes no lock, changes no reference
// count and calls only the interpreter's pure functions (PyGILState_GetThisThreadState,
// PyCode_Addr2Line); every pointer is checked for alignment and every object for its
// type (the interpreter's own PyCode_Type, PyUnicode_Type, PyFrame_Type) before a field
// of it is read, and the walk stops at a bounded depth.
//
// Two steps, so that an allocation site seen before costs a walk of pointers only:
// walk_python_stack takes each frame's code object and instruction offset (the site's
// key), describe_python_stack reads files, functions and lines for a new site.
#include <cstdint>

#include "fence/ring_format.h"

namespace cudadiag::interposer {

inline constexpr std::uint32_t kPythonStackDepth = 48;  // frames walked, innermost first

struct PythonStack {
  ring::PythonState state = ring::PythonState::none;
  std::uint32_t depth = 0;
  const void* code[kPythonStackDepth];    // the frame's code object
  std::int32_t offset[kPythonStackDepth]; // of the instruction being run, in bytes (PyCode_Addr2Line's unit)
};

// The calling thread's frames. `loads` counts the libraries loaded so far: an interpreter
// not found is looked for again once it changed.
void walk_python_stack(PythonStack& s, std::uint32_t loads) noexcept;

// The innermost frame of `s` and, when it is not the user's own code, the innermost one
// that is (outside the interpreter's modules and installed packages): into `out`
// (ring::kPythonFrames of them); how many were written.
std::uint32_t describe_python_stack(const PythonStack& s, ring::PythonFrame* out) noexcept;

}  // namespace cudadiag::interposer
