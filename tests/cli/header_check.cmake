# The header check (cmake/HitHeaderCheck.cmake) fails a build when it should: on a scratch project
# it must pass for good headers and fail for a header that does not compile alone, one without an
# include guard, and one that includes a private dependency; a header added after configuring is
# checked by the next build, and an excluded header is not checked.
#
# tests/CMakeLists.txt includes every tests/cli/*.cmake while configuring: this file then adds the
# test, which runs it again as a script (cmake -P).
if(NOT CMAKE_SCRIPT_MODE_FILE)
  add_test(NAME cli.header_check
           COMMAND ${CMAKE_COMMAND} -DHIT_CMAKE_DIR=${PROJECT_SOURCE_DIR}/cmake
                   -DWORK=${CMAKE_CURRENT_BINARY_DIR}/cli_header_check
                   -DCXX=${CMAKE_CXX_COMPILER} "-DGENERATOR=${CMAKE_GENERATOR}"
                   -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(cli.header_check PROPERTIES LABELS "cli" TIMEOUT 300)
  return()
endif()

set(project "${WORK}/project")
set(build "${WORK}/build")
set(headers "${project}/include/demo")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${headers}")

file(WRITE "${project}/CMakeLists.txt" "
cmake_minimum_required(VERSION 3.25)
project(header_check_demo LANGUAGES CXX)
include(\"${HIT_CMAKE_DIR}/HitHeaderCheck.cmake\")
hit_add_header_check(demo_header_check BASE_DIR include EXCLUDE \${DEMO_EXCLUDE}
                     FORBIDDEN_INCLUDES fmt/)
target_compile_features(demo_header_check PRIVATE cxx_std_20)
")

# A good header: its own includes, a guard, and a use of another header of the project.
file(WRITE "${headers}/good.hpp" "#pragma once\n#include <vector>\n#include \"demo/base.hpp\"\n"
                                 "inline std::vector<demo::Base> many() { return {}; }\n")
file(WRITE "${headers}/base.hpp" "#pragma once\nnamespace demo { struct Base { int x = 0; }; }\n")

macro(build_project what)
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${build}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(log "${what}: exit ${rc}\n${out}\n${err}")
endmacro()

function(expect_pass)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "expected the check to pass\n${log}")
  endif()
endfunction()

# The build must fail, and the log must name the header at fault (`reason` is a regular expression
# the compiler's or the check's message must match).
function(expect_fail header reason)
  if(rc EQUAL 0)
    message(FATAL_ERROR "expected the check to fail for ${header}\n${log}")
  endif()
  if(NOT "${out}${err}" MATCHES "${header}" OR NOT "${out}${err}" MATCHES "${reason}")
    message(FATAL_ERROR "the failure does not name ${header} with '${reason}'\n${log}")
  endif()
endfunction()

execute_process(COMMAND ${CMAKE_COMMAND} -S "${project}" -B "${build}" -G "${GENERATOR}"
                        -DCMAKE_CXX_COMPILER=${CXX}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the scratch project failed: ${out}\n${err}")
endif()
build_project("good headers")
expect_pass()
if(NOT EXISTS "${build}/demo_header_check/demo_good_hpp.cpp")
  message(FATAL_ERROR "no translation unit was generated for demo/good.hpp")
endif()

# Added after configuring: the next build finds it (CONFIGURE_DEPENDS) and fails.
file(WRITE "${headers}/missing_include.hpp"
     "#pragma once\ninline std::vector<int> numbers() { return {1, 2}; }\n")
build_project("a header that needs an include it does not have")
expect_fail("missing_include.hpp" "vector")

# Twice included, a definition without a guard is a redefinition.
file(REMOVE "${headers}/missing_include.hpp")
file(WRITE "${headers}/no_guard.hpp" "struct Unguarded { int x; };\n")
build_project("a header without an include guard")
expect_fail("no_guard.hpp" "redefinition")

# fmt is installed here, so the header compiles: the check itself must refuse it.
file(REMOVE "${headers}/no_guard.hpp")
file(WRITE "${headers}/uses_fmt.hpp" "#pragma once\n#include <fmt/format.h>\n")
build_project("a header that includes a private dependency")
expect_fail("uses_fmt.hpp" "private dependency")

# An excluded header is not checked, the others still are.
file(REMOVE "${headers}/uses_fmt.hpp")
file(WRITE "${headers}/broken.hpp" "#pragma once\nthis is not C++\n")
execute_process(COMMAND ${CMAKE_COMMAND} -DDEMO_EXCLUDE=demo/broken.hpp "${build}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
build_project("a broken header on the exclusion list")
expect_pass()
if(EXISTS "${build}/demo_header_check/demo_broken_hpp.cpp")
  message(FATAL_ERROR "a translation unit was generated for the excluded demo/broken.hpp")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -UDEMO_EXCLUDE "${build}" OUTPUT_QUIET ERROR_QUIET)
build_project("the same header off the exclusion list")
expect_fail("broken.hpp" "error")

message(STATUS "header check: passes good headers, fails each broken one")
