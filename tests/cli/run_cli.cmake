# Runs BIN with ARGS (a ;-list), checks the exit code and that stdout+stderr match REGEX.
execute_process(COMMAND ${BIN} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
# Text views wrap at 80 columns: a phrase may continue on the next, indented line, so the
# output is also matched with each continuation joined back (newline + indent -> one space).
string(REGEX REPLACE "\n +" " " joined "${out}${err}")
if(REGEX AND NOT "${out}${err}" MATCHES "${REGEX}" AND NOT "${joined}" MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
