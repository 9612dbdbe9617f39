# Runs EXE with ARGS ('|'-separated) and checks that it exits with status 2
# and prints exactly one line on stderr, matching EXPECT_STDERR.
#   cmake -DEXE=... -DARGS=show|resnet51 -DEXPECT_STDERR=regex -P catalog_cli_expect.cmake
string(REPLACE "|" ";" arguments "${ARGS}")
execute_process(COMMAND ${EXE} ${arguments}
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT exit_code STREQUAL "2")
  message(FATAL_ERROR "'${EXE} ${ARGS}' exited with '${exit_code}', expected 2; stderr: ${stderr}")
endif()
if(NOT stderr MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "stderr of '${ARGS}' does not match '${EXPECT_STDERR}': ${stderr}")
endif()
string(REGEX MATCHALL "\n" newlines "${stderr}")
list(LENGTH newlines line_count)
if(NOT line_count EQUAL 1)
  message(FATAL_ERROR "expected one line on stderr, got ${line_count}: ${stderr}")
endif()
if(NOT stdout STREQUAL "")
  message(FATAL_ERROR "expected nothing on stdout for bad input, got: ${stdout}")
endif()
message(STATUS "exit 2 with: ${stderr}")
