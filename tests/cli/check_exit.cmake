# Runs SIM with ARGS (a ;-list) and checks its exit status and that its output matches REGEX.
execute_process(COMMAND ${SIM} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL ${STATUS})
  message(FATAL_ERROR "exit status ${rc}, expected ${STATUS}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT "${out}${err}" MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
message(STATUS "exit ${rc} as expected; ${err}")
