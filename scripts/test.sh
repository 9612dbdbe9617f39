#!/usr/bin/env bash
# Builds collbench and runs its whole test suite: unit tests on the in-process
# transport, mpirun-launched tests, tool tests.
# Usage: scripts/test.sh [--sanitize] [ctest args...]
#   --sanitize   build in build-sanitize/ with ASan+UBSan and run the tests labelled 'sanitize'
#   BUILD_DIR    build folder (default: build-test)
#   JOBS         parallel build jobs (default: nproc)
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=0
if [[ ${1:-} == --sanitize ]]; then
  sanitize=1
  shift
fi
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

scripts/setup.sh
jobs=${JOBS:-$(nproc)}
if [[ $sanitize -eq 1 ]]; then
  build=${BUILD_DIR:-build-sanitize}
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLBENCH_WERROR=ON \
    -DCOLLBENCH_SANITIZE=ON >/dev/null
else
  build=${BUILD_DIR:-build-test}
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCOLLBENCH_WERROR=ON >/dev/null
fi
cmake --build "$build" -j "$jobs"
cd "$build"
if [[ $sanitize -eq 1 ]]; then
  ctest --output-on-failure -L sanitize "$@"
else
  ctest --output-on-failure -j 2 "$@"
fi
