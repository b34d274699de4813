# Docs that quote code quote the code that runs (docs/examples.md shows Cannon's algorithm).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.docs.snippets_match_sources
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/common/doc_snippets.py
                   ${PROJECT_SOURCE_DIR} docs/examples.md docs/packages.md README.md)
  set_tests_properties(cli.docs.snippets_match_sources PROPERTIES LABELS "cli")
endif()

# Every hit-* command the docs show runs, at a small size (common/doc_commands.py says which flags
# are lowered and which commands are skipped: synopses, CUDA devices, the plug-in project, missing
# files).
if(Python3_Interpreter_FOUND)
  file(GLOB _doc_pages RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
  add_test(NAME cli.docs.commands_run
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/common/doc_commands.py
                   ${PROJECT_SOURCE_DIR} ${HIT_BIN} ${MPIEXEC_EXECUTABLE} README.md ${_doc_pages})
  set_tests_properties(cli.docs.commands_run PROPERTIES LABELS "cli" TIMEOUT 600
                       FAIL_REGULAR_EXPRESSION "FAILED")
endif()

# The sparse programs' and the advisor's pages run whole: every command but a synopsis, the files
# they read made as the pages say.
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.docs.sparse_and_advisor_commands_all_run
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/common/doc_commands.py --all
                   ${PROJECT_SOURCE_DIR} ${HIT_BIN} ${MPIEXEC_EXECUTABLE} docs/sparse.md
                   docs/advisor.md)
  set_tests_properties(cli.docs.sparse_and_advisor_commands_all_run PROPERTIES LABELS "cli"
                       TIMEOUT 600 FAIL_REGULAR_EXPRESSION "FAILED")
endif()
