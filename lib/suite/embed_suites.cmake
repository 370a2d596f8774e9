# Embeds repro/*.json into cudadiag_suite as a generated .cpp (one raw string per
# suite), so that `cudadiag repro --suite NAME` works from any directory.
# Included from lib/CMakeLists.txt after cudadiag_add_lib(suite ...).
file(GLOB _suite_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/repro/*.json)
list(SORT _suite_files)
set(_entries "")
set(_bodies "")
set(_i 0)
foreach(f IN LISTS _suite_files)
  get_filename_component(_stem ${f} NAME_WE)
  file(READ ${f} _text)
  string(FIND "${_text}" ")cdsuite\"" _bad)
  if(NOT _bad EQUAL -1)
    message(FATAL_ERROR "${f}: contains the raw-string delimiter )cdsuite\"")
  endif()
  string(APPEND _bodies "const char kSuite${_i}[] = R\"cdsuite(${_text})cdsuite\";\n")
  string(APPEND _entries "      {\"${_stem}\", kSuite${_i}},\n")
  math(EXPR _i "${_i} + 1")
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${f})
endforeach()
set(_gen ${CMAKE_CURRENT_BINARY_DIR}/generated/suite/embedded_suites.cpp)
set(_content "// Generated from repro/*.json by lib/suite/embed_suites.cmake. Do not edit.
#include \"suite/embedded_suites.h\"

namespace cudadiag::suite {
namespace {
${_bodies}}  // namespace

const std::vector<std::pair<const char*, const char*>>& embedded_suite_table() {
  static const std::vector<std::pair<const char*, const char*>> table = {
${_entries}  };
  return table;
}

}  // namespace cudadiag::suite
")
file(CONFIGURE OUTPUT ${_gen} CONTENT "${_content}" @ONLY)
target_sources(cudadiag_suite PRIVATE ${_gen})
