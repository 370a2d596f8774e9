# House rule: no string comparison of a vocabulary word in lib/ or apps/. Words of our
# vocabulary (statuses, error classes, profiles, access kinds, ...) are enums, compared as
# enums; strings exist where text comes in (a parse function turning it into a typed
# value) and where it goes out. This scans lib/ and apps/ for `== "word"` and `!= "word"`
# and fails on any compared word that the list below does not allow for that file.
#
#   cmake -DSOURCE_DIR=<repository root> -P vocabulary.cmake
#
# `allowed` holds "<file>|<word>" (the word as compared); `parsers` names files that are
# wholly a parser of text that is not ours, or of a format's own keywords ("dir/*" for a
# directory). Keep both short, and say why next to each entry.
cmake_minimum_required(VERSION 3.20)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "vocabulary.cmake: pass -DSOURCE_DIR=<repository root>")
endif()

set(allowed
  # (a) Edge parsers: text from the command line or a file turned into a typed value.
  "lib/profiles/allocator.h|fence"              # parse_allocator: "fence" means fence-back
  "lib/report/report_values.cpp|host"           # parse_device: the "host" sentinel
  "lib/cases/expectation.cpp|any"               # Expectation::parse
  "lib/cases/expectation.cpp|silent"
  "lib/cases/expectation.cpp|error"
  "lib/attention/attention_sweep.cpp|block_m"   # the --sweep spec's keys
  "lib/attention/attention_sweep.cpp|block_n"
  "lib/attention/attention_sweep.cpp|warps"
  "lib/suite/suite.cpp|*"                       # a suite file's "*" (every other profile)
  "lib/suite/suite.cpp|-"                       # stdin as the suite
  "lib/suite/device_selection.cpp|all"          # --devices all
  "lib/compare/report_files.cpp|-"              # stdin as a report argument
  "lib/compare/report_files.cpp|.json"          # a file extension
  "lib/report/json_document.cpp|-"
  "apps/cudadiag/cmd_tma.cpp|-"
  "apps/cudadiag/cli_common.cpp|-"
  # (a) JSON type names and members, where a document comes in.
  "lib/compare/head_types.cpp|object"           # a JSON type's article
  "lib/compare/head_types.cpp|array"
  "lib/report/redact.cpp|hostname"              # the hostname member of a section being redacted
  # (b) Text that is not our vocabulary: other tools' output and the system's names.
  "lib/run/judge.cpp|SIGSEGV"                   # signal_number: the names shells print
  "lib/run/judge.cpp|SIGABRT"
  "lib/run/judge.cpp|SIGBUS"
  "lib/run/judge.cpp|SIGFPE"
  "lib/run/judge.cpp|SIGILL"
  "lib/run/judge.cpp|SIGKILL"
  "lib/run/judge.cpp|--kernel-name"             # compute-sanitizer's command line
  "lib/run/breaking_setting.cpp|LD_PRELOAD"     # an environment variable
  "lib/run/breaking_setting.cpp|CUDA_LAUNCH_BLOCKING"  # an environment variable
  # (b) Rendered text: a table cell's placeholder.
  "lib/report/render_text.cpp|-"
)

# (a) The report members compare's skim reads (compare/digest_reader.cpp).
foreach(member case_id code device device_index duration_ms error expectation_met expected failures fault_sites
               histogram kernel name outcome params profile repeats results runs schema_version seconds)
  list(APPEND allowed "lib/compare/digest_reader.cpp|${member}")
endforeach()

set(parsers
  # (a) Parsers of a format's own words: text from the command line or a file turned into
  # typed values, JSON member names, JSON-Schema keywords.
  "lib/report/render.cpp"             # parse_format and the format of a file name
  "lib/tma/sweep.cpp"                 # the tma --sweep spec
  "lib/util/build_info.cpp"           # CMake's architecture list
  "lib/report/schema.cpp"             # JSON-Schema keywords
  "lib/report/host_sections.cpp"      # the machine sections' JSON members, read back
  # (b) Text that is not ours: other tools' output, the system's names, path syntax.
  "lib/sanitizer/*"                   # compute-sanitizer's XML and text
  "lib/tma/printout.cpp"              # the driver's printed descriptor (a log)
  "lib/host/system_info.cpp"          # /etc/os-release, /proc/cpuinfo, /proc/meminfo
  "lib/host/xid.cpp"                  # kernel log lines
  "lib/coredump/sass.cpp"             # nvdisasm's SASS
  "lib/coredump/arming.cpp"           # the driver's CUDA_* variables
  "lib/util/atomic_file.cpp"          # "-" and /dev/std* as output paths; path syntax
  "lib/util/safe_path.cpp"            # path syntax: ".", "..", "/"
)

file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}"
  "${SOURCE_DIR}/lib/*.cpp" "${SOURCE_DIR}/lib/*.h" "${SOURCE_DIR}/lib/*.cu" "${SOURCE_DIR}/lib/*.cuh"
  "${SOURCE_DIR}/apps/*.cpp" "${SOURCE_DIR}/apps/*.h" "${SOURCE_DIR}/apps/*.cu" "${SOURCE_DIR}/apps/*.cuh")
list(SORT sources)

function(word_allowed file word out)
  foreach(pattern IN LISTS parsers)
    string(REPLACE "." "\\." pattern_re "${pattern}")
    string(REPLACE "*" ".*" pattern_re "${pattern_re}")  # "dir/*": the directory's files
    if(file MATCHES "^${pattern_re}$")
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
  endforeach()
  list(FIND allowed "${file}|${word}" at)
  if(at GREATER -1)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

set(hits "")
set(count 0)
foreach(file IN LISTS sources)
  file(STRINGS "${SOURCE_DIR}/${file}" lines REGEX "[!=]= \"")
  foreach(line IN LISTS lines)
    string(REGEX MATCHALL "[!=]= \"[^\"]*\"" compared "${line}")
    foreach(c IN LISTS compared)
      string(REGEX REPLACE "^[!=]= \"([^\"]*)\"$" "\\1" word "${c}")
      word_allowed("${file}" "${word}" ok)
      if(NOT ok)
        string(STRIP "${line}" shown)
        string(APPEND hits "  ${file}: \"${word}\" in: ${shown}\n")
        math(EXPR count "${count} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()

if(count GREATER 0)
  message(FATAL_ERROR
    "${count} string comparison(s) of a word in lib/ or apps/ outside the edge parsers that "
    "tests/house/vocabulary.cmake allows:\n${hits}"
    "Compare an enum (a ChoiceTable names its words: util/choices.h), parsing the text once "
    "where it comes in; if this is such a parser, or text that is not ours, add the file and "
    "word to the list with the reason.")
endif()
list(LENGTH sources n)
message(STATUS "vocabulary: ${n} files of lib/ and apps/, no comparison of a word outside the allowed edge parsers")
