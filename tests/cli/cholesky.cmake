# Command-line tests of hit-cholesky: --check at 1-4 processes, n in {1, 7, 256, 1000} with tile
# sides that do and do not divide n, float and double, with and without look-ahead, other
# layouts and emulated devices; result files against an independent serial factorisation; a
# matrix that is not positive definite and other bad input on every rank with one line.
set(_cholesky ${HIT_BIN}/hit-cholesky)
set(_cholesky_appdir ${CMAKE_CURRENT_LIST_DIR}/apps)
find_package(Python3 COMPONENTS Interpreter QUIET)

function(hit_cholesky_check name np)
  add_test(NAME cli.cholesky.${name}.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} -n ${np} ${_cholesky} --check --reps 1 --warmup 0 ${ARGN})
  set_tests_properties(cli.cholesky.${name}.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1"
                       PASS_REGULAR_EXPRESSION "check: passed" FAIL_REGULAR_EXPRESSION "FAILED")
endfunction()
foreach(np 1 2 3 4)
  hit_cholesky_check(n1 ${np} --n 1 --b 4)
  hit_cholesky_check(n7_float ${np} --n 7 --b 3 --type float)
  hit_cholesky_check(n256 ${np} --n 256 --b 64)
  hit_cholesky_check(n1000 ${np} --n 1000 --b 96)
endforeach()
hit_cholesky_check(n1000_float 4 --n 1000 --b 128 --type float)
hit_cholesky_check(no_lookahead 4 --n 300 --b 37 --no-lookahead)
hit_cholesky_check(blocks_layout 3 --n 150 --layout blocks)
hit_cholesky_check(row_cyclic 4 --n 150 --b 20 --topology array)
hit_cholesky_check(emulated_devices 4 --n 200 --b 40
                   --devices "emu:0(slowdown=2),cpu,emu:1,cpu")
# heteroBlockCyclic: thin host tiles and wide accelerator tiles (emulated), B not dividing n, the
# host share given or computed, float and double, several processes on one device; --tune.
set(_hetero_devices "cpu,emu:0(slowdown=3),emu:1(slowdown=3),cpu")
foreach(np 2 3 4)
  math(EXPR accelerators "${np} - 1")
  hit_cholesky_check(hetero ${np} --n 1000 --topology array --layout "heteroBlockCyclic:B=256,b=32"
                     --devices "cpu,emu:0(slowdown=2)*${accelerators}")
endforeach()
hit_cholesky_check(hetero_given_bh_float 4 --n 333 --type float --topology array
                   --layout "heteroBlockCyclic:B=64,b=8,bh=40" --devices "${_hetero_devices}")
hit_cholesky_check(hetero_shared_device 3 --n 256 --topology array
                   --layout "heteroBlockCyclic:B=48,b=16" --devices "cpu,emu:0*2")
hit_cholesky_check(hetero_no_lookahead 4 --n 200 --topology array --no-lookahead
                   --layout "heteroBlockCyclic:B=40,b=8" --devices "${_hetero_devices}")
add_test(NAME cli.cholesky.tune.np3
         COMMAND ${MPIEXEC_EXECUTABLE} -n 3 ${_cholesky} --check --reps 1 --warmup 0 --n 300
                 --topology array --layout "heteroBlockCyclic:B=64,b=16" --tune --keep-b
                 --devices "cpu,emu:0(slowdown=3),emu:1(slowdown=3)")
set_tests_properties(cli.cholesky.tune.np3 PROPERTIES LABELS "cli;apps" TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "tuning: B_h [0-9]+: host busy(.|\n)*check: passed"
                     FAIL_REGULAR_EXPRESSION "FAILED")
# --tune on the runtime: the B_h trials run as tasks too.
add_test(NAME cli.cholesky.runtime_tune.np3
         COMMAND ${MPIEXEC_EXECUTABLE} -n 3 ${_cholesky} --check --reps 1 --warmup 0 --n 300
                 --topology array --layout "heteroBlockCyclic:B=64,b=16" --tune --keep-b
                 --runtime --devices "cpu,emu:0(slowdown=3),emu:1(slowdown=3)")
set_tests_properties(cli.cholesky.runtime_tune.np3 PROPERTIES LABELS "cli;apps" TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "tuning: B_h [0-9]+: host busy(.|\n)*check: passed"
                     FAIL_REGULAR_EXPRESSION "FAILED")
# --tune also chooses B (Song et al.'s first step) unless --keep-b.
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.cholesky.tune_b.np3
           COMMAND ${Python3_EXECUTABLE} ${_cholesky_appdir}/cholesky_tune_b_check.py
                   ${MPIEXEC_EXECUTABLE} ${_cholesky})
  set_tests_properties(cli.cholesky.tune_b.np3 PROPERTIES LABELS "cli;apps" TIMEOUT 300)
endif()
add_test(NAME cli.cholesky.tune_n.np3
         COMMAND ${MPIEXEC_EXECUTABLE} -n 3 ${_cholesky} --json --reps 1 --warmup 0 --n 300
                 --topology array --layout "heteroBlockCyclic:B=64,b=16" --tune --tune-n 200
                 --devices "cpu,emu:0(slowdown=3),emu:1(slowdown=3)")
set_tests_properties(cli.cholesky.tune_n.np3 PROPERTIES LABELS "cli;apps" TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "\"tune_n\":200" FAIL_REGULAR_EXPRESSION "FAILED")
# The cuda bodies (cuSOLVER, cuBLAS) on a GPU, alone and beside host processes; skipped where
# there is none.
function(hit_cholesky_cuda name np devices)
  if(NOT Python3_Interpreter_FOUND)
    return()
  endif()
  add_test(NAME cli.cholesky.cuda.${name}.np${np}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/on_gpu.py ${HIT_BIN}/hit-info
                   ${MPIEXEC_EXECUTABLE} -n ${np} ${_cholesky} --check --reps 1 --warmup 0
                   --devices ${devices} ${ARGN})
  set_tests_properties(cli.cholesky.cuda.${name}.np${np} PROPERTIES LABELS "cli;apps;cuda"
                       TIMEOUT 300 SKIP_REGULAR_EXPRESSION "no CUDA GPU here"
                       PASS_REGULAR_EXPRESSION "check: passed" FAIL_REGULAR_EXPRESSION "FAILED")
endfunction()
hit_cholesky_cuda(n777 1 cuda:0 --n 777 --b 128)
hit_cholesky_cuda(n1000_float 1 cuda:0 --n 1000 --b 96 --type float)
hit_cholesky_cuda(hetero_tuned 3 "cuda:0,cpu*2" --n 1500 --topology array
                  --layout "heteroBlockCyclic:B=256,b=32" --tune)
# --runtime: the tile kernels as tasks of the task runtime, on one process's host cores; over
# 2-4 processes (tiles another process reads travel as messages), on host cores, emulated
# devices beside host processes, one device shared by two processes and a hetero layout.
hit_cholesky_check(runtime 1 --n 1000 --b 96 --runtime)
foreach(np 2 3 4)
  hit_cholesky_check(runtime ${np} --n 1000 --b 96 --runtime)
  hit_cholesky_check(runtime_n7_float ${np} --n 7 --b 3 --type float --runtime)
endforeach()
hit_cholesky_check(runtime_emulated_devices 4 --n 200 --b 40 --runtime
                   --devices "emu:0(slowdown=2),cpu,emu:1,cpu")
hit_cholesky_check(runtime_shared_device 3 --n 256 --b 32 --runtime --devices "cpu,emu:0*2")
# A device too small for the matrix, shared by 4 processes: each keeps its tiles to its part of it.
hit_cholesky_check(runtime_small_shared_device 4 --n 600 --b 50 --runtime
                   --devices "emu:0(mem=2MiB)*4")
hit_cholesky_check(runtime_hetero 4 --n 333 --type float --topology array --runtime
                   --layout "heteroBlockCyclic:B=64,b=8,bh=40" --devices "${_hetero_devices}")
hit_cholesky_check(runtime_row_cyclic 3 --n 150 --b 20 --topology array --runtime)
# On an emulated device: every tile in once and back once; evictions on a small device.
foreach(case "1000;96;double" "777;64;float")
  list(GET case 0 n)
  list(GET case 1 b)
  list(GET case 2 type)
  add_test(NAME cli.cholesky.runtime_emulated_n${n}_${type}.np1
           COMMAND ${Python3_EXECUTABLE} ${_cholesky_appdir}/cholesky_runtime_check.py
                   ${MPIEXEC_EXECUTABLE} ${_cholesky} ${n} ${b} ${type})
  set_tests_properties(cli.cholesky.runtime_emulated_n${n}_${type}.np1 PROPERTIES
                       LABELS "cli;apps" TIMEOUT 300)
endforeach()
# --runtime --svg: the tasks' timeline, on host cores and beside an emulated device; over 2 and 4
# processes, every process's tasks and messages on one time axis.
foreach(dev "cpu" "emu:0(cores=2)")
  string(REGEX REPLACE "[^a-z0-9]" "_" tag "${dev}")
  add_test(NAME cli.cholesky.runtime_timeline_${tag}.np1
           COMMAND ${Python3_EXECUTABLE} ${_cholesky_appdir}/cholesky_timeline_check.py
                   ${MPIEXEC_EXECUTABLE} ${_cholesky} ${CMAKE_CURRENT_BINARY_DIR} ${dev})
  set_tests_properties(cli.cholesky.runtime_timeline_${tag}.np1 PROPERTIES
                       LABELS "cli;apps" TIMEOUT 300)
endforeach()
foreach(np 2 4)
  add_test(NAME cli.cholesky.runtime_timeline_cpu.np${np}
           COMMAND ${Python3_EXECUTABLE} ${_cholesky_appdir}/cholesky_timeline_check.py
                   ${MPIEXEC_EXECUTABLE} ${_cholesky} ${CMAKE_CURRENT_BINARY_DIR} cpu ${np})
  set_tests_properties(cli.cholesky.runtime_timeline_cpu.np${np} PROPERTIES
                       LABELS "cli;apps" TIMEOUT 300)
endforeach()
add_test(NAME cli.cholesky.runtime_repetitions.np1
         COMMAND ${MPIEXEC_EXECUTABLE} -n 1 ${_cholesky} --check --reps 2 --warmup 1 --n 90 --b 16
                 --runtime)
set_tests_properties(cli.cholesky.runtime_repetitions.np1 PROPERTIES LABELS "cli;apps" TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "check: passed" FAIL_REGULAR_EXPRESSION "FAILED")
hit_cholesky_check(runtime_float 1 --n 777 --b 64 --type float --runtime)
hit_cholesky_check(runtime_one_tile 1 --n 50 --b 64 --runtime)
hit_cholesky_check(runtime_thin_tiles 1 --n 300 --b 7 --runtime)
add_test(NAME cli.cholesky.runtime_json.np1
         COMMAND ${MPIEXEC_EXECUTABLE} -n 1 ${_cholesky} --json --reps 1 --warmup 0 --n 200 --b 50
                 --runtime --devices "cpu(cores=1)")
# 4 tile columns on one worker: 4 potrf, 6 syrk, and a task per run of a column's tiles below
# the diagonal: 3 trsm (columns 0-2), 3 gemm (tile columns 1 and 2 with column 0, 2 with 1).
set_tests_properties(cli.cholesky.runtime_json.np1 PROPERTIES LABELS "cli;apps" TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "\"runtime\":\\{\"busy_s\":[0-9.e-]+,\"bytes_received\":0,\"bytes_sent\":0,\"evictions\":0,\"messages_received\":0,\"messages_sent\":0,\"places\":\\[\\{\"busy_s\":[0-9.e-]+,\"prefetched\":0,\"tasks\":16\\}\\],\"span_s\":[0-9.e-]+,\"tasks\":16,\"workers\":1"
                     FAIL_REGULAR_EXPRESSION "FAILED")
add_test(NAME cli.cholesky.repetitions.np2
         COMMAND ${MPIEXEC_EXECUTABLE} -n 2 ${_cholesky} --check --reps 2 --warmup 1 --n 90 --b 16)
set_tests_properties(cli.cholesky.repetitions.np2 PROPERTIES LABELS "cli;apps" TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "check: passed" FAIL_REGULAR_EXPRESSION "FAILED")

if(Python3_Interpreter_FOUND)
  foreach(case "1;17;double;5" "4;40;double;7" "3;33;float;8" "4;64;double;16"
               "1;45;double;8;runtime" "1;33;float;6;runtime" "4;40;double;7;runtime"
               "3;33;float;8;runtime")
    list(GET case 0 np)
    list(GET case 1 n)
    list(GET case 2 type)
    list(GET case 3 b)
    set(extra)
    set(name cli.cholesky.files.n${n}_${type}.np${np})
    list(LENGTH case fields)
    if(fields GREATER 4)
      set(extra --runtime)
      set(name cli.cholesky.files.runtime_n${n}_${type}.np${np})
    endif()
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${_cholesky_appdir}/cholesky_files.py spd ${n} ${type}
                     ${CMAKE_CURRENT_BINARY_DIR}/${name} -- ${MPIEXEC_EXECUTABLE} -n ${np}
                     ${_cholesky} --b ${b} --reps 1 --warmup 0 ${extra})
    set_tests_properties(${name} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                         ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
  endforeach()
  # Not positive definite at row 45: tile column 45 / 10 = 4, whose owner is one rank of four.
  foreach(np 1 4)
    set(name cli.cholesky.not_spd.np${np})
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${_cholesky_appdir}/cholesky_files.py not_spd 60 double
                     ${CMAKE_CURRENT_BINARY_DIR}/${name} 45 10 -- ${MPIEXEC_EXECUTABLE} -n ${np}
                     ${_cholesky} --b 10 --reps 1 --warmup 0)
    set_tests_properties(${name} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                         ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
  endforeach()
  # The same pivot under --runtime: the failing task's error ends the run, as in program order;
  # over 4 processes the one that holds the failing tile names it, and no other process reports
  # a failure of its own from the tiles it could not compute.
  foreach(case "cpu;1" "emu;1" "cpu;4" "emu*4;4")
    list(GET case 0 dev)
    list(GET case 1 np)
    string(REGEX REPLACE "[^a-z0-9]" "_" tag "${dev}")
    set(name cli.cholesky.not_spd_runtime_${tag}.np${np})
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${_cholesky_appdir}/cholesky_files.py not_spd 60 double
                     ${CMAKE_CURRENT_BINARY_DIR}/${name} 45 10 -- ${MPIEXEC_EXECUTABLE} -n ${np}
                     ${_cholesky} --b 10 --reps 1 --warmup 0 --runtime --devices ${dev})
    set_tests_properties(${name} PROPERTIES LABELS "cli;apps" TIMEOUT 300)
  endforeach()
endif()

# Bad input: every rank exits non-zero with one line naming the value, no hang (4 processes).
set(_cholesky_errcheck ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
function(hit_cholesky_error name expect args)
  add_test(NAME cli.cholesky.error.${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_cholesky} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=4
                   "-DARGS=${args}" "-DEXPECT=${expect}" -P ${_cholesky_errcheck})
  set_tests_properties(cli.cholesky.error.${name} PROPERTIES LABELS "cli;apps" TIMEOUT 180)
endfunction()
hit_cholesky_error(b_zero "--b: '0' is not a whole number from 1" "--n|8|--b|0")
hit_cholesky_error(n_zero "--n: '0' is not a whole number from 1" "--n|0")
hit_cholesky_error(strided_layout "needs a layout of contiguous blocks" "--n|20|--layout|cyclic")
hit_cholesky_error(wrong_size_file "expected 512 bytes"
                   "--n|8|--a|${CMAKE_CURRENT_LIST_DIR}/apps/cholesky_files.py")
hit_cholesky_error(partition_not_single "--partition must be single" "--n|20|--partition|threads")
hit_cholesky_error(tune_n_zero "--tune-n: '0' is not a whole number from 1" "--n|8|--tune-n|0")
hit_cholesky_error(tune_needs_hetero "--tune tunes the host share of heteroBlockCyclic" "--n|20|--tune")
hit_cholesky_error(keep_b_needs_tune "--keep-b requires --tune" "--n|20|--keep-b")
hit_cholesky_error(bh_outside "bh=70 is not a multiple of b=16 in \\[0, B=64\\]"
                   "--n|100|--layout|heteroBlockCyclic:B=64,b=16,bh=70|--devices|cpu,emu*3")
hit_cholesky_error(bh_not_multiple "bh=20 is not a multiple of b=16"
                   "--n|100|--layout|heteroBlockCyclic:B=64,b=16,bh=20|--devices|cpu,emu*3")
hit_cholesky_error(unwritable_output "/nonexistent/dir/l.raw" "--n|8|--c-out|/nonexistent/dir/l.raw")
hit_cholesky_error(runtime_no_lookahead "--no-lookahead orders the program's loop"
                   "--n|20|--runtime|--no-lookahead")
add_test(NAME cli.cholesky.error.runtime_device_memory
         COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_cholesky} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=1
                 "-DARGS=--n|384|--b|128|--runtime|--devices|emu:0(mem=256KiB)"
                 "-DEXPECT=--runtime: a task's tiles \\(384.00 KiB\\) do not fit in the 256.00 KiB free on emu:0\\(mem=256KiB\\)"
                 -P ${_cholesky_errcheck})
set_tests_properties(cli.cholesky.error.runtime_device_memory PROPERTIES LABELS "cli;apps" TIMEOUT 180)
# A device too small on one process of four: every process gets its error, none waits for it.
add_test(NAME cli.cholesky.error.runtime_device_memory_one_rank
         COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_cholesky} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=4
                 "-DARGS=--n|384|--b|128|--runtime|--devices|emu:0(mem=200KiB),cpu,cpu,cpu"
                 "-DEXPECT=a task's tiles \\(256.00 KiB\\) do not fit in the 200.00 KiB free on emu:0"
                 -P ${_cholesky_errcheck})
set_tests_properties(cli.cholesky.error.runtime_device_memory_one_rank PROPERTIES
                     LABELS "cli;apps" TIMEOUT 180)
add_test(NAME cli.cholesky.error.runtime_svg_folder
         COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_cholesky} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=1
                 "-DARGS=--n|64|--runtime|--svg|${CMAKE_CURRENT_BINARY_DIR}/no_such_folder/t.svg"
                 "-DEXPECT=cannot write the timeline \\(--svg\\) '.*t.svg': folder '.*no_such_folder' does not exist"
                 -P ${_cholesky_errcheck})
set_tests_properties(cli.cholesky.error.runtime_svg_folder PROPERTIES LABELS "cli;apps" TIMEOUT 180)
