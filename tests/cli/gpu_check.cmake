# scripts/gpu-check.sh on a machine without a GPU (CI's): it says so in one line naming the
# reason, exits 0 and runs nothing — with no nvidia-smi at all (skipped where one lists a GPU), with
# an nvidia-smi that cannot reach a driver, and with one that lists no GPU.
set(_gpu_check_script ${PROJECT_SOURCE_DIR}/scripts/gpu-check.sh)
set(_gpu_check_fake ${CMAKE_CURRENT_BINARY_DIR}/gpu_check_fake)
file(WRITE ${_gpu_check_fake}/fails/nvidia-smi
     "#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'\nexit 9\n")
file(WRITE ${_gpu_check_fake}/empty/nvidia-smi "#!/bin/sh\necho 'No devices were found'\nexit 0\n")
file(CHMOD ${_gpu_check_fake}/fails/nvidia-smi ${_gpu_check_fake}/empty/nvidia-smi
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
                      WORLD_EXECUTE)
function(hit_gpu_check_no_gpu name reason fake)
  add_test(NAME cli.gpu_check.${name}
           COMMAND ${CMAKE_COMMAND} -DSCRIPT=${_gpu_check_script} "-DREASON=${reason}"
                   "-DFAKE_SMI=${fake}" -DOUT=${CMAKE_CURRENT_BINARY_DIR}/gpu_check_out_${name}
                   -P ${CMAKE_CURRENT_LIST_DIR}/common/gpu_check_no_gpu.cmake)
  set_tests_properties(cli.gpu_check.${name} PROPERTIES LABELS "cli" TIMEOUT 90
                       SKIP_REGULAR_EXPRESSION "skipped: this machine has a GPU")
endfunction()
hit_gpu_check_no_gpu(no_gpu ".+" "")
hit_gpu_check_no_gpu(smi_fails "nvidia-smi -L failed: NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver\\." ${_gpu_check_fake}/fails)
hit_gpu_check_no_gpu(no_devices "nvidia-smi -L lists no GPU" ${_gpu_check_fake}/empty)
# The checks' logic (verdicts, figures, time limits, the results page and $OUT) with stand-in
# programs that print what the real ones print on a GPU, then with the real programs on an
# emulated device in place of the GPU (apps/gpu_check_fake.py).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.gpu_check.logic
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/gpu_check_fake.py
                   ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/gpu_check_logic ${HIT_BIN}
                   ${MPIEXEC_EXECUTABLE})
  set_tests_properties(cli.gpu_check.logic PROPERTIES LABELS "cli" TIMEOUT 420
                       PASS_REGULAR_EXPRESSION "gpu_check_fake: passed")
endif()
