# The fuzzing configuration (CUDADIAG_FUZZ=ON): clang only, every object instrumented
# for libFuzzer coverage with AddressSanitizer and UndefinedBehaviorSanitizer, and any
# undefined behaviour fatal so that the fuzzer reports it as a crash.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "CUDADIAG_FUZZ needs clang (configure with -DCMAKE_CXX_COMPILER=clang++); "
                      "got ${CMAKE_CXX_COMPILER_ID}")
endif()
set(CUDADIAG_FUZZ_SANITIZERS "address,undefined" CACHE STRING "Sanitizers of the fuzzing build")
add_compile_options(-fsanitize=fuzzer-no-link,${CUDADIAG_FUZZ_SANITIZERS} -fno-sanitize-recover=undefined
                    -fno-omit-frame-pointer -g -O1)
add_link_options(-fsanitize=${CUDADIAG_FUZZ_SANITIZERS})
