# bench/stale_tables.py, which flags benchmark tables measured on older code: needs the git history.
find_package(Python3 COMPONENTS Interpreter QUIET)
find_package(Git QUIET)
if(Python3_Interpreter_FOUND AND GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  add_test(NAME cli.bench.stale_tables
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/bench/stale_tables_check.py
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(cli.bench.stale_tables PROPERTIES LABELS "cli" TIMEOUT 60)
endif()
