#!/usr/bin/env bash
# errors: bad input: exit 2, one line from rank 0, no output file
# Usage: errors.sh COLLBENCH; see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

# expect_usage_error NP "stderr text" ARGS...
expect_usage_error() {
  local ranks=$1 message=$2
  shift 2
  run "$ranks" "$@" --csv "$work/error.csv"
  [[ $status -eq 2 ]] || fail "status $status for: $*"
  grep -qF -- "$message" "$work/stderr" || { cat "$work/stderr" >&2; fail "no '$message' for: $*"; }
  [[ $(grep -c '^collbench: ' "$work/stderr") -eq 1 ]] || fail "not exactly one message for: $*"
  [[ ! -e $work/error.csv ]] || fail "an output file was created for: $*"
}
# Under mpirun with 2 ranks (only rank 0 may print), then as singletons,
# which start faster.
expect_usage_error 2 "collbench: unknown algorithm 'rings' in --algorithms; accepted: all, or allreduce: ring," \
  --algorithms ring,rings
expect_usage_error 2 "collbench: --benchmark_enable_random_interleaving cannot be used" \
  --benchmark_enable_random_interleaving=true
expect_usage_error 2 "collbench: allreduce/ring/1099511627776 needs " \
  --sizes 1TiB --algorithms ring
grep -qE "needs [0-9.]+ TiB per rank .* but only [0-9.]+ [GMT]iB per rank is available" \
  "$work/stderr" || fail "the memory guard does not give both sizes"
expect_usage_error 0 "collbench: --sizes: " --sizes 8B:1XB
expect_usage_error 0 "collbench: --sizes: 6 bytes is not a whole number of f32 elements" --sizes 6B
expect_usage_error 0 "collbench: unknown --dtype 'f8'; accepted: f32, f64, f16, bf16" --dtype f8
expect_usage_error 0 "collbench: --workload: " --workload resnet51:ddp
expect_usage_error 0 "collbench: The following argument was not expected: --frobnicate" --frobnicate
expect_usage_error 0 "collbench: --benchmark_format=xml: accepted formats are console and json" \
  --benchmark_format=xml
expect_usage_error 0 "collbench: --benchmark_filter=ring/64\$ selects none of the 3 benchmarks (names look like allreduce/ring/64/manual_time)" \
  --sizes 64B --algorithms ring --benchmark_filter='ring/64$'
expect_usage_error 0 "collbench: --benchmark_filter=ring[ is not a POSIX extended regex: " \
  --sizes 64B --benchmark_filter='ring['
# Ranks started with different options (MPMD launch): named, with both values.
set +e
"${mpirun[@]}" -np 1 "$collbench" --sizes 8B --csv "$work/error.csv" : \
  -np 1 "$collbench" --sizes 16B --csv "$work/error.csv" >"$work/stdout" 2>"$work/stderr"
status=$?
set -e
[[ $status -eq 2 ]] || fail "status $status for differing options"
grep -qF 'collbench: ranks were started with different options: --sizes is "8" on rank 0 but "16" on rank 1' \
  "$work/stderr" || { cat "$work/stderr" >&2; fail "differing options not named"; }
[[ ! -e $work/error.csv ]] || fail "an output file was created for differing options"
# Ranks running different executables of the same revision (a rebuilt,
# uncommitted tree): told apart by the executable's digest.
cp "$collbench" "$work/collbench_other"
printf 'rebuilt' >>"$work/collbench_other"
set +e
"${mpirun[@]}" -np 1 "$collbench" --sizes 8B --csv "$work/error.csv" : \
  -np 1 "$work/collbench_other" --sizes 8B --csv "$work/error.csv" >"$work/stdout" 2>"$work/stderr"
status=$?
set -e
[[ $status -eq 2 ]] || fail "status $status for differing executables"
grep -qE 'collbench: ranks were started with different builds: collbench executable \(FNV-1a of /proc/self/exe\) is "[0-9a-f]{16}" on rank 0 but "[0-9a-f]{16}" on rank 1; every rank must run the same collbench executable' \
  "$work/stderr" || { cat "$work/stderr" >&2; fail "differing executables not named"; }
[[ ! -e $work/error.csv ]] || fail "an output file was created for differing executables"
echo "PASS ($scenario)"
