cmake_minimum_required(VERSION 3.24)
# Skips (prints GPU-TEST-SKIPPED and the reason) where the machine has no usable GPU,
# told without the binary under test (check_helpers.cmake: gpu_present); otherwise runs
# BIN ARGS and checks the exit code.
include(${CMAKE_CURRENT_LIST_DIR}/../cli/check_helpers.cmake)
skip_without_gpu()
execute_process(COMMAND ${BIN} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
message("${out}")
