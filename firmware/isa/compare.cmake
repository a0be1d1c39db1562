# isa_drift: the committed generated file COMMITTED must equal the freshly built BUILT.
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${COMMITTED} ${BUILT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${COMMITTED} is stale: it no longer matches firmware/isa/*.json. Run `make isa` and commit it.")
endif()
