# Run at every build (cmake -P): writes OUT, a header defining CUDADIAG_GIT_REVISION, and
# touches it only when the revision changed, so an unchanged tree rebuilds nothing.
#   -DSRC=<source dir> -DOUT=<header> -DGIT=<git executable or empty> -DOVERRIDE=<revision or empty>
set(rev "${OVERRIDE}")
if(NOT rev AND GIT)
  execute_process(COMMAND "${GIT}" rev-parse --short=12 HEAD WORKING_DIRECTORY "${SRC}"
    OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(rev "")
  else()
    # Uncommitted changes to tracked files: the binary is not exactly that revision.
    execute_process(COMMAND "${GIT}" status --porcelain --untracked-files=no WORKING_DIRECTORY "${SRC}"
      OUTPUT_VARIABLE changes ERROR_QUIET)
    if(changes)
      string(APPEND rev "-dirty")
    endif()
  endif()
endif()
if(NOT rev)
  set(rev "unknown")
endif()
file(WRITE "${OUT}.tmp" "#pragma once\n// Generated at build time by cmake/git_revision.cmake.\n#define CUDADIAG_GIT_REVISION \"${rev}\"\n")
configure_file("${OUT}.tmp" "${OUT}" COPYONLY)
file(REMOVE "${OUT}.tmp")
