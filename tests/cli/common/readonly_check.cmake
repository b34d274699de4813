# An output file the user made read-only is not replaced: FILE is written with "old" and made
# read-only (mode 0444, so the test means the same as root), the program fails as
# error_check.cmake expects (every rank non-zero, one line matching EXPECT), and FILE still holds
# "old".
#   Usage: cmake -DFILE=... -DPROGRAM=... -DMPIEXEC=... -DNP=4 -DARGS=a|b -DEXPECT=regex
#                -P readonly_check.cmake
get_filename_component(folder "${FILE}" DIRECTORY)
file(MAKE_DIRECTORY "${folder}")
if(EXISTS "${FILE}")
  file(CHMOD "${FILE}" PERMISSIONS OWNER_READ OWNER_WRITE)
endif()
file(WRITE "${FILE}" "old")
file(CHMOD "${FILE}" PERMISSIONS OWNER_READ GROUP_READ WORLD_READ)
include(${CMAKE_CURRENT_LIST_DIR}/error_check.cmake)
file(READ "${FILE}" content)
if(NOT content STREQUAL "old")
  message(FATAL_ERROR "the read-only file ${FILE} was replaced")
endif()
file(GLOB left "${FILE}.tmp-*")
if(left)
  message(FATAL_ERROR "temporaries left beside ${FILE}: ${left}")
endif()
