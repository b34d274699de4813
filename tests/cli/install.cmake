# A program built against the installed package: installs hitmap++, builds ./install/consumer with
# find_package(hitmap) and the MPICH compiler (no fmt, no other private dependency of the library),
# and runs it: it includes hit/hit.hpp and logs through hit/core/log.hpp.
#
# tests/CMakeLists.txt includes every tests/cli/*.cmake while configuring: this file then adds the
# test, which runs it again as a script (cmake -P).
if(NOT CMAKE_SCRIPT_MODE_FILE)
  find_program(_hit_mpicxx NAMES mpicxx.mpich)
  add_test(NAME cli.install.consumer
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
                   -DSOURCE=${CMAKE_CURRENT_LIST_DIR}/install/consumer
                   -DWORK=${CMAKE_CURRENT_BINARY_DIR}/cli_install_consumer -DMPICXX=${_hit_mpicxx}
                   -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(cli.install.consumer PROPERTIES LABELS "cli" TIMEOUT 600)
  return()
endif()

include(${CMAKE_CURRENT_LIST_DIR}/common/installed_project.cmake)
run("the consumer" ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${libdir}" HIT_LOG_LEVEL=info
    "${WORK}/build/consumer")
if(NOT err STREQUAL "hit info: consumer: 1 process\nhit warning: [rank 0/1] kind emu\n")
  message(FATAL_ERROR "unexpected log of the consumer:\n${err}")
endif()
message(STATUS "installed package: a consumer builds and logs")
