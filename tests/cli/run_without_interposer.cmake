cmake_minimum_required(VERSION 3.24)
# The binary alone in a directory, without libcudadiag_fence.so beside it: the fence rung
# is skipped with the reason, and nothing else could see an overrun (inconclusive, exit 1).
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
file(COPY ${BIN} DESTINATION ${DIR})
get_filename_component(name ${BIN} NAME)
execute_process(COMMAND ${DIR}/${name} run --format json -- /bin/true
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "exit ${rc}, expected 1\n${out}\n${err}")
endif()
foreach(pattern "fence rung skipped: neither .*/libcudadiag_fence.so nor .*/lib/cudadiag/libcudadiag_fence.so exists"
                "\"status\": \"inconclusive\"" "the fence did not run: .*neither .*libcudadiag_fence.so nor .*libcudadiag_fence.so exists")
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "no match for '${pattern}'\n${out}\n${err}")
  endif()
endforeach()
