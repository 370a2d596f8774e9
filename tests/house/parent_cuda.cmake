# House rule: the parent never calls CUDA. The parent side of cudadiag (main.cpp, the
# cmd_<name>.cpp files, cli_common, probe_cuda: the cudadiag_parent target of
# apps/cudadiag) links neither the CUDA runtime nor the kernels; this lists the undefined
# symbols of each of its objects (nm -u) and fails on any that names the CUDA runtime or
# driver API (cudaMalloc, __cudaRegisterFatBinary, cuInit, ...), naming the object and
# the symbol. CUDA belongs in a child: child_*.cpp (cudadiag_child) and kernels/.
#
#   cmake -DNM=<nm> -DOBJECTS=<object>|<object>|... -P parent_cuda.cmake
cmake_minimum_required(VERSION 3.20)
if(NOT NM OR NOT OBJECTS)
  message(FATAL_ERROR "parent_cuda.cmake: pass -DNM=<nm> and -DOBJECTS=<the parent's objects, |-separated>")
endif()
string(REPLACE "|" ";" objects "${OBJECTS}")

# The API's names: cudaX and __cudaX (runtime, and the registration calls a .cu file's
# host stub makes), cuX (driver). Mangled C++ names start with _Z and never match.
set(cuda_symbol "^(__)?cu(da)?[A-Z]")

set(hits "")
set(count 0)
set(undefined_total 0)
foreach(object IN LISTS objects)
  if(NOT EXISTS "${object}")
    message(FATAL_ERROR "parent_cuda.cmake: ${object} is not built (build the cudadiag target first)")
  endif()
  execute_process(COMMAND "${NM}" -u --format=posix "${object}"
                  OUTPUT_VARIABLE listing ERROR_VARIABLE nm_error RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "parent_cuda.cmake: ${NM} -u ${object} failed (${rc}): ${nm_error}")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  foreach(line IN LISTS lines)
    # posix format: "<name> U" (a weak undefined one: "<name> w")
    if(NOT line MATCHES "^([^ ]+) [Uw]")
      continue()
    endif()
    set(symbol "${CMAKE_MATCH_1}")
    math(EXPR undefined_total "${undefined_total} + 1")
    if(symbol MATCHES "${cuda_symbol}")
      get_filename_component(name "${object}" NAME)
      string(APPEND hits "  ${name}: ${symbol}\n")
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
endforeach()

list(LENGTH objects n)
if(undefined_total EQUAL 0)
  # Every object calls something (the C++ library at least): an empty listing means the
  # listing itself failed, and a check that read nothing must not pass.
  message(FATAL_ERROR "parent_cuda.cmake: nm listed no undefined symbol in ${n} objects")
endif()
if(count GREATER 0)
  message(FATAL_ERROR
    "${count} reference(s) to the CUDA API from the parent side of cudadiag:\n${hits}"
    "The parent never calls CUDA: it plans, spawns a child and reads its result. Move the "
    "call into the child side (apps/cudadiag/child_*.cpp or kernels/), run in a child.")
endif()
message(STATUS "parent_cuda: ${n} objects of the parent side, ${undefined_total} undefined symbols, none of the CUDA API")
