# The layering and the length limits of the tree (scripts/check_layers.py, check_structure.py):
# the tree itself must pass them, and each check must fail on a scratch tree that breaks it.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.structure.layers
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check_layers.py
                   --root ${PROJECT_SOURCE_DIR})
  add_test(NAME cli.structure.lengths
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check_structure.py
                   --root ${PROJECT_SOURCE_DIR})
  add_test(NAME cli.structure.checks_fail_when_they_should
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/common/structure_checks_selftest.py
                   ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/structure_selftest)
  set_tests_properties(cli.structure.layers cli.structure.lengths
                       cli.structure.checks_fail_when_they_should PROPERTIES LABELS "cli")
endif()
