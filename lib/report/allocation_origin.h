#pragma once
// Where a buffer was made, as the interposer caught it at allocation and the parent read
// it from the program's own files: the Python frames (the innermost, then the user's own
// line) and the host call stack, function + offset in each loaded object. Shown next to
// the allocation a fault is placed in; typed in the report ("allocated_at").
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cudadiag::report {

class JsonReader;

struct OriginPythonFrame {
  std::string file;
  std::int32_t line = 0;
  std::string function;
  bool user = false;  // the user's own code (not the interpreter's modules or an installed package)
};

struct OriginHostFrame {
  std::uint64_t address = 0;  // the return address
  std::string module;         // the loaded object's file
  std::string function;       // demangled; empty when its symbols do not name it
  std::uint64_t offset = 0;   // from the function's start (from the module's start without one)
};

struct AllocationOrigin {
  std::vector<OriginPythonFrame> python;  // innermost first
  std::vector<OriginHostFrame> host;      // innermost first, the interposer's own frames left out
  std::string python_note;                // why a Python program's frames were not read
  bool empty() const { return python.empty() && host.empty(); }
};

// One line: the user's Python line (and the innermost Python frame when another); without
// one, up to four host frames outside the CUDA driver and runtime:
// "train.py:42 in forward (innermost: torch/nn/modules/linear.py:125 in forward); host: alloc+0x1c (app) < main+0x40 (app)"
std::string origin_text(const AllocationOrigin& o);

nlohmann::ordered_json to_json(const AllocationOrigin& o);
AllocationOrigin read_allocation_origin(const JsonReader& rd, const nlohmann::ordered_json& j, const std::string& p);

}  // namespace cudadiag::report
