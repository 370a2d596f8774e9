# --redact with a site key (--redact-key FILE, CUDADIAG_REDACT_KEY_FILE, CUDADIAG_REDACT_KEY)
# and without one, through the real binary: one key gives one token per host across
# reports, no key gives tokens that differ between reports (and compare says they do not
# compare), and a key that cannot be used is exit 2 naming it. Needs BIN and WORK.
cmake_policy(SET CMP0054 NEW)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/site.key "a site key of more than sixteen bytes\n")
file(CHMOD ${WORK}/site.key PERMISSIONS OWNER_READ OWNER_WRITE)
file(WRITE ${WORK}/empty.key "")
file(CHMOD ${WORK}/empty.key PERMISSIONS OWNER_READ OWNER_WRITE)
file(WRITE ${WORK}/shared.key "a site key of more than sixteen bytes\n")
file(CHMOD ${WORK}/shared.key PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# cudadiag(NAME [ENV var=value...] ARGS ...): exit code and output in NAME_rc / NAME_out.
function(cudadiag name)
  cmake_parse_arguments(A "" "" "ENV;ARGS" ${ARGN})
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=CUDADIAG_REDACT_KEY --unset=CUDADIAG_REDACT_KEY_FILE
                          ${A_ENV} ${BIN} ${A_ARGS}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${name}_rc "${rc}" PARENT_SCOPE)
  # Text views wrap at 80 columns: continuation lines are joined back for matching.
  string(REGEX REPLACE "\n +" " " joined "${out}${err}")
  set(${name}_out "${joined}" PARENT_SCOPE)
endfunction()

# redacted_env(NAME [ENV ...] [ARGS ...]): `env -o WORK/NAME.json` with those; the
# report's hostname token in NAME_host, its redaction mode in NAME_mode.
function(redacted_env name)
  cmake_parse_arguments(A "" "" "ENV;ARGS" ${ARGN})
  cudadiag(run ENV ${A_ENV} ARGS env -q -o ${WORK}/${name}.json ${A_ARGS})
  if(NOT run_rc MATCHES "^[013]$")
    message(FATAL_ERROR "${name}: exit ${run_rc}\n${run_out}")
  endif()
  file(READ ${WORK}/${name}.json doc)
  string(JSON host GET "${doc}" host hostname)
  string(JSON mode GET "${doc}" redaction mode)
  if(NOT host MATCHES "^redacted:[0-9a-f]+$")
    message(FATAL_ERROR "${name}: hostname '${host}' is not a token")
  endif()
  string(LENGTH "${host}" n)
  if(NOT n EQUAL 25)
    message(FATAL_ERROR "${name}: '${host}' is not 64 bits of HMAC (16 hex digits)")
  endif()
  set(${name}_host "${host}" PARENT_SCOPE)
  set(${name}_mode "${mode}" PARENT_SCOPE)
endfunction()

include(${CMAKE_CURRENT_LIST_DIR}/check_helpers.cmake)

# One key, three ways to give it: one token for the host.
redacted_env(flag ARGS --redact-key ${WORK}/site.key)
redacted_env(flag_again ARGS --redact --redact-key ${WORK}/site.key)
redacted_env(file_env ENV CUDADIAG_REDACT_KEY_FILE=${WORK}/site.key ARGS --redact)
redacted_env(key_env ENV "CUDADIAG_REDACT_KEY=a site key of more than sixteen bytes" ARGS --redact)
expect_eq("mode with a key" "${flag_mode}" "keyed")
expect_eq("the same key, the same token" "${flag_again_host}" "${flag_host}")
expect_eq("the key from CUDADIAG_REDACT_KEY_FILE" "${file_env_host}" "${flag_host}")
expect_eq("the key from CUDADIAG_REDACT_KEY" "${key_env_host}" "${flag_host}")

# No key: a token per report.
redacted_env(plain_a ARGS --redact)
redacted_env(plain_b ARGS --redact)
expect_eq("mode without a key" "${plain_a_mode}" "per_report")
if(plain_a_host STREQUAL plain_b_host OR plain_a_host STREQUAL flag_host)
  message(FATAL_ERROR "reports without a key share the token ${plain_a_host}")
endif()

# compare says when tokens do not compare, and is quiet when they do.
cudadiag(cmp_plain ARGS compare ${WORK}/plain_a.json ${WORK}/plain_b.json)
if(NOT cmp_plain_out MATCHES "redacted values are not comparable across these reports \\(random tokens per report")
  message(FATAL_ERROR "compare of per-report tokens says nothing of it:\n${cmp_plain_out}")
endif()
cudadiag(cmp_mixed ARGS compare ${WORK}/flag.json ${WORK}/plain_a.json)
if(NOT cmp_mixed_out MATCHES "not comparable across these reports \\(key id [0-9a-f]+: ")
  message(FATAL_ERROR "compare of a keyed and a per-report report says nothing of it:\n${cmp_mixed_out}")
endif()
cudadiag(cmp_keyed ARGS compare ${WORK}/flag.json ${WORK}/file_env.json)
if(cmp_keyed_out MATCHES "not comparable")
  message(FATAL_ERROR "compare of one key's reports calls them not comparable:\n${cmp_keyed_out}")
endif()

# Keys that cannot be used: exit 2 before any work, naming the file or the variable.
foreach(bad "missing|--redact-key;${WORK}/none.key|--redact-key '${WORK}/none.key': cannot read the redaction key"
            "empty|--redact-key;${WORK}/empty.key|the redaction key is empty"
            "shared|--redact-key;${WORK}/shared.key|the redaction key is readable by every user"
            "directory|--redact-key;${WORK}|must be a regular file")
  string(REPLACE "|" ";" parts "${bad}")
  list(GET parts 0 what)
  list(GET parts 1 flag)
  list(GET parts 2 file)
  list(GET parts 3 message)
  cudadiag(bad ARGS repro --case fault.oob-write ${flag} ${file})
  expect_eq("exit code for the ${what} key" "${bad_rc}" "2")
  string(FIND "${bad_out}" "${message}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what} key: the message does not say '${message}':\n${bad_out}")
  endif()
endforeach()
cudadiag(short ENV CUDADIAG_REDACT_KEY=short ARGS env --redact)
expect_eq("exit code for a short CUDADIAG_REDACT_KEY" "${short_rc}" "2")
if(NOT short_out MATCHES "CUDADIAG_REDACT_KEY: the redaction key has 5 bytes, fewer than 16")
  message(FATAL_ERROR "short key: ${short_out}")
endif()
# Without --redact the environment's key is not read.
cudadiag(unused ENV CUDADIAG_REDACT_KEY=short ARGS env -q)
if(NOT unused_rc MATCHES "^[013]$")
  message(FATAL_ERROR "without --redact a bad CUDADIAG_REDACT_KEY was read: exit ${unused_rc}\n${unused_out}")
endif()
