# The link matrix and the emulated cluster (issue 7).
#
# - linkmatrix_tests: the round-robin schedule and the slow-host/link verdicts (unit).
# - linkmatrix_mpi_np3: collbench-linkmatrix on 3 ranks of this machine, one "host"
#   per rank, must run and write its CSVs (mpi).
# - netsim_e2e: the end-to-end test on scripts/netsim.sh hosts (label netsim; needs root,
#   skipped with a message otherwise; at most netsim_e2e_budget + 30 s; exclude with
#   `ctest -LE netsim`).
if(NOT TARGET collbench_linkmatrix)
  return()
endif()

add_executable(linkmatrix_tests linkmatrix_test.cpp)
target_link_libraries(linkmatrix_tests PRIVATE collbench::linkmatrix GTest::gtest_main
                      collbench_warnings)
collbench_add_gtest(linkmatrix_tests)

set(linkmatrix_test_dir ${CMAKE_CURRENT_BINARY_DIR}/linkmatrix_mpi)
file(MAKE_DIRECTORY ${linkmatrix_test_dir})
collbench_add_mpi_test(NAME linkmatrix_mpi_np3 NP 3 TIMEOUT 120
  COMMAND $<TARGET_FILE:collbench-linkmatrix> --unit rank --size 256KiB --iterations 2
          --latency-iterations 20 --csv ${linkmatrix_test_dir}/links.csv
          --hosts-csv ${linkmatrix_test_dir}/hosts.csv --force)
set_tests_properties(linkmatrix_mpi_np3 PROPERTIES
  PASS_REGULAR_EXPRESSION "link matrix: 3 hosts \\(one per rank\\), 6 links")

if(TARGET collbench_exe AND TARGET collbench-fit AND TARGET collbench-predict)
  # The test's own wall budget (it stops, cleans up and fails on it); CTest's
  # TIMEOUT leaves it 30 s to do so. The mpi part (A, B) takes ~400 s, the ofi
  # part (C) ~300 s on 2 cores.
  set(netsim_e2e_budget 1000)
  math(EXPR netsim_e2e_timeout "${netsim_e2e_budget} + 30")
  add_test(NAME netsim_e2e
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/netsim_e2e.sh --build ${PROJECT_BINARY_DIR}
                   --out ${CMAKE_CURRENT_BINARY_DIR}/netsim_e2e --budget ${netsim_e2e_budget})
  # RUN_SERIAL: its measurements need the machine's cores to themselves.
  set_tests_properties(netsim_e2e PROPERTIES TIMEOUT ${netsim_e2e_timeout} SKIP_RETURN_CODE 77
                       LABELS "netsim;full" RUN_SERIAL TRUE PROCESSORS 2)
endif()
