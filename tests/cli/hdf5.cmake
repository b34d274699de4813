# HDF5 datasets (FILE.h5:/dataset) as the programs' inputs and outputs at 1-4 processes, checked
# with the HDF5 tools (h5import makes the inputs, h5dump reads the outputs): the same bytes as the
# same run on raw files, for hit-summa, hit-qr and hit-cg; bad datasets refused with one line on
# every rank, the files left as they were (apps/hdf5_files.py).
find_package(Python3 COMPONENTS Interpreter QUIET)
find_program(HIT_H5IMPORT h5import)
find_program(HIT_H5DUMP h5dump)
if(Python3_Interpreter_FOUND AND HIT_H5IMPORT AND HIT_H5DUMP)
  foreach(np 1 2 3 4)
    add_test(NAME cli.hdf5.files.np${np}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/hdf5_files.py ${np}
                     ${CMAKE_CURRENT_BINARY_DIR}/hdf5_files_np${np} ${MPIEXEC_EXECUTABLE} ${HIT_BIN})
    set_tests_properties(cli.hdf5.files.np${np} PROPERTIES LABELS "cli;apps" TIMEOUT 600
                         ENVIRONMENT "OPENBLAS_NUM_THREADS=1"
                         PASS_REGULAR_EXPRESSION "hdf5 files at ${np} processes: ok")
  endforeach()
else()
  message(WARNING "h5import, h5dump or Python 3 missing: the HDF5 program tests are not run "
                  "(bash scripts/setup.sh installs hdf5-tools)")
endif()
