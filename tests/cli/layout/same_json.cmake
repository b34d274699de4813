# The same answer from `mpiexec -n P hit-layout ...` (procs defaults to P, only rank 0 prints) and
# from one process with `--procs P`.
#   Usage: cmake -DHIT_LAYOUT=... -DMPIEXEC=... -DNP=4 -DARGS=a|b|c -P same_json.cmake
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${MPIEXEC} -n ${NP} ${HIT_LAYOUT} ${args} --json RESULT_VARIABLE rc1
                OUTPUT_VARIABLE parallel ERROR_VARIABLE err1 TIMEOUT 120)
execute_process(COMMAND ${HIT_LAYOUT} ${args} --procs ${NP} --json RESULT_VARIABLE rc2
                OUTPUT_VARIABLE serial ERROR_VARIABLE err2 TIMEOUT 60)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "failed: mpiexec ${rc1} (${err1}), --procs ${rc2} (${err2})")
endif()
if(NOT parallel STREQUAL serial)
  message(FATAL_ERROR "different answers:\nmpiexec -n ${NP}: ${parallel}\n--procs ${NP}: ${serial}")
endif()
string(JSON procs GET "${serial}" procs)
if(NOT procs EQUAL NP)
  message(FATAL_ERROR "procs is ${procs}, expected ${NP}")
endif()
message(STATUS "same: ${serial}")
