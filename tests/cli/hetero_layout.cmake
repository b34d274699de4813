# Command-line tests of the `heteroBlockCyclic` layout through hit-layout: the --json document,
# the host columns it chose recorded in the spec, --list, and bad parameters on every rank.
set(_hbc_lay ${HIT_BIN}/hit-layout)
set(_hbc_dir ${CMAKE_CURRENT_LIST_DIR}/layout)

# An accelerator 4 times as fast as each of three cores (speeds given by w: an emulated device is
# never faster than a core): the cores' share of a 256-wide tile is 3/7 · 256 = 109.7 columns,
# 128 in tiles of 64. The accelerator holds the wide tiles (128 columns of the first three tile
# columns, 104 of the last, 232 wide); the 32 thin tiles are dealt to the cores 0,1,2,0,... row by
# row (the last tile row is 232 high).
add_test(NAME cli.layout.hetero_block_cyclic.json
         COMMAND ${CMAKE_COMMAND} -DHIT_LAYOUT=${_hbc_lay}
                 "-DARGS=--shape|[0:1000][0:1000]|--layout|heteroBlockCyclic:B=256,b=64,w=4,1,1,1|--procs|4|--devices|emu:0,cpu*3"
                 -DPROCS=4 -DELEMENTS=488000,175616,175616,160768
                 "-DBLOCKS0=[0:256][128:256] [0:256][384:512] [0:256][640:768] [0:256][896:1000] [256:512][128:256] [256:512][384:512] [256:512][640:768] [256:512][896:1000] [512:768][128:256] [512:768][384:512] [512:768][640:768] [512:768][896:1000] [768:1000][128:256] [768:1000][384:512] [768:1000][640:768] [768:1000][896:1000]"
                 -P ${_hbc_dir}/json_check.cmake)
# Speeds from the devices: an emulated device 4x slower than a core weighs 1/4 against the cores'
# 3: 236.3 columns round to 256 = B, lowered to B - 64 so that the device takes part.
add_test(NAME cli.layout.hetero_block_cyclic.records_bh
         COMMAND ${_hbc_lay} --shape [0:1000][0:1000] --layout heteroBlockCyclic:B=256,b=64
                 --procs 4 --devices "emu:0(slowdown=4),cpu*3" --json)
set_tests_properties(cli.layout.hetero_block_cyclic.records_bh PROPERTIES LABELS "cli"
  PASS_REGULAR_EXPRESSION "\"layout\":\"heteroBlockCyclic:B=256,b=64,bh=192\"")
add_test(NAME cli.layout.hetero_block_cyclic.list COMMAND ${_hbc_lay} --list)
set_tests_properties(cli.layout.hetero_block_cyclic.list PROPERTIES LABELS "cli"
  PASS_REGULAR_EXPRESSION "heteroBlockCyclic .*B=\\.\\.\\.: .*bh=\\.\\.\\.: .*g=b: ")

function(hit_hbc_error name expect args)
  add_test(NAME cli.layout.hetero_block_cyclic.error.${name}
           COMMAND ${CMAKE_COMMAND} -DPROGRAM=${_hbc_lay} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=2
                   "-DARGS=${args}" "-DEXPECT=${expect}"
                   -P ${CMAKE_CURRENT_LIST_DIR}/common/error_check.cmake)
endfunction()
hit_hbc_error(bh "bh=100 is not a multiple of b=64 in \\[0, B=256\\]"
              "--shape|[0:512][0:512]|--layout|heteroBlockCyclic:B=256,b=64,bh=100")
hit_hbc_error(b_larger "b=300 is not between 1 and B=256"
              "--shape|[0:512][0:512]|--layout|heteroBlockCyclic:B=256,b=300")
