# The installed package, as a downstream author uses it: installs hitmap++, builds README's
# program (./install/consumer: umbrella header, logging, a layout, resident tiles, halo comms, a
# kernel of its own and its launch, a reduction) with find_package(hitmap) and the MPICH compiler
# only (no fmt or other private dependency of the library), and runs it under mpiexec at 1, 3 and
# 4 processes: the same heat on every count, the log line on stderr. Then the other ways in: an
# installed program starts without LD_LIBRARY_PATH (RPATH) and prints its version; a program
# compiled with pkg-config's flags alone sees the version macro and links.
#
# tests/CMakeLists.txt includes every tests/cli/*.cmake while configuring: this file then adds the
# test, which runs it again as a script (cmake -P).
if(NOT CMAKE_SCRIPT_MODE_FILE)
  find_program(_hit_mpicxx NAMES mpicxx.mpich)
  add_test(NAME cli.install.consumer
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
                   -DSOURCE=${CMAKE_CURRENT_LIST_DIR}/install/consumer
                   -DWORK=${CMAKE_CURRENT_BINARY_DIR}/cli_install_consumer -DMPICXX=${_hit_mpicxx}
                   -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DVERSION=${PROJECT_VERSION}
                   "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}" "-DLINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
                   -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(cli.install.consumer PROPERTIES LABELS "cli" TIMEOUT 600
                       ENVIRONMENT OPENBLAS_NUM_THREADS=1)
  return()
endif()

include(${CMAKE_CURRENT_LIST_DIR}/common/installed_project.cmake)
set(heat "")
foreach(np 1 3 4)
  run("heat on ${np} processes" ${CMAKE_COMMAND} -E env HIT_LOG_LEVEL=info
      ${MPIEXEC} -n ${np} "${WORK}/build/heat")
  if(NOT out MATCHES "^heat ([0-9.e+]+) after 100 sweeps of 256x256, ${np} processes, [0-9.]+ s\n$")
    message(FATAL_ERROR "unexpected output of heat on ${np} processes:\n${out}")
  endif()
  set(value "${CMAKE_MATCH_1}")
  if(heat STREQUAL "")
    set(heat "${value}")
  elseif(NOT value STREQUAL heat)
    message(FATAL_ERROR "heat ${value} on ${np} processes, ${heat} on 1")
  endif()
  if(NOT err STREQUAL "hit info: plate blocks over ${np} processes\n")
    message(FATAL_ERROR "unexpected log of heat on ${np} processes:\n${err}")
  endif()
endforeach()
# The same program, not a line of it written for the advisor, priced on every layout its
# setting can choose for the processes and devices it is started with (docs/advisor.md): a dry
# run prints no result, and a device four times slower than the others gets a smaller share.
run("heat --hit-advise on 4 processes" ${CMAKE_COMMAND} -E env
    "HIT_DEVICES=emu:0(slowdown=4,clock=cpu),cpu*3" ${MPIEXEC} -n 4 "${WORK}/build/heat"
    --hit-advise)
if(NOT out MATCHES "^heat --hit-advise: 4 processes \\(emu:0\\(clock=cpu,slowdown=4\\), cpu:0, cpu:1, cpu:2\\); arrays of \\[0:256\\]\\[0:256\\] on mesh2d"
   OR NOT out MATCHES "\n   1  (dimBlocks|weighted):w=0.25,1,1,1 "
   OR NOT out MATCHES "run the best:\n  HIT_LAYOUT_PLATE=[a-zA-Z]+:w=0.25,1,1,1 heat\n$"
   OR out MATCHES "heat [0-9]")
  message(FATAL_ERROR "unexpected advice of heat on 4 processes:\n${out}")
endif()

# The same 100 sweeps done serially (each interior point the mean of its four neighbours, the
# edges fixed, the hot edge at 100) leave 1.533964e+05 on the plate: the kernel body addresses
# the right neighbours of every block, ghost cells included.
if(NOT heat STREQUAL "1.533964e+05")
  message(FATAL_ERROR "heat ${heat}: the serial sweeps give 1.533964e+05")
endif()

# An installed program starts with nothing on the library path and says its version.
run("installed hit-info" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH "${prefix}/bin/hit-info"
    --version)
if(NOT out STREQUAL "hit-info (hitmap++ ${VERSION})\n")
  message(FATAL_ERROR "hit-info --version printed: ${out}")
endif()

# pkg-config's flags alone: the version macro of the headers agrees with the library's version.
file(WRITE "${WORK}/version.cpp" [[
#include <hit/core/version.hpp>

#include <cstdio>
#include <string>

int main() {
  std::printf("%d %s\n", HITMAP_VERSION, std::string(hit::version()).c_str());
  return 0;
}
]])
find_program(pkg_config NAMES pkg-config pkgconf REQUIRED)
file(GLOB pcs "${prefix}/*/pkgconfig/hitmap.pc" "${prefix}/*/*/pkgconfig/hitmap.pc")
list(GET pcs 0 pc)
get_filename_component(pcdir "${pc}" DIRECTORY)
run("pkg-config" ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${pcdir}" ${pkg_config} --cflags --libs
    hitmap)
string(STRIP "${out}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
separate_arguments(extra UNIX_COMMAND "${CXX_FLAGS} ${LINKER_FLAGS}")
run("compile with pkg-config" ${MPICXX} "${WORK}/version.cpp" -o "${WORK}/version" ${flags} ${extra})
run("version" "${WORK}/version")
string(REPLACE "." ";" parts "${VERSION}")
list(GET parts 0 major)
list(GET parts 1 minor)
list(GET parts 2 patch)
math(EXPR number "${major} * 10000 + ${minor} * 100 + ${patch}")
if(NOT out STREQUAL "${number} ${VERSION}\n")
  message(FATAL_ERROR "version macro and library disagree: ${out} (expected ${number} ${VERSION})")
endif()
message(STATUS "installed package: heat ${heat} at 1, 3, 4 processes; RPATH; pkg-config ${out}")
