cmake_minimum_required(VERSION 3.24)
# Runs BIN with ARGS (a ;-list), checks the exit code (one of EXPECT_RC, a ;-list) and
# that stdout+stderr match REGEX. Where the GPU part can run (check_helpers.cmake:
# gpu_present) GPU_RC and GPU_REGEX replace them, or GPU_SKIP ends the check as skipped
# with its reason: a machine without a GPU and one with a GPU each get their own
# expectation.
include(${CMAKE_CURRENT_LIST_DIR}/check_helpers.cmake)
set(machine "this machine has no usable GPU")
if(NOT "${GPU_RC}${GPU_SKIP}" STREQUAL "")
  gpu_present(have_gpu)
  if(have_gpu)
    if(NOT "${GPU_SKIP}" STREQUAL "")
      message("SKIPPED: ${GPU_SKIP}")
      return()
    endif()
    set(machine "this machine has a GPU")
    set(EXPECT_RC "${GPU_RC}")
    set(REGEX "${GPU_REGEX}")
  endif()
endif()
execute_process(COMMAND ${BIN} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${rc}" IN_LIST EXPECT_RC)
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC} (${machine})\nstdout:\n${out}\nstderr:\n${err}")
endif()
# Text views wrap at 80 columns: a phrase may continue on the next, indented line, so the
# output is also matched with each continuation joined back (newline + indent -> one space).
string(REGEX REPLACE "\n +" " " joined "${out}${err}")
if(REGEX AND NOT "${out}${err}" MATCHES "${REGEX}" AND NOT "${joined}" MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}' (${machine})\nstdout:\n${out}\nstderr:\n${err}")
endif()
