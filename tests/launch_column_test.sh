#!/usr/bin/env bash
# The launch column (issue 43): two launches of collbench appended to one CSV
# under one run id, as scripts/run.sh makes its sweep, must name two launches,
# or collbench-fit would take them for one launch's repetitions.
# Usage: launch_column_test.sh COLLBENCH
set -euo pipefail
collbench=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for flag in "" --append; do
  # shellcheck disable=SC2086 # the empty first flag is no argument
  "$collbench" --transport inproc --ranks 2 --families p2p --sizes 8B --samples 1 \
    --run-id one_run --csv "$work/rows.csv" $flag >/dev/null 2>"$work/stderr" ||
    { cat "$work/stderr" >&2; exit 1; }
done
/usr/bin/python3 - "$work/rows.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
runs = {r["run_id"] for r in rows}
launches = {r["launch"] for r in rows}
if runs != {"one_run"} or len(launches) != 2 or "" in launches:
    sys.exit(f"launch_column_test: expected one run id and two launches; got run ids {runs}, "
             f"launches {launches}")
print(f"launch_column_test: {len(rows)} rows, one run id, launches {sorted(launches)}")
PY
