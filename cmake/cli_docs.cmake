# cmake -DBIN=cudadiag -DKIND=man|bash -DOUT=FILE -P cli_docs.cmake: one document made
# from the binary's own option parser (`cudadiag docs KIND`), written to OUT.
get_filename_component(_dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${_dir})
execute_process(COMMAND ${BIN} docs ${KIND} OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "${BIN} docs ${KIND}: exit ${rc}: ${err}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
