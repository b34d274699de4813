# Command-line tests of hit-summa: --check at 1, 2, 3, 4 and 9 processes, sizes n in
# {1, 7, 257, 2039} and rectangular ones, every layout that gives a process one block (mixed per
# matrix, blocks that do not line up), float and double, emulated devices; result files against an
# independent serial product; bad input on every rank with one line.
set(_summa ${HIT_BIN}/hit-summa)
set(_summa_appdir ${CMAKE_CURRENT_LIST_DIR}/apps)
find_package(Python3 COMPONENTS Interpreter QUIET)

function(hit_summa_check name np)
  add_test(NAME cli.summa.${name}.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} -n ${np} ${_summa} --check --reps 1 --warmup 0 ${ARGN})
  set_tests_properties(cli.summa.${name}.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1"
                       PASS_REGULAR_EXPRESSION "check: passed" FAIL_REGULAR_EXPRESSION "FAILED")
endfunction()
foreach(np 1 2 3 4)
  hit_summa_check(n1 ${np} --n 1)
  hit_summa_check(n7_float ${np} --n 7 --panel 3 --type float)
  hit_summa_check(n257 ${np} --n 257 --panel 64)
  hit_summa_check(rectangular_columns2d ${np} --n 100 --m 37 --k 71 --panel 16 --layout columns2d)
  hit_summa_check(mixed_layouts ${np} --n 60 --m 45 --k 50 --panel 7 --layout-a cyclic
                  --layout-b dimBlocks:dim=1 --layout-c blocks --type float)
endforeach()
hit_summa_check(n2039 4 --n 2039 --panel 256)
hit_summa_check(n2039 9 --n 2039 --panel 512)
hit_summa_check(weighted_columns2d 4 --n 120 --m 90 --k 100 --panel 32
                --layout "columns2d:w=1,3.8,14,2,b=8")
hit_summa_check(blocks_lb 4 --n 80 --panel 20 --topology square
                --layout-c blocksLB:factor=0.7,fast=0,1 --layout-a weighted:w=3,1)
hit_summa_check(emulated_devices 4 --n 200 --panel 50 --devices "emu:0(slowdown=2)*1,cpu*3"
                --layout columns2d)
# Rank 1's device cannot hold its block of C (24 KiB), only a panel of B (6 KiB) and some rows:
# C stays on the host and its launches stream it through the device chunk by chunk.
hit_summa_check(out_of_core 3 --n 96 --panel 8 --partition outOfCore
                --devices "cpu,emu:0(mem=20KiB),cpu")
hit_summa_check(wide_panel 2 --n 30 --m 20 --panel 1000)
# Look-ahead depths: one panel ahead, every panel at once (more than there are), and three ahead
# on emulated devices of unequal speed, where the buffers are reused while ranks are out of step.
hit_summa_check(lookahead1 3 --n 70 --m 90 --k 50 --panel 8 --lookahead 1)
hit_summa_check(lookahead_all 4 --n 64 --panel 8 --lookahead 64)
hit_summa_check(lookahead3_emulated 4 --n 96 --m 100 --panel 7 --lookahead 3 --layout columns2d
                --devices "emu:0(slowdown=3),cpu,emu:1(slowdown=2),cpu")

# Result files against a serial product computed in Python.
if(Python3_Interpreter_FOUND)
  foreach(case "4;64;64;64;double" "3;30;50;20;float" "2;17;5;9;double")
    list(GET case 0 np)
    list(GET case 1 n)
    list(GET case 2 m)
    list(GET case 3 k)
    list(GET case 4 type)
    set(name cli.summa.files.${n}x${m}x${k}_${type}.np${np})
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${_summa_appdir}/cannon_files.py ${n} ${m} ${k} ${type}
                     ${CMAKE_CURRENT_BINARY_DIR}/${name} -- ${MPIEXEC_EXECUTABLE} -n ${np} ${_summa}
                     --reps 1 --warmup 0 --panel 8 --layout columns2d)
    set_tests_properties(${name} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                         ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
  endforeach()
endif()

# Bad input: every rank exits non-zero with one line naming the value, no hang.
function(hit_summa_error name np expect args)
  add_test(NAME cli.summa.error.${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_summa} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${np}
                   "-DARGS=${args}" "-DEXPECT=${expect}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
  set_tests_properties(cli.summa.error.${name} PROPERTIES LABELS "cli;apps" TIMEOUT 180)
endfunction()
hit_summa_error(panel_zero 4 "--panel: '0' is not a whole number from 1" "--n|8|--panel|0")
hit_summa_error(lookahead_zero 2 "--lookahead: '0' is not a whole number from 1" "--n|8|--lookahead|0")
hit_summa_error(multi_block 4 "C's layout 'blockCyclic:b=2' gives rank 0 [0-9]+ blocks"
                "--n|16|--layout-c|blockCyclic:b=2")
hit_summa_error(columns2d_weights 4 "w has 3 weights, expected 4"
                "--n|16|--layout|columns2d:w=1,2,3")
hit_summa_error(too_small_device_on_rank2 4 "rank 2: device emu:0\\(mem=64KiB\\).*out of memory"
                "--n|400|--devices|cpu,cpu,emu:0(mem=64KiB),cpu")

# Hierarchical layouts on emulated nodes (HIT_NODES=2: ranks 0-1 and 2-3): nodes by columns2d
# weighted by their devices, then devices by columns2d inside each node; the nested spec also
# through HIT_LAYOUT_C, where it must arrive whole.
hit_summa_check(hierarchical 4 --n 120 --m 70 --panel 16 --layout hierarchical
                --devices "emu:0(slowdown=4),cpu,cpu,cpu")
set_tests_properties(cli.summa.hierarchical.np4 PROPERTIES
                     ENVIRONMENT "OPENBLAS_NUM_THREADS=1;HIT_NODES=2")
hit_summa_check(hierarchical_env 4 --n 64 --panel 8)
set_tests_properties(cli.summa.hierarchical_env.np4 PROPERTIES
  ENVIRONMENT "OPENBLAS_NUM_THREADS=1;HIT_NODES=2;HIT_LAYOUT_C=hierarchical:nodes=(weighted:w=1,3),devices=(columns2d:w=1,3)"
  PASS_REGULAR_EXPRESSION "C hierarchical:nodes=\\(weighted:w=1,3\\),devices=\\(columns2d:w=1,3\\)(.|\n)*check: passed")
hit_summa_error(hierarchical_malformed 4 "unbalanced parentheses"
                "--n|16|--layout|hierarchical:nodes=(columns2d")
# The README's demo (scripts/demo.sh) at a small size on the programs built: both runs check, and
# its last line is the speed-up of columns2d over blocks, from the runs' own times.
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.summa.demo
           COMMAND ${Python3_EXECUTABLE} ${_summa_appdir}/demo_check.py
                   ${PROJECT_SOURCE_DIR}/scripts/demo.sh ${HIT_BIN})
  set_tests_properties(cli.summa.demo PROPERTIES LABELS "cli;apps" TIMEOUT 300
                       PASS_REGULAR_EXPRESSION "demo: ok")
endif()
