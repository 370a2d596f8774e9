cmake_minimum_required(VERSION 3.24)
# Runs BIN with ARGS (a ;-list: the subcommand first), -q --format json -o OUT right after
# the subcommand; the exit code must be one of EXPECT_RCS (a ;-list); the report must
# validate (`schema --validate`) and match every regular expression in MATCH (a ;-list).
list(POP_FRONT ARGS subcommand)
execute_process(COMMAND ${BIN} ${subcommand} -q --format json -o ${OUT} ${ARGS} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc IN_LIST EXPECT_RCS)
  message(FATAL_ERROR "${subcommand} ${ARGS} exited ${rc}, expected one of ${EXPECT_RCS}\n${err}")
endif()
execute_process(COMMAND ${BIN} schema --validate ${OUT} RESULT_VARIABLE vrc OUTPUT_VARIABLE vout ERROR_VARIABLE verr)
if(NOT vrc EQUAL 0)
  message(FATAL_ERROR "report does not validate (${vrc}):\n${vout}\n${verr}")
endif()
file(READ ${OUT} report)
foreach(pattern IN LISTS MATCH)
  if(NOT report MATCHES "${pattern}")
    message(FATAL_ERROR "report does not match '${pattern}'")
  endif()
endforeach()
