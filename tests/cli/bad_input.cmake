# Bad input to the sparse programs and the advisor, one test per kind of answer that once broke the
# error policy, at 1 and 4 processes: every rank exits non-zero, stderr holds exactly one line
# `<program>: error: ...` naming the cause (common/error_check.cmake), and nothing hangs.
#   1. a problem larger than the host: refused with its figures, never std::bad_alloc;
#   2. a NaN or an infinity in an input vector, named with its file and index;
#   3. a CG matrix without a positive diagonal (singular or indefinite), named with its rows;
#   4. out-of-memory advice that the program can follow;
#   5. an advisor that priced no candidate, or a shape the program cannot run;
#   6. --calibrate result files checked like any input, naming the file and the field;
#   7. messages naming the options that exist.
set(_bad ${PROJECT_SOURCE_DIR}/tests/data/bad_input)
set(_bad_sparse ${PROJECT_SOURCE_DIR}/tests/data/sparse)
set(_bad_check ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)

# hit_bad_input(program name expect args [NOT regex] [ENV var=value]): the test at 1 and 4
# processes; NOT: a regex the output must not match (advice the program cannot follow).
function(hit_bad_input program name expect args)
  cmake_parse_arguments(BAD "" "NOT;ENV" "" ${ARGN})
  foreach(np 1 4)
    set(test cli.${program}.bad_input.${name}.np${np})
    add_test(NAME ${test}
             COMMAND ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/hit-${program}
                     -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${np} "-DARGS=${args}"
                     "-DEXPECT=${expect}" -P ${_bad_check})
    set_tests_properties(${test} PROPERTIES LABELS "cli;apps;bad_input" TIMEOUT 180)
    if(BAD_NOT)
      set_tests_properties(${test} PROPERTIES FAIL_REGULAR_EXPRESSION "${BAD_NOT}")
    endif()
    if(BAD_ENV)
      set_tests_properties(${test} PROPERTIES ENVIRONMENT "${BAD_ENV}")
    endif()
  endforeach()
endfunction()

# 1. Larger than the host: the estimate, with the figures, before anything is allocated.
hit_bad_input(cg huge_size_line
              "line 3: the size line announces 1000000000000 rows and 1 entries.*need at least .*TiB on a process, more than the .* of host memory a process has"
              "--matrix|${_bad}/huge_size_line.mtx")
hit_bad_input(cg generated_too_large
              "generate poisson2d:n=1000000: its 1000000000000 rows .*need at least .*TiB on a process"
              "--generate|poisson2d:n=1000000")
hit_bad_input(heat generated_too_large
              "generate poisson3d:n=100000: its 1000000000000000 rows .*need at least .*TiB on a process"
              "--generate|poisson3d:n=100000|--iters|1")
hit_bad_input(layout advise_too_many_procs "--procs 1000000000: hitmap\\+\\+ allows at most 4194304 processes"
              "--advise|--app|jacobi|--shape|[0:64][0:64]|--procs|1000000000")
hit_bad_input(layout advise_too_large
              "--advise for 4194304 processes: its dry runs \\(one candidate at least\\) need at least 1.2. GiB on a process, more than the .* of host memory a process has \\(a node of 1.00 GiB"
              "--advise|--app|jacobi|--shape|[0:4096][0:4096]|--procs|4194304"
              ENV "HIT_HOST_MEMORY=1GiB")
hit_bad_input(layout sparse_too_large "generate poisson2d:n=1000000: its 1000000000000 rows"
              "--generate|poisson2d:n=1000000")

# 2. Non-finite values in an input vector: the file and the index, whatever the program.
hit_bad_input(cg rhs_nan "raw vector file '.*nan_at_5.raw' holds NaN at index 5"
              "--generate|poisson2d:n=4|--rhs|${_bad}/nan_at_5.raw")
hit_bad_input(heat init_nan "raw vector file '.*nan_at_5.raw' holds NaN at index 5"
              "--generate|poisson2d:n=4|--iters|3|--init|${_bad}/nan_at_5.raw")
hit_bad_input(heat init_infinite "raw vector file '.*inf_at_3.raw' holds an infinity at index 3"
              "--generate|poisson2d:n=4|--iters|3|--init|${_bad}/inf_at_3.raw")

# 3. CG's matrix without a positive diagonal: refused, the rows named (1-based, as in the file).
hit_bad_input(cg empty_rows
              "row 4 of .*empty_rows.mtx has no diagonal entry \\(or a zero one\\) \\(2 such rows: 4, 5;"
              "--matrix|${_bad_sparse}/empty_rows.mtx")
hit_bad_input(cg negative_diagonal "row 2 of .*negative_diagonal.mtx has the diagonal -2, not positive \\(1 such row: 2;"
              "--matrix|${_bad}/negative_diagonal.mtx")

# A matrix that is not square, to the programs that need one (the advisor's answer is in 5).
hit_bad_input(cg not_square "CG needs a square matrix: .*nonsquare.mtx is 3 x 4"
              "--matrix|${_bad}/nonsquare.mtx")
hit_bad_input(heat not_square "a graph needs a square matrix: .*nonsquare.mtx is 3 x 4"
              "--graph|${_bad}/nonsquare.mtx|--iters|3")

# 4. Out of device memory: advice this program can take.
hit_bad_input(cg device_memory "device emu:0.* is out of memory.*a device with more memory"
              "--generate|poisson2d:n=200|--devices|emu:0(mem=64KiB)" NOT "outOfCore")
hit_bad_input(heat device_memory_out_of_core "partition 'outOfCore' of .*: not even one row fits the device budget.*a device with more memory"
              "--generate|poisson2d:n=200|--iters|2|--partition|outOfCore|--devices|emu:0(mem=64KiB)"
              NOT "use the outOfCore|or the outOfCore")

# 5. The advisor: nothing priced, or a shape the program cannot run, is an error saying why.
hit_bad_input(layout advise_cg_not_square "--advise --app cg: hit-cg solves square matrices, .*nonsquare.mtx is 3 x 4"
              "--advise|--app|cg|--matrix|${_bad}/nonsquare.mtx")
hit_bad_input(layout advise_cholesky_not_square
              "--shape \\[0:64\\]\\[0:32\\]: hit-cholesky runs square arrays, \\[0:n\\]\\[0:n\\] \\(its --n\\); this one is 64 x 32"
              "--advise|--app|cholesky|--shape|[0:64][0:32]")
hit_bad_input(layout advise_jacobi_not_square "hit-jacobi runs square arrays.*64 x 32"
              "--advise|--app|jacobi|--shape|[0:64][0:32]")
hit_bad_input(layout advise_jacobi_offset "hit-jacobi runs arrays from 0 with unit steps, \\[0:n\\]; axis 0 is \\[5:69\\]"
              "--advise|--app|jacobi|--shape|[5:69][0:64]")
hit_bad_input(layout advise_network_class
              "--network .*node_class_only.txt: the model has no 'network' link class, and the 4 processes lie on 2 nodes \\(--nodes 2\\): measure it with hit-fpm network --nodes K"
              "--advise|--app|jacobi|--shape|[0:64][0:64]|--procs|4|--nodes|2|--network|${_bad}/node_class_only.txt")

# 6. Result files given to --calibrate: the file and the field.
hit_bad_input(layout calibrate_ranks "--calibrate .*ranks_mismatch.json: ranks is 2 but devices lists 4"
              "--advise|--app|jacobi|--shape|[0:64][0:64]|--procs|4|--calibrate|${_bad}/ranks_mismatch.json")
hit_bad_input(layout calibrate_negative_compute
              "--calibrate .*negative_compute.json: per_rank\\[2\\].compute_s is -0.25, not a time in seconds \\(0 or more\\)"
              "--advise|--app|jacobi|--shape|[0:64][0:64]|--procs|4|--calibrate|${_bad}/negative_compute.json")
hit_bad_input(layout calibrate_unknown_layout "--calibrate .*unknown_layout.json: .*unknown layout plug-in 'stripes'"
              "--advise|--app|jacobi|--shape|[0:64][0:64]|--procs|4|--calibrate|${_bad}/unknown_layout.json")

# 7. Messages that name the options that exist.
foreach(flag "top|-1" "iters|-1" "nodes|-1" "host-cores|-2" "panel|0")
  string(REPLACE "|" ";" parts "${flag}")
  list(GET parts 0 key)
  list(GET parts 1 value)
  hit_bad_input(layout advise_${key}_${value} "--${key}: '${value}' is not a whole number from 1 to"
                "--advise|--app|summa|--shape|[0:64][0:64]|--${key}|${value}" NOT "not in range")
endforeach()
hit_bad_input(layout advise_cg_without_matrix "--advise --app cg needs the matrix: --matrix FILE.mtx or --generate SPEC"
              "--advise|--app|cg")
hit_bad_input(cg svg_3d_grid "--svg draws generated 2-D grids only \\(--generate poisson2d:...\\), not 'poisson3d:n=4'"
              "--generate|poisson3d:n=4|--svg|bad_input_never.svg")
hit_bad_input(cg layout_flag "layout of 'matrix' set to 'nope' by --layout: unknown sparse layout plug-in 'nope'"
              "--generate|poisson2d:n=4|--layout|nope")
hit_bad_input(heat layout_flag "layout of 'graph' set to 'nope' by --layout: unknown sparse layout plug-in 'nope'"
              "--generate|poisson2d:n=4|--layout|nope")
hit_bad_input(jacobi layout_flag "layout of 'grid' set to 'nope' by --layout: unknown layout plug-in 'nope'"
              "--n|8|--layout|nope")
hit_bad_input(linsolve layout_flag "layout of 'a' set to 'nope' by --layout: unknown layout plug-in 'nope'"
              "--n|8|--layout|nope")
hit_bad_input(jacobi layout_variable "layout of 'grid' set to 'nope' by HIT_LAYOUT_GRID: unknown layout plug-in"
              "--n|8" ENV "HIT_LAYOUT_GRID=nope")
hit_bad_input(cannon partition_flag "partition of 'c' set to 'nope' by --partition: unknown partition plug-in 'nope'"
              "--n|8|--partition|nope")
