# Runs a collbench model tool and checks its exit status and output.
#   cmake "-DCOMMAND=exe|arg|..." -DEXPECT_EXIT=2 [-DEXPECT_STDERR=regex]
#         [-DEXPECT_STDOUT=regex] ["-DFORBID=file|..."] ["-DREQUIRE=file|..."]
#         [-DNO_TEMP_IN=dir] -P models_expect.cmake
# With EXPECT_EXIT 2 the tool must print exactly one line on stderr, and no
# file in FORBID may exist afterwards (no partial output); the files in
# FORBID are removed before the run so that a stale one cannot pass. NO_TEMP_IN
# names a folder that must hold no leftover temporary (.NAME.tmp-PID).
string(REPLACE "|" ";" command "${COMMAND}")
string(REPLACE "|" ";" forbidden "${FORBID}")
string(REPLACE "|" ";" required "${REQUIRE}")
foreach(file IN LISTS forbidden required)
  file(REMOVE "${file}")
endforeach()
execute_process(COMMAND ${command}
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT exit_code STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "'${COMMAND}' exited with '${exit_code}', expected ${EXPECT_EXIT}\n"
                      "stderr: ${stderr}\nstdout: ${stdout}")
endif()
if(DEFINED EXPECT_STDERR AND NOT stderr MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_STDERR}': ${stderr}")
endif()
if(DEFINED EXPECT_STDOUT AND NOT stdout MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "stdout does not match '${EXPECT_STDOUT}': ${stdout}")
endif()
if(EXPECT_EXIT STREQUAL "2")
  string(REGEX MATCHALL "\n" newlines "${stderr}")
  list(LENGTH newlines line_count)
  if(NOT line_count EQUAL 1)
    message(FATAL_ERROR "expected one line on stderr, got ${line_count}: ${stderr}")
  endif()
endif()
foreach(file IN LISTS forbidden)
  if(EXISTS "${file}")
    message(FATAL_ERROR "${file} exists after a failed run: partial output")
  endif()
endforeach()
if(DEFINED NO_TEMP_IN)
  file(GLOB leftovers "${NO_TEMP_IN}/.*.tmp-*")
  if(leftovers)
    message(FATAL_ERROR "temporary files left behind: ${leftovers}")
  endif()
endif()
foreach(file IN LISTS required)
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "${file} was not written")
  endif()
endforeach()
message(STATUS "exit ${exit_code}; stderr: ${stderr}")
