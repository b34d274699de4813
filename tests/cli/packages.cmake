# Command-line tests of hit-packages (included by tests/CMakeLists.txt; HIT_BIN is the programs'
# folder): --check compares with a serial computation (Mandelbrot bit for bit, gemm against BLAS on
# each rank's rows) at 1-4 processes, on host and emulated devices, for work packages of several
# sizes and depths and for the static schedule; a failed device's packages are rerouted and the
# answer is still right, as a withdrawn one's are; bad input is one clear line on every rank.
set(_packages ${HIT_BIN}/hit-packages)

function(hit_packages_check name np)
  add_test(NAME cli.packages.${name}.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} -n ${np} ${_packages} --check --reps 1 --warmup 0 ${ARGN})
  set_tests_properties(cli.packages.${name}.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1"
                       PASS_REGULAR_EXPRESSION "check: passed"
                       FAIL_REGULAR_EXPRESSION "FAILED")
endfunction()
foreach(np 1 2 3 4)
  hit_packages_check(mandel_auto ${np} --n 96 --width 80 --iters 64)
  hit_packages_check(mandel_size1 ${np} --n 23 --iters 32 --schedule workPackages:size=1,depth=1)
  hit_packages_check(mandel_emu ${np} --n 90 --iters 64 --schedule workPackages:size=7,depth=3
                     --devices "emu(slowdown=2,clock=cpu)")
  hit_packages_check(gemm ${np} --workload gemm --n 60 --schedule workPackages:size=8,depth=2)
  hit_packages_check(gemm_emu ${np} --workload gemm --n 64 --schedule workPackages:size=5
                     --devices "emu(bw=4GB/s)" --type float)
  hit_packages_check(static ${np} --n 64 --iters 32 --schedule static)
  hit_packages_check(view ${np} --n 50 --iters 48 --view -0.75,0.1,0.3 --schedule workPackages:size=3)
endforeach()
# Mixed devices: a slowed emulated accelerator beside host cores.
hit_packages_check(mixed 2 --n 80 --iters 64 --schedule workPackages:size=3,depth=2
                   --devices "emu:0(slowdown=3,clock=cpu),cpu")
hit_packages_check(mixed_gemm 4 --workload gemm --n 72 --schedule workPackages:size=4,depth=4
                   --devices "emu:0(slowdown=2,bw=2GB/s),cpu*3")
# A stalled device (its third execution takes 100 times as long): the others take the packages
# left around it, and the answer is still right (Mandelbrot bit for bit, gemm against BLAS).
foreach(np 2 3 4)
  math(EXPR rest "${np} - 1")
  hit_packages_check(stall ${np} --n 96 --iters 64 --schedule workPackages:size=2,depth=2
                     --devices "emu:0(stall=2,clock=cpu),emu:1(clock=cpu)*${rest}")
  hit_packages_check(stall_gemm ${np} --workload gemm --n 64 --schedule workPackages:size=2,depth=2
                     --devices "emu:0(stall=2,clock=cpu),cpu*${rest}")
endforeach()
# Inputs laid out unlike the domain's blocks: A's rows move to the rank that computes them.
hit_packages_check(gemm_weighted 3 --workload gemm --n 48 --layout weighted:w=1,4,2
                   --schedule workPackages:size=4,depth=2 --partition threads)
# HIT_SCHEDULE when the command line says nothing; the command line wins over it.
add_test(NAME cli.packages.schedule_env
         COMMAND ${MPIEXEC_EXECUTABLE} -n 2 ${_packages} --n 40 --iters 16 --json --reps 1
                 --warmup 0)
set_tests_properties(cli.packages.schedule_env PROPERTIES LABELS "cli;apps" TIMEOUT 120
                     ENVIRONMENT "HIT_SCHEDULE=workPackages:size=3,depth=1"
                     PASS_REGULAR_EXPRESSION "\"package_size\":3,")
add_test(NAME cli.packages.schedule_flag_wins
         COMMAND ${MPIEXEC_EXECUTABLE} -n 2 ${_packages} --n 40 --iters 16 --json --reps 1
                 --warmup 0 --schedule static)
set_tests_properties(cli.packages.schedule_flag_wins PROPERTIES LABELS "cli;apps" TIMEOUT 120
                     ENVIRONMENT "HIT_SCHEDULE=workPackages:size=3,depth=1"
                     PASS_REGULAR_EXPRESSION "\"schedule\":\"static\"")

# A device failing mid-run: its packages are rerouted, every package is computed once, the
# answer is right, and the JSON says what moved where (apps/packages_failure.py checks it).
foreach(np 2 3 4)
  add_test(NAME cli.packages.failure.np${np}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/packages_failure.py
                   ${MPIEXEC_EXECUTABLE} ${np} ${_packages})
  set_tests_properties(cli.packages.failure.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300)
endforeach()
# The failing device is the only one placement let into the first round.
foreach(np 2 3)
  add_test(NAME cli.packages.failure_only_taker.np${np}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/packages_failure.py
                   ${MPIEXEC_EXECUTABLE} ${np} ${_packages} --only-taker)
  set_tests_properties(cli.packages.failure_only_taker.np${np} PROPERTIES LABELS "cli;apps"
                       TIMEOUT 300)
endforeach()

# A device slowing down a hundred times after it was measured: its packages keep missing, it
# withdraws, the others compute what it held, and the answer is right (apps/packages_withdraw.py).
foreach(np 2 3 4)
  add_test(NAME cli.packages.slowing.np${np}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/packages_withdraw.py
                   ${MPIEXEC_EXECUTABLE} ${np} ${_packages})
  set_tests_properties(cli.packages.slowing.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300)
endforeach()

function(hit_packages_error name expect args)
  add_test(NAME cli.packages.error.${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_packages} -DMPIEXEC=${MPIEXEC_EXECUTABLE}
                   -DNP=3 "-DARGS=${args}" "-DEXPECT=${expect}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
  set_tests_properties(cli.packages.error.${name} PROPERTIES LABELS "cli;apps" TIMEOUT 180)
endfunction()
hit_packages_error(size_zero "size=0 is not a positive number of rows"
                   "--n|20|--schedule|workPackages:size=0")
hit_packages_error(size_large "size=21 is larger than the domain's 20 rows"
                   "--n|20|--schedule|workPackages:size=21")
hit_packages_error(depth_zero "depth=0 is outside 1..1024" "--n|20|--schedule|workPackages:depth=0")
hit_packages_error(schedule_name "'blocks' is not a work-package spec" "--n|20|--schedule|blocks")
hit_packages_error(schedule_key "unknown.*speed|speed.*size, depth"
                   "--n|20|--schedule|workPackages:speed=2")
hit_packages_error(fail_spec "fail=soon is not valid" "--n|20|--devices|emu(fail=soon)")
hit_packages_error(stall_spec "stall=-1 is not a launch count" "--n|20|--devices|emu(stall=-1)")
hit_packages_error(all_fail "every device failed"
                   "--n|40|--iters|8|--schedule|workPackages:size=2|--devices|emu(fail=1)")
# The default size=auto: the devices fail while the size is measured, before any holds a package
# (it ended with the internal "0 packages were computed, of 64").
hit_packages_error(all_fail_auto "every device failed; [0-9]+ of [0-9]+ packages were not computed"
                   "--n|40|--iters|8|--devices|emu(fail=0)*3")
hit_packages_error(all_fail_auto_json "every device failed"
                   "--n|64|--iters|8|--json|--check|--devices|emu(fail=0)*3")
hit_packages_error(static_fail "failed at kernel execution 0"
                   "--n|40|--iters|8|--schedule|static|--devices|emu(fail=0)")
hit_packages_error(not_rows "does not give whole rows" "--n|20|--layout|dimBlocks:dim=1")
hit_packages_error(view_height "--view 0,0,0: the height must be a positive" "--n|20|--view|0,0,0")
hit_packages_error(view_count "--view: At least 3 required but received 2" "--n|20|--view|1,2")
hit_packages_error(width_zero "--width: '0' is not a whole number from 1" "--n|20|--width|0")

# The CUDA Mandelbrot body and the runtime's CUDA wait hook on a GPU, alone and beside host
# processes; skipped where there is none.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  foreach(case "1;cuda:0" "3;cuda:0,cpu*2")
    list(GET case 0 np)
    list(GET case 1 devices)
    add_test(NAME cli.packages.cuda_mandel.np${np}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/on_gpu.py ${HIT_BIN}/hit-info
                     ${MPIEXEC_EXECUTABLE} -n ${np} ${_packages} --check --reps 1 --warmup 0
                     --n 512 --iters 128 --devices ${devices}
                     --schedule workPackages:size=16,depth=2)
    set_tests_properties(cli.packages.cuda_mandel.np${np} PROPERTIES LABELS "cli;apps;cuda"
                         TIMEOUT 300 SKIP_REGULAR_EXPRESSION "no CUDA GPU here"
                         PASS_REGULAR_EXPRESSION "check: passed" FAIL_REGULAR_EXPRESSION "FAILED")
  endforeach()
endif()

# clusterCL's applications (Raca and Mehofer): every workload's --check at 1-4 processes on host
# cores; on emulated devices (one shared by every process, unequal ones, float); around a
# failing device; dcs by grid and by atoms; files by name against plain Python; bad input.
set(_clustercl dcs cor cov bop syrk gsp bsm conv bicg gsmv)
foreach(np 1 2 3 4)
  foreach(w ${_clustercl})
    hit_packages_check(${w} ${np} --workload ${w} --n 40 --m 18
                       --schedule workPackages:size=3,depth=2)
  endforeach()
endforeach()
foreach(w ${_clustercl})
  hit_packages_check(${w}_shared_emu 3 --workload ${w} --n 36 --m 14 --type float
                     --devices "emu:0(mem=64MiB)*3" --schedule workPackages:size=auto,depth=2)
  hit_packages_check(${w}_unequal 3 --workload ${w} --n 36 --m 14
                     --devices "emu:0(slowdown=3,clock=cpu),cpu,emu:1(bw=2GB/s)"
                     --schedule workPackages:size=2,depth=3)
  # The device fails at its fourth execution; its packages (and its partial sums) go elsewhere.
  # The others are 20 times slower, so that placement gives it packages on a loaded machine too.
  add_test(NAME cli.packages.${w}_failing.np3
           COMMAND ${MPIEXEC_EXECUTABLE} -n 3 ${_packages} --check --reps 1 --warmup 0
                   --workload ${w} --n 96 --m 16
                   --devices "emu:0(fail=3),emu:1(slowdown=20,clock=cpu)*2"
                   --schedule workPackages:size=2,depth=2)
  set_tests_properties(cli.packages.${w}_failing.np3 PROPERTIES LABELS "cli;apps" TIMEOUT 300
                       PASS_REGULAR_EXPRESSION "DEVICE FAILED.*check: passed"
                       FAIL_REGULAR_EXPRESSION "check: FAILED")
endforeach()
hit_packages_check(dcs_in 3 --workload dcs --strategy in --n 30 --m 20 --param atoms=70
                   --schedule workPackages:size=4)
hit_packages_check(dcs_in_emu 2 --workload dcs --strategy in --n 30 --m 20 --param atoms=70
                   --devices "emu:0,emu:1(slowdown=2)" --schedule workPackages:size=4)
hit_packages_check(bop_steps 2 --workload bop --n 30 --param steps=1000 --param sigma=0.45)
if(Python3_EXECUTABLE)
  foreach(np 1 3)
    add_test(NAME cli.packages.clustercl_files.np${np}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/packages_clustercl_files.py
                     ${MPIEXEC_EXECUTABLE} ${np} ${_packages})
    set_tests_properties(cli.packages.clustercl_files.np${np} PROPERTIES LABELS "cli;apps"
                         TIMEOUT 600)
  endforeach()
endif()
hit_packages_error(unknown_param "--param x: workload bsm takes r, sigma"
                   "--workload|bsm|--n|20|--param|x=1")
hit_packages_error(param_value "--param r=abc: bsm takes a finite number for r"
                   "--workload|bsm|--n|20|--param|r=abc")
hit_packages_error(param_no_value "--param alpha: expected NAME=VALUE"
                   "--workload|gsmv|--n|20|--param|alpha")
hit_packages_error(bop_steps "bop takes at most 4096 steps"
                   "--workload|bop|--n|20|--param|steps=5000")
hit_packages_error(input_unknown "workload syrk has no input array 'z'"
                   "--workload|syrk|--n|20|--input|z=in.bin")
hit_packages_error(output_not_written "workload syrk has no output array 'a'"
                   "--workload|syrk|--n|20|--output|a=out.bin")
hit_packages_error(input_missing "cannot read tile data from '.*no-such-file.bin'"
                   "--workload|syrk|--n|20|--input|a=no-such-file.bin")
hit_packages_error(gsp_wide "Gram-Schmidt needs m <= n" "--workload|gsp|--n|10|--m|20")
hit_packages_error(strategy_other "only dcs has a choice of strategy"
                   "--workload|conv|--n|20|--strategy|in")
hit_packages_error(clustercl_static "the static schedule runs mandelbrot and gemm"
                   "--workload|syrk|--n|20|--schedule|static")
hit_packages_error(named_for_gemm "are for the clusterCL workloads"
                   "--workload|gemm|--n|20|--param|x=1")
hit_packages_error(reduced_threads "a reduced output needs a package's blocks run one at a time"
                   "--workload|bicg|--n|20|--partition|threads:threads=2")
