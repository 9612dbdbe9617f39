#!/usr/bin/env bash
# tests/lib.sh's fail and check_csv, which the harness scenarios
# (tests/harness_e2e/) rest on: each on a case it must pass and on cases it
# must fail, since a helper that never fails would let every scenario pass.
# Usage: tests/lib_test.sh SOURCE_DIR
set -euo pipefail
source "$1/tests/lib.sh"

scratch_dir lib_test
printf 'a,b\n1,2\n3,4\n' >"$scratch/good.csv"
printf 'a,b\n1,2\n3\n' >"$scratch/torn.csv"

# outcome FUNCTION: "status N: STDERR" (its lines joined by |), FUNCTION run in
# a subshell, since fail ends the shell it runs in.
outcome() {
  local status=0 err
  err=$( ("$1") 2>&1 >/dev/null) || status=$?
  echo "status $status: ${err//$'\n'/|}"
}

rows_and_arguments() {
  check_csv "$scratch/good.csv" 7 <<'PYTHON'
if header != ["a", "b"] or [row["b"] for row in rows] != ["2", "4"] or sys.argv[2:] != ["7"]:
    fail(f"header {header}, rows {rows}, arguments {sys.argv[2:]}")
PYTHON
}
failing_check() {
  check_csv "$scratch/good.csv" <<'PYTHON'
fail("the check's own message")
PYTHON
}
torn_row() {
  check_csv "$scratch/torn.csv" <<'PYTHON'
pass
PYTHON
}
failed() {
  fail "a message"
}

expect "check_csv: the rows, the header and the arguments" "status 0: " \
  "$(outcome rows_and_arguments)"
expect "check_csv: a failing check fails the test" \
  "status 1: the check's own message|FAIL (lib_test): CSV check of $scratch/good.csv failed" \
  "$(outcome failing_check)"
expect "check_csv: a torn row fails before the check runs" \
  "status 1: $scratch/torn.csv:3: 1 fields for 2 columns|FAIL (lib_test): CSV check of $scratch/torn.csv failed" \
  "$(outcome torn_row)"
expect "fail: its line, then the end of the test" "status 1: FAIL (lib_test): a message" \
  "$(outcome failed)"
expectations_met
