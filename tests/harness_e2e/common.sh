# shellcheck shell=bash
# Sourced by every scenario of tests/harness_e2e/: end-to-end tests of the
# `collbench` executable, run as a user runs it (under mpirun, or started
# alone) and then the CSV it wrote read back (Python's csv module, stdlib
# only), so they check what the harness promises rather than how it is
# built. A file per scenario, a CTest test each (tests/harness.cmake:
# harness_SCENARIO, or harness_SCENARIO_npNP where it runs on NP ranks).
#
# A scenario's arguments: COLLBENCH (the executable) and, where it says so,
# NP (ranks, default 2).
# Environment: COLLBENCH_MPIRUN, the mpirun command with its options (none:
# the scenario starts its processes alone); COLLBENCH_FORBID_MPI_INIT
# (inproc, ofi_file, window), a library to preload whose MPI_Init ends the
# process.
#
# Beside tests/lib.sh's fail and check_csv, a scenario has
#   scenario, collbench, np, python   its name, its arguments, the Python
#   mpirun                            COLLBENCH_MPIRUN as an array
#   work                              its scratch folder, removed at exit
#   run NP ARGS...                    collbench under mpirun (NP 0: an MPI
#                                     singleton); output in $work/stdout and
#                                     $work/stderr, exit status in $status
#   registry_algorithms               the table's allreduce algorithms
# shellcheck source=tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

scenario=$(basename "$0" .sh)
collbench=${1:?usage: $scenario.sh COLLBENCH [NP]}
# shellcheck disable=SC2034  # read by the scenarios
np=${2:-2}
python=/usr/bin/python3
read -r -a mpirun <<<"${COLLBENCH_MPIRUN:?set COLLBENCH_MPIRUN to the mpirun command}"
scratch_dir "harness_$scenario"
work=$scratch

# Every allreduce algorithm of the table, comma-separated, as collbench lists
# them (--list-algorithms --csv, an MPI singleton): what --algorithms all
# runs for --families allreduce (not the library's forced ompi_* rows, which
# only --library-algorithms adds).
registry_algorithms() {
  "$collbench" --list-algorithms --csv | "$python" -c '
import csv, sys
print(",".join(row["algorithm"] for row in csv.DictReader(sys.stdin)
               if row["collective"] == "allreduce" and not row["algorithm"].startswith("ompi_")))'
}

run() { # NP ARGS...
  local ranks=$1
  shift
  local launcher=("${mpirun[@]}" -np "$ranks")
  [[ $ranks -eq 0 ]] && launcher=()
  set +e
  "${launcher[@]}" "$collbench" "$@" >"$work/stdout" 2>"$work/stderr"
  # shellcheck disable=SC2034  # read by the scenarios
  status=$?
  set -e
}
