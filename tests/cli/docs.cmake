# Docs that quote code quote the code that runs (docs/examples.md shows Cannon's algorithm).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.docs.snippets_match_sources
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/common/doc_snippets.py
                   ${PROJECT_SOURCE_DIR} docs/examples.md docs/packages.md README.md)
  set_tests_properties(cli.docs.snippets_match_sources PROPERTIES LABELS "cli")
endif()
