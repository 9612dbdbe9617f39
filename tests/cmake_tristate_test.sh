#!/usr/bin/env bash
# The AUTO/ON/OFF options of CMakeLists.txt (COLLBENCH_WITH_OFI, _SIMGRID,
# _JEMALLOC) take their values in any case and refuse any other: "off" once
# meant AUTO (jemalloc linked in), and so did "no". Configures only, with
# tests and benchmarks off (under a second each).
# Usage: cmake_tristate_test.sh CMAKE SOURCE_DIR
set -euo pipefail
cmake=${1:?usage: cmake_tristate_test.sh CMAKE SOURCE_DIR}
source_dir=${2:?usage: cmake_tristate_test.sh CMAKE SOURCE_DIR}
# shellcheck source=tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scratch_dir cmake_tristate
work=$scratch
configure() {  # configure NAME ARGS...: its output in $work/NAME.log, its status
  local name=$1
  shift
  "$cmake" -S "$source_dir" -B "$work/$name" -DCOLLBENCH_BUILD_TESTS=OFF \
    -DCOLLBENCH_BUILD_BENCHMARKS=OFF "$@" >"$work/$name.log" 2>&1
}
if configure no -DCOLLBENCH_WITH_JEMALLOC=no; then
  fail "COLLBENCH_WITH_JEMALLOC=no configured"
fi
grep -q "COLLBENCH_WITH_JEMALLOC=no: accepted values are AUTO, ON and OFF" "$work/no.log" ||
  fail "COLLBENCH_WITH_JEMALLOC=no: $(grep -A2 'CMake Error' "$work/no.log" | head -3)"
configure off -DCOLLBENCH_WITH_SIMGRID=off -DCOLLBENCH_WITH_JEMALLOC=off ||
  fail "lowercase off refused: $(grep -A2 'CMake Error' "$work/off.log" | head -3)"
! grep -E "building the sim transport|the malloc of collbench" "$work/off.log" ||
  fail "COLLBENCH_WITH_SIMGRID=off COLLBENCH_WITH_JEMALLOC=off built them"
echo "cmake_tristate: no refused, off is OFF"
