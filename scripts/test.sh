#!/usr/bin/env bash
# Builds collbench and runs its whole test suite, in two stages:
#   1. sanitizers: the unit tests (in-process transport) and a small MPI job,
#      built with AddressSanitizer + UndefinedBehaviorSanitizer (build-sanitize/);
#   2. everything (build-test/, Release, warnings as errors): unit tests,
#      mpirun-launched tests, tool tests, fuzzers, the netsim end-to-end test.
# Usage: scripts/test.sh [--no-sanitize | --sanitize-only] [ctest args...]
#   --no-sanitize     skip stage 1 (faster local runs)
#   --sanitize-only   run stage 1 only
#   JOBS              parallel build jobs (default: nproc)
# Extra arguments go to the stage-2 ctest, e.g. scripts/test.sh -L unit, -LE netsim.
set -euo pipefail
cd "$(dirname "$0")/.."

run_sanitize=1
run_main=1
case "${1:-}" in
  -h | --help)
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
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
  (cd build-test && ctest --output-on-failure -j 2 "$@")
fi
