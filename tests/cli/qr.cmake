# Command-line tests of hit-qr: --check at 1-4 processes on square, tall and odd shapes (m, n not
# multiples of b; n = 1; m = n + 1), float and double, other layouts, emulated devices (one
# shared by two oversubscribed processes) and heteroBlockCyclic; result files and least squares
# against an independent serial QR; each tile moved to an emulated device once and back once; a
# rank-deficient A, non-finite inputs and other bad input on every rank with one line.
set(_qr ${HIT_BIN}/hit-qr)
set(_qr_appdir ${CMAKE_CURRENT_LIST_DIR}/apps)
find_package(Python3 COMPONENTS Interpreter QUIET)

function(hit_qr_check name np)
  add_test(NAME cli.qr.${name}.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} -n ${np} ${_qr} --check --reps 1 --warmup 0 ${ARGN})
  set_tests_properties(cli.qr.${name}.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1"
                       PASS_REGULAR_EXPRESSION "check: passed" FAIL_REGULAR_EXPRESSION "FAILED")
endfunction()
foreach(np 1 2 3 4)
  hit_qr_check(n1 ${np} --n 1 --b 4)
  hit_qr_check(n7_float ${np} --n 7 --b 3 --type float)
  hit_qr_check(n256 ${np} --n 256 --b 64)
  hit_qr_check(tall ${np} --m 403 --n 100 --b 32)
endforeach()
hit_qr_check(one_column_tall 4 --m 9 --n 1 --b 2)
hit_qr_check(one_more_row_float 3 --m 21 --n 20 --b 6 --type float)
hit_qr_check(tall_float 4 --m 1000 --n 200 --b 48 --type float)
hit_qr_check(blocks_layout 4 --n 150 --layout blocks)
hit_qr_check(row_cyclic 3 --m 200 --n 120 --b 20 --topology array)
hit_qr_check(emulated_devices 4 --m 400 --n 100 --b 32
             --devices "emu:0(slowdown=2),cpu,emu:1,cpu")
hit_qr_check(shared_device 3 --n 200 --b 40 --devices "emu:0*3")
# A device too small for the matrix, shared by 2 and 4 processes: each keeps its tiles to its part
# of the device (all planning for the whole of it overcommitted it); and beside a host core, where
# a copy in must wait for the copies another worker is freeing.
hit_qr_check(small_shared_device 2 --n 600 --b 50 --devices "emu:0(mem=2MiB)*2")
hit_qr_check(small_shared_device 4 --n 600 --b 50 --devices "emu:0(mem=2MiB)*4")
hit_qr_check(small_device_and_cores 1 --n 1200 --b 100 --devices "emu:0(mem=2MiB,cores=2)")
hit_qr_check(device_and_cores 1 --m 300 --n 160 --b 32 --devices "emu:0(cores=2)")
foreach(np 2 3)
  math(EXPR accelerators "${np} - 1")
  hit_qr_check(hetero ${np} --m 300 --n 256 --topology array
               --layout "heteroBlockCyclic:B=64,b=16" --devices "cpu,emu:0(slowdown=2)*${accelerators}")
endforeach()
hit_qr_check(hetero_shared_device 3 --n 200 --topology array --layout "heteroBlockCyclic:B=48,b=16"
             --devices "cpu,emu:0*2")
# --tune: the host share of heteroBlockCyclic tuned on a small problem, each trial reported.
add_test(NAME cli.qr.tune.np3
         COMMAND ${MPIEXEC_EXECUTABLE} -n 3 ${_qr} --check --reps 1 --warmup 0 --m 400 --n 300
                 --topology array --layout "heteroBlockCyclic:B=64,b=16" --tune
                 --devices "cpu,emu:0(slowdown=3),emu:1(slowdown=3)")
set_tests_properties(cli.qr.tune.np3 PROPERTIES LABELS "cli;apps" TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "tuning: B_h [0-9]+: host busy(.|\n)*check: passed"
                     FAIL_REGULAR_EXPRESSION "FAILED")
add_test(NAME cli.qr.repetitions.np2
         COMMAND ${MPIEXEC_EXECUTABLE} -n 2 ${_qr} --check --reps 2 --warmup 1 --m 90 --n 60 --b 16)
set_tests_properties(cli.qr.repetitions.np2 PROPERTIES LABELS "cli;apps" TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "check: passed" FAIL_REGULAR_EXPRESSION "FAILED")
# 2 x 2 tiles on one worker: geqrt, larfb, tsqrt, ssrfb of column 0, geqrt of column 1.
add_test(NAME cli.qr.runtime_json.np1
         COMMAND ${_qr} --n 8 --b 4 --reps 1 --warmup 0 --json --devices "cpu(cores=1)")
set_tests_properties(cli.qr.runtime_json.np1 PROPERTIES LABELS "cli;apps" TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "\"runtime\":\\{\"busy_s\":[0-9.e-]+,\"bytes_received\":0,\"bytes_sent\":0,\"evictions\":0,\"messages_received\":0,\"messages_sent\":0,\"places\":\\[\\{\"busy_s\":[0-9.e-]+,\"prefetched\":0,\"tasks\":5\\}\\],\"span_s\":[0-9.e-]+,\"tasks\":5,\"workers\":1")
# On an emulated device driven by one core: every tile of A in once and back once, the T tiles
# (written there first) back once: 8 x 4 tiles of 32 x 32 doubles, and 8 + 7 + 6 + 5 T tiles.
add_test(NAME cli.qr.device_bytes.np1
         COMMAND ${_qr} --m 256 --n 128 --b 32 --reps 1 --warmup 0 --json
                 --devices "emu:0(cores=1)")
set_tests_properties(cli.qr.device_bytes.np1 PROPERTIES LABELS "cli;apps" TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "\"d2h_bytes\":475136(.0)?,.*\"h2d_bytes\":262144(.0)?,")

if(Python3_Interpreter_FOUND)
  foreach(case "1;45;17;double;5" "2;33;33;float;8" "4;60;23;double;7" "3;50;50;double;16")
    list(GET case 0 np)
    list(GET case 1 m)
    list(GET case 2 n)
    list(GET case 3 type)
    list(GET case 4 b)
    set(name cli.qr.files.m${m}_n${n}_${type}.np${np})
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${_qr_appdir}/qr_files.py ls ${m} ${n} ${type}
                     ${CMAKE_CURRENT_BINARY_DIR}/${name} -- ${MPIEXEC_EXECUTABLE} -n ${np} ${_qr}
                     --b ${b} --reps 1 --warmup 0)
    set_tests_properties(${name} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                         ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
  endforeach()
  # Column 13 = column 0 + column 1: R(13, 13) vanishes, in tile column 2 of tiles of 6, whose
  # owner is one process of four.
  foreach(np 1 4)
    set(name cli.qr.rank_deficient.np${np})
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${_qr_appdir}/qr_files.py deficient 40 20 double
                     ${CMAKE_CURRENT_BINARY_DIR}/${name} 13 -- ${MPIEXEC_EXECUTABLE} -n ${np}
                     ${_qr} --b 6 --reps 1 --warmup 0)
    set_tests_properties(${name} PROPERTIES LABELS "cli;apps" TIMEOUT 300)
  endforeach()
  foreach(which a b)
    set(name cli.qr.nonfinite_${which}.np4)
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${_qr_appdir}/qr_files.py nonfinite 40 20 double
                     ${CMAKE_CURRENT_BINARY_DIR}/${name} ${which} -- ${MPIEXEC_EXECUTABLE} -n 4
                     ${_qr} --b 6 --reps 1 --warmup 0)
    set_tests_properties(${name} PROPERTIES LABELS "cli;apps" TIMEOUT 300)
  endforeach()
endif()

# Bad input: every rank exits non-zero with one line naming the value, no hang (4 processes).
set(_qr_errcheck ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
function(hit_qr_error name expect args)
  add_test(NAME cli.qr.error.${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_qr} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=4
                   "-DARGS=${args}" "-DEXPECT=${expect}" -P ${_qr_errcheck})
  set_tests_properties(cli.qr.error.${name} PROPERTIES LABELS "cli;apps" TIMEOUT 180)
endfunction()
hit_qr_error(fewer_rows "needs at least as many rows as columns \\(m >= n\\): --m 10 < --n 20"
             "--m|10|--n|20")
hit_qr_error(b_zero "--b: '0' is not a whole number from 1" "--n|8|--b|0")
hit_qr_error(m_zero "--m: '0' is not a whole number from 1" "--m|0|--n|8")
hit_qr_error(strided_layout "needs a layout of contiguous blocks" "--n|20|--layout|cyclic")
hit_qr_error(wrong_size_a "expected 512 bytes" "--n|8|--a|${CMAKE_CURRENT_LIST_DIR}/apps/qr_files.py")
hit_qr_error(wrong_size_rhs "expected 64 bytes"
             "--n|8|--rhs|${CMAKE_CURRENT_LIST_DIR}/apps/qr_files.py")
hit_qr_error(partition_not_single "--partition must be single" "--n|20|--partition|threads")
hit_qr_error(tune_needs_hetero "--tune tunes the host share of heteroBlockCyclic" "--n|20|--tune")
hit_qr_error(tune_n_zero "--tune-n: '0' is not a whole number from 1" "--n|8|--tune-n|0")
hit_qr_error(x_out_needs_rhs "--x-out requires --rhs" "--n|8|--x-out|x.raw")
hit_qr_error(unwritable_output "/nonexistent/dir/q.raw" "--n|8|--q-out|/nonexistent/dir/q.raw")
hit_qr_error(svg_folder "cannot write the timeline \\(--svg\\) '.*t.svg': folder '.*no_such_folder' does not exist"
             "--n|8|--svg|${CMAKE_CURRENT_BINARY_DIR}/no_such_folder/t.svg")
