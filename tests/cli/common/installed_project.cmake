# Shared by the script tests that work against the installed package (install.cmake,
# layout/plugin_check.cmake): installs the build in BUILD_DIR under WORK/prefix, configures and
# builds the project in SOURCE with find_package(hitmap) and the MPICH compiler MPICXX into
# WORK/build, and sets `prefix` and `libdir` (where libhitmap.so went). `run(what command...)`
# runs a command and fails the test with its output when it fails; its output is in `out`, `err`.
file(REMOVE_RECURSE "${WORK}")
set(prefix "${WORK}/prefix")
macro(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 500)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
endmacro()

run("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
run("configure ${SOURCE}" ${CMAKE_COMMAND} -S "${SOURCE}" -B "${WORK}/build"
    -DCMAKE_CXX_COMPILER=${MPICXX} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
    "-DCMAKE_SHARED_LINKER_FLAGS=${LINKER_FLAGS}")
run("build ${SOURCE}" ${CMAKE_COMMAND} --build "${WORK}/build")

file(GLOB_RECURSE libs "${prefix}/*/libhitmap.so*")
list(GET libs 0 lib)
get_filename_component(libdir "${lib}" DIRECTORY)
