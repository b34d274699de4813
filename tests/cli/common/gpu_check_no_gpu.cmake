# scripts/gpu-check.sh where no GPU is seen: exactly one line, "gpu-check: no NVIDIA GPU here
# (<REASON>); nothing run", exit 0, and nothing written in the checkout or $OUT but that line.
#   cmake -DSCRIPT=gpu-check.sh -DREASON=regex [-DFAKE_SMI=folder] -DOUT=folder -P gpu_check_no_gpu.cmake
# FAKE_SMI: a folder put first on PATH whose nvidia-smi stands in for the real one. Without it, a
# machine whose nvidia-smi does list a GPU skips the test (the script would run every check).
set(path "$ENV{PATH}")
if(FAKE_SMI)
  set(path "${FAKE_SMI}:${path}")
else()
  execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE smi_rc OUTPUT_VARIABLE smi_out ERROR_QUIET)
  if(smi_rc EQUAL 0 AND smi_out MATCHES "^GPU [0-9]")
    message("skipped: this machine has a GPU")
    return()
  endif()
endif()
file(REMOVE_RECURSE "${OUT}")
get_filename_component(repo "${SCRIPT}" DIRECTORY)
get_filename_component(repo "${repo}" DIRECTORY)
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PATH=${path}" "OUT=${OUT}" bash "${SCRIPT}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gpu-check.sh exited ${rc} without a GPU:\n${out}\n${err}")
endif()
if(NOT err STREQUAL "")
  message(FATAL_ERROR "gpu-check.sh wrote on stderr without a GPU:\n${err}")
endif()
if(NOT out MATCHES "^gpu-check: no NVIDIA GPU here \\(${REASON}\\); nothing run\n$")
  message(FATAL_ERROR "expected one line 'gpu-check: no NVIDIA GPU here (${REASON}); nothing run', got:\n${out}")
endif()
file(READ "${OUT}/gpu-check.log" log)
if(NOT log STREQUAL out)
  message(FATAL_ERROR "\$OUT/gpu-check.log should hold the same line, holds:\n${log}")
endif()
message("${out}")
