# Shared settings for every cudadiag target.

# Warnings live on an INTERFACE target so that each library opts in once.
add_library(cudadiag_warnings INTERFACE)
target_compile_options(cudadiag_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Wunused -Woverloaded-virtual -Wformat=2 -Wimplicit-fallthrough
    # A switch over an enum names every enumerator: adding a kernel family, an outcome
    # or a rung is a compile error wherever it is not handled.
    -Werror=switch>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall --expt-relaxed-constexpr>)

# Source paths in error locations (__FILE__) are relative to the repository root: a
# report names kernels/runtime/fence_allocator.cu:42, never the build machine's checkout.
# Ninja names sources relative to the build folder when it lies inside the checkout
# ("../apps/cudadiag/child_fault.cpp"), so that prefix is mapped too.
add_compile_options(
  $<$<COMPILE_LANGUAGE:CXX>:-ffile-prefix-map=${PROJECT_SOURCE_DIR}/=>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-ffile-prefix-map=${PROJECT_SOURCE_DIR}/=>)
file(RELATIVE_PATH _cudadiag_source_from_build "${PROJECT_BINARY_DIR}" "${PROJECT_SOURCE_DIR}")
string(REGEX REPLACE "/$" "" _cudadiag_source_from_build "${_cudadiag_source_from_build}")
if(_cudadiag_source_from_build MATCHES "^\\.\\.(/\\.\\.)*$")
  add_compile_options(
    $<$<COMPILE_LANGUAGE:CXX>:-ffile-prefix-map=${_cudadiag_source_from_build}/=>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-ffile-prefix-map=${_cudadiag_source_from_build}/=>)
endif()

# fmt and spdlog are used header-only so the binary carries no shared copy of them.
add_library(cudadiag_deps INTERFACE)
# Only the include directories of fmt and spdlog: their out-of-line parts are compiled
# once in lib/util/third_party_impl.cpp (header-only is ~10 s per file on spdlog alone).
get_target_property(_fmt_inc fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(_spdlog_inc spdlog::spdlog INTERFACE_INCLUDE_DIRECTORIES)
target_include_directories(cudadiag_deps SYSTEM INTERFACE ${_fmt_inc} ${_spdlog_inc})
target_compile_definitions(cudadiag_deps INTERFACE SPDLOG_COMPILED_LIB SPDLOG_FMT_EXTERNAL)
target_link_libraries(cudadiag_deps INTERFACE nlohmann_json::nlohmann_json)
target_include_directories(cudadiag_deps INTERFACE ${PROJECT_SOURCE_DIR}/lib ${PROJECT_SOURCE_DIR})

# Git revision baked into the binary (report.tool): read at every build by
# cmake/git_revision.cmake (lib/CMakeLists.txt), unless set here for a build outside git.
find_package(Git QUIET)
set(CUDADIAG_GIT_REVISION "" CACHE STRING "Git revision recorded in report.tool (empty: read from git at build time)")

# cudadiag_add_lib(NAME [DEPS a b ...]): lib/NAME/*.cpp as static library cudadiag_NAME.
function(cudadiag_add_lib name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB _src CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.cpp)
  if(_src)
    add_library(cudadiag_${name} STATIC ${_src})
    target_link_libraries(cudadiag_${name} PUBLIC cudadiag_deps PRIVATE cudadiag_warnings)
    foreach(d IN LISTS ARG_DEPS)
      target_link_libraries(cudadiag_${name} PUBLIC cudadiag_${d})
    endforeach()
  else()
    add_library(cudadiag_${name} INTERFACE)
    target_link_libraries(cudadiag_${name} INTERFACE cudadiag_deps)
    foreach(d IN LISTS ARG_DEPS)
      target_link_libraries(cudadiag_${name} INTERFACE cudadiag_${d})
    endforeach()
  endif()
endfunction()

# cudadiag_add_kernels(NAME [DEPS a b ...]): kernels/NAME/*.cu and *.cpp as cudadiag_kernels_NAME.
function(cudadiag_add_kernels name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB _src CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.cu
       ${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.cpp)
  if(_src)
    add_library(cudadiag_kernels_${name} STATIC ${_src})
    target_include_directories(cudadiag_kernels_${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/lib)
    target_link_libraries(cudadiag_kernels_${name} PUBLIC CUDA::cudart_static PRIVATE cudadiag_warnings)
    set_target_properties(cudadiag_kernels_${name} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF
      POSITION_INDEPENDENT_CODE OFF)
    target_compile_options(cudadiag_kernels_${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
    foreach(d IN LISTS ARG_DEPS)
      target_link_libraries(cudadiag_kernels_${name} PUBLIC cudadiag_kernels_${d})
    endforeach()
  else()
    add_library(cudadiag_kernels_${name} INTERFACE)
  endif()
endfunction()
