# The scripts take algorithm names and their order from the data (CSVs,
# collbench-fit's models.csv, collbench --list-algorithms --csv), never from
# lists of their own: an algorithm no script knows is reported, not dropped;
# every collective of a CSV (tests/scripts_collectives.csv, a real run of
# allreduce, reduce_scatter and allgather) gets its table and plots. Runs
# collbench once as an MPI singleton (the listing), collbench-fit on that CSV.
add_test(NAME scripts_names
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/scripts_names_test.py
                 ${PROJECT_SOURCE_DIR} $<TARGET_FILE:collbench_exe>
                 $<TARGET_FILE:collbench-fit>)
set_tests_properties(scripts_names PROPERTIES LABELS unit ENVIRONMENT "${COLLBENCH_MPI_ENV}"
                     RESOURCE_LOCK mpirun)

# The main job's report (scripts/report.py) on the pipeline run.sh runs after
# measuring (collbench-fit, collbench-predict): a recorded run of 4 ranks on 2
# cores gets its warning first and its "not meaningful" marks, the same rows
# with a core per rank none; a hand-made selections.csv its known ranges.
add_test(NAME report
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/report_test.py
                 ${PROJECT_SOURCE_DIR} $<TARGET_FILE:collbench-fit>
                 $<TARGET_FILE:collbench-predict>)
set_tests_properties(report PROPERTIES LABELS unit)

# scripts/compare_selections.py: flips against the two runs' tie sets.
add_test(NAME compare_selections
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/compare_selections_test.py
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(compare_selections PROPERTIES LABELS unit)

# scripts/machine.sh, which run.sh and perf.sh take cores, NUMA nodes and
# binding from: under taskset here, and on a made-up /sys with two threads
# per core (MACHINE_SYS, MACHINE_STATUS).
add_test(NAME machine COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/machine_test.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(machine PROPERTIES LABELS unit)

# scripts/collbench_report/simstudy.py (sim_study.py): the crossing of a ratio
# curve, the fastest algorithm's runs against p, Swing's ratios, on made-up curves.
add_test(NAME sim_study
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/sim_study_test.py ${PROJECT_SOURCE_DIR})
set_tests_properties(sim_study PROPERTIES LABELS unit)

# scripts/mpi_launcher.sh, which the scripts that start ranks name their
# launcher by: the build's library from its cache, the launcher for it, its
# flags (2 ranks of `true` started with them).
add_test(NAME mpi_launcher COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi_launcher_test.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(mpi_launcher PROPERTIES LABELS unit)

# scripts/characterize_report.py report: the section "Your model on N nodes
# like these" (characterize.sh --sim-workload) on a hand-made scale.sh CSV.
add_test(NAME characterize_report
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/characterize_report_test.py
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(characterize_report PROPERTIES LABELS unit)
