# Command-line tests of the examples: hit-cannon and hit-jacobi pass --check at several process
# counts, sizes, layouts and element types; result files match an independent serial product;
# bad input fails on every rank with one line, under a timeout.
set(_cannon ${HIT_BIN}/hit-cannon)
set(_jacobi ${HIT_BIN}/hit-jacobi)
set(_appdir ${CMAKE_CURRENT_LIST_DIR}/apps)
set(_errcheck ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
find_package(Python3 COMPONENTS Interpreter QUIET)

# hit-cannon --check: name, process count, then the program's flags.
function(hit_cannon_check name np)
  add_test(NAME cli.cannon.${name}.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} -n ${np} ${_cannon} --check --reps 1 --warmup 0 ${ARGN})
  set_tests_properties(cli.cannon.${name}.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1"
                       PASS_REGULAR_EXPRESSION "check: passed" FAIL_REGULAR_EXPRESSION "FAILED")
endfunction()
# n in {1, 7, 64, 257, 2039} at 1, 4 and 9 processes; layouts mixed per matrix; double and float.
foreach(np 1 4 9)
  # The ranks of the first grid row are the fast class of blocksLB.
  if(np EQUAL 1)
    set(fast 0)
  elseif(np EQUAL 4)
    set(fast 0,1)
  else()
    set(fast 0,1,2)
  endif()
  hit_cannon_check(n1 ${np} --n 1)
  hit_cannon_check(n7_float ${np} --n 7 --type float)
  hit_cannon_check(n64_mixed ${np} --n 64 --layout-a blocksLB:factor=0.7,fast=${fast}
                   --layout-b blocks --layout-c blocksLB:factor=0.7,fast=${fast})
  hit_cannon_check(n257_cyclic_float ${np} --n 257 --layout cyclic --type float)
  hit_cannon_check(n2039 ${np} --n 2039)
endforeach()
hit_cannon_check(rectangular 4 --n 50 --m 37 --k 23 --layout-a weighted:w=1,3 --layout-c weighted:w=1,3)
hit_cannon_check(emulated_devices 4 --n 200 --devices "emu:0(slowdown=2)*1,cpu*3"
                 --layout-a blocksLB:factor=0.4 --layout-c blocksLB:factor=0.4)
hit_cannon_check(env_layout_override 4 --n 30)
set_tests_properties(cli.cannon.env_layout_override.np4 PROPERTIES
  ENVIRONMENT "OPENBLAS_NUM_THREADS=1;HIT_LAYOUT_A=cyclic;HIT_LAYOUT_B=cyclic;HIT_LAYOUT_C=cyclic"
  PASS_REGULAR_EXPRESSION "layouts: A cyclic, B cyclic, C cyclic(.|\n)*check: passed")

# Result files against a serial product computed in Python.
if(Python3_Interpreter_FOUND)
  foreach(case "4;64;64;64;double" "4;30;50;20;float" "9;40;41;42;double" "1;17;5;9;double")
    list(GET case 0 np)
    list(GET case 1 n)
    list(GET case 2 m)
    list(GET case 3 k)
    list(GET case 4 type)
    set(name cli.cannon.files.${n}x${m}x${k}_${type}.np${np})
    add_test(NAME ${name}
             COMMAND ${Python3_EXECUTABLE} ${_appdir}/cannon_files.py ${n} ${m} ${k} ${type}
                     ${CMAKE_CURRENT_BINARY_DIR}/${name} -- ${MPIEXEC_EXECUTABLE} -n ${np} ${_cannon}
                     --reps 1 --warmup 0)
    set_tests_properties(${name} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                         ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
  endforeach()
endif()

# hit-jacobi --check: bit for bit against a serial run.
function(hit_jacobi_check name np)
  add_test(NAME cli.jacobi.${name}.np${np}
           COMMAND ${MPIEXEC_EXECUTABLE} -n ${np} ${_jacobi} --check --reps 1 --warmup 0 ${ARGN})
  set_tests_properties(cli.jacobi.${name}.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                       PASS_REGULAR_EXPRESSION "check: bit-for-bit equal" FAIL_REGULAR_EXPRESSION "FAILED")
endfunction()
foreach(np 1 2 3 4)
  hit_jacobi_check(n61 ${np} --n 61 --iters 25)
  hit_jacobi_check(n40_float ${np} --n 40 --iters 9 --type float)
endforeach()
hit_jacobi_check(nonsquare_grid 4 --n 37 --iters 15 --topology mesh:dims=4x1)
hit_jacobi_check(nonsquare_mesh2d 3 --n 50 --iters 15)
hit_jacobi_check(weighted 4 --n 45 --iters 11 --layout weighted:w=1,3)
hit_jacobi_check(emulated 4 --n 40 --iters 6 --devices "emu:0(slowdown=2)*2,cpu*2")
# Several repetitions with an odd iteration count: each repetition re-initialises both grids on
# the host while the device still holds the last one's results (they must not come back).
add_test(NAME cli.jacobi.emulated_repetitions.np2
         COMMAND ${MPIEXEC_EXECUTABLE} -n 2 ${_jacobi} --check --reps 2 --warmup 1 --n 30 --iters 5
                 --devices "emu*2")
set_tests_properties(cli.jacobi.emulated_repetitions.np2 PROPERTIES LABELS "cli;apps" TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "check: bit-for-bit equal" FAIL_REGULAR_EXPRESSION "FAILED")
hit_jacobi_check(inactive_ranks 4 --n 3 --iters 4 --topology array)

# Bad input: every rank exits non-zero with one line naming the value, no hang (4 processes).
function(hit_app_error program name expect args)
  add_test(NAME cli.${program}.error.${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/hit-${program} -DMPIEXEC=${MPIEXEC_EXECUTABLE}
                   -DNP=4 "-DARGS=${args}" "-DEXPECT=${expect}" -P ${_errcheck})
  set_tests_properties(cli.${program}.error.${name} PROPERTIES LABELS "cli;apps" TIMEOUT 180)
endfunction()
hit_app_error(cannon size_zero "n: Value 0 not in range|--n" "--n|0")
hit_app_error(cannon size_m_zero "--m: '0' is not a whole number from 1" "--n|5|--m|0")
hit_app_error(cannon unknown_layout "unknown layout plug-in 'nope'.*registered: " "--n|8|--layout-a|nope")
hit_app_error(cannon bad_param "no parameter 'q'" "--n|8|--layout-c|blocks:q=1")
hit_app_error(cannon missing_file "/nonexistent/a.raw" "--n|8|--a|/nonexistent/a.raw")
hit_app_error(cannon wrong_size_file "expected 512 bytes" "--n|8|--a|${CMAKE_CURRENT_LIST_DIR}/apps/cannon_files.py")
hit_app_error(cannon unwritable_output "/nonexistent/dir/c.raw" "--n|8|--c-out|/nonexistent/dir/c.raw")
hit_app_error(cannon bad_devices "unknown device kind 'gpu'" "--n|8|--devices|gpu*4")
hit_app_error(cannon incompatible_layouts "A's row blocks to equal C's" "--n|8|--layout-a|cyclic")
hit_app_error(jacobi too_small "--n: '2' is not a whole number from 3 to" "--n|2")
hit_app_error(jacobi strided_layout "halo needs contiguous blocks" "--n|20|--layout|cyclic")
# A layout whose neighbours topology arithmetic does not find: refused, not run with stale faces.
hit_app_error(jacobi unmatched_layout "rank 2 with \\[0:10\\]\\[10:20\\], is not next to it along shape axis 0"
              "--n|20|--topology|mesh2d|--layout|columns2d")
hit_app_error(jacobi unsplit_axis "neighbours along shape axis 1, for which the topology has no axis"
              "--n|20|--topology|array|--layout|dimBlocks:dim=1")
hit_app_error(jacobi bad_topology "unknown topology plug-in 'torus'" "--n|20|--topology|torus")
hit_app_error(jacobi balance_mode "--balance: auto not in {off,cpm,fpm}" "--n|20|--balance|auto")
hit_app_error(jacobi balance_eps "--balance-eps: '0' is not a number above 0" "--n|20|--balance|fpm|--balance-eps|0")
hit_app_error(jacobi balance_every "--balance-every: '0' is not a whole number from 1" "--n|20|--balance|fpm|--balance-every|0")
hit_app_error(jacobi balance_window "--balance-window: '0' is not a whole number from 1 to 1000" "--n|20|--balance|fpm|--balance-window|0")
hit_app_error(linsolve balance_window "--balance-window: 'x' is not a whole number from 1 to 1000" "--n|20|--balance|fpm|--balance-window|x")
hit_app_error(jacobi balance_reserve "--balance-reserve: '-0.5' is not a number of at least 0" "--n|20|--balance|fpm|--balance-reserve|-0.5")
hit_app_error(jacobi balance_not_rows "splits axis 1" "--n|20|--balance|fpm|--topology|mesh2d")
hit_app_error(jacobi speed_change "change=fast is not valid" "--n|20|--balance|fpm|--devices|emu(change=fast)")

# --balance fpm on devices that change speed mid-run: bit for bit, a rank emptied and refilled.
foreach(np 1 2 3 4)
  add_test(NAME cli.jacobi.balance.np${np}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/balance_check.py
                   ${MPIEXEC_EXECUTABLE} ${np} ${_jacobi})
  # Alone: the balancer acts on measured times of a few microseconds per iteration, which other
  # tests running beside it on two cores upset (about one run in six failed under that load).
  set_tests_properties(cli.jacobi.balance.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1" RUN_SERIAL TRUE)
endforeach()
# --balance-models: the rows start from the stored models' partition (as hit-fpm partition
# computes it), listed or by {rank}, bit for bit; models built with --resident are accepted.
foreach(np 1 2 3 4)
  add_test(NAME cli.jacobi.balance_models.np${np}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/balance_models_check.py
                   ${MPIEXEC_EXECUTABLE} ${np} ${_jacobi} ${HIT_BIN}/hit-fpm)
  set_tests_properties(cli.jacobi.balance_models.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300
                       ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
endforeach()
hit_app_error(jacobi balance_models_count "--balance-models: 2 files for 4 processes"
              "--n|20|--balance|fpm|--balance-models|a.csv,b.csv")
hit_app_error(jacobi balance_models_missing "cannot read model file '/nonexistent/m0.csv'"
              "--n|20|--balance|fpm|--balance-models|/nonexistent/m{rank}.csv")
hit_app_error(jacobi balance_models_off "--balance-models needs --balance cpm or fpm"
              "--n|20|--balance-models|m{rank}.csv")
hit_app_error(linsolve balance_models_count "--balance-models: 1 files for 4 processes"
              "--n|20|--balance|cpm|--balance-models|a.csv")

# Non-square process counts (needs 3 processes, not 4).
add_test(NAME cli.cannon.error.non_square
         COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_cannon} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=3
                 "-DARGS=--n|8" "-DEXPECT=got 3 \\(nearest squares: 1 and 4\\)" -P ${_errcheck})
set_tests_properties(cli.cannon.error.non_square PROPERTIES LABELS "cli;apps" TIMEOUT 180)

# Data stays on its device: per-rank host<->device bytes of both programs on emulated devices
# within what residency allows (bounds computed from the layout by the script), and results
# bit-identical to host runs, at 1-4 processes.
if(Python3_Interpreter_FOUND)
  foreach(app jacobi cannon)
    set(counts 1 2 3 4)
    if(app STREQUAL "cannon")
      set(counts 1 4 9)  # square grids
    endif()
    foreach(np ${counts})
      add_test(NAME cli.residency.${app}.np${np}
               COMMAND ${Python3_EXECUTABLE} ${_appdir}/residency_check.py ${MPIEXEC_EXECUTABLE} ${np}
                       ${HIT_BIN} ${app} ${CMAKE_CURRENT_BINARY_DIR}/residency-${app}-${np})
      set_tests_properties(cli.residency.${app}.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300)
    endforeach()
  endforeach()
endif()

# How often the host waits for its device: hit-jacobi's queued sweeps wait only for the halo and
# the result, the other programs at least once per launch on emu and never on cpu (per-rank
# `launches` and `device_waits`), at 1-4 processes, every run with --check.
if(Python3_Interpreter_FOUND)
  foreach(np 1 2 3 4)
    add_test(NAME cli.launch_waits.np${np}
             COMMAND ${Python3_EXECUTABLE} ${_appdir}/launch_waits_check.py ${MPIEXEC_EXECUTABLE} ${np}
                     ${HIT_BIN})
    set_tests_properties(cli.launch_waits.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300)
  endforeach()
endif()

# Several ranks on one device whose memory holds one rank's data and a little more: every program
# passes its check, writes what the same run writes on cpu, and its ranks give up resident copies
# for each other only then (docs/devices.md, "Several ranks on one device"). Cannon runs on square
# process counts only.
if(Python3_Interpreter_FOUND)
  foreach(case "cannon;4" "jacobi;2" "jacobi;3" "jacobi;4" "summa;2" "summa;3" "summa;4"
               "cholesky;3" "packages;3" "jacobi-fpm;3" "linsolve;2" "linsolve;4")
    list(GET case 0 app)
    list(GET case 1 np)
    add_test(NAME cli.shared_device.${app}.np${np}
             COMMAND ${Python3_EXECUTABLE} ${_appdir}/shared_device_check.py ${MPIEXEC_EXECUTABLE}
                     ${np} ${HIT_BIN} ${app} ${CMAKE_CURRENT_BINARY_DIR}/shared-${app}-${np})
    set_tests_properties(cli.shared_device.${app}.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 300)
  endforeach()
endif()

# A failure on one process only, injected on each process in turn, ends the run on every process
# with one line naming that process and a non-zero exit: never a hang (the others learn of it in
# their next wait). Device out of memory inside a launch (Cannon and Jacobi), a host allocation
# that fails on one process (Jacobi's tile).
foreach(r 0 1 2 3)
  set(devs "")
  foreach(p 0 1 2 3)
    if(p EQUAL r)
      list(APPEND devs "emu:0(mem=256KiB)")
    else()
      list(APPEND devs "cpu")
    endif()
  endforeach()
  string(REPLACE ";" "," devs "${devs}")
  if(r EQUAL 0)
    set(who "")
  else()
    set(who "rank ${r}: ")
  endif()
  hit_app_error(cannon fail_launch_on_rank${r} "${who}device emu:0\\(mem=256KiB\\).*out of memory"
                "--n|512|--devices|${devs}")
  hit_app_error(jacobi fail_launch_on_rank${r} "${who}device emu:0\\(mem=256KiB\\).*out of memory"
                "--n|512|--devices|${devs}")
  set(w "")
  foreach(p 0 1 2 3)
    if(p EQUAL r)
      list(APPEND w 1000000000)
    else()
      list(APPEND w 1)
    endif()
  endforeach()
  string(REPLACE ";" "," w "${w}")
  hit_app_error(jacobi fail_alloc_on_rank${r} "${who}cannot allocate [0-9]+ bytes of host memory"
                "--n|1000000|--topology|array|--layout|weighted:w=${w}")
endforeach()

# Precedence of every run-time override: the command line wins over HIT_* variables, which win
# over the program's own default. Each case at 4 processes, read from the JSON result.
function(hit_precedence name env expect)
  add_test(NAME cli.precedence.${name} COMMAND ${MPIEXEC_EXECUTABLE} -n 4 ${ARGN} --json --reps 1
                                               --warmup 0)
  set(vars "OPENBLAS_NUM_THREADS=1")
  if(env)
    list(APPEND vars ${env})
  endif()
  set_tests_properties(cli.precedence.${name} PROPERTIES LABELS "cli;apps" TIMEOUT 120
                       ENVIRONMENT "${vars}" PASS_REGULAR_EXPRESSION "${expect}")
endfunction()
set(_cyc "HIT_LAYOUT_A=cyclic;HIT_LAYOUT_B=cyclic;HIT_LAYOUT_C=cyclic")
hit_precedence(cannon_layout_code "" "\"layouts\":{\"a\":\"blocks\",\"b\":\"blocks\",\"c\":\"blocks\"}"
               ${_cannon} --n 30)
hit_precedence(cannon_layout_env "${_cyc}" "\"layouts\":{\"a\":\"cyclic\",\"b\":\"cyclic\",\"c\":\"cyclic\"}"
               ${_cannon} --n 30)
hit_precedence(cannon_layout_cli "${_cyc}" "\"layouts\":{\"a\":\"blocks\",\"b\":\"blocks\",\"c\":\"blocks\"}"
               ${_cannon} --n 30 --layout-a blocks --layout-b blocks --layout-c blocks)
hit_precedence(cannon_layout_cli_all "${_cyc}" "\"layouts\":{\"a\":\"blocks\",\"b\":\"blocks\",\"c\":\"blocks\"}"
               ${_cannon} --n 30 --layout blocks)
hit_precedence(cannon_partition_code "" "\"partition\":\"single\"" ${_cannon} --n 30)
hit_precedence(cannon_partition_env "HIT_PARTITION_C=threads" "\"partition\":\"threads" ${_cannon} --n 30)
hit_precedence(cannon_partition_cli "HIT_PARTITION_C=threads" "\"partition\":\"single\""
               ${_cannon} --n 30 --partition single)
hit_precedence(jacobi_layout_code "" "\"layout\":\"blocks\"" ${_jacobi} --n 30 --iters 2)
hit_precedence(jacobi_layout_env "HIT_LAYOUT_GRID=dimBlocks" "\"layout\":\"dimBlocks\"" ${_jacobi} --n 30 --iters 2)
hit_precedence(jacobi_layout_cli "HIT_LAYOUT_GRID=dimBlocks" "\"layout\":\"blocks\""
               ${_jacobi} --n 30 --iters 2 --layout blocks)
hit_precedence(jacobi_partition_env "HIT_PARTITION_GRID=threads" "\"partition\":\"threads" ${_jacobi} --n 30 --iters 2)
hit_precedence(jacobi_partition_cli "HIT_PARTITION_GRID=threads" "\"partition\":\"single\""
               ${_jacobi} --n 30 --iters 2 --partition single)

# Configuration every process must share is agreed at start: a HIT_* variable set on one process
# only, or a plug-in path that does not load, is one line and a non-zero exit on every process.
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.start.hit_variable_on_one_process
           COMMAND ${Python3_EXECUTABLE} ${_appdir}/start_check.py ${MPIEXEC_EXECUTABLE} ${_cannon})
  set_tests_properties(cli.start.hit_variable_on_one_process PROPERTIES LABELS "cli;apps" TIMEOUT 120)
endif()
add_test(NAME cli.start.bad_plugin_path
         COMMAND ${CMAKE_COMMAND} -E env HIT_PLUGIN_PATH=/nonexistent/plugins
                 ${CMAKE_COMMAND} -DPROGRAM=${_cannon} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=4
                 "-DARGS=--n|8" "-DEXPECT=HIT_PLUGIN_PATH entry '/nonexistent/plugins'" -P ${_errcheck})
set_tests_properties(cli.start.bad_plugin_path PROPERTIES LABELS "cli;apps" TIMEOUT 120)

# Counts are checked as typed, with a message that says what is allowed (at 1 and 4 processes).
hit_app_error(cannon n_zero "--n: '0' is not a whole number from 1 to 9223372036854775807 \\(see" "--n|0")
hit_app_error(cannon n_too_large "--n: '99999999999999999999' is not a whole number .*\\(too large\\)"
              "--n|99999999999999999999")
hit_app_error(cannon n_text "--n: 'abc' is not a whole number" "--n|abc")
hit_app_error(cannon m_negative "--m: '-3' is not a whole number from 1" "--n|8|--m|-3")
hit_app_error(cannon k_negative "--k: '-3' is not a whole number from 1" "--n|8|--k|-3")
hit_app_error(cannon reps_zero "--reps: '0' is not a whole number from 1 to 2147483647" "--n|8|--reps|0")
hit_app_error(cannon reps_too_large "--reps: '3000000000' is not a whole number .*\\(too large\\)"
              "--n|8|--reps|3000000000")
hit_app_error(cannon warmup_negative "--warmup: '-1' is not a whole number from 0" "--n|8|--warmup|-1")
hit_app_error(jacobi iters_negative "--iters: '-1' is not a whole number from 0 to 2147483647" "--iters|-1")

# The JSON results have the fields docs/results.md lists, the schema name and the version.
if(Python3_Interpreter_FOUND)
  foreach(np 1 4)
    add_test(NAME cli.results.fields_as_documented.np${np}
             COMMAND ${Python3_EXECUTABLE} ${_appdir}/results_check.py ${MPIEXEC_EXECUTABLE} ${np}
                     ${HIT_BIN} ${PROJECT_SOURCE_DIR}/docs/results.md ${PROJECT_VERSION})
    set_tests_properties(cli.results.fields_as_documented.np${np} PROPERTIES LABELS "cli;apps"
                         TIMEOUT 180 ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
  endforeach()
endif()

# Output files: an empty name is refused by the parser; a place where C cannot be written is found
# before the multiplication (the message of the early check, not of the MPI-IO write after it).
add_test(NAME cli.cannon.error.empty_output
         COMMAND bash -c "out=$(\"$0\" --n 8 --c-out '' 2>&1); rc=$?; echo \"$out\"; echo \"exit=$rc\""
                 ${_cannon})
set_tests_properties(cli.cannon.error.empty_output PROPERTIES LABELS "cli;apps"
                     PASS_REGULAR_EXPRESSION "^hit-cannon: error: --c-out: the file name is empty[^\n]*\nexit=2")
hit_app_error(cannon output_checked_first "cannot write C \\(--c-out\\) '/proc/c.raw'"
              "--n|3000|--reps|50|--c-out|/proc/c.raw")

# Temporaries of killed writers (this host, process gone) are removed by the next successful write
# of the same file; those of live processes and other hosts stay. Tile files (MPI-IO, 1 and 4
# processes) and whole files (an SVG).
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.files.stale_temporaries
           COMMAND ${Python3_EXECUTABLE} ${_appdir}/stale_check.py ${MPIEXEC_EXECUTABLE} ${HIT_BIN}
                   ${CMAKE_CURRENT_BINARY_DIR}/stale-temporaries)
  set_tests_properties(cli.files.stale_temporaries PROPERTIES LABELS "cli;apps" TIMEOUT 120)
endif()

# A device too small for its process's tile, on one process only. With the outOfCore partition the
# resident grids stay on the host of that process and its launches stage them chunk by chunk: the
# run completes, bit for bit (device of 64 KiB for a block of 130 KiB). Where even one row does not
# fit (Cannon stages A and B whole), every process ends with the same line: no hang.
hit_jacobi_check(out_of_core_one_small_device 4 --n 256 --iters 5 --partition outOfCore
                 --devices "cpu,emu:0(mem=64KiB),cpu,cpu")
hit_app_error(cannon out_of_core_too_small_on_rank1
              "rank 1: partition 'outOfCore' of .*not even one row fits the device budget"
              "--n|512|--partition|outOfCore|--devices|cpu,emu:0(mem=16KiB),cpu,cpu")

# An output file the user made read-only is not replaced (renaming a temporary over it needs only
# the folder's permission): one line naming the file on every rank, the file untouched.
set(_readonly ${CMAKE_CURRENT_LIST_DIR}/common/readonly_check.cmake)
set(_readonly_dir ${CMAKE_CURRENT_BINARY_DIR}/readonly)
function(hit_readonly_output program name np file expect args)
  add_test(NAME cli.${program}.error.readonly_${name}.np${np}
           COMMAND ${CMAKE_COMMAND} -DFILE=${file} -DPROGRAM=${HIT_BIN}/hit-${program}
                   -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${np} "-DARGS=${args}" "-DEXPECT=${expect}"
                   -P ${_readonly})
  set_tests_properties(cli.${program}.error.readonly_${name}.np${np} PROPERTIES
                       LABELS "cli;apps" TIMEOUT 120 ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
endfunction()
foreach(np 1 4)
  set(f ${_readonly_dir}/cannon_c_np${np}.raw)
  hit_readonly_output(cannon c_out ${np} ${f}
                      "cannot write C \\(--c-out\\) '${f}': the file exists and is read-only"
                      "--n|8|--reps|1|--warmup|0|--c-out|${f}")
  set(f ${_readonly_dir}/cholesky_l_np${np}.raw)
  hit_readonly_output(cholesky c_out ${np} ${f}
                      "cannot write L \\(--c-out\\) '${f}': the file exists and is read-only"
                      "--n|8|--reps|1|--warmup|0|--c-out|${f}")
  set(f ${_readonly_dir}/linsolve_x_np${np}.raw)
  hit_readonly_output(linsolve x_out ${np} ${f}
                      "cannot write x \\(--out\\) '${f}': the file exists and is read-only"
                      "--n|8|--iters|2|--reps|1|--warmup|0|--out|${f}")
  set(f ${_readonly_dir}/jacobi_np${np}.raw)
  hit_readonly_output(jacobi out ${np} ${f}
                      "cannot write grid \\(--out\\) '${f}': the file exists and is read-only"
                      "--n|8|--iters|2|--reps|1|--warmup|0|--out|${f}")
  set(f ${_readonly_dir}/jacobi_svg_np${np}.svg)
  hit_readonly_output(jacobi svg ${np} ${f} "cannot write file '${f}': the file exists and is read-only"
                      "--n|8|--iters|2|--reps|1|--warmup|0|--svg|${f}")
  set(f ${_readonly_dir}/fpm_model_np${np}-0.csv)
  hit_readonly_output(fpm build_out ${np} ${f}
                      "cannot write model file \\(--out\\) '${f}': the file exists and is read-only"
                      "build|--max|4|--points|1|--out|${_readonly_dir}/fpm_model_np${np}-{rank}.csv")
endforeach()

# --seed is a whole number from 0: a negative or too large seed is an error on every rank (CLI11
# took -1 as 2^64 - 1, silently; ref-cannon's strtoul did the same).
foreach(program cannon summa jacobi linsolve cholesky packages)
  hit_app_error(${program} seed_negative "--seed: '-1' is not a whole number from 0 to" "--n|8|--seed|-1")
  hit_app_error(${program} seed_too_large
                "--seed: '18446744073709551616' is not a whole number from 0 to 9223372036854775807 \\(too large\\)"
                "--n|8|--seed|18446744073709551616")
endforeach()
add_test(NAME cli.ref-cannon.error.seed_negative
         COMMAND ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/ref-cannon -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=4
                 "-DARGS=--n|8|--seed|-1"
                 "-DEXPECT=--seed '-1' is not a whole number from 0 to 18446744073709551615"
                 -P ${_errcheck})
set_tests_properties(cli.ref-cannon.error.seed_negative PROPERTIES LABELS "cli;apps" TIMEOUT 60)
foreach(ref pdgemm pdpotrf pdgeqrf)
  if(TARGET ref-${ref})
    add_test(NAME cli.ref-${ref}.error.seed_negative
             COMMAND ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/ref-${ref} -DMPIEXEC=${MPIEXEC_EXECUTABLE}
                     -DNP=2 "-DARGS=--n|8|--nb|4|--seed|-1"
                     "-DEXPECT=--seed '-1' is not a whole number from 0 to 2147483647"
                     -P ${_errcheck})
    set_tests_properties(cli.ref-${ref}.error.seed_negative PROPERTIES LABELS "cli;apps" TIMEOUT 60)
  endif()
endforeach()
if(TARGET ref-pdgeqrf)
  add_test(NAME cli.ref-pdgeqrf.error.fewer_rows
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/ref-pdgeqrf -DMPIEXEC=${MPIEXEC_EXECUTABLE}
                   -DNP=2 "-DARGS=--m|4|--n|8|--nb|4"
                   "-DEXPECT=ref-pdgeqrf: error: needs rows\\*cols == P, m >= n >= 1, nb >= 1"
                   -P ${_errcheck})
  set_tests_properties(cli.ref-pdgeqrf.error.fewer_rows PROPERTIES LABELS "cli;apps" TIMEOUT 60)
endif()

# A NaN or an infinity in an input matrix is refused on every rank, naming the file and the first
# such element (OpenBLAS's potrf took a NaN pivot and hit-cholesky exited 0, writing NaNs with
# --c-out; the products carried them into C).
if(Python3_Interpreter_FOUND)
  set(_nonfinite_dir ${CMAKE_CURRENT_BINARY_DIR}/nonfinite)
  # name; program; process count; file; type; n; i; j; value; message (regex); arguments
  foreach(case
      "cholesky_nan|cholesky|4|a_nan.raw|double|8|5|2|nan|A \\(--a\\) '[^']*a_nan.raw': element \\[5, 2\\] \\(position 42 of the file\\) is NaN|--n|8|--b|4|--reps|1|--warmup|0|--a|{file}|--c-out|{work}/l_nan.raw"
      "cholesky_nan_np1|cholesky|1|a_nan1.raw|double|8|0|0|nan|element \\[0, 0\\] \\(position 0 of the file\\) is NaN|--n|8|--reps|1|--warmup|0|--a|{file}|--c-out|{work}/l_nan1.raw"
      "cannon_inf|cannon|4|b_inf.raw|double|8|7|7|inf|B \\(--b\\) '[^']*b_inf.raw': element \\[7, 7\\] \\(position 63 of the file\\) is \\+inf|--n|8|--reps|1|--warmup|0|--b|{file}|--c-out|{work}/c_inf.raw"
      "cannon_float_nan|cannon|4|a_nan_float.raw|float|8|3|6|nan|A \\(--a\\) '[^']*a_nan_float.raw': element \\[3, 6\\] \\(position 30 of the file\\) is NaN|--n|8|--type|float|--layout|cyclic|--reps|1|--warmup|0|--a|{file}"
      "summa_minus_inf|summa|3|a_minus_inf.raw|double|8|0|3|-inf|A \\(--a\\) '[^']*a_minus_inf.raw': element \\[0, 3\\] \\(position 3 of the file\\) is -inf|--n|8|--reps|1|--warmup|0|--a|{file}|--c-out|{work}/c_minus_inf.raw")
    string(REPLACE "|" ";" parts "${case}")
    list(POP_FRONT parts name program np file type n i j value expect)
    add_test(NAME cli.${program}.error.nonfinite_${name}
             COMMAND ${Python3_EXECUTABLE} ${_appdir}/nonfinite_check.py ${CMAKE_COMMAND} ${_errcheck}
                     ${MPIEXEC_EXECUTABLE} ${np} ${HIT_BIN}/hit-${program} ${_nonfinite_dir} ${file}
                     ${type} ${n} ${i} ${j} ${value} "${expect}" ${parts})
    set_tests_properties(cli.${program}.error.nonfinite_${name} PROPERTIES LABELS "cli;apps"
                         TIMEOUT 120 ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
  endforeach()
endif()
