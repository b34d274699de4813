# --trace FILE (and HIT_TRACE): one trace-event JSON file per run whose events cover every rank
# and every launch the JSON summary counts, and every task of the task runtime
# (apps/trace_check.py) at 1-4 processes; an output that cannot be written refused up front.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  foreach(np 1 2 3 4)
    add_test(NAME cli.trace.np${np}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/trace_check.py ${np}
                     ${CMAKE_CURRENT_BINARY_DIR}/trace_np${np} ${MPIEXEC_EXECUTABLE} ${HIT_BIN})
    set_tests_properties(cli.trace.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                         ENVIRONMENT "OPENBLAS_NUM_THREADS=1"
                         PASS_REGULAR_EXPRESSION "trace at ${np} processes: ok")
  endforeach()
endif()
foreach(np 1 4)
  add_test(NAME cli.trace.error.unwritable.np${np}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/hit-jacobi -DMPIEXEC=${MPIEXEC_EXECUTABLE}
                   -DNP=${np} "-DARGS=--n|32|--iters|2|--trace|/nonexistent-folder/t.json"
                   "-DEXPECT=cannot write trace \\(--trace\\) '/nonexistent-folder/t.json': folder '/nonexistent-folder' does not exist"
                   -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
  set_tests_properties(cli.trace.error.unwritable.np${np} PROPERTIES LABELS "cli;apps;bad_input"
                       TIMEOUT 180)
endforeach()
