# Skips (prints GPU-TEST-SKIPPED and the reason) when `cudadiag env` says the GPU part
# cannot run (exit 3); otherwise runs BIN ARGS and checks the exit code.
execute_process(COMMAND ${BIN} env --format json -q RESULT_VARIABLE env_rc OUTPUT_VARIABLE env_out ERROR_VARIABLE env_err)
if(env_rc EQUAL 3)
  string(REGEX MATCH "\"reason\"[^\n]*" reason "${env_out}")
  message("GPU-TEST-SKIPPED: no usable CUDA device on this machine (cudadiag env exit 3) ${reason}")
  return()
endif()
execute_process(COMMAND ${BIN} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
message("${out}")
