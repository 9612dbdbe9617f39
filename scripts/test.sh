#!/usr/bin/env bash
# Builds collbench and runs its whole test suite, in two stages:
#   1. sanitizers: the unit tests (in-process transport) and a small MPI job,
#      built with AddressSanitizer + UndefinedBehaviorSanitizer (build-sanitize/);
#   2. everything else (build-test/, Release, warnings as errors): unit tests,
#      mpirun-launched tests, tool tests, fuzzers.
# The emulated-cluster end-to-end test (label netsim: root, network
# namespaces, up to 17 minutes) runs only with --netsim. The Slurm stage (label
# slurm, tests/slurm_stage.sh: root; installs slurm-wlm and munge when missing,
# runs collbench.sbatch under a one-node Slurm; 1-2 minutes) runs in stage 2;
# leave it out with -LE slurm.
# Usage: scripts/test.sh [--no-sanitize | --sanitize-only | --netsim] [ctest args...]
#   --no-sanitize     skip stage 1 (faster local runs)
#   --sanitize-only   run stage 1 only
#   --netsim          stage 2 runs only the netsim end-to-end test
#   JOBS              parallel build jobs (default: nproc)
# Extra arguments go to the stage-2 ctest (common ctest options only, checked
# first: -R, -E, -L, -LE, -j, --repeat, --output-on-failure, ...), e.g.
#   scripts/test.sh --no-sanitize -L unit
set -euo pipefail
cd "$(dirname "$0")/.."

run_sanitize=1
run_main=1
netsim=0
case "${1:-}" in
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
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

# ctest ignores options it does not know (and exits 0), so a mistyped one
# would build everything and then run the wrong tests: the ctest options
# this script passes on are the common ones, checked before building.
expects_value=" -R -E -L -LE -j -I --repeat --timeout --tests-regex --exclude-regex --label-regex
  --label-exclude --parallel "
known_flag=" -N -V -VV -Q --output-on-failure --stop-on-failure --rerun-failed --show-only
  --no-tests=error --schedule-random --progress "
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  arg=${args[i]}
  if [[ $expects_value == *" $arg "* ]]; then
    if ((i + 1 >= ${#args[@]})); then
      echo "test.sh: $arg needs a value (see scripts/test.sh --help)" >&2
      exit 2
    fi
    i=$((i + 1))
  elif [[ $arg == -* && $known_flag != *" $arg "* && $arg != --repeat=* && $arg != -j[0-9]* ]]; then
    echo "test.sh: unknown option '$arg': the first argument may be --no-sanitize," \
      "--sanitize-only or --netsim, the rest go to ctest (-R, -E, -L, -LE, -j, --repeat," \
      "--output-on-failure, ...; see scripts/test.sh --help)" >&2
    exit 2
  elif [[ $arg != -* ]]; then
    echo "test.sh: '$arg' is not an option; ctest's options take their value as the next" \
      "argument (e.g. -R harness; see scripts/test.sh --help)" >&2
    exit 2
  fi
done

scripts/setup.sh
jobs=${JOBS:-$(nproc)}

if [[ $run_sanitize -eq 1 ]]; then
  echo "== stage 1: sanitizers (ASan + UBSan) =="
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLBENCH_WERROR=ON \
    -DCOLLBENCH_SANITIZE=ON >/dev/null
  # Only what the sanitize-labelled tests run: the whole tree under ASan would
  # double the build time for nothing those tests use.
  cmake --build build-sanitize -j "$jobs" --target core_tests collective_mpi_test harness_tests \
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
