# Command-line tests of the sparse programs. hit-cg: --check (the residual recomputed from the
# input rows, and for small matrices x against a dense serial solve) at 1-4 processes, both
# layouts, float and double, emulated devices, a 1x1 matrix, more processes than rows, --balance;
# a matrix that is not positive definite and other bad input on every rank with one line.
# hit-heat: --check against a serial run (a graph with empty rows too), and the printed sum the
# same at every process count and layout (apps/heat_sums.py).
set(_cg ${HIT_BIN}/hit-cg)
set(_heat ${HIT_BIN}/hit-heat)
set(_sparse_data ${PROJECT_SOURCE_DIR}/tests/data/sparse)
find_package(Python3 COMPONENTS Interpreter QUIET)

function(hit_sparse_check program name np)
  add_test(NAME cli.${program}.${name}.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} -n ${np} ${HIT_BIN}/hit-${program} --check --reps 1
                   --warmup 0 ${ARGN})
  set_tests_properties(cli.${program}.${name}.np${np} PROPERTIES LABELS "cli;apps;sparse"
                       TIMEOUT 300 ENVIRONMENT "OPENBLAS_NUM_THREADS=1"
                       PASS_REGULAR_EXPRESSION "check: passed" FAIL_REGULAR_EXPRESSION "FAILED")
endfunction()

foreach(np 1 2 3 4)
  hit_sparse_check(cg poisson2d_rows ${np} --generate poisson2d:n=30 --layout rows)
  hit_sparse_check(cg poisson2d_metis_float ${np} --generate poisson2d:n=30,permute=3
                   --layout metis --type float)
  hit_sparse_check(cg poisson3d_nonzeros ${np} --generate poisson3d:n=12
                   --layout rows:by=nonzeros)
  hit_sparse_check(cg poisson2d_metis ${np} --generate poisson2d:n=24,permute=7 --layout metis)
  hit_sparse_check(cg poisson2d_rows_float ${np} --generate poisson2d:n=24 --layout rows
                   --type float)
  # hit-cg refuses it (no positive diagonal: bad_input.cmake); hit-heat keeps an isolated vertex.
  hit_sparse_check(heat empty_rows_rows ${np} --graph ${_sparse_data}/empty_rows.mtx --iters 7
                   --layout rows)
  hit_sparse_check(heat grid_metis ${np} --generate poisson2d:n=40 --iters 50)
  hit_sparse_check(heat permuted_rows_float ${np} --generate poisson2d:n=33,permute
                   --layout rows --iters 20 --type float)
endforeach()
hit_sparse_check(cg one_by_one 1 --matrix ${_sparse_data}/one_by_one.mtx)
hit_sparse_check(cg more_procs_than_rows 4 --matrix ${_sparse_data}/one_by_one.mtx)
hit_sparse_check(cg more_procs_than_rows_metis 4 --generate poisson2d:n=1 --layout metis)
hit_sparse_check(heat more_procs_than_rows 4 --graph ${_sparse_data}/one_by_one.mtx
                 --layout metis --iters 5)
hit_sparse_check(heat empty_rows 3 --graph ${_sparse_data}/empty_rows.mtx --iters 7)
hit_sparse_check(cg emulated_devices 3 --generate poisson2d:n=40,permute --layout metis
                 --devices "emu:0(slowdown=2)*1,cpu*2")
hit_sparse_check(cg weighted_metis 3 --generate poisson2d:n=40,permute
                 --layout metis:w=1,2,4)
hit_sparse_check(cg balance_fpm 3 --generate poisson2d:n=60 --layout rows --balance fpm
                 --balance-every 2 --devices "emu:0(slowdown=4)*1,cpu*2")
hit_sparse_check(heat emulated_devices 2 --generate poisson2d:n=25 --iters 30
                 --devices "emu:0(slowdown=2)*1,cpu*1")
hit_sparse_check(cg rhs_file 2 --generate poisson2d:n=20 --rhs ${_sparse_data}/rhs_400.raw)
hit_sparse_check(heat init_file 3 --generate poisson2d:n=20 --iters 10
                 --init ${_sparse_data}/rhs_400.raw)

# The override: HIT_LAYOUT_MATRIX replaces the code's default, --layout replaces both.
add_test(NAME cli.cg.env_layout_override.np2
         COMMAND ${MPIEXEC_EXECUTABLE} -n 2 ${_cg} --generate poisson2d:n=12 --reps 1 --warmup 0)
set_tests_properties(cli.cg.env_layout_override.np2 PROPERTIES LABELS "cli;apps;sparse"
                     TIMEOUT 120 ENVIRONMENT "HIT_LAYOUT_MATRIX=metis"
                     PASS_REGULAR_EXPRESSION "layout metis")

if(Python3_Interpreter_FOUND)
  # The sum over the vertices and x's files, at 1-4 processes and both layouts.
  add_test(NAME cli.heat.sums_agree
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/heat_sums.py
                   ${MPIEXEC_EXECUTABLE} ${_heat} ${CMAKE_CURRENT_BINARY_DIR}/heat_sums)
  set_tests_properties(cli.heat.sums_agree PROPERTIES LABELS "cli;apps;sparse" TIMEOUT 300
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
  # --balance-models: the rows start from the stored models' partition (as hit-fpm partition
  # computes it with the mode's partitioner), listed or by {rank}.
  foreach(np 1 2 3 4)
    add_test(NAME cli.cg.balance_models.np${np}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/cg_balance_models_check.py
                     ${MPIEXEC_EXECUTABLE} ${np} ${_cg} ${HIT_BIN}/hit-fpm)
    set_tests_properties(cli.cg.balance_models.np${np} PROPERTIES LABELS "cli;apps;sparse"
                         TIMEOUT 300 ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
  endforeach()
  add_test(NAME cli.cg.x_out_file
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/cg_files.py
                   ${MPIEXEC_EXECUTABLE} ${_cg} ${CMAKE_CURRENT_BINARY_DIR}/cg_files)
  set_tests_properties(cli.cg.x_out_file PROPERTIES LABELS "cli;apps;sparse" TIMEOUT 300
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
endif()

# Bad input: one line on every rank, no hang.
hit_app_error(cg not_spd "CG broke down at iteration 2.*not symmetric positive definite"
              "--matrix|${_sparse_data}/not_spd.mtx")
hit_app_error(cg no_matrix "give the matrix: --matrix FILE.mtx or --generate" "--tol|1e-6")
hit_app_error(cg missing_file "nope.mtx" "--matrix|${_sparse_data}/nope.mtx")
hit_app_error(cg bad_generator "poisson4d" "--generate|poisson4d:n=3")
hit_app_error(cg unknown_layout "unknown sparse layout plug-in 'nope'" "--generate|poisson2d:n=4|--layout|nope")
hit_app_error(cg bad_weights "w=" "--generate|poisson2d:n=8|--layout|metis:w=1,2")
hit_app_error(cg rhs_wrong_size "rhs_400.raw" "--generate|poisson2d:n=8|--rhs|${_sparse_data}/rhs_400.raw")
hit_app_error(cg balance_every_zero "--balance-every" "--generate|poisson2d:n=8|--balance|cpm|--balance-every|0")
hit_app_error(cg balance_models_count "--balance-models: 2 files for 4 processes"
              "--generate|poisson2d:n=8|--balance|fpm|--balance-models|a.csv,b.csv")
hit_app_error(cg balance_models_off "--balance-models needs --balance cpm or fpm"
              "--generate|poisson2d:n=8|--balance-models|m{rank}.csv")
hit_app_error(cg balance_models_missing "cannot read model file '/nonexistent/m0.csv'"
              "--generate|poisson2d:n=8|--balance|cpm|--balance-models|/nonexistent/m{rank}.csv")
hit_app_error(cg balance_grid_layout "--balance re-partitions with the `rows` or `metis` layout"
              "--generate|poisson2d:n=8|--balance|fpm|--layout|blocks")
hit_app_error(heat no_graph "give the matrix: --graph FILE.mtx or --generate" "--iters|3")
hit_app_error(heat svg_of_a_file "--svg draws generated 2-D grids only"
              "--graph|${_sparse_data}/empty_rows.mtx|--svg|/tmp/hit_heat_never.svg")
hit_app_error(heat init_wrong_size "rhs_400.raw" "--generate|poisson2d:n=4|--init|${_sparse_data}/rhs_400.raw")

# The cuda bodies (the CSR kernels, spmv_dot, cuBLAS dots) on a GPU, alone and beside a host
# process; skipped where there is none (scripts/gpu-check.sh runs every test labelled cuda).
function(hit_sparse_cuda program name np devices)
  if(NOT Python3_Interpreter_FOUND)
    return()
  endif()
  add_test(NAME cli.${program}.cuda.${name}.np${np}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/on_gpu.py ${HIT_BIN}/hit-info
                   ${MPIEXEC_EXECUTABLE} -n ${np} ${HIT_BIN}/hit-${program} --check --reps 1
                   --warmup 0 --devices ${devices} ${ARGN})
  set_tests_properties(cli.${program}.cuda.${name}.np${np} PROPERTIES LABELS "cli;apps;cuda;sparse"
                       TIMEOUT 300 SKIP_REGULAR_EXPRESSION "no CUDA GPU here"
                       PASS_REGULAR_EXPRESSION "check: passed" FAIL_REGULAR_EXPRESSION "FAILED")
endfunction()
hit_sparse_cuda(cg poisson3d 1 cuda:0 --generate poisson3d:n=32)
hit_sparse_cuda(cg permuted_metis_float 2 "cuda:0,cpu" --generate poisson2d:n=64,permute
                --layout metis --type float)
hit_sparse_cuda(heat grid 2 "cuda:0,cpu" --generate poisson2d:n=64 --iters 100)
