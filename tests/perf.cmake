# Performance guarantees that are testable (issue 8): the timed call of every
# algorithm allocates nothing, on the in-process and on the MPI transport.
add_executable(alloc_test alloc_test.cpp)
target_link_libraries(alloc_test PRIVATE collbench::collbench GTest::gtest collbench_warnings)
collbench_add_mpi_test(NAME alloc_free_np2 NP 2 COMMAND $<TARGET_FILE:alloc_test> LABELS perf)
