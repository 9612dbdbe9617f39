# Tests of the collbench harness (benchmarks/harness): unit tests of its
# pieces, and the executable under mpirun as a user runs it, with the CSV it
# writes read back (tests/harness_e2e/, a file per scenario).

# The shell tests' shared helpers (tests/lib.sh), on cases they must fail.
add_test(NAME tests_lib_sh COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/lib_test.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(tests_lib_sh PROPERTIES LABELS unit)

if(NOT TARGET collbench_exe)
  return()  # built without benchmarks
endif()

add_executable(harness_tests harness_test.cpp load_watch_test.cpp progress_test.cpp
                             clock_sync_test.cpp harness_group_test.cpp)
target_link_libraries(harness_tests PRIVATE collbench_harness GTest::gtest_main collbench_warnings)
collbench_add_gtest(harness_tests)

list(JOIN COLLBENCH_MPIRUN " " harness_mpirun)
set(harness_e2e ${CMAKE_CURRENT_SOURCE_DIR}/harness_e2e)
# harness_mpi_test(<scenario> [NP n] [TIMEOUT s] [LABELS l...]): harness_e2e/<scenario>.sh
# under mpirun, as the test harness_<scenario>[_np<n>].
function(harness_mpi_test scenario)
  cmake_parse_arguments(ARG "" "NP;TIMEOUT" "LABELS" ${ARGN})
  set(name harness_${scenario})
  if(ARG_NP)
    set(name ${name}_np${ARG_NP})
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 180)
  endif()
  add_test(NAME ${name} COMMAND bash ${harness_e2e}/${scenario}.sh $<TARGET_FILE:collbench_exe>
                                     ${ARG_NP})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "${COLLBENCH_MPI_ENV};COLLBENCH_MPIRUN=${harness_mpirun}"
    TIMEOUT ${ARG_TIMEOUT} LABELS "mpi;harness;${ARG_LABELS}" PROCESSORS 2 RESOURCE_LOCK mpirun)
endfunction()

# The default tier runs the main job's scenario at np 3 and a killed rank;
# the rest is in the full tier (label full).
harness_mpi_test(full NP 3)
harness_mpi_test(full NP 4 LABELS full)
harness_mpi_test(collectives NP 3 LABELS full)
harness_mpi_test(workload NP 3 LABELS full)
harness_mpi_test(sendrecv NP 3 LABELS full)
harness_mpi_test(slow NP 3 LABELS full)
harness_mpi_test(samples NP 2 LABELS full)
harness_mpi_test(gemm NP 2 LABELS full)
harness_mpi_test(train NP 2 LABELS full)
harness_mpi_test(check_fail LABELS full)
harness_mpi_test(outputs LABELS full)
harness_mpi_test(killed)
harness_mpi_test(errors LABELS full)
if(COLLBENCH_HAVE_OFI)
  harness_mpi_test(ofi LABELS full)
endif()
harness_mpi_test(progress LABELS full)
# Against MPICH (COLLBENCH_MPI=mpich, test.sh --full's mpich group): the harness
# under mpirun.mpich, p2p and allreduce with the library's own, checked.
if(COLLBENCH_MPI STREQUAL "mpich")
  harness_mpi_test(sendrecv NP 2 LABELS mpich)
endif()

# Every rank in one process, started alone: --transport inproc with MPI_Init
# made fatal (mpi_init_forbidden preloaded), the CSV read back.
add_library(mpi_init_forbidden SHARED mpi_init_forbidden.cpp)
target_link_libraries(mpi_init_forbidden PRIVATE collbench_warnings)
add_test(NAME harness_inproc COMMAND bash ${harness_e2e}/inproc.sh $<TARGET_FILE:collbench_exe> 4)
set_tests_properties(harness_inproc PROPERTIES
  ENVIRONMENT "COLLBENCH_MPIRUN=none;COLLBENCH_FORBID_MPI_INIT=$<TARGET_FILE:mpi_init_forbidden>"
  TIMEOUT 180 LABELS "unit;harness" PROCESSORS 2)

# Two launches appended under one run id name two launches (issue 43).
add_test(NAME harness_launch_column COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch_column_test.sh
                                            $<TARGET_FILE:collbench_exe>)
set_tests_properties(harness_launch_column PROPERTIES TIMEOUT 60 LABELS "unit;harness")

# --sync window and the other tools' timing conventions, in one process and
# under mpirun.
add_test(NAME harness_window COMMAND bash ${harness_e2e}/window.sh $<TARGET_FILE:collbench_exe> 2)
set_tests_properties(harness_window PROPERTIES
  ENVIRONMENT "${COLLBENCH_MPI_ENV};COLLBENCH_MPIRUN=${harness_mpirun};COLLBENCH_FORBID_MPI_INIT=$<TARGET_FILE:mpi_init_forbidden>"
  TIMEOUT 180 LABELS "mpi;harness" PROCESSORS 2 RESOURCE_LOCK mpirun)

# --transport sim: the harness on SimGrid actors, MPI_Init fatal.
if(COLLBENCH_HAVE_SIMGRID)
  add_test(NAME harness_sim COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/harness_sim_test.sh
                                    $<TARGET_FILE:collbench_exe> /usr/bin/python3)
  set_tests_properties(harness_sim PROPERTIES
    ENVIRONMENT "COLLBENCH_FORBID_MPI_INIT=$<TARGET_FILE:mpi_init_forbidden>"
    TIMEOUT 300 LABELS "unit;harness")
  # The malloc simulations run on: jemalloc when CMake found it (COLLBENCH_WITH_JEMALLOC).
  if(COLLBENCH_HAVE_JEMALLOC)
    set(sim_malloc jemalloc)
  else()
    set(sim_malloc glibc)
  endif()
  add_library(preload_marker SHARED preload_marker.cpp)
  target_link_libraries(preload_marker PRIVATE collbench_warnings)
  add_test(NAME sim_malloc COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/sim_malloc_test.sh
                                   $<TARGET_FILE:collbench_exe> $<TARGET_FILE:collbench-sim-speed>
                                   ${sim_malloc})
  set_tests_properties(sim_malloc PROPERTIES
    ENVIRONMENT "COLLBENCH_FORBID_MPI_INIT=$<TARGET_FILE:mpi_init_forbidden>;COLLBENCH_PRELOAD_MARKER_LIBRARY=$<TARGET_FILE:preload_marker>"
    TIMEOUT 60 LABELS "unit;harness")
  add_test(NAME closed_stdout COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/closed_stdout_test.sh
                                       $<TARGET_FILE:collbench-sim-speed> /usr/bin/python3)
  set_tests_properties(closed_stdout PROPERTIES TIMEOUT 60 LABELS "unit")
  add_test(NAME cmake_tristate COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cmake_tristate_test.sh
                                       ${CMAKE_COMMAND} ${PROJECT_SOURCE_DIR})
  set_tests_properties(cmake_tristate PROPERTIES TIMEOUT 60 LABELS "unit")
  # What its CSV says against the platform: the fit, size-only, ppn, calibration.
  add_test(NAME sim_harness_truth
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/sim_harness_truth_test.sh
                   $<TARGET_FILE:collbench_exe> $<TARGET_FILE:collbench-fit> /usr/bin/python3
                   ${PROJECT_SOURCE_DIR}/results/netsim/uniform/fit/models.csv)
  set_tests_properties(sim_harness_truth PROPERTIES
    ENVIRONMENT "COLLBENCH_FORBID_MPI_INIT=$<TARGET_FILE:mpi_init_forbidden>"
    TIMEOUT 300 LABELS "unit;harness")
  # --families train on the simulated clock, and its agreement with
  # collbench-predict on the gemm rows results/ holds.
  add_test(NAME harness_sim_train
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/harness_sim_train_test.sh
                   $<TARGET_FILE:collbench_exe> $<TARGET_FILE:collbench-predict>
                   ${PROJECT_SOURCE_DIR}/results/gemm/gemm.csv /usr/bin/python3)
  set_tests_properties(harness_sim_train PROPERTIES TIMEOUT 300 LABELS "unit;harness")
  # MODEL:fsdp and MODEL:zero2 in train: data checked at p = 1..4, the
  # catalog's messages, and the schedule's time worked out by hand. About 2
  # minutes of CPU (resnet50's real data at p = 1..4), so in the full tier;
  # the default tier has the plan's checks (harness_tests, Plan.Train*).
  add_test(NAME harness_sim_fsdp
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/harness_sim_fsdp_test.sh
                   $<TARGET_FILE:collbench_exe> $<TARGET_FILE:collbench-catalog> /usr/bin/python3)
  set_tests_properties(harness_sim_fsdp PROPERTIES TIMEOUT 900 LABELS "full;harness")
  # scripts/scale.sh: the tapered fat-tree against collbench-predict --fat-tree,
  # a --network preset, the batch limit of strong scaling.
  add_test(NAME scale_sim COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scale_test.sh
                                  ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR} /usr/bin/python3)
  set_tests_properties(scale_sim PROPERTIES TIMEOUT 300 LABELS "unit;harness")
  # scripts/sim_sweep.sh --quick: every study at p <= 8 and the shape of its
  # CSVs; 1 to 4 minutes on the shared machine, so in the full tier.
  add_test(NAME sim_sweep COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/sim_sweep_test.sh
                                  ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  set_tests_properties(sim_sweep PROPERTIES TIMEOUT 900 LABELS "full;harness")
  # characterize.sh --sim-nodes ("on N nodes like these"): the sim step and
  # the report's section from it, on a copy of results/netsim/uniform's fit.
  # characterize.sh checks its arguments with every tool it runs, the MPI
  # ones as singletons.
  if(TARGET collbench-linkmatrix AND TARGET collbench-predict)
    add_test(NAME characterize_sim
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/characterize_sim_test.sh ${PROJECT_SOURCE_DIR}
                     ${PROJECT_BINARY_DIR})
    set_tests_properties(characterize_sim PROPERTIES ENVIRONMENT "${COLLBENCH_MPI_ENV}" TIMEOUT 300
                         LABELS "unit;harness" RESOURCE_LOCK mpirun)
  endif()
endif()

# --transport ofi without mpirun: ranks started by hand meet in a folder.
if(COLLBENCH_HAVE_OFI)
  add_test(NAME harness_ofi_file
           COMMAND bash ${harness_e2e}/ofi_file.sh $<TARGET_FILE:collbench_exe>)
  set_tests_properties(harness_ofi_file PROPERTIES
    ENVIRONMENT "COLLBENCH_MPIRUN=none;COLLBENCH_FORBID_MPI_INIT=$<TARGET_FILE:mpi_init_forbidden>"
    TIMEOUT 180 LABELS "harness;ofi" PROCESSORS 2)
endif()

add_test(NAME harness_help COMMAND collbench_exe --help)
set_tests_properties(harness_help PROPERTIES LABELS unit
  PASS_REGULAR_EXPRESSION "--sizes SIZES[^\n]*default: 8B:64MiB.*--benchmark_filter")
add_test(NAME harness_list_providers COMMAND collbench_exe --list-providers)
set_tests_properties(harness_list_providers PROPERTIES LABELS unit ENVIRONMENT "${COLLBENCH_MPI_ENV}"
                     RESOURCE_LOCK mpirun)

# --list-algorithms --csv as an MPI singleton (no mpirun): its header and
# only well-formed rows (harness_tests checks every row against the
# registry; scripts/collbench_csv.py's test reads it as scripts do).
add_test(NAME harness_list_algorithms_csv COMMAND collbench_exe --list-algorithms --csv)
set_tests_properties(harness_list_algorithms_csv PROPERTIES LABELS unit
  ENVIRONMENT "${COLLBENCH_MPI_ENV}" RESOURCE_LOCK mpirun
  PASS_REGULAR_EXPRESSION "^order,collective,algorithm,implementation,cost_model,reduces_on_every_rank,summary\n([0-9]+,[a-z_]+,[a-z0-9_]+,(hand-written|mpi),(yes|no),(yes|no),[^\n]+\n)+$")

# Under scripts/test.sh --full (the sanitize group): the unit tests, and one real run (check,
# workload exchange, repetitions) on 3 ranks under ASan+UBSan.
if(COLLBENCH_SANITIZE)
  add_test(NAME sanitize_harness_tests COMMAND harness_tests --gtest_brief=1)
  set_tests_properties(sanitize_harness_tests PROPERTIES ENVIRONMENT "${sanitize_env}"
                       LABELS sanitize TIMEOUT 900)
  add_test(NAME sanitize_collbench_np3
           COMMAND ${COLLBENCH_MPIRUN} -np 3 $<TARGET_FILE:collbench_exe> --sizes 4B,1028B,256KiB
                   --check --workload googlenet:ddp --dtype f16 --samples 3
                   --benchmark_repetitions=2 --quiet)
  set_tests_properties(sanitize_collbench_np3 PROPERTIES
                       ENVIRONMENT "${COLLBENCH_MPI_ENV};${sanitize_env}" LABELS sanitize
                       TIMEOUT 900 PROCESSORS 2 RESOURCE_LOCK mpirun)
endif()
