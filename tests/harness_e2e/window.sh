#!/usr/bin/env bash
# window: --sync window (issue 43) on --transport inproc --ranks NP, and under
# mpirun when COLLBENCH_MPIRUN is not none: every row has its window, clock
# error and late starts, with samples + late_starts the samples run;
# --debug-late-rank makes every other start late, and those samples are
# dropped and counted; under --sync barrier osu_avg_us (each rank's mean,
# averaged) is at most mean_us (each call's slowest) and the window columns
# are empty
# Usage: COLLBENCH_FORBID_MPI_INIT=LIB window.sh COLLBENCH [NP] (ranks, default
# 2); see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

forbid=${COLLBENCH_FORBID_MPI_INIT:-}
# window_run LABEL SAMPLES ARGS...: collbench in one process (and under
# mpirun unless COLLBENCH_MPIRUN is none), each CSV checked by the Python
# below with SAMPLES and LABEL.
window_run() {
  local label=$1 samples=$2
  shift 2
  local common=(--families allreduce --algorithms ring,mpi --sizes 8B,64KiB --samples "$samples"
    --quiet)
  local how
  for how in inproc mpi; do
    rm -f "$work/$how.csv"
    if [[ $how == inproc ]]; then
      set +e
      LD_PRELOAD=$forbid "$collbench" --transport inproc --ranks "$np" \
        --algorithms ring --families allreduce --sizes 8B,64KiB --samples "$samples" --quiet \
        --csv "$work/$how.csv" "$@" >"$work/stdout" 2>"$work/stderr"
      status=$?
      set -e
    else
      [[ ${mpirun[0]} != none ]] || continue
      run "$np" "${common[@]}" --csv "$work/$how.csv" "$@"
    fi
    [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "$label ($how): exit status $status"; }
    check_csv "$work/$how.csv" "$label" "$samples" "$how" <<'PYTHON'
label, samples, how = sys.argv[2], int(sys.argv[3]), sys.argv[4]
if len(rows) != (2 if how == "inproc" else 4):
    fail(f"{label} ({how}): {len(rows)} rows")
for row in rows:
    name = row["benchmark"]
    where = f"{label} ({how}) {name}"
    # Processes that share a core with other work (an oversubscribed or
    # busy machine) can miss every window; the benchmark is then skipped
    # with that error, and only the in-process run is held to the counts.
    if how == "mpi" and label != "barrier" and not row["samples"]:
        print(f"{where}: every start late (a busy machine); not checked")
        continue
    if float(row["nccl_avg_us"]) <= 0:
        fail(f"{where}: nccl_avg_us {row['nccl_avg_us']!r}")
    if label == "barrier":
        if row["sync"] != "barrier" or row["window_us"] or row["late_starts"]:
            fail(f"{where}: sync {row['sync']}, window_us {row['window_us']!r}")
        # A mean of per-call maxima is at least the mean over ranks of their means.
        if not 0 < float(row["osu_avg_us"]) <= float(row["mean_us"]) * (1 + 1e-9):
            fail(f"{where}: osu_avg_us {row['osu_avg_us']} vs mean_us {row['mean_us']}")
        continue
    if row["sync"] != "window" or row["osu_avg_us"]:
        fail(f"{where}: sync {row['sync']}, osu_avg_us {row['osu_avg_us']!r}")
    late, kept = int(row["late_starts"]), int(row["samples"])
    if float(row["window_us"]) < 10 or float(row["clock_error_us"]) < 0:
        fail(f"{where}: window_us {row['window_us']}, clock_error_us {row['clock_error_us']}")
    if late + kept != samples or kept < 1:
        fail(f"{where}: {kept} samples + {late} late starts, {samples} run")
    # Rank 1 late for every other start: at least those are dropped.
    if label == "late" and late < samples // 2:
        fail(f"{where}: {late} late starts of {samples}, at least {samples // 2} made late")
PYTHON
  done
}
window_run barrier 10
window_run window 20 --sync window
window_run late 20 --sync window --debug-late-rank 1
echo "PASS ($scenario)"
