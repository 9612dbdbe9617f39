#!/usr/bin/env bash
# A standard output closed by the caller (... >&-) is not the descriptor of
# the first file the program opens (benchmarks/cli/standard_output.h): with
# it free, collbench-sim-speed's --benchmark_out took descriptor 1 and held
# Google Benchmark's display ("Running ...") before its JSON.
# Usage: closed_stdout_test.sh SIM_SPEED PYTHON
set -euo pipefail
sim_speed=${1:?usage: closed_stdout_test.sh SIM_SPEED PYTHON}
python=${2:?usage: closed_stdout_test.sh SIM_SPEED PYTHON}
# shellcheck source=tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scratch_dir closed_stdout
work=$scratch

"$sim_speed" --ranks=4 --iterations=1 --benchmark_out="$work/out.json" >&- 2>"$work/stderr" ||
  fail "collbench-sim-speed >&- failed: $(cat "$work/stderr")"
"$python" -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/out.json" 2>/dev/null ||
  fail "with stdout closed, --benchmark_out is not JSON: $(head -c 200 "$work/out.json")"
echo "closed_stdout: --benchmark_out stays JSON with stdout closed"
