#!/usr/bin/env bash
# collectives: reduce_scatter, allgather, alltoall and alltoallv through the
# harness: every algorithm of the four in the listing, checked, with the CSV's
# collective columns and nccl-tests' (p-1)/p bus bandwidth
# Usage: collectives.sh COLLBENCH [NP] (ranks, default 2); see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

# reduce_scatter, allgather, alltoall and alltoallv through the harness:
# every algorithm of the four in the listing, checked, with the CSV's
# collective columns and nccl-tests' (p-1)/p bus bandwidth.
listing=$("$collbench" --list-algorithms --csv)
run "$np" --families reduce_scatter,allgather,alltoall,alltoallv --sizes 4B,12B,1028B,65540B \
  --check \
  --csv "$work/run.csv" --samples 3 --quiet
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
check_csv "$work/run.csv" "$np" "$listing" <<'PYTHON'
ranks = int(sys.argv[2])
listed = [r for r in csv.DictReader(sys.argv[3].splitlines())
          if r["collective"] in ("reduce_scatter", "allgather", "alltoall", "alltoallv")
          and not r["algorithm"].startswith("ompi_")]
sizes = [4, 12, 1028, 65540]
expected = {f"{r['collective']}/{r['algorithm']}/{size}" for r in listed for size in sizes}
names = [row["benchmark"] for row in rows]
if sorted(names) != sorted(expected):
    fail(f"missing {sorted(expected - set(names))}, unexpected {sorted(set(names) - expected)}")
for row in rows:
    name = row["benchmark"]
    collective = name.split("/")[0]
    if row["check"] != "ok" or row["wrong_elements"] != "0":
        fail(f"{name}: check={row['check']} wrong={row['wrong_elements']}")
    if (row["family"], row["collective"]) != (collective, collective):
        fail(f"{name}: family {row['family']} collective {row['collective']}")
    if row["op"] != ("sum" if collective == "reduce_scatter" else ""):
        fail(f"{name}: op '{row['op']}'")
    algbw = float(row["algbw_GBps"])
    if not math.isclose(float(row["busbw_GBps"]), algbw * (ranks - 1) / ranks, rel_tol=1e-3):
        fail(f"{name}: busbw {row['busbw_GBps']} is not algbw x (p-1)/p")
    if row["algorithm"] in ("ring", "pairwise", "linear"):
        # Rank 0 sends every block but one: (p-1)/p of the vector, give or
        # take one element of the uneven split.
        ideal = (ranks - 1) / ranks * int(row["bytes"])
        if abs(int(row["sent_bytes_per_rank"]) - ideal) > 4:
            fail(f"{name}: sent {row['sent_bytes_per_rank']} bytes, ideal {ideal}")
print(f"{len(rows)} rows of reduce_scatter, allgather, alltoall and alltoallv, all checked ok "
      f"on {ranks} ranks")
PYTHON
echo "PASS ($scenario)"
