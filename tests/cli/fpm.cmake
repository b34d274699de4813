# Command-line tests of hit-fpm (included by tests/CMakeLists.txt; HIT_BIN is the programs' folder).
set(fpm_check ${CMAKE_CURRENT_LIST_DIR}/fpm_cli_check.cmake)
set(fpm_work ${CMAKE_CURRENT_BINARY_DIR}/fpm_cli)

add_test(NAME cli.fpm.help COMMAND ${HIT_BIN}/hit-fpm --help)
set_tests_properties(cli.fpm.help PROPERTIES LABELS cli
                     PASS_REGULAR_EXPRESSION "build.*partition.*show.*plot")

foreach(algo even proportional geometric numerical exact dp "geometric:bisection=angle")
  string(REGEX REPLACE "[:=]" "_" name "${algo}")
  add_test(NAME cli.fpm.partition.json.${name}
           COMMAND ${CMAKE_COMMAND} -DFPM=${HIT_BIN}/hit-fpm -DWORK=${fpm_work}/json_${name}
                   -DCASE=json -DALGO=${algo} -P ${fpm_check})
  set_tests_properties(cli.fpm.partition.json.${name} PROPERTIES LABELS cli)
endforeach()

# Bad input: a non-zero exit and one line that says what is wrong.
function(fpm_error_test name expect)
  string(REPLACE ";" "|" args "${ARGN}")
  add_test(NAME cli.fpm.error.${name}
           COMMAND ${CMAKE_COMMAND} -DFPM=${HIT_BIN}/hit-fpm -DWORK=${fpm_work}/error_${name}
                   -DCASE=error "-DARGS=${args}" "-DEXPECT=${expect}" -P ${fpm_check})
  set_tests_properties(cli.fpm.error.${name} PROPERTIES LABELS cli)
endfunction()
fpm_error_test(non_numeric "bad_number.csv', line 3" partition -m a.csv -m bad_number.csv --n 10)
fpm_error_test(empty_model "empty.csv': no points" partition -m empty.csv --n 10)
fpm_error_test(unsorted "unsorted.csv', line 3" partition -m unsorted.csv --n 10)
fpm_error_test(repeated "repeats the d of line 2" partition -m repeated.csv --n 10)
fpm_error_test(zero_time "must be > 0" partition -m zero_time.csv --n 10)
fpm_error_test(bad_capacity "malformed capacity" partition -m bad_capacity.csv --n 10)
fpm_error_test(missing_file "cannot read model file 'nowhere.csv'" partition -m nowhere.csv --n 10)
fpm_error_test(negative_n "n = -5 is negative" partition -m a.csv --n -5)
fpm_error_test(over_capacity "total capacity of the 1 devices is 30 units, below n = 31"
               partition -m b.csv --n 31)
fpm_error_test(unknown_algorithm "unknown fpm partitioner plug-in 'fastest'"
               partition -m a.csv --n 10 --algorithm fastest)
fpm_error_test(bad_option "bisection = 'golden'"
               partition -m a.csv --n 10 --algorithm geometric:bisection=golden)
fpm_error_test(missing_n "--n is required" partition -m a.csv)
fpm_error_test(unknown_kind "unknown model kind 'cubic'" show -m a.csv --kind cubic)
fpm_error_test(unknown_kernel "kernel 'fft' (built-in kernels: gemm, jacobi)" build --kernel fft --max 10)

add_test(NAME cli.fpm.build
         COMMAND ${CMAKE_COMMAND} -DFPM=${HIT_BIN}/hit-fpm -DWORK=${fpm_work}/build -DCASE=build
                 -DPROCS=1 -P ${fpm_check})
add_test(NAME cli.fpm.build.np2
         COMMAND ${CMAKE_COMMAND} -DFPM=${HIT_BIN}/hit-fpm -DWORK=${fpm_work}/build_np2
                 -DCASE=build -DPROCS=2 -DMPIEXEC=${MPIEXEC_EXECUTABLE} -P ${fpm_check})
set_tests_properties(cli.fpm.build cli.fpm.build.np2 PROPERTIES LABELS cli TIMEOUT 120
                     ENVIRONMENT OPENBLAS_NUM_THREADS=1)
add_test(NAME cli.fpm.build.devices
         COMMAND ${CMAKE_COMMAND} -DFPM=${HIT_BIN}/hit-fpm -DWORK=${fpm_work}/build_devices
                 -DCASE=devices -DMPIEXEC=${MPIEXEC_EXECUTABLE} -P ${fpm_check})
set_tests_properties(cli.fpm.build.devices PROPERTIES LABELS cli TIMEOUT 120
                     ENVIRONMENT OPENBLAS_NUM_THREADS=1)

# hit-bench-fpm, small (3 ranks on emulated devices).
add_test(NAME cli.fpm.bench
         COMMAND ${CMAKE_COMMAND} -DBENCH=${HIT_BIN}/hit-bench-fpm -DWORK=${fpm_work}/bench
                 -DCASE=bench -DMPIEXEC=${MPIEXEC_EXECUTABLE} -P ${fpm_check})
set_tests_properties(cli.fpm.bench PROPERTIES LABELS cli TIMEOUT 120
                     ENVIRONMENT OPENBLAS_NUM_THREADS=1)

# A failure on rank 0 only (it alone writes the picture) ends every rank with a non-zero exit and
# one line (it used to exit [2,0,0,0]).
file(WRITE ${fpm_work}/plot_model.csv "d,t\n10,0.1\n20,0.2\n")
add_test(NAME cli.fpm.error.plot_unwritable_np4
         COMMAND ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/hit-fpm -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=4
                 "-DARGS=plot|-m|${fpm_work}/plot_model.csv|-o|/nonexistent/dir/p.svg"
                 "-DEXPECT=cannot write '/nonexistent/dir/p.svg'"
                 -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
set_tests_properties(cli.fpm.error.plot_unwritable_np4 PROPERTIES LABELS cli TIMEOUT 120)
