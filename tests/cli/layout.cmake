# Command-line tests of hit-layout (tools/layout): the table, --json (checked value by value with
# cmake's string(JSON)), --svg, --list, the same answer under mpiexec and with --procs, bad input
# on every rank, and an external plug-in built against the installed library.
set(_lay ${HIT_BIN}/hit-layout)
set(_dir ${CMAKE_CURRENT_LIST_DIR}/layout)
set(_np4 ${MPIEXEC_EXECUTABLE} -n 4)

# ---- the table -----------------------------------------------------------------------------------
add_test(NAME cli.layout.table COMMAND ${_lay} --shape [0:10] --procs 3)
set_tests_properties(cli.layout.table PROPERTIES PASS_REGULAR_EXPRESSION
  "0 +\\(0\\) +yes +\\[0:4\\] +4 +32\n +1 +\\(1\\) +yes +\\[4:7\\] +3 +24\n +2 +\\(2\\) +yes +\\[7:10\\] +3 +24\nactive 3 of 3")
add_test(NAME cli.layout.table_inactive COMMAND ${_lay} --shape [0:2][0:5] --procs 4 --type float)
set_tests_properties(cli.layout.table_inactive PROPERTIES PASS_REGULAR_EXPRESSION
  "2 +\\(2\\) +no +- +0 +0\n +3 +\\(3\\) +no +- +0 +0\nactive 2 of 4; elements max 5 mean 5.0")

# ---- --json --------------------------------------------------------------------------------------
function(hit_layout_json name args)
  add_test(NAME cli.layout.json.${name}
           COMMAND ${CMAKE_COMMAND} -DHIT_LAYOUT=${_lay} "-DARGS=${args}" ${ARGN}
                   -P ${_dir}/json_check.cmake)
endfunction()
hit_layout_json(blocks_1d "--shape|[0:10]|--procs|3" -DPROCS=3 -DTOPOLOGY_NAME=array
                -DTOPOLOGY_DIMS=3 -DELEMENTS=4,3,3 -DBYTES=32,24,24 -DBLOCKS0=[0:4] -DSIZE=10)
hit_layout_json(blocks_2d "--shape|[0:10][0:7]|--procs|6|--topology|mesh2d" -DTOPOLOGY_DIMS=3,2
                -DELEMENTS=16,12,12,9,12,9 -DBLOCKS0=[0:4][0:4])
hit_layout_json(inactive "--shape|[0:2]|--procs|5" -DELEMENTS=1,1,0,0,0 -DINACTIVE=2,3,4)
hit_layout_json(strided_negative "--shape|[-9:9:3][0:4]|--procs|4|--layout|cyclic" -DSIZE=24
                -DBLOCKS0=[-9:4:12][0:4] -DELEMENTS=8,8,4,4)
hit_layout_json(three_d "--shape|[0:4][0:3][0:5]|--procs|4|--topology|mesh:dims=2x2"
                -DELEMENTS=20,10,20,10 "-DBLOCKS0=[0:2][0:2][0:5]")
hit_layout_json(block_cyclic "--shape|[0:10]|--procs|2|--layout|blockCyclic:b=2"
                "-DBLOCKS0=[0:2] [4:6] [8:10]" -DELEMENTS=6,4)
hit_layout_json(weighted "--shape|[0:8][0:2]|--procs|3|--layout|weighted:w=1,2,1" -DELEMENTS=4,8,4)
hit_layout_json(blocks_lb_seed "--shape|[0:100][0:100]|--procs|4|--topology|square|--layout|blocksLB:factor=0.75,fast=cuda:0|--devices|cuda:0*3,cuda:1"
                -DELEMENTS=3750,3750,1250,1250 -DTOPOLOGY_NAME=square)
hit_layout_json(pad_ghost "--shape|[0:10]|--procs|3|--pad|--ghost|1|--type|int32" -DBYTES=24,24,24)
hit_layout_json(shift "--shape|[0:9][0:6]|--procs|4|--topology|square|--comm|shift:axis=1"
                -DSEND_BYTES=120,120,96,96 -DBYTES=120,120,96,96)
hit_layout_json(shift_pad "--shape|[0:9][0:6]|--procs|4|--topology|square|--pad|--comm|shift:axis=0,offset=1"
                -DSEND_BYTES=120,120,120,120 -DBYTES=120,120,120,120)
hit_layout_json(halo "--shape|[0:10][0:10]|--procs|4|--topology|square|--comm|halo:width=2"
                -DSEND_BYTES=160,160,160,160)
hit_layout_json(bcast "--shape|[0:6][0:6]|--procs|4|--topology|square|--comm|bcast:axis=1,root=1"
                -DSEND_BYTES=0,72,0,72)

# --comm halo against the estimate computed in Python from the printed blocks (every face against
# every block), on grids, rows, rectangles, strided and multi-block layouts.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.layout.halo_bytes
           COMMAND ${Python3_EXECUTABLE} ${_dir}/halo_check.py ${_lay})
  set_tests_properties(cli.layout.halo_bytes PROPERTIES LABELS "cli" TIMEOUT 120)
endif()
# The estimate looks at each rank's neighbours only: 65 536 ranks take a second or two, where
# matching every face against every block took minutes.
add_test(NAME cli.layout.halo_65536
         COMMAND ${_lay} --shape [0:65536][0:65536] --topology mesh2d --layout blocks
                 --comm halo --procs 65536)
set_tests_properties(cli.layout.halo_65536 PROPERTIES LABELS "cli" TIMEOUT 60
  PASS_REGULAR_EXPRESSION "65535 +\\(255,255\\) +yes +\\[65280:65536\\]\\[65280:65536\\] +65536 +524288 +4096\nactive 65536 of 65536")

# ---- --svg ---------------------------------------------------------------------------------------
add_test(NAME cli.layout.svg COMMAND ${CMAKE_COMMAND} -DHIT_LAYOUT=${_lay}
         -DOUT=${CMAKE_CURRENT_BINARY_DIR}/cli_layout_svg -DRANKS=4
         "-DARGS=--shape|[0:12][0:18]|--procs|4|--topology|square|--layout|blocksLB:factor=0.75,fast=0,1"
         -P ${_dir}/svg_check.cmake)
add_test(NAME cli.layout.svg_1d COMMAND ${CMAKE_COMMAND} -DHIT_LAYOUT=${_lay}
         -DOUT=${CMAKE_CURRENT_BINARY_DIR}/cli_layout_svg_1d -DRANKS=3
         "-DARGS=--shape|[-5:30:2]|--procs|3|--layout|weighted:w=1,2,3" -P ${_dir}/svg_check.cmake)
add_test(NAME cli.layout.svg_unwritable
         COMMAND ${_lay} --shape [0:4] --procs 2 --svg ${CMAKE_CURRENT_BINARY_DIR}/no/such/dir/x.svg)
set_tests_properties(cli.layout.svg_unwritable PROPERTIES WILL_FAIL TRUE)

# ---- --list --------------------------------------------------------------------------------------
add_test(NAME cli.layout.list COMMAND ${_lay} --list)
set(_list_re "topologies")
foreach(item "\n  array " "\n  mesh " "dims=\\.\\.\\.: " "\n  mesh2d " "\n  square " "\nlayouts")
  string(APPEND _list_re ".*${item}")
endforeach()
foreach(item "blockCyclic " "b=\\.\\.\\.: " "blocks " "blocksLB " "factor=0\\.5: " "axis=0: "
             "fast=\\.\\.\\.: " "cyclic " "dimBlocks " "dim=0: " "weighted " "w=\\.\\.\\.: "
             "\npartitions" "\ncommunications \\(--comm\\): shift")
  string(APPEND _list_re ".*${item}")
endforeach()
set_tests_properties(cli.layout.list PROPERTIES PASS_REGULAR_EXPRESSION "${_list_re}")

# ---- mpiexec -n 4 and --procs 4 agree --------------------------------------------------------------
function(hit_layout_same name args)
  add_test(NAME cli.layout.same.${name}
           COMMAND ${CMAKE_COMMAND} -DHIT_LAYOUT=${_lay} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=4
                   "-DARGS=${args}" -P ${_dir}/same_json.cmake)
endfunction()
hit_layout_same(blocks "--shape|[0:10][0:7]|--topology|mesh2d")
hit_layout_same(blocks_lb "--shape|[0:100][0:64]|--topology|square|--layout|blocksLB:factor=0.8|--devices|cuda:0*2,cpu*2|--comm|shift:axis=1")
hit_layout_same(cyclic_halo "--shape|[-3:40:3]|--layout|cyclic|--comm|halo")

# ---- bad input: one line naming the value, non-zero on every rank, no hang --------------------------
function(hit_layout_error name expect args)
  add_test(NAME cli.layout.error.${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_lay} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=4
                   "-DARGS=${args}" "-DEXPECT=${expect}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
endfunction()
hit_layout_error(shape "cannot parse shape '\\[0:x\\]'" "--shape|[0:x]")
hit_layout_error(no_shape "--shape is required" "--procs|2")
hit_layout_error(unknown_layout "unknown layout plug-in 'stripes' \\(registered: .*blocksLB.*weighted"
                 "--shape|[0:10]|--layout|stripes")
hit_layout_error(unknown_topology "unknown topology plug-in 'torus' \\(registered: .*mesh2d"
                 "--shape|[0:10]|--topology|torus")
hit_layout_error(unknown_key "plug-in 'blocks' has no parameter 'size' \\(allowed: none\\)"
                 "--shape|[0:10]|--layout|blocks:size=2")
hit_layout_error(malformed_spec "malformed plug-in spec 'blocks:'" "--shape|[0:10]|--layout|blocks:")
hit_layout_error(weight_zero "weight 0 \\(position 1 of w\\) is not positive"
                 "--shape|[0:10]|--layout|weighted:w=1,0,1,1")
hit_layout_error(weight_count "w has 3 weights, expected 4"
                 "--shape|[0:10]|--layout|weighted:w=1,2,3")
hit_layout_error(weight_text "w='1,x' is not a comma-separated list of numbers"
                 "--shape|[0:10]|--layout|weighted:w=1,x")
hit_layout_error(factor "factor=1.5 is not a fraction" "--shape|[0:10]|--layout|blocksLB:factor=1.5")
hit_layout_error(square_of_3 "needs a square number of processes, got 3 \\(nearest squares: 1 and 4\\)"
                 "--shape|[0:10][0:10]|--topology|square|--procs|3")
hit_layout_error(rank_mismatch "shape \\[0:10\\] has 1 axis, topology square 2x2"
                 "--shape|[0:10]|--topology|square")
hit_layout_error(mesh_dims "dims='2y2'" "--shape|[0:10][0:10]|--topology|mesh:dims=2y2")
hit_layout_error(type "--type 'complex'" "--shape|[0:10]|--type|complex")
hit_layout_error(procs "--procs 0" "--shape|[0:10]|--procs|0")
hit_layout_error(comm "--comm 'shift' needs axis" "--shape|[0:10]|--comm|shift")
hit_layout_error(comm_name "unknown communication 'reduce'" "--shape|[0:10]|--comm|reduce")
hit_layout_error(devices "gpu" "--shape|[0:10]|--devices|gpu*4")

# ---- the advisor (--advise, docs/advisor.md) ------------------------------------------------------
add_test(NAME cli.layout.advise
         COMMAND python3 ${_dir}/advise_check.py ${HIT_BIN} ${MPIEXEC_EXECUTABLE})
set_tests_properties(cli.layout.advise PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
# Any program priced from its own steps (--hit-advise), against the formula of the same run.
add_test(NAME cli.layout.program_advise
         COMMAND python3 ${_dir}/program_advise_check.py ${HIT_BIN} ${MPIEXEC_EXECUTABLE})
set_tests_properties(cli.layout.program_advise PROPERTIES TIMEOUT 300)
hit_layout_error(advise_no_app "--advise needs --app cannon\\|summa" "--advise|--shape|[0:64][0:64]")
hit_layout_error(advise_app "--app 'lu': the advisor predicts cannon, summa, jacobi, cg and cholesky"
                 "--advise|--app|lu|--shape|[0:64][0:64]")
hit_layout_error(advise_cg_shape "--app cg needs --matrix or --generate"
                 "--advise|--app|cg|--shape|[0:64][0:64]")
hit_layout_error(advise_dense_matrix "--app jacobi needs --shape"
                 "--advise|--app|jacobi|--generate|poisson2d:n=8")
hit_layout_error(advise_layout "--advise tries every layout and topology that applies: drop --layout"
                 "--advise|--app|jacobi|--shape|[0:64][0:64]|--layout|blocks")
hit_layout_error(advise_only "--app, --models, --network and --calibrate apply to --advise"
                 "--app|jacobi|--shape|[0:64][0:64]")
hit_layout_error(advise_models_count "--models: 2 files for 4 processes"
                 "--advise|--app|jacobi|--shape|[0:64][0:64]|--models|a.csv,b.csv")
hit_layout_error(advise_calibrate_missing "--calibrate no-such.json: cannot read the file"
                 "--advise|--app|jacobi|--shape|[0:64][0:64]|--calibrate|no-such.json")
hit_layout_error(advise_calibrate_not_json "--calibrate .*: not a program's --json result"
                 "--advise|--app|jacobi|--shape|[0:64][0:64]|--calibrate|${CMAKE_CURRENT_LIST_DIR}/layout.cmake")
hit_layout_error(advise_network_missing "no-such-net.txt"
                 "--advise|--app|jacobi|--shape|[0:64][0:64]|--network|no-such-net.txt")

# ---- an external plug-in built against the installed library -------------------------------------
find_program(_hit_mpicxx NAMES mpicxx.mpich)
add_test(NAME cli.layout.external_plugin
         COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE=${_dir}/plugin
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/cli_layout_plugin -DMPICXX=${_hit_mpicxx}
                 "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}" "-DLINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
                 -P ${_dir}/plugin_check.cmake)
set_tests_properties(cli.layout.external_plugin PROPERTIES TIMEOUT 600)
# Sizes are formed with checked arithmetic: too many elements, or too many bytes, is an error
# naming the value, on every rank, never a negative count.
hit_layout_error(too_many_elements "shape \\[0:4000000000\\]\\[0:4000000000\\]\\[0:4000000000\\] has more than 9223372036854775807 elements"
                 "--shape|[0:4000000000][0:4000000000][0:4000000000]|--topology|mesh2d")
hit_layout_error(too_many_bytes "the memory of rank 0 is too large: 4000000000000000000 \\* 8"
                 "--shape|[0:2000000000][0:2000000000]|--procs|1|--topology|array")
# Layouts too large to describe are refused by an estimate before anything is built (they used to
# end in std::bad_alloc): every process keeps every block.
hit_layout_error(too_many_procs "over 100000000 processes: every process keeps the blocks of every process \\(about [0-9.]+ GB here\\); hitmap\\+\\+ allows at most 4194304 processes"
                 "--shape|[0:10][0:10]|--procs|100000000")
hit_layout_error(too_many_blocks "layout 'blockCyclic:b=1' of \\[0:200000000\\] over 4 processes makes 200000000 blocks"
                 "--shape|[0:200000000]|--layout|blockCyclic:b=1")

# columns2d: the same layout from every rank of a run as from one process with --procs; 8 equal
# processes in columns of 3, 3 and 2 beat the best grid (2x4) in half-perimeters; bad weights.
hit_layout_same(columns2d "--shape|[0:100][0:64]|--layout|columns2d:w=1,2,3,4|--comm|halo")
add_test(NAME cli.layout.columns2d_half_perimeters
         COMMAND ${_lay} --shape [0:1000][0:1000] --procs 8 --layout columns2d --json)
set_tests_properties(cli.layout.columns2d_half_perimeters PROPERTIES LABELS "cli"
  PASS_REGULAR_EXPRESSION "\"half_perimeters\":{\"total\":5750,\"best_grid\":6000,\"grid\":\"2x4\"}")
hit_layout_error(columns2d_weights "w has 3 weights, expected 4 \\(one per process\\)"
                 "--shape|[0:10][0:10]|--layout|columns2d:w=1,2,3")
hit_layout_error(columns2d_too_many "a column of 3 rectangles over 2 block rows"
                 "--shape|[0:10][0:10]|--procs|5|--layout|columns2d:b=5")
# hierarchical: the same from every rank (the run's nodes, HIT_NODES=2 emulated); a plan for more
# processes than the run needs ranks_per_node.
hit_layout_same(hierarchical "--shape|[0:40][0:30]|--layout|hierarchical:nodes=(columns2d),devices=(columns2d:w=1,2),ranks_per_node=2")
hit_layout_error(hierarchical_unknown_nodes "the nodes of the processes are unknown.*give ranks_per_node=K"
                 "--shape|[0:10][0:10]|--procs|8|--layout|hierarchical")
