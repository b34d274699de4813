# hit-info: the physical topology, the devices found and the binding of every rank
# (docs/devices.md §1–§3).

add_test(NAME cli.info.default COMMAND ${HIT_BIN}/hit-info)
set_tests_properties(cli.info.default PROPERTIES LABELS "cli"
  PASS_REGULAR_EXPRESSION "physical topology: 1 node.*binding \\(default\\): (cpu:0|cuda:0).*device kinds: cpu")

add_test(NAME cli.info.json COMMAND ${HIT_BIN}/hit-info --json)
set_tests_properties(cli.info.json PROPERTIES LABELS "cli"
  PASS_REGULAR_EXPRESSION "^\\{.*\"nodes\":\\[.*\"ranks\":\\[\\{.*\"device\":\"(cpu|cuda):0\".*\\}\n$")

# Four ranks in two emulated nodes, two of them sharing one emulated device.
add_test(NAME cli.info.emulated
  COMMAND ${MPIEXEC_EXECUTABLE} -n 4 ${HIT_BIN}/hit-info --nodes 2
          --devices "emu:0(mem=64MiB,slowdown=4)*2,cpu*2")
set_tests_properties(cli.info.emulated PROPERTIES LABELS "cli;mpi"
  PASS_REGULAR_EXPRESSION "2 nodes \\(emulated.*rank 1  node 0  emu:0\\(mem=64MiB,slowdown=4\\) \\[emulated\\].*shared by 2 ranks.*rank 3  node 1  cpu:1")

# Which ranks share which device: ranks 0 and 2 on emu:0, 1 and 3 on emu:1 (text and JSON).
add_test(NAME cli.info.shared
  COMMAND ${MPIEXEC_EXECUTABLE} -n 4 ${HIT_BIN}/hit-info --devices "emu:0,emu:1,emu:0,emu:1")
set_tests_properties(cli.info.shared PROPERTIES LABELS "cli;mpi"
  PASS_REGULAR_EXPRESSION "shared device emu:0 on node 0: ranks 0, 2 \\(.*\n.*shared device emu:1 on node 0: ranks 1, 3 \\(")
add_test(NAME cli.info.shared_json
  COMMAND ${MPIEXEC_EXECUTABLE} -n 3 ${HIT_BIN}/hit-info --json --devices "emu:0*2,cpu")
set_tests_properties(cli.info.shared_json PROPERTIES LABELS "cli;mpi"
  PASS_REGULAR_EXPRESSION "\"rank\":1,.*\"shared_with\":\\[0,1\\].*\"rank\":2,.*\"shared_with\":\\[2\\]")

# Bad input: one line, exit status 2, the grammar or the count of what exists. (With a pass
# expression ctest ignores the exit status, so the script prints it.)
function(hit_info_fails name expected)
  add_test(NAME cli.info.${name}
    COMMAND bash -c "out=$(\"$0\" \"$@\" 2>&1); rc=$?; echo \"$out\"; echo \"exit=$rc\"" ${ARGN})
  set_tests_properties(cli.info.${name} PROPERTIES LABELS "cli"
    PASS_REGULAR_EXPRESSION "${expected}.*exit=2"
    FAIL_REGULAR_EXPRESSION "Segmentation|Abort|BAD TERMINATION")
endfunction()
hit_info_fails(unknown_kind "hit-info: error: .*unknown device kind 'gpu'.*grammar: spec = item"
  ${HIT_BIN}/hit-info --devices gpu)
hit_info_fails(bad_mem "mem=lots is not valid: 'lots' is not a byte size.*KiB, MiB, GiB"
  ${HIT_BIN}/hit-info --devices "emu(mem=lots)")
hit_info_fails(bad_slowdown "slowdown=fast is not valid"
  ${HIT_BIN}/hit-info --devices "emu(slowdown=fast)")
hit_info_fails(missing_gpu "rank 0 is bound to cuda:3.*(has no CUDA GPU|which does not exist)"
  ${MPIEXEC_EXECUTABLE} -n 2 ${HIT_BIN}/hit-info --devices cuda:3)
hit_info_fails(count_mismatch "binds 3 processes but the run has 2"
  ${MPIEXEC_EXECUTABLE} -n 2 ${HIT_BIN}/hit-info --devices "cpu*3")
hit_info_fails(nodes_zero "--nodes: '0' is not a whole number from 1 to 2147483647"
  ${HIT_BIN}/hit-info --nodes 0)

# Every program says its version and which hitmap++ it is.
foreach(program hit-cannon hit-jacobi hit-layout hit-fpm hit-info hit-bench-fpm hit-bench-machine)
  add_test(NAME cli.version.${program} COMMAND ${HIT_BIN}/${program} --version)
  set_tests_properties(cli.version.${program} PROPERTIES LABELS "cli"
                       PASS_REGULAR_EXPRESSION "^${program} \\(hitmap\\+\\+ ${PROJECT_VERSION}\\)\n$")
endforeach()

# A HIT_* setting that the start refuses (`variable` set to a bad value): an error on every one of
# three ranks, `expected` in it.
function(hit_info_start_error name variable expected)
  add_test(NAME cli.info.error.${name}
           COMMAND ${CMAKE_COMMAND} -E env ${variable}
                   ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/hit-info -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=3
                   "-DARGS=--json" "-DEXPECT=${expected}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
  set_tests_properties(cli.info.error.${name} PROPERTIES LABELS "cli" TIMEOUT 180)
endfunction()
# A HIT_LOG_LEVEL that is not a level is an error on every rank, listing the levels (it was taken
# as warn, silently).
hit_info_start_error(bad_log_level HIT_LOG_LEVEL=loud
  "HIT_LOG_LEVEL 'loud' is not a log level \\(levels: error, warn, info, debug\\)")

# The wait policy: HIT_WAIT=auto resolves from the processes of the machine and the cores each may
# run on (taskset narrows them): three processes on one core sleep while they wait, two on two
# cores poll; HIT_WAIT=spin is kept with more processes than cores; a one-process run polls.
add_test(NAME cli.info.wait_auto_oversubscribed
  COMMAND ${CMAKE_COMMAND} -E env HIT_WAIT=auto
          taskset -c 0 ${MPIEXEC_EXECUTABLE} -n 3 ${HIT_BIN}/hit-info --json)
set_tests_properties(cli.info.wait_auto_oversubscribed PROPERTIES LABELS "cli;mpi"
  PASS_REGULAR_EXPRESSION "\"wait\":\"sleep\"")
add_test(NAME cli.info.wait_auto_enough_cores
  COMMAND ${CMAKE_COMMAND} -E env HIT_WAIT=auto
          taskset -c 0,1 ${MPIEXEC_EXECUTABLE} -n 2 ${HIT_BIN}/hit-info --json)
set_tests_properties(cli.info.wait_auto_enough_cores PROPERTIES LABELS "cli;mpi"
  PASS_REGULAR_EXPRESSION "\"wait\":\"spin\"")
add_test(NAME cli.info.wait_spin_kept
  COMMAND ${CMAKE_COMMAND} -E env HIT_WAIT=spin
          taskset -c 0 ${MPIEXEC_EXECUTABLE} -n 3 ${HIT_BIN}/hit-info)
# Unset, the waits spin, however many processes share the cores.
add_test(NAME cli.info.wait_default_spins
  COMMAND taskset -c 0 ${MPIEXEC_EXECUTABLE} -n 3 ${HIT_BIN}/hit-info --json)
set_tests_properties(cli.info.wait_default_spins PROPERTIES LABELS "cli;mpi"
  PASS_REGULAR_EXPRESSION "\"wait\":\"spin\"")
set_tests_properties(cli.info.wait_spin_kept PROPERTIES LABELS "cli;mpi"
  PASS_REGULAR_EXPRESSION "waiting processes poll \\(wait policy spin, HIT_WAIT\\)")
add_test(NAME cli.info.wait_sleep_asked
  COMMAND ${CMAKE_COMMAND} -E env HIT_WAIT=sleep ${MPIEXEC_EXECUTABLE} -n 2 ${HIT_BIN}/hit-info)
set_tests_properties(cli.info.wait_sleep_asked PROPERTIES LABELS "cli;mpi"
  PASS_REGULAR_EXPRESSION "waiting processes sleep between polls \\(wait policy sleep, HIT_WAIT\\)")
add_test(NAME cli.info.wait_one_process
  COMMAND ${CMAKE_COMMAND} -E env HIT_WAIT=auto taskset -c 0 ${HIT_BIN}/hit-info --json)
set_tests_properties(cli.info.wait_one_process PROPERTIES LABELS "cli"
  PASS_REGULAR_EXPRESSION "\"wait\":\"spin\"")
# A HIT_WAIT that is not a policy stops the start on every rank, naming the policies.
hit_info_start_error(bad_wait HIT_WAIT=nap
  "HIT_WAIT 'nap' is not a wait policy \\(policies: auto, spin, sleep\\)")
