# Tests of the libfabric transport (issue 6), included by tests/CMakeLists.txt:
# the transport's own test program, and the allreduce correctness suite run
# over OFI, for every provider in COLLBENCH_OFI_TEST_PROVIDERS.
#
# A provider missing on the machine that runs the tests makes its tests
# SKIP (exit code 77), not fail; a build without libfabric registers one
# test that says so and is reported as skipped.

# The file bootstrap (how libfabric's ranks meet without MPI) needs no
# libfabric itself, nor MPI: it links the transport layer alone.
add_executable(file_bootstrap_test file_bootstrap_test.cpp)
target_link_libraries(file_bootstrap_test PRIVATE collbench::transport GTest::gtest_main
                                                  collbench_warnings)
collbench_add_gtest(file_bootstrap_test)

if(NOT COLLBENCH_HAVE_OFI)
  add_test(NAME ofi_absent
           COMMAND ${CMAKE_COMMAND} -E echo "libfabric absent from this build: OFI tests skipped")
  set_tests_properties(ofi_absent PROPERTIES SKIP_REGULAR_EXPRESSION "OFI tests skipped"
                                             LABELS "ofi")
  return()
endif()

set(COLLBENCH_OFI_TEST_PROVIDERS tcp shm sockets
    CACHE STRING "libfabric providers the OFI tests run on (those absent at test time are skipped)")

# Keep the fabric providers on loopback: tcp and sockets otherwise pick the
# first interface libfabric lists, which may be a real network.
set(COLLBENCH_OFI_TEST_ENV FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo)

add_executable(ofi_transport_test ofi_transport_test.cpp)
target_link_libraries(ofi_transport_test PRIVATE collbench::collbench GTest::gtest
                                                 collbench_warnings)

# fi_info, when installed, tells at configure time which providers exist
# here; the allreduce suite has no skip path of its own, so its OFI entries
# are only registered for those (the transport test skips at run time).
find_program(COLLBENCH_FI_INFO fi_info)

# The default tier runs the transport test on shm at np 2 (skipped, with its
# reason, where shm is missing); everything else here is in the full tier.
foreach(provider IN LISTS COLLBENCH_OFI_TEST_PROVIDERS)
  foreach(np 2 3)
    set(name ofi_transport_${provider}_np${np})
    set(tier full)
    if(name STREQUAL "ofi_transport_shm_np2")
      set(tier "")
    endif()
    collbench_add_mpi_test(NAME ${name} NP ${np} TIMEOUT 180 LABELS ofi ${tier}
                           COMMAND $<TARGET_FILE:ofi_transport_test> --provider ${provider})
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT ${COLLBENCH_OFI_TEST_ENV})
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()

  set(provider_present ON)
  if(COLLBENCH_FI_INFO)
    execute_process(COMMAND ${COLLBENCH_FI_INFO} -p ${provider} -t FI_EP_RDM -c FI_TAGGED
                    RESULT_VARIABLE fi_info_status OUTPUT_QUIET ERROR_QUIET)
    if(NOT fi_info_status EQUAL 0)
      set(provider_present OFF)
    endif()
  endif()
  foreach(np 2 3 4 5)
    set(name collective_ofi_${provider}_np${np})
    if(provider_present)
      collbench_add_mpi_test(NAME ${name} NP ${np} TIMEOUT 300 LABELS ofi full
                             COMMAND $<TARGET_FILE:collective_mpi_test> --transport ofi
                                     --ofi-provider ${provider})
      set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT ${COLLBENCH_OFI_TEST_ENV})
    else()
      add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E echo
               "libfabric provider ${provider} absent on this node: ${name} skipped")
      set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION "skipped" LABELS "ofi;full")
    endif()
  endforeach()
endforeach()

# libfabric without MPI: ranks forked by the test itself meet through a
# file bootstrap (bootstrap.h). It links the libfabric transport alone, so
# no MPI symbol can be reached.
add_executable(ofi_without_mpi_test ofi_without_mpi_test.cpp)
target_link_libraries(ofi_without_mpi_test PRIVATE collbench::transport_ofi GTest::gtest
                                                   collbench_warnings)
gtest_discover_tests(ofi_without_mpi_test DISCOVERY_TIMEOUT 60 NO_PRETTY_VALUES
                     PROPERTIES LABELS ofi TIMEOUT 180 PROCESSORS 2 RESOURCE_LOCK mpirun)
