# Command-line tests of hit-layout on sparse layouts (--generate, --matrix): the --json figures
# checked in Python (tests/cli/layout/sparse_check.py) under mpiexec at 1, 2 and 3 processes,
# each laying out for --procs processes, --svg, the table, and bad input on every rank.
set(_lay_sp ${HIT_BIN}/hit-layout)
set(_dir_sp ${CMAKE_CURRENT_LIST_DIR}/layout)

find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  foreach(np 1 2 3)
    add_test(NAME cli.layout.sparse.np${np}
             COMMAND ${Python3_EXECUTABLE} ${_dir_sp}/sparse_check.py ${_lay_sp}
                     ${MPIEXEC_EXECUTABLE} ${np} ${CMAKE_CURRENT_BINARY_DIR}/cli_layout_sparse)
    set_tests_properties(cli.layout.sparse.np${np} PROPERTIES LABELS "cli" TIMEOUT 300)
  endforeach()
endif()

# The table of a row layout of a 16 x 16 grid over 4 processes, computed by one.
add_test(NAME cli.layout.sparse.table
         COMMAND ${_lay_sp} --generate poisson2d:n=16 --procs 4)
set_tests_properties(cli.layout.sparse.table PROPERTIES LABELS "cli" PASS_REGULAR_EXPRESSION
  "rank +active +rows +nonzeros +ghosts +send_values +send_bytes\n +0 +yes +64 +296 +16 +16 +128\n +1 +yes +64 +312 +32 +32 +256\n.*\nactive 4 of 4; rows max 64 mean 64\\.0; edge cut 48; imbalance 1\\.022")
# --list names the sparse layout plug-ins.
add_test(NAME cli.layout.sparse.list COMMAND ${_lay_sp} --list)
set_tests_properties(cli.layout.sparse.list PROPERTIES LABELS "cli" PASS_REGULAR_EXPRESSION
  "\nsparse layouts \\(--layout with --matrix or --generate\\):\n  metis .*\n  rows ")

# ---- bad input: one line naming the value, non-zero on every rank, no hang --------------------------
function(hit_layout_sparse_error name expect args)
  add_test(NAME cli.layout.sparse.error.${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_lay_sp} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=4
                   "-DARGS=${args}" "-DEXPECT=${expect}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
endfunction()
hit_layout_sparse_error(two_inputs "give one of --shape, --matrix and --generate, not --shape and --matrix"
                        "--shape|[0:10]|--matrix|a.mtx")
hit_layout_sparse_error(three_inputs "not --shape and --matrix and --generate"
                        "--shape|[0:10]|--matrix|a.mtx|--generate|poisson2d:n=4")
hit_layout_sparse_error(missing_file "cannot read Matrix Market file '/no/such/matrix.mtx'"
                        "--matrix|/no/such/matrix.mtx|--procs|2")
hit_layout_sparse_error(unknown_layout "unknown sparse layout plug-in 'blocks' \\(registered: metis, rows\\)"
                        "--generate|poisson2d:n=4|--layout|blocks")
hit_layout_sparse_error(unknown_key "plug-in 'rows' has no parameter 'size'"
                        "--generate|poisson2d:n=4|--layout|rows:size=2")
hit_layout_sparse_error(weights "sparse layout 'metis:w=1,2': w has 2 weights, expected 3"
                        "--generate|poisson2d:n=4|--layout|metis:w=1,2|--procs|3")
hit_layout_sparse_error(generator "matrix generator 'poisson2d:n=0'" "--generate|poisson2d:n=0")
hit_layout_sparse_error(generator_name "poisson4d" "--generate|poisson4d:n=3")
hit_layout_sparse_error(svg_3d "--svg draws generated 2-D grids only .*not 'poisson3d:n=4'"
                        "--generate|poisson3d:n=4|--svg|x.svg")
hit_layout_sparse_error(svg_matrix "--svg draws generated 2-D grids only .*not --matrix a.mtx"
                        "--matrix|a.mtx|--svg|x.svg")
hit_layout_sparse_error(comm "--comm applies to --shape only" "--generate|poisson2d:n=4|--comm|halo")
hit_layout_sparse_error(ghost "--ghost applies to --shape only" "--generate|poisson2d:n=4|--ghost|1")
hit_layout_sparse_error(type "--type 'complex'" "--generate|poisson2d:n=4|--type|complex")
hit_layout_sparse_error(procs "--procs 0" "--generate|poisson2d:n=4|--procs|0")
hit_layout_sparse_error(too_many_procs "--procs 100000000: .*hitmap\\+\\+ allows at most 4194304 processes"
                        "--generate|poisson2d:n=4|--procs|100000000")
hit_layout_sparse_error(devices "malformed device spec" "--generate|poisson2d:n=4|--devices|emu:x")
