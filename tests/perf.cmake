# Performance guarantees that are testable (issue 8): the timed call of every
# algorithm allocates nothing, on the in-process and on the MPI transport.
add_executable(alloc_test alloc_test.cpp)
target_link_libraries(alloc_test PRIVATE collbench::collbench GTest::gtest collbench_warnings)
collbench_add_mpi_test(NAME alloc_free_np2 NP 2 COMMAND $<TARGET_FILE:alloc_test> LABELS perf full)

# collbench-core-latency measures a pair of cores and prints one line for it.
if(TARGET collbench-core-latency)
  add_test(NAME core_latency_pair
           COMMAND collbench-core-latency --cpus 0,1 --round-trips 2000 --repetitions 2)
  set_tests_properties(core_latency_pair PROPERTIES
    LABELS perf PROCESSORS 2
    PASS_REGULAR_EXPRESSION
      "^cpu_a cpu_b median_ns min_ns max_ns\n0 1 [0-9]+\\.[0-9] [0-9]+\\.[0-9] [0-9]+\\.[0-9]\n$")
endif()

# scripts/perf_report.py judges the targets on rows measured with the cores
# near, pairs rows by job and repetition, and refuses bad input.
add_test(NAME perf_report
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/perf_report_test.py
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(perf_report PROPERTIES LABELS "unit;perf")
