# Reliability (issue 9): bad input answered clearly by every executable and
# script, and a stuck or crashed rank ending the job soon with the finished
# CSV rows kept. Label `reliability` (`ctest -L reliability`).
#
#   reliability_bad_inputs  tests/bad_inputs.tsv, run by tests/bad_inputs.sh:
#                           exit status 2, the expected message, no file left
#   reliability_stuck       tests/reliability_mpi_test.sh stuck: --debug-stuck-rank
#                           with --timeout 2 names the benchmark, size and rank
#   reliability_crashed     tests/reliability_mpi_test.sh crashed: --debug-crash-rank,
#                           the job ends in seconds, no torn CSV row; one rank alone
#                           dies of SIGSEGV (139) and leaves no backtrace file
#   reliability_outputs     tests/reliability_mpi_test.sh outputs: aggregates-only
#                           flags keep the CSV's rows, a full disk (ulimit -f) leaves
#                           whole rows only, a --timeout under 1 ms still ends the job
#
# Other reliability tests live with their area: harness_killed and
# harness_errors (tests/harness.cmake), the sanitizer runs (label sanitize)
# and the fuzz targets (tests/fuzz.cmake).
if(NOT TARGET collbench_exe)
  return()  # built without benchmarks
endif()

list(JOIN COLLBENCH_MPIRUN " " reliability_mpirun)
set(reliability_env ${COLLBENCH_MPI_ENV} "COLLBENCH_MPIRUN=${reliability_mpirun}")

# Mostly single processes (MPI singletons among them), and one mpirun row.
# About 470 rows, two at a time (BAD_INPUTS_JOBS): 477 s on a 2-core machine
# running five other builds.
add_test(NAME reliability_bad_inputs
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/bad_inputs.sh ${PROJECT_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(reliability_bad_inputs PROPERTIES
  ENVIRONMENT "${reliability_env}" TIMEOUT 600 LABELS "reliability;mpi" PROCESSORS 2
  RESOURCE_LOCK mpirun)

# stuck waits out its timeouts (~20 s of sleeping): the full tier.
foreach(scenario stuck crashed outputs)
  set(tier "")
  if(scenario STREQUAL "stuck")
    set(tier full)
  endif()
  add_test(NAME reliability_${scenario}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/reliability_mpi_test.sh ${scenario}
                   $<TARGET_FILE:collbench_exe>)
  set_tests_properties(reliability_${scenario} PROPERTIES
    ENVIRONMENT "${reliability_env}" TIMEOUT 180 LABELS "reliability;mpi;${tier}" PROCESSORS 2
    RESOURCE_LOCK mpirun)
endforeach()
