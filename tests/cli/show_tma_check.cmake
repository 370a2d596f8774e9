# cmake -DBIN=cudadiag -DWORK=dir -P show_tma_check.cmake: `show` of a saved tma report
# prints what the command printed, byte for byte, in text and Markdown (its rules' `fix:`
# advice included), for an explicit descriptor, the rule table and a sweep; a tma report
# whose section was tampered with is exit 2 naming the member.
include(${CMAKE_CURRENT_LIST_DIR}/check_helpers.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
# One form a list item, its words joined by '|' (a CMake list cannot hold lists).
set(forms "--dtype|float16|--dims|64,1|--strides|130|--box|64,1"
          "--table|--target-cc|90"
          "--dtype|bfloat16|--dims|64,8|--strides|128|--box|64,8|--sweep|seq-len=1..3")
set(i 0)
foreach(form IN LISTS forms)
  string(REPLACE "|" ";" args "${form}")
  math(EXPR i "${i} + 1")
  foreach(format text md)
    execute_process(COMMAND ${BIN} tma --host-only ${args} --format ${format}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 AND NOT rc EQUAL 1)
      message(FATAL_ERROR "tma ${args}: exit ${rc}\n${err}")
    endif()
    execute_process(COMMAND ${BIN} tma --host-only ${args} --format json -o ${WORK}/r${i}.json
                    RESULT_VARIABLE rc_json OUTPUT_QUIET ERROR_QUIET)
    expect_eq("tma ${args} with -o: exit code" "${rc_json}" "${rc}")
    execute_process(COMMAND ${BIN} show --format ${format} ${WORK}/r${i}.json
                    RESULT_VARIABLE show_rc OUTPUT_VARIABLE shown ERROR_VARIABLE err)
    expect_eq("show of tma ${args} (${format}): exit code" "${show_rc}" "0")
    if(NOT "${shown}" STREQUAL "${printed}")
      message(FATAL_ERROR "show --format ${format} differs from tma ${args}:\n--- tma\n${printed}\n--- show\n${shown}")
    endif()
  endforeach()
endforeach()
file(READ ${WORK}/r1.json doc)
if(NOT doc MATCHES "fix: make the stride a multiple of 16" AND NOT "${printed}" MATCHES "fix:")
  message(FATAL_ERROR "the tma report's text lost its fix: advice")
endif()
# A row whose descriptor was tampered with: exit 2, naming the member.
string(REPLACE "\"dtype\": \"fp16\"" "\"dtype\": \"no-such-type\"" bad "${doc}")
file(WRITE ${WORK}/bad.json "${bad}")
execute_process(COMMAND ${BIN} show ${WORK}/bad.json RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
expect_eq("show of a tampered tma report: exit code" "${rc}" "2")
if(NOT err MATCHES "tma[.]rows\\[0\\][.]descriptor")
  message(FATAL_ERROR "the error does not name the member: ${err}")
endif()
message("PASS: show prints tma reports as tma does")
