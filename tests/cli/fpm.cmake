# Command-line tests of hit-fpm (included by tests/CMakeLists.txt; HIT_BIN is the programs' folder).
set(fpm_check ${CMAKE_CURRENT_LIST_DIR}/fpm_cli_check.cmake)
set(fpm_work ${CMAKE_CURRENT_BINARY_DIR}/fpm_cli)

add_test(NAME cli.fpm.help COMMAND ${HIT_BIN}/hit-fpm --help)
set_tests_properties(cli.fpm.help PROPERTIES LABELS cli
                     PASS_REGULAR_EXPRESSION "build.*partition.*show.*plot.*hierarchical.*network")

foreach(algo even proportional geometric numerical exact dp "geometric:bisection=angle")
  string(REGEX REPLACE "[:=]" "_" name "${algo}")
  add_test(NAME cli.fpm.partition.json.${name}
           COMMAND ${CMAKE_COMMAND} -DFPM=${HIT_BIN}/hit-fpm -DWORK=${fpm_work}/json_${name}
                   -DCASE=json -DALGO=${algo} -P ${fpm_check})
  set_tests_properties(cli.fpm.partition.json.${name} PROPERTIES LABELS cli)
endforeach()

# A device that takes nothing (`# capacity: 0`, no points) gets 0 units from every partitioner.
foreach(algo even proportional geometric numerical exact dp)
  add_test(NAME cli.fpm.partition.capacity_zero.${algo}
           COMMAND ${CMAKE_COMMAND} -DFPM=${HIT_BIN}/hit-fpm -DWORK=${fpm_work}/capacity_zero_${algo}
                   -DCASE=capacity_zero -DALGO=${algo} -P ${fpm_check})
  set_tests_properties(cli.fpm.partition.capacity_zero.${algo} PROPERTIES LABELS cli)
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
fpm_error_test(negative_n "--n: '-5' is not a whole number from 0" partition -m a.csv --n -5)
fpm_error_test(over_capacity "total capacity of the 1 devices is 30 units, below n = 31"
               partition -m b.csv --n 31)
fpm_error_test(unknown_algorithm "unknown fpm partitioner plug-in 'fastest'"
               partition -m a.csv --n 10 --algorithm fastest)
fpm_error_test(bad_option "bisection = 'golden'"
               partition -m a.csv --n 10 --algorithm geometric:bisection=golden)
fpm_error_test(missing_n "--n is required" partition -m a.csv)
fpm_error_test(resident_gemm "--resident applies to --kernel jacobi"
               build --kernel gemm --resident --max 4)
fpm_error_test(unknown_kind "unknown model kind 'cubic'" show -m a.csv --kind cubic)
fpm_error_test(unknown_kernel "kernel 'fft' (registered kernels: gemm, jacobi, spmv)" build --kernel fft --max 10)
fpm_error_test(hier_method "--method: best not in {fpm,multiple-cpm,single-cpm,homogeneous}"
               hierarchical --n 64 --method best)
fpm_error_test(hier_n "--n: '0' is not a whole number from 1" hierarchical --n 0)
fpm_error_test(hier_block "--block: '0' is not a whole number from 1" hierarchical --n 64 -b 0)

add_test(NAME cli.fpm.hierarchical
         COMMAND ${CMAKE_COMMAND} -DFPM=${HIT_BIN}/hit-fpm -DSUMMA=${HIT_BIN}/hit-summa
                 -DWORK=${fpm_work}/hierarchical -DCASE=hierarchical
                 -DMPIEXEC=${MPIEXEC_EXECUTABLE} -P ${fpm_check})
set_tests_properties(cli.fpm.hierarchical PROPERTIES LABELS cli TIMEOUT 200
                     ENVIRONMENT "OPENBLAS_NUM_THREADS=1;HIT_NODES=2")

add_test(NAME cli.fpm.build
         COMMAND ${CMAKE_COMMAND} -DFPM=${HIT_BIN}/hit-fpm -DWORK=${fpm_work}/build -DCASE=build
                 -DPROCS=1 -P ${fpm_check})
add_test(NAME cli.fpm.build.np2
         COMMAND ${CMAKE_COMMAND} -DFPM=${HIT_BIN}/hit-fpm -DWORK=${fpm_work}/build_np2
                 -DCASE=build -DPROCS=2 -DMPIEXEC=${MPIEXEC_EXECUTABLE} -P ${fpm_check})
set_tests_properties(cli.fpm.build cli.fpm.build.np2 PROPERTIES LABELS cli TIMEOUT 120
                     ENVIRONMENT OPENBLAS_NUM_THREADS=1)
add_test(NAME cli.fpm.build.spmv
         COMMAND ${CMAKE_COMMAND} -DFPM=${HIT_BIN}/hit-fpm -DWORK=${fpm_work}/build_spmv
                 -DCASE=spmv -DMPIEXEC=${MPIEXEC_EXECUTABLE} -P ${fpm_check})
set_tests_properties(cli.fpm.build.spmv PROPERTIES LABELS cli TIMEOUT 120
                     ENVIRONMENT OPENBLAS_NUM_THREADS=1)
# End to end: spmv models of two emulated devices, one 4 times slower, make the sparse layout
# metis:models= give the slower one the rows the models' partition says: clearly fewer.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.fpm.spmv_models_metis
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/spmv_models_check.py
                   ${MPIEXEC_EXECUTABLE} ${HIT_BIN}/hit-fpm ${HIT_BIN}/hit-cg
                   ${fpm_work}/spmv_models_metis)
  set_tests_properties(cli.fpm.spmv_models_metis PROPERTIES LABELS "cli;sparse" TIMEOUT 120
                       ENVIRONMENT OPENBLAS_NUM_THREADS=1)
endif()
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
                 "-DEXPECT=cannot write picture \\(--out\\) '/nonexistent/dir/p.svg': folder '/nonexistent/dir' does not exist"
                 -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
set_tests_properties(cli.fpm.error.plot_unwritable_np4 PROPERTIES LABELS cli TIMEOUT 120)

# Values the options do not allow, caught by the parser with a message that says what is allowed.
fpm_error_test(capacity_negative "--capacity: '-7' is not a whole number from 0"
               build --max 5 --capacity -7)
fpm_error_test(points_zero "--points: '0' is not a whole number from 1 to 10000" build --max 5 --points 0)
fpm_error_test(precision_zero "--precision: '0' is not a number above 0 and at most 1"
               build --max 5 --precision 0)
fpm_error_test(spacing "--spacing: cubic not in" build --max 5 --spacing cubic)
fpm_error_test(unknown_subcommand "unknown subcommand 'frobnicate' (subcommands: build, partition"
               frobnicate)
fpm_error_test(model_is_folder "cannot read model file '.': it is a folder" show -m .)
# A malformed 1 MiB line is quoted by its first characters and its length, not whole.
fpm_error_test(long_line "unknown column 'xxxxxxxxxx" show -m long_line.csv)
fpm_error_test(long_line_length "... (1048576 characters)' in the header" show -m long_line.csv)

# Partitioner names are checked before anything is read or measured, by every subcommand that
# takes one, on every rank (hierarchical took any name on one process until a partition was
# computed; the CPM and homogeneous methods never looked at it; plot without --n ignored it).
foreach(np 1 3)
  foreach(case "hier|hierarchical|--n|64|-b|16|-a|magic"
               "hier_homogeneous|hierarchical|--n|64|-b|16|--method|homogeneous|-a|magic"
               "plot|plot|-m|${fpm_work}/plot_model.csv|-o|${fpm_work}/never.svg|-a|magic"
               "partition|partition|-m|/nonexistent/m.csv|--n|5|-a|magic")
    string(REPLACE "|" ";" parts "${case}")
    list(POP_FRONT parts name)
    string(REPLACE ";" "|" args "${parts}")
    add_test(NAME cli.fpm.error.algorithm_${name}_np${np}
             COMMAND ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/hit-fpm -DMPIEXEC=${MPIEXEC_EXECUTABLE}
                     -DNP=${np} "-DARGS=${args}"
                     "-DEXPECT=unknown fpm partitioner plug-in 'magic'.*geometric"
                     -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
    set_tests_properties(cli.fpm.error.algorithm_${name}_np${np} PROPERTIES LABELS cli TIMEOUT 60
                         ENVIRONMENT OPENBLAS_NUM_THREADS=1)
  endforeach()
endforeach()

# Output paths are checked before anything is measured or computed, on every rank.
foreach(np 1 3)
  add_test(NAME cli.fpm.error.build_unwritable_np${np}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/hit-fpm -DMPIEXEC=${MPIEXEC_EXECUTABLE}
                   -DNP=${np} "-DARGS=build|--max|100000|--out|/proc/m-{rank}.csv"
                   "-DEXPECT=cannot write model file \\(--out\\) '/proc/m-0.csv'"
                   -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
  add_test(NAME cli.fpm.error.bench_markdown_unwritable_np${np}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/hit-bench-fpm -DMPIEXEC=${MPIEXEC_EXECUTABLE}
                   -DNP=${np} "-DARGS=--n|100000|--markdown|/nonexistent/r.md"
                   "-DEXPECT=cannot write table \\(--markdown\\) '/nonexistent/r.md': folder '/nonexistent' does not exist"
                   -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
  set_tests_properties(cli.fpm.error.build_unwritable_np${np} cli.fpm.error.bench_markdown_unwritable_np${np}
                       PROPERTIES LABELS cli TIMEOUT 60)
endforeach()

# hit-bench-machine: --help describes it without running the 4-second benchmark; bad values are
# refused with what is allowed.
add_test(NAME cli.bench_machine.help COMMAND ${HIT_BIN}/hit-bench-machine --help)
set_tests_properties(cli.bench_machine.help PROPERTIES LABELS cli TIMEOUT 30
                     PASS_REGULAR_EXPRESSION "Usage:.*--stream-mib"
                     FAIL_REGULAR_EXPRESSION "dgemm_gflops")
add_test(NAME cli.bench_machine.error.n_zero
         COMMAND ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/hit-bench-machine -DMPIEXEC=${MPIEXEC_EXECUTABLE}
                 -DNP=1 "-DARGS=--n|0" "-DEXPECT=--n: '0' is not a whole number from 1 to 65536"
                 -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
set_tests_properties(cli.bench_machine.error.n_zero PROPERTIES LABELS cli TIMEOUT 30)

# hit-fpm network: the measured network model, end to end (JSON fields, the file it writes, the
# classes present at 4 processes on two emulated nodes and at 2 on one node).
if(Python3_Interpreter_FOUND)
  add_test(NAME cli.fpm.network
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/apps/network_check.py
                   ${MPIEXEC_EXECUTABLE} ${HIT_BIN}/hit-fpm ${fpm_work}/network)
  set_tests_properties(cli.fpm.network PROPERTIES LABELS cli TIMEOUT 200)
endif()
# Its errors, on every rank alike: one process has no pair to measure; sizes that are not byte
# counts, or too few to fit; a file that cannot be written is found before anything is measured.
foreach(case "np1|1|network|hit-fpm network needs at least 2 processes"
             "sizes_word|2|network|--sizes|8,abc|--sizes: 'abc' is not a whole number from 1 to 1073741824"
             "sizes_zero|2|network|--sizes|0,64|--sizes: '0' is not a whole number from 1"
             "sizes_one|2|network|--sizes|64,64|message sizes 64,64: the fit needs at least 2 different ones"
             "reps_zero|2|network|--reps|0|--reps: '0' is not a whole number from 1"
             "unwritable_np2|2|network|--out|/nonexistent/dir/n.csv|cannot write network model file \\(--out\\) '/nonexistent/dir/n.csv': folder '/nonexistent/dir' does not exist"
             "unwritable_np4|4|network|--out|/proc/n.csv|cannot write network model file \\(--out\\) '/proc/n.csv'")
  string(REPLACE "|" ";" parts "${case}")
  list(POP_FRONT parts name np)
  list(POP_BACK parts expect)
  string(REPLACE ";" "|" args "${parts}")
  add_test(NAME cli.fpm.error.network_${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${HIT_BIN}/hit-fpm -DMPIEXEC=${MPIEXEC_EXECUTABLE}
                   -DNP=${np} "-DARGS=${args}" "-DEXPECT=${expect}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
  set_tests_properties(cli.fpm.error.network_${name} PROPERTIES LABELS cli TIMEOUT 60)
endforeach()
