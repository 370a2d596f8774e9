cmake_minimum_required(VERSION 3.24)
# The binary alone in a directory, without libcudadiag_fence.so beside it: the fence rung
# is skipped with the reason. Without a GPU and compute-sanitizer nothing else could see an
# overrun (inconclusive, exit 1); on a GPU machine with compute-sanitizer, memcheck runs in
# the fence's place and sees /bin/true end before any CUDA call (clean, exit 0).
include(${CMAKE_CURRENT_LIST_DIR}/check_helpers.cmake)
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
file(COPY ${BIN} DESTINATION ${DIR})
get_filename_component(name ${BIN} NAME)
execute_process(COMMAND ${DIR}/${name} run --format json -- /bin/true
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
gpu_present(have_gpu)
find_program(sanitizer compute-sanitizer PATHS $ENV{CUDA_HOME}/bin /usr/local/cuda/bin NO_CACHE)
set(skipped "fence rung skipped: neither .*/libcudadiag_fence.so nor .*/lib/cudadiag/libcudadiag_fence.so exists")
if(have_gpu AND sanitizer)
  set(want_rc 0)
  set(patterns "${skipped}" "\"status\": \"clean\""
               "the program never used CUDA \\(memcheck saw it end before its first CUDA call\\)")
else()
  set(want_rc 1)
  set(patterns "${skipped}" "\"status\": \"inconclusive\""
               "the fence did not run: .*neither .*libcudadiag_fence.so nor .*libcudadiag_fence.so exists")
endif()
if(NOT rc EQUAL want_rc)
  message(FATAL_ERROR "exit ${rc}, expected ${want_rc}\n${out}\n${err}")
endif()
foreach(pattern IN LISTS patterns)
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "no match for '${pattern}'\n${out}\n${err}")
  endif()
endforeach()
