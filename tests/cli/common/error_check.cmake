# Bad input to a hitmap++ program under `mpiexec -n NP` (with a timeout, so a hang fails): every
# rank exits non-zero, and stderr holds exactly one line, `<program>: error: ...`, which matches
# EXPECT (a regex naming the value).
#   Usage: cmake -DPROGRAM=... -DMPIEXEC=... -DNP=4 -DARGS=a|b -DEXPECT=regex -P error_check.cmake
string(REPLACE "|" ";" args "${ARGS}")
# A shell around each rank reports that rank's exit status on stdout.
execute_process(COMMAND ${MPIEXEC} -n ${NP} sh -c "\"$0\" \"$@\"; echo \"exit=$?\"" ${PROGRAM} ${args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(rc MATCHES "timeout|Process terminated")
  message(FATAL_ERROR "${PROGRAM} ${args} did not finish: ${rc}")
endif()
string(REGEX MATCHALL "exit=[0-9]+" statuses "${out}")
list(LENGTH statuses n)
if(NOT n EQUAL NP)
  message(FATAL_ERROR "expected ${NP} exit statuses, got ${n}: ${out}\n${err}")
endif()
foreach(s ${statuses})
  if(s STREQUAL "exit=0")
    message(FATAL_ERROR "a rank exited 0 for bad input ${args}: ${statuses}\n${err}")
  endif()
endforeach()
# Nothing else on stdout: no MPI or UCX report of messages abandoned after the failure.
string(REGEX REPLACE "exit=[0-9]+\n?" "" rest "${out}")
string(STRIP "${rest}" rest)
if(NOT rest STREQUAL "")
  message(FATAL_ERROR "expected nothing on stdout but the exit statuses, got:\n${rest}")
endif()
string(STRIP "${err}" err)
if(err MATCHES "\n")
  message(FATAL_ERROR "expected one line on stderr, got:\n${err}")
endif()
get_filename_component(name "${PROGRAM}" NAME)
if(NOT err MATCHES "^${name}: error: ")
  message(FATAL_ERROR "expected '${name}: error: ...', got: ${err}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "the message does not match '${EXPECT}': ${err}")
endif()
message(STATUS "${statuses}: ${err}")
