#!/usr/bin/env bash
# progress: progress line with --progress, none on a pipe without it
# Usage: progress.sh COLLBENCH; see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

# Under mpirun rank 0's stderr is a pipe: the line needs --progress there.
args=(--algorithms ring --families allreduce --sizes 8B,64B --samples 2)
run 2 "${args[@]}" --progress
[[ $status -eq 0 ]] || fail "exit status $status"
grep -qF $'\r\033[K[2/2] allreduce/ring/64  (0 left, 0:' "$work/stderr" ||
  { cat "$work/stderr" >&2; fail "no progress line with --progress"; }
run 2 "${args[@]}"
if grep -qF '[1/2]' "$work/stderr"; then fail "progress shown on a pipe without --progress"; fi
# The count follows --benchmark_filter.
run 2 "${args[@]}" --progress --benchmark_filter='ring/64/'
grep -qF '[1/1] allreduce/ring/64  (0 left' "$work/stderr" ||
  { cat "$work/stderr" >&2; fail "the progress count ignores the filter"; }
run 2 "${args[@]}" --progress --quiet
[[ $status -eq 2 ]] || fail "--progress --quiet accepted"
echo "PASS ($scenario)"
