#pragma once
// nvdisasm, the toolkit's SASS disassembler, found and run on one function of a relocated
// cubin. It is optional: without it the site has no faulting instruction and no address,
// and says how to get it. On a machine without the toolkit, `pip install
// nvidia-cuda-nvdisasm` installs it under <site-packages>/nvidia/cu*/bin/, searched here.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "coredump/bytes.h"
#include "coredump/cubin.h"

namespace cudadiag::coredump {

inline constexpr const char* kNvdisasmHint =
    "install the CUDA toolkit's nvdisasm, or on any machine `pip install nvidia-cuda-nvdisasm` "
    "(cudadiag finds it in the Python environment on PATH), or pass --nvdisasm PATH";

struct Disassembler {
  std::string path;    // empty: none found
  std::string reason;  // why none was found (the places searched)
};

using EnvLookup = std::function<const char*(const char*)>;

// explicit_path (from --nvdisasm) wins when set; then $CUDADIAG_NVDISASM, PATH,
// $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, and the nvidia-cuda-nvdisasm wheel
// in the Python environments beside PATH's directories, $VIRTUAL_ENV, $CONDA_PREFIX,
// pyenv's versions and ~/.local.
Disassembler find_nvdisasm(const std::string& explicit_path = "", const EnvLookup& getenv_fn = nullptr);

// Candidate paths in search order (for tests and the reason).
std::vector<std::string> nvdisasm_candidates(const EnvLookup& getenv_fn);

struct Listing {
  std::string text;   // nvdisasm's output for the function
  std::string error;  // why there is none
};

// Disassembles one function (by its symbol index) of a cubin with nvdisasm -c -fun.
// Bounded: 60 s, 8 MiB of output.
Listing disassemble_function(const Disassembler& tool, Bytes cubin, const FunctionSymbol& function);

// What the site analysis calls; tests give stored listings instead of running nvdisasm.
using DisassembleFn = std::function<Listing(Bytes cubin, const FunctionSymbol& function)>;

// disassemble_function with `tool`; empty when the tool was not found.
DisassembleFn disassemble_with(const Disassembler& tool);

// Said once where sites were read without a disassembler (`reason`: why none): what they
// still give, kernel and line from the cubins' symbols and line tables, and what not.
std::string no_disassembler_note(const std::string& reason);

}  // namespace cudadiag::coredump
