# A real Slurm on this machine (issue 21).
#
# - slurm_stage: tests/slurm_stage.sh installs slurm-wlm and munge when they are
#   missing, starts munged, slurmctld and slurmd on a one-node configuration in a
#   temporary folder, submits scripts/slurm/collbench.sbatch (2 tasks: shm over srun
#   --mpi=pmix, tcp over lo with mpirun inside the allocation), checks its CSVs and
#   report.md and stops the daemons (label slurm; needs root, skipped otherwise;
#   40-80 s here, some 20 s more where it installs; exclude with `ctest -LE slurm`).
if(NOT (TARGET collbench_exe AND TARGET collbench-linkmatrix AND TARGET collbench-fit
        AND TARGET collbench-predict))
  return()
endif()

add_test(NAME slurm_stage
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/slurm_stage.sh --build ${PROJECT_BINARY_DIR}
                 --job-timeout 300)
# Its jobs start OpenMPI ranks: the mpirun lock, as every MPI test.
set_tests_properties(slurm_stage PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77 LABELS "slurm;full"
                     PROCESSORS 2 RESOURCE_LOCK mpirun)
