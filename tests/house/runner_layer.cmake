# House rule: process control is the bottom layer. lib/runner (spawning, deadlines, the
# decoded ending, the pool) includes nothing above it: only its own headers and lib/util.
# What turns a child's outcome into report types lives above it (evidence/child_info.h),
# and so does the parent <-> child case protocol (suite/case_protocol.h). This scans the
# quoted includes of lib/runner and the runner library's DEPS in lib/CMakeLists.txt.
#
#   cmake -DSOURCE_DIR=<repository root> -P runner_layer.cmake
cmake_minimum_required(VERSION 3.20)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "runner_layer.cmake: pass -DSOURCE_DIR=<repository root>")
endif()

set(allowed_prefixes runner util)

file(GLOB sources RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/lib/runner/*.cpp" "${SOURCE_DIR}/lib/runner/*.h")
list(SORT sources)
if(NOT sources)
  message(FATAL_ERROR "runner_layer.cmake: no sources under ${SOURCE_DIR}/lib/runner")
endif()

set(hits "")
foreach(file IN LISTS sources)
  file(STRINGS "${SOURCE_DIR}/${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*$" "\\1" included "${line}")
    string(REGEX REPLACE "/.*$" "" prefix "${included}")
    if(NOT included MATCHES "/" OR NOT prefix IN_LIST allowed_prefixes)
      string(APPEND hits "  ${file}: #include \"${included}\"\n")
    endif()
  endforeach()
endforeach()

# The library's own dependencies: util only.
file(READ "${SOURCE_DIR}/lib/CMakeLists.txt" lib_cmake)
string(REGEX MATCH "cudadiag_add_lib\\(runner[^)]*\\)" runner_line "${lib_cmake}")
if(NOT runner_line)
  string(APPEND hits "  lib/CMakeLists.txt: no cudadiag_add_lib(runner ...) found\n")
else()
  string(REGEX REPLACE "^cudadiag_add_lib\\(runner[ \t\n]*(DEPS)?([^)]*)\\)$" "\\2" deps "${runner_line}")
  string(REGEX REPLACE "[ \t\n]+" ";" deps "${deps}")
  foreach(dep IN LISTS deps)
    if(dep AND NOT dep IN_LIST allowed_prefixes)
      string(APPEND hits "  lib/CMakeLists.txt: runner DEPS lists ${dep}\n")
    endif()
  endforeach()
endif()

if(hits)
  message(FATAL_ERROR
    "lib/runner reaches above process control:\n${hits}"
    "lib/runner may include runner/ and util/ only. Code that needs report, profile, repeat or "
    "case types belongs in the layer that uses them (evidence/child_info.h, suite/case_protocol.h).")
endif()
list(LENGTH sources n)
message(STATUS "runner_layer: ${n} files of lib/runner include runner/ and util/ only")
