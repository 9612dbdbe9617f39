#!/usr/bin/env bash
# Builds collbench and runs its whole test suite, in two stages:
#   1. sanitizers: the unit tests (in-process transport) and a small MPI job,
#      built with AddressSanitizer + UndefinedBehaviorSanitizer (build-sanitize/);
#   2. everything else (build-test/, Release, warnings as errors): unit tests,
#      mpirun-launched tests, tool tests, fuzzers.
# The emulated-cluster end-to-end test (label netsim: root, network
# namespaces, up to 10 minutes) runs only with --netsim.
# Usage: scripts/test.sh [--no-sanitize | --sanitize-only | --netsim] [ctest args...]
#   --no-sanitize     skip stage 1 (faster local runs)
#   --sanitize-only   run stage 1 only
#   --netsim          stage 2 runs only the netsim end-to-end test
#   JOBS              parallel build jobs (default: nproc)
# Extra arguments go to the stage-2 ctest, e.g. scripts/test.sh --no-sanitize -L unit.
set -euo pipefail
cd "$(dirname "$0")/.."

run_sanitize=1
run_main=1
netsim=0
case "${1:-}" in
  -h | --help)
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  --no-sanitize)
    run_sanitize=0
    shift
    ;;
  --sanitize-only)
    run_main=0
    shift
    ;;
  --netsim)
    run_sanitize=0
    netsim=1
    shift
    ;;
esac

scripts/setup.sh
jobs=${JOBS:-$(nproc)}

if [[ $run_sanitize -eq 1 ]]; then
  echo "== stage 1: sanitizers (ASan + UBSan) =="
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLBENCH_WERROR=ON \
    -DCOLLBENCH_SANITIZE=ON >/dev/null
  # Only what the sanitize-labelled tests run: the whole tree under ASan would
  # double the build time for nothing those tests use.
  cmake --build build-sanitize -j "$jobs" --target core_tests allreduce_mpi_test harness_tests \
    collbench_exe
  (cd build-sanitize && ctest --output-on-failure -L sanitize)
fi

if [[ $run_main -eq 1 ]]; then
  echo "== stage 2: the whole suite =="
  cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release -DCOLLBENCH_WERROR=ON >/dev/null
  cmake --build build-test -j "$jobs"
  if [[ $netsim -eq 1 ]]; then
    (cd build-test && ctest --output-on-failure -L netsim "$@")
  else
    (cd build-test && ctest --output-on-failure -j 2 -LE netsim "$@")
  fi
fi
