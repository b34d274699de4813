# Command-line tests of hit-linsolve (included by tests/CMakeLists.txt; HIT_BIN is the programs'
# folder): --check is bit for bit against a serial Jacobi solve, at 1-4 processes.
set(_linsolve ${HIT_BIN}/hit-linsolve)

function(hit_linsolve_check name np)
  add_test(NAME cli.linsolve.${name}.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} -n ${np} ${_linsolve} --check --reps 1 --warmup 0 ${ARGN})
  set_tests_properties(cli.linsolve.${name}.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1"
                       PASS_REGULAR_EXPRESSION "check: bit-for-bit equal"
                       FAIL_REGULAR_EXPRESSION "FAILED")
endfunction()
foreach(np 1 2 3 4)
  hit_linsolve_check(n1 ${np} --n 1)
  hit_linsolve_check(n7 ${np} --n 7)
  hit_linsolve_check(n250 ${np} --n 250)
  hit_linsolve_check(float ${np} --n 120 --type float)
  # Rows re-partitioned while it runs, on emulated devices that slow down mid-run; a rank may be
  # emptied: the answer stays the serial one.
  hit_linsolve_check(balance_fpm ${np} --n 300 --iters 60 --tol 1e-14 --balance fpm
                     --devices "emu(clock=cpu,change=50@5)")
  hit_linsolve_check(balance_cpm ${np} --n 300 --balance cpm --balance-every 2)
endforeach()
hit_linsolve_check(weighted 4 --n 101 --layout weighted:w=1,3,2,1)
hit_linsolve_check(threads_emu 4 --n 160 --partition threads --devices "emu:0(slowdown=2)*2,cpu*2")
hit_linsolve_check(not_converged 2 --n 80 --iters 3)

function(hit_linsolve_error name expect args)
  add_test(NAME cli.linsolve.error.${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_linsolve} -DMPIEXEC=${MPIEXEC_EXECUTABLE}
                   -DNP=4 "-DARGS=${args}" "-DEXPECT=${expect}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
  set_tests_properties(cli.linsolve.error.${name} PROPERTIES LABELS "cli;apps" TIMEOUT 180)
endfunction()
hit_linsolve_error(n_zero "--n: '0' is not a whole number from 1" "--n|0")
hit_linsolve_error(tol_zero "--tol: '0' is not a number above 0" "--n|10|--tol|0")
hit_linsolve_error(balance_mode "--balance: auto not in {off,cpm,fpm}" "--n|10|--balance|auto")
hit_linsolve_error(balance_every "--balance-every: '0' is not a whole number from 1"
                   "--n|10|--balance|fpm|--balance-every|0")
hit_linsolve_error(not_rows "splits axis 1" "--n|10|--layout|dimBlocks:dim=1")
hit_linsolve_error(speed_change "change=soon is not valid" "--n|10|--devices|emu(change=soon)")
