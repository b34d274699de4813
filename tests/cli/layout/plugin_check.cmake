# Installs hitmap++, builds the external layout plug-in project of ./plugin against the installed
# headers with find_package(hitmap) and the MPICH compiler, and selects it by name through the
# installed hit-layout with HIT_PLUGIN_PATH set.
#   Usage: cmake -DBUILD_DIR=... -DSOURCE=.../plugin -DWORK=... -DMPICXX=... -P plugin_check.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../common/installed_project.cmake)
set(plugin "${WORK}/build/libhit_reverse_blocks.so")
if(NOT EXISTS "${plugin}")
  message(FATAL_ERROR "the plug-in was not built: ${plugin}")
endif()
set(tool "${prefix}/bin/hit-layout")
set(env ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${libdir}" "HIT_PLUGIN_PATH=${plugin}")

run("--list" ${env} "${tool}" --list)
if(NOT out MATCHES "reverseBlocks +blocks dealt in reverse order" OR NOT out MATCHES "axis=all")
  message(FATAL_ERROR "--list does not show the plug-in:\n${out}")
endif()
if(NOT out MATCHES "libhit_reverse_blocks.so")
  message(FATAL_ERROR "--list does not name the loaded file:\n${out}")
endif()

run("the plug-in by name" ${env} "${tool}" --shape [0:10] --procs 3 --layout reverseBlocks --json)
string(JSON first GET "${out}" ranks 0 blocks 0)
string(JSON last GET "${out}" ranks 2 blocks 0)
string(JSON layout GET "${out}" layout)
if(NOT first STREQUAL "[7:10]" OR NOT last STREQUAL "[0:4]" OR NOT layout STREQUAL "reverseBlocks")
  message(FATAL_ERROR "unexpected layout from the plug-in: ${out}")
endif()

run("a parameter of the plug-in" ${env} "${tool}" --shape [0:4][0:6] --procs 4 --topology square
    --layout reverseBlocks:axis=1 --json)
string(JSON block0 GET "${out}" ranks 0 blocks 0)
if(NOT block0 STREQUAL "[0:2][3:6]")
  message(FATAL_ERROR "reverseBlocks:axis=1 gave rank 0 ${block0}: ${out}")
endif()

execute_process(COMMAND ${env} "${tool}" --shape [0:10] --procs 2 --layout reverseBlocks:dim=1
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(rc EQUAL 0 OR NOT err MATCHES "has no parameter 'dim' \\(allowed: axis\\)")
  message(FATAL_ERROR "a bad key of the plug-in was not reported: ${err}")
endif()
# Without the path the name is unknown, and the message lists what exists.
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=HIT_PLUGIN_PATH "LD_LIBRARY_PATH=${libdir}"
                "${tool}" --shape [0:10] --procs 2 --layout reverseBlocks
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(rc EQUAL 0 OR NOT err MATCHES "unknown layout plug-in 'reverseBlocks' \\(registered: .*blocks")
  message(FATAL_ERROR "expected an unknown-plug-in error: ${err}")
endif()
message(STATUS "external plug-in ${plugin}: ok")

# The advisor enumerates the registry: the plug-in loaded from HIT_PLUGIN_PATH is ranked (or
# rejected with its reason) beside the built-in ones. SUMMA fetches its panels from wherever they
# lie; Jacobi's halo refuses reversed blocks (their neighbours are not the topology's).
run("the plug-in in the advisor's ranking" ${env} "${tool}" --advise --app summa
    --shape [0:64][0:64] --panel 16 --procs 4 --json)
string(JSON count LENGTH "${out}" candidates)
set(found "")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON layout GET "${out}" candidates ${i} layout)
  if(layout MATCHES "^reverseBlocks")
    string(JSON command GET "${out}" candidates ${i} command)
    set(found "${command}")
  endif()
endforeach()
if(NOT found MATCHES "hit-summa .*--layout reverseBlocks")
  message(FATAL_ERROR "the advisor did not rank the plug-in's layout: ${out}")
endif()
# With the settings the plug-in offers (its candidates(): each axis alone on a grid), ranked or
# rejected with a reason, every one: the advisor knows nothing of reverseBlocks but its name. The
# 2x2 grid is mesh2d's (square's is the same grid, tried once).
set(offered "")
foreach(list candidates rejected)
  string(JSON n LENGTH "${out}" ${list})
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON layout GET "${out}" ${list} ${i} layout)
      string(JSON topology GET "${out}" ${list} ${i} topology)
      if(layout MATCHES "^reverseBlocks" AND topology STREQUAL "mesh2d")
        list(APPEND offered "${layout}")
      endif()
    endforeach()
  endif()
endforeach()
list(SORT offered)
if(NOT offered STREQUAL "reverseBlocks;reverseBlocks:axis=0;reverseBlocks:axis=1")
  message(FATAL_ERROR "the plug-in's own candidates on the 2x2 grid: '${offered}', expected "
                      "reverseBlocks, reverseBlocks:axis=0 and :axis=1: ${out}")
endif()

# A benchmark kernel registered by a plug-in: the installed hit-fpm builds its model by name
# (the README's heat kernel, through hit::launch on an emulated device), and lists it when a name
# is unknown.
set(kernel_plugin "${WORK}/build/libhit_smooth_kernel.so")
set(kernel_env ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${libdir}"
    "HIT_PLUGIN_PATH=${kernel_plugin}" "HIT_DEVICES=emu:0(slowdown=2,clock=cpu)")
run("a plug-in's kernel measured by name" ${kernel_env} "${prefix}/bin/hit-fpm" build
    --kernel smooth --columns 64 --min 4 --max 64 --points 3 --max-time 0.05 --quiet
    --out "${WORK}/smooth.csv")
file(READ "${WORK}/smooth.csv" model)
if(NOT model MATCHES "# kernel: smooth\\(N=64\\)\n" OR NOT model MATCHES "# flops_per_unit: 256\n")
  message(FATAL_ERROR "the model of the plug-in's kernel:\n${model}")
endif()
string(REGEX MATCHALL "\n[0-9]+," points "${model}")
list(LENGTH points count)
if(NOT count EQUAL 3)
  message(FATAL_ERROR "expected 3 measured sizes in the model of smooth:\n${model}")
endif()
execute_process(COMMAND ${kernel_env} "${prefix}/bin/hit-fpm" build --kernel fft --max 8
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(rc EQUAL 0 OR NOT err MATCHES "kernel 'fft' \\(registered kernels: gemm, jacobi, smooth, spmv\\)")
  message(FATAL_ERROR "an unknown kernel beside the plug-in's: ${err}")
endif()
message(STATUS "external kernel ${kernel_plugin}: ok")
