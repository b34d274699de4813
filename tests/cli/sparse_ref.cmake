# Command-line tests of ref-csr-cg, the hand-written MPI CSR CG of the sparse benchmark:
# --check (the residual b - A x recomputed from a fresh generation of the rows and the whole x,
# apart from the solver's numbering and exchange) at 1 and 3 processes, both generators, natural
# and permuted, both ghost exchanges, more processes than rows; the matrix (rows, nonzeros, every
# process's ghost count) against an independent Python generator; a solve stopped early fails its
# check; bad options are one error line on every rank. Nothing of PETSc here (CI has none).
set(_csr_cg ${HIT_BIN}/ref-csr-cg)
set(_csr_cg_errcheck ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
find_package(Python3 COMPONENTS Interpreter QUIET)

function(hit_csr_cg_check name np)
  add_test(NAME cli.ref-csr-cg.${name}.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} -n ${np} ${_csr_cg} --check --reps 1 --warmup 0 ${ARGN})
  set_tests_properties(cli.ref-csr-cg.${name}.np${np} PROPERTIES LABELS "cli;bench" TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "check: passed" FAIL_REGULAR_EXPRESSION "FAILED")
endfunction()
foreach(np 1 3)
  hit_csr_cg_check(poisson2d ${np} --generate poisson2d:n=20)
  hit_csr_cg_check(poisson3d_permuted ${np} --generate poisson3d:n=9,permute=3)
  hit_csr_cg_check(poisson2d_permuted_neighbor ${np} --generate poisson2d:n=17,permute
                   --exchange neighbor)
  hit_csr_cg_check(poisson3d_neighbor ${np} --generate poisson3d:n=8 --exchange neighbor --tol 1e-12)
endforeach()
# One row on three processes: two hold nothing and still join every reduction.
hit_csr_cg_check(one_row 3 --generate poisson2d:n=1)

# Stopped after 3 iterations: not converged, so the check fails (exit status 1).
add_test(NAME cli.ref-csr-cg.not_converged_fails.np3
         COMMAND ${MPIEXEC_EXECUTABLE} -n 3 ${_csr_cg} --check --reps 1 --warmup 0
                 --generate poisson2d:n=20 --max-iters 3)
set_tests_properties(cli.ref-csr-cg.not_converged_fails.np3 PROPERTIES LABELS "cli;bench"
                     TIMEOUT 60 PASS_REGULAR_EXPRESSION "check: FAILED")

if(Python3_Interpreter_FOUND)
  foreach(case "poisson2d:n=12,permute=5;3" "poisson3d:n=5;3" "poisson3d:n=6,permute;4"
          "poisson2d:n=7,permute=18446744073709551615;2" "poisson2d:n=9;1")
    list(GET case 0 spec)
    list(GET case 1 np)
    string(REGEX REPLACE "[:=,]" "_" id "${spec}")
    add_test(NAME cli.ref-csr-cg.matrix.${id}.np${np}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sparse_ref/ghosts_check.py
                     ${spec} ${np} -- ${MPIEXEC_EXECUTABLE} -n ${np} ${_csr_cg} --generate ${spec}
                     --check --json --reps 1 --warmup 0)
    set_tests_properties(cli.ref-csr-cg.matrix.${id}.np${np} PROPERTIES LABELS "cli;bench"
                         TIMEOUT 120 PASS_REGULAR_EXPRESSION "ghosts check: passed")
  endforeach()
endif()

function(hit_csr_cg_error name expect args)
  add_test(NAME cli.ref-csr-cg.error.${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_csr_cg} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=3
                   "-DARGS=${args}" "-DEXPECT=${expect}" -P ${_csr_cg_errcheck})
  set_tests_properties(cli.ref-csr-cg.error.${name} PROPERTIES LABELS "cli;bench" TIMEOUT 60)
endfunction()
hit_csr_cg_error(unknown_generator "unknown generator 'poisson4d'" "--generate|poisson4d:n=4")
hit_csr_cg_error(no_size "'poisson2d:permute' needs n=K" "--generate|poisson2d:permute")
hit_csr_cg_error(zero_size "n must be from 1 to" "--generate|poisson3d:n=0")
hit_csr_cg_error(bad_seed "permute must be a whole number >= 0, got '-1'"
                 "--generate|poisson2d:n=4,permute=-1")
hit_csr_cg_error(bad_tol "--tol must be a number > 0, got 'x'" "--tol|x")
hit_csr_cg_error(bad_exchange "--exchange must be p2p or neighbor" "--exchange|alltoall")
hit_csr_cg_error(unknown_option "unknown option '--n'" "--n|4")
