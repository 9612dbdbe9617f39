#!/usr/bin/env bash
# End-to-end tests of the `collbench` executable under mpirun: they run it as
# a user would and then read the CSV it wrote (Python's csv module, stdlib
# only), so they check what the harness promises rather than how it is built.
#
# Usage: harness_mpi_test.sh SCENARIO COLLBENCH [NP]
#   full NP      all algorithms, --check, odd sizes, p2p and local: exit 0,
#                every expected row exactly once, zero wrong elements
#   workload NP  --workload googlenet:ddp in f16: per-size rows and exchanges
#   sendrecv NP  --families sendrecv,reduce_all,allreduce: one p2p/sendrecv and
#                one local/reduce_all row per size, checked, with sane times;
#                no sendrecv on 1 rank
#   slow NP      one rank made slower: the run completes in lock-step, the
#                slow rank's delay is in every sample (time = slowest rank), and
#                the per-rank columns name it (slowest_rank, rank_median_us)
#   samples NP   the sample floor (--min-samples, default 10) where min_time
#                would give fewer, and --samples N exactly, whatever min_time
#   check_fail   --debug-corrupt-elements: --check reports them, exit 1, in
#                every round of --interleave and in an exchange whose messages
#                share slots, not in train/none (no exchange); without the
#                connection warm-up the peers-contacted check stops the run
#   outputs      repetitions (back to back, or in rounds with --interleave),
#                --benchmark_out JSON, --append and --force
#   killed       a run killed midway keeps every finished row, none torn
#   ofi          --transport ofi on libfabric's shm provider (allreduce, p2p,
#                sendrecv); unknown provider
#   errors       bad input: exit 2, one line from rank 0, no output file
#   progress     progress line with --progress, none on a pipe without it
#   gemm         --families gemm: the peak first, then every distinct layer of
#                alexnet per batch and pass, checked, with rate and efficiency
#                that follow from flops and the medians
#   train        --families train on googlenet:ddp (and resnet50's fsdp and zero2,
#                checked): the exchange, compute-only
#                and train rows, their shares computed from each other, the
#                bookkeeping (iteration >= compute alone, exposed <=
#                communication alone, within their spreads), and a --timeline
#                whose buckets start when ready, in order, within the iteration
#   inproc NP    --transport inproc --ranks NP, started alone with MPI_Init
#                made fatal (COLLBENCH_FORBID_MPI_INIT preloaded): ring and
#                tree checked, the CSV read back by scripts/collbench_csv.py
#                with the rank count, transport and host right; a slow rank
#                sets the time and is named; --check's wrong elements; the
#                single-process refusals (mpi_bare, train, gemm, --ranks
#                under mpi, under a launcher) exit 2
#   ofi_file     --transport ofi --bootstrap file:DIR --rank R --ranks 2 on
#                libfabric's shm provider, two processes started by hand with
#                MPI_Init made fatal: checked rows of ofi/shm on 2 ranks whose
#                sent bytes are the algorithm's alone (the harness's own
#                messages kept out), DIR empty after; a stale DIR is exit 2
#                naming the file, at once
#   window NP    --sync window (issue 43) on --transport inproc --ranks NP,
#                and under mpirun when COLLBENCH_MPIRUN is not none: every
#                row has its window, clock error and late starts, with
#                samples + late_starts the samples run; --debug-late-rank
#                makes every other start late, and those samples are dropped
#                and counted; under --sync barrier osu_avg_us (each rank's
#                mean, averaged) is at most mean_us (each call's slowest)
#                and the window columns are empty
# Environment: COLLBENCH_MPIRUN, the mpirun command with its options;
# COLLBENCH_FORBID_MPI_INIT (inproc, ofi_file), a library to preload whose
# MPI_Init ends the process.
set -euo pipefail

scenario=$1
collbench=$2
np=${3:-2}
python=/usr/bin/python3
read -r -a mpirun <<<"${COLLBENCH_MPIRUN:?set COLLBENCH_MPIRUN to the mpirun command}"
work=$(mktemp -d "${TMPDIR:-/tmp}/harness_${scenario}.XXXXXX")
trap 'rm -rf "$work"' EXIT

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

fail() {
  echo "FAIL ($scenario): $*" >&2
  exit 1
}

run() {  # run NP ARGS... : collbench under mpirun (NP 0: as an MPI singleton, no
         # mpirun); stdout/stderr kept in $work, exit status in $status
  local ranks=$1
  shift
  local launcher=("${mpirun[@]}" -np "$ranks")
  [[ $ranks -eq 0 ]] && launcher=()
  set +e
  "${launcher[@]}" "$collbench" "$@" >"$work/stdout" 2>"$work/stderr"
  status=$?
  set -e
}

# check_csv FILE PYTHON-CODE: runs the code with `rows` (list of dicts),
# `header` and `fail(message)` defined.
check_csv() {
  local file=$1
  shift
  "$python" - "$file" "$@" <<PYTHON || fail "CSV check of $file failed"
import csv, json, math, os, sys
path = sys.argv[1]
with open(path, newline="") as handle:
    reader = csv.reader(handle)
    header = next(reader)
    raw = list(reader)
for number, fields in enumerate(raw, start=2):
    if len(fields) != len(header):
        sys.exit(f"{path}:{number}: {len(fields)} fields for {len(header)} columns")
rows = [dict(zip(header, fields)) for fields in raw]
def fail(message):
    sys.exit(message)
$(cat)
PYTHON
}

case $scenario in
full)
  sizes=4B,12B,1028B,65540B,1MiB
  algorithms=$(registry_algorithms)
  run "$np" --algorithms all --sizes "$sizes" --check --csv "$work/run.csv" \
    --samples 3 --quiet
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
  check_csv "$work/run.csv" "$np" "$algorithms" <<'PYTHON'
ranks = int(sys.argv[2])
algorithms = sys.argv[3].split(",")
sizes = [4, 12, 1028, 65540, 1 << 20]
expected = set()
for size in sizes:
    expected |= {f"allreduce/{a}/{size}" for a in algorithms}
    expected |= {f"p2p/pingpong/{size}/peer:{peer}" for peer in range(1, ranks)}
    expected |= {f"local/reduce/f32/{size}", f"local/memcpy/{size}"}
names = [row["benchmark"] for row in rows]
if sorted(names) != sorted(expected):
    fail(f"missing {sorted(expected - set(names))}, unexpected {sorted(set(names) - expected)}, "
         f"{len(names)} rows for {len(expected)} benchmarks")
for row in rows:
    name = row["benchmark"]
    if row["check"] != "ok" or row["wrong_elements"] != "0":
        fail(f"{name}: check={row['check']} wrong={row['wrong_elements']}")
    if int(row["ranks"]) != ranks or row["run_id"] == "" or row["git_rev"] == "":
        fail(f"{name}: metadata {row['ranks']} {row['run_id']} {row['git_rev']}")
    stats = [float(row[c]) for c in ("min_us", "median_us", "mean_us", "p99_us", "max_us")]
    if not (0 < stats[0] <= stats[1] <= stats[3] <= stats[4] and stats[0] <= stats[2] <= stats[4]):
        fail(f"{name}: statistics out of order {stats}")
    # --samples 3: exactly 3 samples, each of calls_per_sample calls.
    if (row["samples"], row["min_samples"]) != ("3", "3") or \
            int(row["iterations"]) != 3 * int(row["calls_per_sample"]):
        fail(f"{name}: {row['samples']} samples (floor {row['min_samples']}), "
             f"{row['iterations']} iterations of {row['calls_per_sample']} calls per sample")
    # Per-rank times where every rank's time counts; rank 0's alone in the
    # ping-pong and the local kernels, which name no straggler.
    per_rank = (row["slowest_rank"], row["slowest_rank_share"], row["rank_median_us"])
    if row["algorithm"] in ("pingpong", "reduce", "memcpy"):
        if per_rank != ("", "", ""):
            fail(f"{name}: per-rank columns {per_rank} where only rank 0's time counts")
    else:
        medians = [float(m) for m in row["rank_median_us"].split(";")]
        share = float(row["slowest_rank_share"])
        # Of 3 samples, the rank slowest most often was so in 1, 2 or 3.
        if not (0 <= int(row["slowest_rank"]) < ranks and 1 / 3 - 1e-3 <= share <= 1
                and len(medians) == ranks and all(m > 0 for m in medians)):
            fail(f"{name}: per-rank columns {per_rank}")
        # Each sample is the slowest rank's time, so no rank's median exceeds
        # the median of the samples.
        if max(medians) > float(row["median_us"]) * (1 + 1e-5):
            fail(f"{name}: a rank's median {max(medians)} above the samples' {row['median_us']}")
    bytes_ = int(row["bytes"])
    algbw = float(row["algbw_GBps"])
    if not math.isclose(algbw, bytes_ / (float(row["median_us"]) * 1e-6) / 1e9, rel_tol=1e-3):
        fail(f"{name}: algbw {algbw} is not bytes / median")
    factor = 2 * (ranks - 1) / ranks if row["family"] == "allreduce" else 1
    if not math.isclose(float(row["busbw_GBps"]), algbw * factor, rel_tol=1e-3):
        fail(f"{name}: busbw {row['busbw_GBps']} is not algbw x {factor}")
    if row["family"] == "p2p":
        if row["placement"] != "intra" or int(row["sent_bytes_per_rank"]) != bytes_:
            fail(f"{name}: placement {row['placement']} sent {row['sent_bytes_per_rank']}")
    if row["algorithm"] == "ring":
        # The bandwidth-optimal ring sends 2(p-1)/p of the vector per rank,
        # give or take the uneven split of an odd count into p chunks.
        ideal = 2 * (ranks - 1) / ranks * bytes_
        if abs(int(row["sent_bytes_per_rank"]) - ideal) > 2 * (ranks - 1) * 4:
            fail(f"{name}: ring sent {row['sent_bytes_per_rank']} bytes, ideal {ideal}")
    if row["algorithm"] == "mpi" and row["sent_bytes_per_rank"] != "":
        fail(f"{name}: MPI's own traffic is not seen by the transport, yet sent bytes are given")
    # Ranks 0 and 1 share this node: every repetition says how far apart
    # their cores were (empty allowed only when ranks outnumber the cores,
    # where the probe's 20 ms may pass before a round trip completes).
    # A probe whose 20 ms pass without a round trip (a loaded machine) leaves
    # it empty: a value must be a latency, and a run of ranks no more than
    # the cores must have at least one (below), whatever the load.
    handoff = row["core_handoff_ns"]
    if ranks == 1 and handoff != "":
        fail(f"{name}: core_handoff_ns '{handoff}' on one rank")
    if handoff != "" and not 1 <= float(handoff) <= 1e9:
        fail(f"{name}: core_handoff_ns '{handoff}' is not a latency in ns")
if 2 <= ranks <= os.cpu_count() and all(row["core_handoff_ns"] == "" for row in rows):
    fail("core_handoff_ns is empty in every row, though ranks 0 and 1 share this node")
if "," not in rows[0]["mpi_library"]:
    fail("the MPI library field lost its commas (quoting)")
print(f"{len(rows)} rows, all checked ok on {ranks} ranks")
PYTHON
  ;;

collectives)
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
  ;;

workload)
  algorithms=$(registry_algorithms)
  run "$np" --algorithms all --dtype f16 --workload googlenet:ddp --check --csv "$work/run.csv" \
    --samples 3 --quiet
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
  check_csv "$work/run.csv" "$algorithms" <<'PYTHON'
algorithms = sys.argv[2].split(",")
exchanges = {r["algorithm"]: r for r in rows if r["family"] == "exchange"}
if sorted(exchanges) != sorted(algorithms):
    fail(f"exchange rows for {sorted(exchanges)}")
per_size = [r for r in rows if r["family"] == "allreduce"]
if not per_size or any(r["workload"] != "googlenet:ddp=25MiB" or r["model"] != "googlenet" for r in per_size):
    fail("per-size rows lack the workload and model columns")
if any(r["family"] in ("p2p", "local") for r in rows):
    fail("--workload without --sizes should run only the workload's sizes")
for algorithm, exchange in exchanges.items():
    mine = [r for r in per_size if r["algorithm"] == algorithm]
    messages = int(exchange["item"].split()[0])
    if sum(int(r["multiplicity"]) for r in mine) != messages:
        fail(f"{algorithm}: multiplicities sum to {sum(int(r['multiplicity']) for r in mine)}, "
             f"the exchange has {messages} messages")
    if int(exchange["bytes"]) != sum(int(r["bytes"]) * int(r["multiplicity"]) for r in mine):
        fail(f"{algorithm}: the exchange's bytes are not the sum of its messages")
    if exchange["check"] != "ok" or exchange["dtype"] != "f16":
        fail(f"{algorithm}: {exchange['check']} {exchange['dtype']}")
print(f"{len(exchanges)} exchanges of {messages} messages, {len(per_size)} per-size rows")
PYTHON
  ;;

sendrecv)
  sizes=4B,1028B,64KiB,4MiB
  run "$np" --families sendrecv,reduce_all,allreduce --algorithms ring,mpi --sizes "$sizes" --check \
    --csv "$work/run.csv" --samples 3 --quiet
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
  check_csv "$work/run.csv" "$np" <<'PYTHON'
ranks = int(sys.argv[2])
sizes = [4, 1028, 64 << 10, 4 << 20]
exchanges = {int(r["bytes"]): r for r in rows if r["benchmark"].startswith("p2p/sendrecv/")}
names = sorted(r["benchmark"] for r in rows)
expected = sorted([f"p2p/sendrecv/{n}" for n in sizes] +
                  [f"local/reduce_all/f32/{n}" for n in sizes] +
                  [f"allreduce/{a}/{n}" for a in ("ring", "mpi") for n in sizes])
if names != expected:
    fail(f"benchmarks {names}, expected {expected}")
# The reduction on every rank at once: --check compares every rank's result,
# so a rank that skipped the kernel would count wrong elements.
reductions = {int(r["bytes"]): r for r in rows if r["benchmark"].startswith("local/reduce_all/")}
for size, row in sorted(reductions.items()):
    got = (row["family"], row["algorithm"], row["transport"], row["dtype"], row["op"], row["ranks"],
           row["check"], row["wrong_elements"], row["sent_bytes_per_rank"])
    if got != ("local", "reduce_all", "local", "f32", "sum", str(ranks), "ok", "0", ""):
        fail(f"{row['benchmark']}: {got}")
    if int(row["calls_per_sample"]) < 1 or not 0 < float(row["median_us"]) < 1e6:
        fail(f"{row['benchmark']}: {row['calls_per_sample']} calls, {row['median_us']} us")
if float(reductions[4 << 20]["median_us"]) <= float(reductions[4]["median_us"]):
    fail("local/reduce_all at 4 MiB is not slower than at 4 B")
for size, row in sorted(exchanges.items()):
    name = row["benchmark"]
    if (row["family"], row["algorithm"], row["peer"], row["dtype"]) != ("p2p", "sendrecv", "", ""):
        fail(f"{name}: family {row['family']} algorithm {row['algorithm']} peer '{row['peer']}' "
             f"dtype '{row['dtype']}'")
    if row["placement"] != "intra" or int(row["ranks"]) != ranks:
        fail(f"{name}: placement {row['placement']}, ranks {row['ranks']}")
    if row["check"] != "ok" or row["wrong_elements"] != "0":
        fail(f"{name}: check={row['check']} wrong={row['wrong_elements']}")
    stats = [float(row[c]) for c in ("min_us", "median_us", "mean_us", "p99_us", "max_us")]
    if not (0 < stats[0] <= stats[1] <= stats[3] <= stats[4] and stats[0] <= stats[2] <= stats[4]):
        fail(f"{name}: statistics out of order {stats}")
    if int(row["calls_per_sample"]) < 1 or int(row["sent_bytes_per_rank"]) != size:
        fail(f"{name}: calls_per_sample {row['calls_per_sample']}, sent {row['sent_bytes_per_rank']}")
    algbw = float(row["algbw_GBps"])
    if not (math.isclose(algbw, size / (stats[1] * 1e-6) / 1e9, rel_tol=1e-3)
            and math.isclose(float(row["busbw_GBps"]), algbw, rel_tol=1e-3)):
        fail(f"{name}: algbw {algbw} busbw {row['busbw_GBps']}, expected bytes / median for both")
    # Shared memory on one host: far below 1000 GB/s, and a call is never a
    # whole second.
    if not (algbw < 1000 and stats[1] < 1e6):
        fail(f"{name}: {stats[1]} us, {algbw} GB/s")
# 4 MiB takes longer than 4 B: the loop moves the bytes.
if float(exchanges[4 << 20]["median_us"]) <= float(exchanges[4]["median_us"]):
    fail(f"4 MiB ({exchanges[4 << 20]['median_us']} us) not slower than 4 B "
         f"({exchanges[4]['median_us']} us)")
if any(r["check"] != "ok" for r in rows):
    fail("an allreduce row failed its check")
print(", ".join(f"sendrecv {n} B: {float(r['median_us']):.2f} us" for n, r in sorted(exchanges.items())))
PYTHON
  # One rank has no neighbour: a note, and here nothing else to run.
  run 0 --families sendrecv --sizes 8B --csv "$work/alone.csv"
  [[ $status -eq 2 ]] || fail "sendrecv on 1 rank: exit status $status"
  grep -qF "skipping p2p/sendrecv: it needs at least 2 ranks" "$work/stderr" ||
    { cat "$work/stderr" >&2; fail "no note for sendrecv on 1 rank"; }
  ;;

slow)
  # 50 ms: longer than the scheduler's time slices, which with more busy
  # ranks than free cores (a CPU hog beside the suite) stretch every rank's
  # call to ~10 ms and drowned a 3 ms delay (all three rank medians 11-12 ms).
  delay_us=50000
  common=(--algorithms ring,tree,mpi --families allreduce --sizes 1KiB,64KiB --quiet --samples 10)
  run "$np" "${common[@]}" --csv "$work/normal.csv"
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status without delay"; }
  for sync in barrier none; do
    run "$np" "${common[@]}" --sync "$sync" --csv "$work/slow_$sync.csv" \
      --debug-slow-rank $((np - 1)) --debug-slow-us "$delay_us"
    [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status, --sync $sync"; }
    check_csv "$work/slow_$sync.csv" "$delay_us" "$((np - 1))" <<'PYTHON'
delay = float(sys.argv[2])
slow = int(sys.argv[3])
if len(rows) != 6:
    fail(f"{len(rows)} rows instead of 6")
for row in rows:
    # Every sample is the slowest rank's time, so the delay is in the minimum.
    if float(row["min_us"]) < delay or row["samples"] != "10":
        fail(f"{row['benchmark']}: min {row['min_us']} us over {row['samples']} samples")
    # The sweep names the slow rank: the slowest most often, and its own
    # median, which holds the sleep whatever the load, at least the delay
    # and above every other rank's. Not "in every sample": on a loaded
    # machine another rank, descheduled for longer than the delay, is
    # sometimes slower (1 sample in 10 seen, with 8 runnable tasks on 2 cores).
    medians = [float(m) for m in row["rank_median_us"].split(";")]
    others = [m for r, m in enumerate(medians) if r != slow]
    if (int(row["slowest_rank"]) != slow or float(row["slowest_rank_share"]) < 0.5
            or medians[slow] < delay or medians[slow] <= max(others)):
        fail(f"{row['benchmark']}: slowest rank {row['slowest_rank']} in "
             f"{row['slowest_rank_share']} of the samples, rank medians {medians}")
print("slow rank named:", ", ".join(f"{r['benchmark']} rank {r['slowest_rank']} "
                                    f"({r['slowest_rank_share']}) {r['rank_median_us']}" for r in rows))
PYTHON
  done
  check_csv "$work/normal.csv" "$delay_us" <<'PYTHON'
if all(float(row["min_us"]) >= float(sys.argv[2]) for row in rows):
    fail("without the delay every benchmark is as slow as with it: the test proves nothing")
PYTHON
  ;;

samples)
  # The floor holds where Google Benchmark's time rule would stop sooner:
  # with --benchmark_min_time=0 it takes its first call, which runs the
  # floor (1 sample without it). --samples fixes the count even where
  # min_time asks for far more (5 s for each of the 8 rows, in 2 repetitions).
  common=(--algorithms ring --families allreduce,p2p,local --sizes 64B,64KiB --quiet)
  run "$np" "${common[@]}" --benchmark_min_time=0 --csv "$work/default.csv"
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "default floor: exit status $status"; }
  run "$np" "${common[@]}" --benchmark_min_time=0 --min-samples 7 --csv "$work/floor.csv"
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--min-samples: exit status $status"; }
  run "$np" "${common[@]}" --benchmark_min_time=5 --samples 4 --benchmark_repetitions=2 \
    --csv "$work/fixed.csv"
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--samples: exit status $status"; }
  for expected in default:10 floor:7 fixed:4; do
    check_csv "$work/${expected%%:*}.csv" "${expected##*:}" "$np" <<'PYTHON'
samples, ranks = sys.argv[2], int(sys.argv[3])
kinds = {r["algorithm"] for r in rows}
if kinds != {"ring", "pingpong", "reduce", "memcpy"}:
    fail(f"algorithms {sorted(kinds)}")
for row in rows:
    got = (row["samples"], row["min_samples"])
    if got != (samples, samples) or int(row["iterations"]) != int(samples) * int(row["calls_per_sample"]):
        fail(f"{row['benchmark']} rep {row['repetition']}: samples and floor {got}, "
             f"{row['iterations']} iterations of {row['calls_per_sample']} calls, expected {samples} samples")
print(f"{len(rows)} rows of {samples} samples each")
PYTHON
  done
  # --interleave checks every round, after calibration has batched many
  # kernel calls into a sample: the check still makes one call (a local
  # reduce summed src into dst thousands of times, and failed from round 2).
  run "$np" --families local,reduce_all --sizes 64B,64KiB --check --interleave \
    --benchmark_repetitions=3 --quiet --csv "$work/interleaved.csv"
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--check --interleave: exit status $status"; }
  check_csv "$work/interleaved.csv" <<'PYTHON'
rounds = {r["repetition"] for r in rows}
batched = [r for r in rows if int(r["calls_per_sample"]) > 1]
if len(rounds) != 3 or not batched:
    fail(f"rounds {sorted(rounds)}, {len(batched)} rows of batched calls: not what this tests")
for row in rows:
    if row["check"] != "ok":
        fail(f"{row['benchmark']} round {row['repetition']}: check {row['check']}")
print(f"{len(rows)} local rows in 3 rounds, every one checked ok")
PYTHON
  ;;

check_fail)
  run 3 --algorithms ring,tree --families allreduce --sizes 64B,4KiB --check \
    --debug-corrupt-elements 3 --csv "$work/run.csv" --samples 3 --quiet
  [[ $status -eq 1 ]] || fail "exit status $status, expected 1"
  grep -q "^collbench: --check found wrong results in 4 benchmarks: allreduce/ring/64 (3 wrong)" \
    "$work/stderr" || { cat "$work/stderr" >&2; fail "no summary of the wrong results"; }
  grep -q "ERROR OCCURRED: '--check: 3 wrong elements (first: rank 2, element 0: got" \
    "$work/stdout" || { cat "$work/stdout" >&2; fail "the console does not show the error"; }
  check_csv "$work/run.csv" <<'PYTHON'
if len(rows) != 4:
    fail(f"{len(rows)} rows instead of 4")
for row in rows:
    if row["check"] != "wrong" or row["wrong_elements"] != "3" or row["median_us"] != "":
        fail(f"{row['benchmark']}: check={row['check']} wrong={row['wrong_elements']} median={row['median_us']}")
PYTHON
  # --interleave rebuilds the algorithm object every round: each round's is
  # checked, so each finds the 3 wrong elements (6 in all), and every row
  # reports its own round's check.
  run 3 --algorithms ring,tree --families allreduce --sizes 64B --check --interleave \
    --benchmark_repetitions=2 --debug-corrupt-elements 3 --csv "$work/rounds.csv" --samples 3 --quiet
  [[ $status -eq 1 ]] || fail "--interleave: exit status $status, expected 1"
  grep -q "^collbench: --check found wrong results in 2 benchmarks: allreduce/ring/64 (6 wrong), allreduce/tree/64 (6 wrong)" \
    "$work/stderr" || { cat "$work/stderr" >&2; fail "--interleave: not every round was checked"; }
  check_csv "$work/rounds.csv" <<'PYTHON'
rounds = sorted((r["benchmark"], r["repetition"]) for r in rows)
if rounds != [(f"allreduce/{a}/64", n) for a in ("ring", "tree") for n in ("0", "1")]:
    fail(f"rows {rounds}")
for row in rows:
    if row["check"] != "wrong" or row["wrong_elements"] != "3":
        fail(f"{row['benchmark']} round {row['repetition']}: check={row['check']} wrong={row['wrong_elements']}")
PYTHON

  # An exchange whose messages share slots (every FSDP unit's two
  # allgathers, --debug-share-messages-from lowered to 1 KiB): checked
  # message by message, right and then with 3 wrong elements on one.
  run 3 --algorithms ring --families exchange --dtype bf16 --workload resnet50:fsdp \
    --debug-share-messages-from 1024 --check --csv "$work/shared.csv" --samples 2 --quiet
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "shared slots: exit status $status"; }
  check_csv "$work/shared.csv" <<'PYTHON'
if len(rows) != 1 or rows[0]["check"] != "ok" or rows[0]["collective"] != "allgather+reduce_scatter":
    fail(f"shared slots: {[(r['benchmark'], r['check'], r['collective']) for r in rows]}")
PYTHON
  run 3 --algorithms ring --families exchange --dtype bf16 --workload resnet50:fsdp \
    --debug-share-messages-from 1024 --check --debug-corrupt-elements 3 \
    --csv "$work/shared_wrong.csv" --samples 2 --quiet
  [[ $status -eq 1 ]] || fail "shared slots, corrupted: exit status $status, expected 1"
  check_csv "$work/shared_wrong.csv" <<'PYTHON'
if len(rows) != 1 or rows[0]["check"] != "wrong" or rows[0]["wrong_elements"] != "3":
    fail(f"shared slots, corrupted: {[(r['check'], r['wrong_elements']) for r in rows]}")
PYTHON
  # MoE: skewed dispatches and combines (the combine's input is the expert
  # side's p shares, its output the whole vector), every dispatch on one
  # slot and every combine on another: right, then with 3 wrong elements.
  for corrupt in 0 3; do
    run 3 --algorithms pairwise,mpi --families exchange --dtype bf16 \
      --workload mixtral_8x7b:moe:seq=8:skew=1.2 --debug-share-messages-from 1024 --check \
      --debug-corrupt-elements "$corrupt" --csv "$work/moe_$corrupt.csv" --samples 2 --quiet
    [[ $status -eq $((corrupt > 0 ? 1 : 0)) ]] ||
      { cat "$work/stderr" >&2; fail "moe, $corrupt corrupted: exit status $status"; }
    check_csv "$work/moe_$corrupt.csv" "$corrupt" <<'PYTHON'
corrupt = sys.argv[2]
got = sorted((r["algorithm"], r["check"], r["wrong_elements"], r["collective"]) for r in rows)
verdict = "ok" if corrupt == "0" else "wrong"
if got != [(a, verdict, corrupt, "alltoallv") for a in ("mpi", "pairwise")]:
    fail(f"moe, {corrupt} corrupted: {got}")
PYTHON
  done

  # train: with the exchange corrupted, train/none (its GEMMs alone, no
  # exchange) checks only what it ran and stays ok; train/ring is wrong.
  run 2 --families train --workload googlenet:ddp --algorithms ring --train-batch 1 \
    --compute-scale 0.25 --check --debug-corrupt-elements 3 --csv "$work/train_wrong.csv" \
    --samples 2 --quiet
  [[ $status -eq 1 ]] || { cat "$work/stderr" >&2; fail "train, corrupted: exit status $status"; }
  check_csv "$work/train_wrong.csv" <<'PYTHON'
got = sorted((r["benchmark"].split("/")[0], r["algorithm"], r["check"], r["wrong_elements"])
             for r in rows)
want = [("exchange", "ring", "wrong", "3"), ("train", "none", "ok", "0"),
        ("train", "ring", "wrong", "3")]
if got != want:
    fail(f"train, corrupted: {got}, expected {want}")
PYTHON

  # The check that every peer was addressed before timing: without the
  # connection warm-up, tree at 4 ranks reaches only its tree neighbours
  # (rank 3 only rank 2), and the run must stop before its first timed call.
  run 4 --algorithms tree --families allreduce --sizes 64B --debug-skip-connection-warmup \
    --csv "$work/unwarmed.csv" --samples 3 --quiet
  [[ $status -ne 0 ]] || fail "no connection warm-up: exit status 0"
  grep -q "before timing: the connection warm-up (Runner::connect_every_pair) did not reach them all" \
    "$work/stderr" || { cat "$work/stderr" >&2; fail "no connection warm-up: not refused"; }
  ;;

outputs)
  args=(--algorithms ring,mpi --families allreduce,local --sizes 256B,8KiB --quiet
    --samples 3 --benchmark_repetitions=2)
  run 2 "${args[@]}" --csv "$work/run.csv" --benchmark_out="$work/run.json" \
    --benchmark_out_format=json
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
  "$python" - "$work/run.json" <<'PYTHON' || fail "JSON output"
import json, sys
report = json.load(open(sys.argv[1]))
runs = [b for b in report["benchmarks"] if b["run_type"] == "iteration"]
aggregates = [b for b in report["benchmarks"] if b["run_type"] == "aggregate"]
if len(runs) != 16 or not aggregates:
    sys.exit(f"{len(runs)} iteration runs, {len(aggregates)} aggregates")
if any("median_us" not in b or "busbw_GBps" not in b for b in runs):
    sys.exit("counters missing from the JSON")
# The core handoff counter is absent where its probe timed out (load).
if not any("core_handoff_ns" in b for b in runs):
    sys.exit("core_handoff_ns missing from every JSON run")
if report["context"].get("collbench_ranks") != "2":
    sys.exit("run metadata missing from the JSON context")
PYTHON
  check_csv "$work/run.csv" <<'PYTHON'
from collections import Counter
per_benchmark = Counter((r["benchmark"], r["repetition"]) for r in rows)
if len(rows) != 16 or set(per_benchmark.values()) != {1} or {r["repetition"] for r in rows} != {"0", "1"}:
    fail(f"{len(rows)} rows: {per_benchmark}")
# Without --interleave a benchmark's repetitions run back to back.
order = list(dict.fromkeys(r["benchmark"] for r in rows))
if [(r["benchmark"], r["repetition"]) for r in rows] != [(b, str(k)) for b in order for k in (0, 1)]:
    fail(f"repetitions not back to back: {[(r['benchmark'], r['repetition']) for r in rows]}")
# Two ranks on one node, one core each at most: every repetition has its
# own core-to-core handoff latency, in ns.
handoffs = [r["core_handoff_ns"] for r in rows]
if not any(handoffs) or not all(1 <= float(h) <= 1e9 for h in handoffs if h):
    fail(f"core_handoff_ns {handoffs}")
PYTHON
  run 2 "${args[@]}" --csv "$work/run.csv"
  [[ $status -eq 2 ]] || fail "an existing CSV was not refused (status $status)"
  grep -q "use --append or --force" "$work/stderr" || fail "refusal does not say what to do"
  run 2 "${args[@]}" --csv "$work/run.csv" --append
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--append: exit status $status"; }
  check_csv "$work/run.csv" <<'PYTHON'
if len(rows) != 32 or len({r["run_id"] for r in rows}) != 2:
    fail(f"--append: {len(rows)} rows from {len({r['run_id'] for r in rows})} runs")
PYTHON
  run 2 "${args[@]}" --csv "$work/run.csv" --force --benchmark_filter='^allreduce/mpi/'
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--force: exit status $status"; }
  check_csv "$work/run.csv" <<'PYTHON'
names = sorted({r["benchmark"] for r in rows})
if len(rows) != 4 or names != ["allreduce/mpi/256", "allreduce/mpi/8192"]:
    fail(f"--force with a filter: {len(rows)} rows of {names}")
PYTHON
  # --interleave: rounds of every benchmark once, numbered in the CSV;
  # Google Benchmark sees one repetition per registration (no aggregates).
  run 2 "${args[@]}" --interleave --benchmark_repetitions=3 --csv "$work/rounds.csv" \
    --benchmark_out="$work/rounds.json" --benchmark_out_format=json
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--interleave: exit status $status"; }
  check_csv "$work/rounds.csv" <<'PYTHON'
order = list(dict.fromkeys(r["benchmark"] for r in rows))
got = [(r["benchmark"], r["repetition"]) for r in rows]
if len(order) != 8 or got != [(b, str(k)) for k in (0, 1, 2) for b in order]:
    fail(f"--interleave: rows are not rounds of all 8 benchmarks: {got}")
if not all(r["median_us"] and float(r["median_us"]) > 0 for r in rows):
    fail("--interleave: a row without a time")
PYTHON
  "$python" - "$work/rounds.json" <<'PYTHON' || fail "--interleave JSON output"
import json, sys
report = json.load(open(sys.argv[1]))
kinds = [b["run_type"] for b in report["benchmarks"]]
names = {b["name"] for b in report["benchmarks"]}
if kinds != ["iteration"] * 24 or not all(n.endswith("/repeats:1/manual_time") for n in names):
    sys.exit(f"{len(kinds)} runs ({set(kinds)}), names {sorted(names)[:2]}")
PYTHON
  run 2 "${args[@]}" --interleave --benchmark_repetitions=3 --csv "$work/rounds.csv" --force \
    --benchmark_filter='^allreduce/mpi/'
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--interleave filter: exit $status"; }
  check_csv "$work/rounds.csv" <<'PYTHON'
got = [(r["benchmark"], r["repetition"]) for r in rows]
want = [(f"allreduce/mpi/{n}", str(k)) for k in (0, 1, 2) for n in (256, 8192)]
if got != want:
    fail(f"--interleave with a filter: {got}")
PYTHON
  ;;

killed)
  # Without --quiet and off a terminal, no progress either: stderr stays clean.
  # 300 samples of each of 140 benchmarks up to 4 MiB: far longer than the
  # few rows it takes to kill it.
  "${mpirun[@]}" -np 2 "$collbench" --algorithms all --sizes 8B:4MiB --families allreduce \
    --samples 300 --csv "$work/run.csv" >"$work/stdout" 2>"$work/stderr" &
  launcher=$!
  for _ in $(seq 1 600); do
    [[ -f $work/run.csv && $(wc -l <"$work/run.csv") -ge 6 ]] && break
    sleep 0.1
  done
  kill -TERM "$launcher"
  wait "$launcher" || true
  check_csv "$work/run.csv" <<'PYTHON'
if not 5 <= len(rows) < 7 * 20:
    fail(f"{len(rows)} rows survived the kill")
if any(r["median_us"] == "" for r in rows):
    fail("a surviving row is incomplete")
print(f"{len(rows)} complete rows survived")
PYTHON
  if grep -q $'\r' "$work/stderr"; then fail "progress line written to a file"; fi
  ;;

ofi)
  # The hand-written algorithms over libfabric's shared-memory provider; the
  # MPI library's allreduce cannot run there and is skipped with a note.
  run 3 --transport ofi --ofi-provider shm --sizes 8B,4KiB,1MiB --check --quiet \
    --samples 3 --csv "$work/run.csv"
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
  grep -qF "collbench: note: skipping allreduce/mpi on 3 ranks (3 sizes, 8 B..1 MiB): needs the mpi transport" \
    "$work/stderr" || { cat "$work/stderr" >&2; fail "no note for the skipped mpi algorithm"; }
  # The table's hand-written allreduce algorithms, as --list-algorithms says.
  hand_written=$("$collbench" --list-algorithms --csv |
    awk -F, '$2 == "allreduce" && $4 == "hand-written"' | wc -l)
  check_csv "$work/run.csv" "$hand_written" <<'PYTHON'
collective = [r for r in rows if r["family"] in ("allreduce", "p2p")]
# 3 sizes of every hand-written allreduce algorithm, 3 ping-pong sizes with 2 peers.
if len(collective) != 3 * int(sys.argv[2]) + 3 * 2:
    fail(f"{len(collective)} allreduce and p2p rows for {sys.argv[2]} hand-written algorithms")
for row in collective:
    if (row["transport"], row["provider"], row["check"]) != ("ofi", "shm", "ok") or not row["libfabric_version"]:
        fail(f"{row['benchmark']}: {row['transport']} {row['provider']} {row['check']} '{row['libfabric_version']}'")
PYTHON
  # The sendrecv chain goes through the transport too.
  run 3 --transport ofi --ofi-provider shm --families sendrecv --sizes 8B,1MiB --check --quiet \
    --samples 3 --csv "$work/sendrecv.csv"
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "sendrecv: exit status $status"; }
  check_csv "$work/sendrecv.csv" <<'PYTHON'
if sorted(r["benchmark"] for r in rows) != ["p2p/sendrecv/1048576", "p2p/sendrecv/8"]:
    fail(f"sendrecv over ofi: {[r['benchmark'] for r in rows]}")
for row in rows:
    if (row["transport"], row["provider"], row["algorithm"], row["check"]) != ("ofi", "shm", "sendrecv", "ok"):
        fail(f"{row['benchmark']}: {row['transport']} {row['provider']} {row['algorithm']} {row['check']}")
    if not 0 < float(row["median_us"]) or int(row["sent_bytes_per_rank"]) != int(row["bytes"]):
        fail(f"{row['benchmark']}: median {row['median_us']} sent {row['sent_bytes_per_rank']}")
PYTHON
  run 2 --transport ofi --ofi-provider no_such_provider --sizes 8B --csv "$work/bad.csv"
  [[ $status -eq 2 ]] || fail "an unknown provider gave status $status"
  grep -qF "collbench: --transport ofi --ofi-provider no_such_provider: " "$work/stderr" ||
    { cat "$work/stderr" >&2; fail "the unknown provider is not named"; }
  [[ ! -e $work/bad.csv ]] || fail "an output file was created for an unknown provider"
  ;;

errors)
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
  ;;

inproc)
  forbid=${COLLBENCH_FORBID_MPI_INIT:?set COLLBENCH_FORBID_MPI_INIT to the mpi_init_forbidden library}
  alone() {  # alone ARGS...: collbench without mpirun, MPI_Init fatal
    set +e
    LD_PRELOAD=$forbid "$collbench" --transport inproc "$@" >"$work/stdout" 2>"$work/stderr"
    status=$?
    set -e
  }
  # The preloaded MPI_Init is the one collbench would call: an MPI run dies.
  set +e
  LD_PRELOAD=$forbid "$collbench" --families allreduce --algorithms ring --sizes 8B --samples 1 \
    >"$work/stdout" 2>"$work/stderr"
  mpi_status=$?
  set -e
  [[ $mpi_status -eq 97 ]] && grep -q "mpi_init_forbidden: MPI_Init" "$work/stderr" ||
    fail "the preloaded MPI_Init does not stop an MPI run (status $mpi_status): the test proves nothing"

  alone --ranks "$np" --algorithms ring,tree --sizes 1KiB,1MiB --check --csv "$work/run.csv" \
    --samples 3 --quiet
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
  PYTHONPATH="$(dirname "$0")/../scripts" "$python" - "$work/run.csv" "$np" "$(hostname)" <<'PYTHON' ||
import sys
import collbench_csv
path, ranks, host = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = collbench_csv.read_rows(path, ("benchmark", "transport", "ranks", "hosts"), "the inproc test")
expected = set()
for size in (1024, 1 << 20):
    expected |= {f"allreduce/{a}/{size}" for a in ("ring", "tree")}
    expected |= {f"p2p/pingpong/{size}/peer:{peer}" for peer in range(1, ranks)}
    expected |= {f"local/reduce/f32/{size}", f"local/memcpy/{size}"}
names = sorted(row["benchmark"] for row in rows)
if names != sorted(expected):
    sys.exit(f"rows {names}, expected {sorted(expected)}")
for row in rows:
    name = row["benchmark"]
    local = row["family"] == "local"
    got = (row["transport"], row["ranks"], row["nodes"], row["ranks_per_node"], row["hosts"],
           row["mpi_library"], row["mpi_mca"], row["check"], row["wrong_elements"])
    want = ("local" if local else "inproc", str(ranks), "1", str(ranks), host, "", "", "ok", "0")
    if got != want:
        sys.exit(f"{name}: {got}, expected {want}")
    if row["family"] == "allreduce" and len(row["rank_median_us"].split(";")) != ranks:
        sys.exit(f"{name}: rank medians {row['rank_median_us']} for {ranks} ranks")
    # The ranks' sends are counted (the Runner instruments the group's
    # transports): the ring's 2(p-1) blocks of n/p per call.
    if name.startswith("allreduce/ring/"):
        size = int(row["bytes"])
        if row["sent_bytes_per_rank"] != str(2 * (ranks - 1) * size // ranks):
            sys.exit(f"{name}: sent_bytes_per_rank {row['sent_bytes_per_rank']}")
print(f"{len(rows)} rows of {ranks} ranks in one process, MPI never initialized")
PYTHON
    fail "CSV check of $work/run.csv failed"

  # --transport=KIND is read as CLI11 reads it, before MPI would start.
  set +e
  LD_PRELOAD=$forbid "$collbench" --transport=inproc --ranks 2 --families allreduce \
    --algorithms ring --sizes 8B --samples 1 --quiet >"$work/stdout" 2>"$work/stderr"
  status=$?
  set -e
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--transport=inproc: exit status $status"; }

  # --families barrier: the transport's own barrier and the dissemination
  # one over its messages, every rank's time, no bytes, nothing to check.
  alone --ranks "$np" --families barrier --check --samples 3 --quiet --csv "$work/barrier.csv"
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "barrier: exit status $status"; }
  check_csv "$work/barrier.csv" "$np" <<'PYTHON'
ranks = int(sys.argv[2])
got = sorted((r["benchmark"], r["family"], r["algorithm"], r["transport"], r["bytes"], r["check"],
              r["samples"], r["calls_per_sample"]) for r in rows)
want = [("barrier/communicator", "barrier", "communicator", "inproc", "0", "ok", "3", "1"),
        ("barrier/dissemination", "barrier", "dissemination", "inproc", "0", "ok", "3", "1")]
if got != want:
    fail(f"barrier rows {got}, expected {want}")
for row in rows:
    if float(row["median_us"]) <= 0 or len(row["rank_median_us"].split(";")) != ranks:
        fail(f"{row['benchmark']}: median {row['median_us']}, rank medians {row['rank_median_us']}")
# The dissemination barrier's empty messages go through the counted endpoint;
# the threads' shared barrier sends none.
sent = {r["algorithm"]: r["sent_bytes_per_rank"] for r in rows}
if sent != {"communicator": "", "dissemination": "0"}:
    fail(f"sent_bytes_per_rank {sent}")
PYTHON

  # The slowest rank sets every sample's time (its sleep is in the minimum),
  # and is named.
  delay_us=50000
  slow=$((np - 1))
  alone --ranks "$np" --families allreduce --algorithms ring --sizes 1KiB --samples 5 --quiet \
    --debug-slow-rank "$slow" --debug-slow-us "$delay_us" --csv "$work/slow.csv"
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "slow rank: exit status $status"; }
  check_csv "$work/slow.csv" "$delay_us" "$slow" <<'PYTHON'
delay, slow = float(sys.argv[2]), int(sys.argv[3])
row = rows[0]
medians = [float(m) for m in row["rank_median_us"].split(";")]
if len(rows) != 1 or float(row["min_us"]) < delay or int(row["slowest_rank"]) != slow \
        or medians[slow] < delay:
    fail(f"slow rank {slow}: min {row['min_us']} us, slowest {row['slowest_rank']}, medians {medians}")
PYTHON

  # Wrong elements of every rank count: the last rank's are corrupted.
  alone --ranks "$np" --families allreduce --algorithms ring,tree --sizes 64B --check \
    --debug-corrupt-elements 3 --samples 1 --quiet --csv "$work/wrong.csv"
  [[ $status -eq 1 ]] || { cat "$work/stderr" >&2; fail "--check with corrupt elements: exit status $status, expected 1"; }
  grep -q "^collbench: --check found wrong results in 2 benchmarks: allreduce/ring/64 (3 wrong)" \
    "$work/stderr" || { cat "$work/stderr" >&2; fail "no summary of the wrong results"; }
  grep -q "first: rank $((np - 1)), element 0: got" "$work/stdout" ||
    { cat "$work/stdout" >&2; fail "the first wrong element is not the last rank's"; }

  # Refused, each with one line and status 2, and no file.
  refused() {  # refused FRAGMENT ARGS...
    local fragment=$1
    shift
    set +e
    LD_PRELOAD=$forbid "$@" --csv "$work/refused.csv" >"$work/stdout" 2>"$work/stderr"
    status=$?
    set -e
    [[ $status -eq 2 && $(wc -l <"$work/stderr") -eq 1 ]] && grep -qF -- "$fragment" "$work/stderr" ||
      { cat "$work/stderr" >&2; fail "$* : status $status, expected 2 and one line with '$fragment'"; }
    [[ ! -e $work/refused.csv ]] || fail "$* : left $work/refused.csv"
  }
  refused "--transport inproc runs every rank in this process and needs --ranks N" \
    "$collbench" --transport inproc
  refused "--families mpi_bare cannot run with --transport inproc: it calls the MPI library" \
    "$collbench" --transport inproc --ranks 2 --families mpi_bare
  refused "--families train cannot run with --transport inproc" \
    "$collbench" --transport inproc --ranks 2 --families train --workload googlenet:ddp
  refused "--families gemm cannot run with --transport inproc" \
    "$collbench" --transport inproc --ranks 2 --families gemm
  refused "cannot start under mpirun or srun (OMPI_COMM_WORLD_RANK is set)" \
    env OMPI_COMM_WORLD_RANK=0 "$collbench" --transport inproc --ranks 2
  ;;
ofi_file)
  forbid=${COLLBENCH_FORBID_MPI_INIT:?set COLLBENCH_FORBID_MPI_INIT to the mpi_init_forbidden library}
  folder=$work/meet
  mkdir "$folder"
  args=(--transport ofi --ofi-provider shm --bootstrap "file:$folder" --ranks 2 --families allreduce,p2p
        --algorithms ring,tree --sizes 1KiB,1MiB --check --samples 3 --quiet --timeout 60)
  LD_PRELOAD=$forbid timeout 120 "$collbench" "${args[@]}" --rank 1 >"$work/rank1.out" 2>&1 &
  rank1=$!
  set +e
  LD_PRELOAD=$forbid timeout 120 "$collbench" "${args[@]}" --rank 0 --csv "$work/run.csv" \
    >"$work/stdout" 2>"$work/stderr"
  status=$?
  wait "$rank1"
  status1=$?
  set -e
  [[ $status -eq 0 && $status1 -eq 0 ]] ||
    { cat "$work/stderr" "$work/rank1.out" >&2; fail "exit status $status (rank 1: $status1)"; }
  [[ -z $(ls -A "$folder") ]] || fail "the bootstrap folder is not empty: $(ls -A "$folder")"
  check_csv "$work/run.csv" <<'PYTHON'
expected = {f"allreduce/{a}/{n}" for a in ("ring", "tree") for n in (1024, 1 << 20)}
expected |= {f"p2p/pingpong/{n}/peer:1" for n in (1024, 1 << 20)}
if sorted(row["benchmark"] for row in rows) != sorted(expected):
    fail(f"rows {[row['benchmark'] for row in rows]}")
for row in rows:
    got = (row["transport"], row["ranks"], row["check"], row["mpi_library"])
    if got != ("ofi", "2", "ok", "") or "shm" not in row["provider"]:
        fail(f"{row['benchmark']}: {got}, provider {row['provider']}")
    # ring and tree at p = 2 send the vector once, the ping-pong its message:
    # the harness's own barriers and reductions over the transport do not count.
    if int(row["sent_bytes_per_rank"]) != int(row["bytes"]):
        fail(f"{row['benchmark']}: {row['sent_bytes_per_rank']} bytes sent for {row['bytes']}")
print("ofi over a file bootstrap, no MPI:", len(rows), "rows")
PYTHON
  # The slowest rank's time, reduced over the transport: rank 1 sleeps.
  slow=(--transport ofi --ofi-provider shm --bootstrap "file:$folder" --ranks 2 --families allreduce
        --algorithms ring --sizes 1KiB --samples 3 --quiet --timeout 60 --debug-slow-rank 1
        --debug-slow-us 50000)
  LD_PRELOAD=$forbid timeout 120 "$collbench" "${slow[@]}" --rank 1 >"$work/rank1.out" 2>&1 &
  rank1=$!
  set +e
  LD_PRELOAD=$forbid timeout 120 "$collbench" "${slow[@]}" --rank 0 --csv "$work/slow.csv" \
    >"$work/stdout" 2>"$work/stderr"
  status=$?
  wait "$rank1"
  status1=$?
  set -e
  [[ $status -eq 0 && $status1 -eq 0 ]] ||
    { cat "$work/stderr" "$work/rank1.out" >&2; fail "slow rank: exit status $status (rank 1: $status1)"; }
  check_csv "$work/slow.csv" <<'PYTHON'
row = rows[0]
if float(row["min_us"]) < 50000 or row["slowest_rank"] != "1":
    fail(f"slow rank 1: min {row['min_us']} us, slowest rank {row['slowest_rank']}")
PYTHON
  # The check's agreement over the transport: rank 1's 3 corrupt elements
  # fail the run on both ranks, and rank 0 names them.
  corrupt=(--transport ofi --ofi-provider shm --bootstrap "file:$folder" --ranks 2 --families allreduce
           --algorithms ring --sizes 64B --check --debug-corrupt-elements 3 --samples 1 --quiet
           --timeout 60)
  LD_PRELOAD=$forbid timeout 120 "$collbench" "${corrupt[@]}" --rank 1 >"$work/rank1.out" 2>&1 &
  rank1=$!
  set +e
  LD_PRELOAD=$forbid timeout 120 "$collbench" "${corrupt[@]}" --rank 0 >"$work/stdout" 2>"$work/stderr"
  status=$?
  wait "$rank1"
  status1=$?
  set -e
  [[ $status -eq 1 && $status1 -eq 1 ]] ||
    { cat "$work/stderr" "$work/rank1.out" >&2; fail "corrupt elements: exit status $status (rank 1: $status1), expected 1"; }
  grep -q "^collbench: --check found wrong results in 1 benchmark: allreduce/ring/64 (3 wrong)" \
    "$work/stderr" && grep -q "first: rank 1, element 0: got" "$work/stdout" ||
    { cat "$work/stderr" "$work/stdout" >&2; fail "corrupt elements: rank 1's not named"; }

  # A folder left by another job is refused at once, not waited on.
  stale=$work/stale
  mkdir "$stale"
  echo "another job" >"$stale/rank0.round0"
  set +e
  LD_PRELOAD=$forbid timeout 60 "$collbench" --transport ofi --bootstrap "file:$stale" --rank 0 \
    --ranks 2 --csv "$work/stale.csv" >"$work/stdout" 2>"$work/stderr"
  status=$?
  set -e
  [[ $status -eq 2 ]] && grep -q "rank0.round0 exists as this rank starts" "$work/stderr" ||
    { cat "$work/stderr" >&2; fail "stale folder: exit status $status"; }
  [[ ! -e $work/stale.csv ]] || fail "stale folder: a CSV was created"
  ;;
progress)
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
  ;;

gemm)
  run 2 --families gemm --gemm-models alexnet --gemm-batches 1,2 --check --samples 2 \
    --csv "$work/gemm.csv"
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
  check_csv "$work/gemm.csv" <<'PYTHON'
if rows[0]["benchmark"] != "local/gemm/peak/2048" or rows[0]["pass"] != "peak":
    fail(f"the first row is {rows[0]['benchmark']}, not the peak")
peak = float(rows[0]["gflops"])
groups = {}
for row in rows:
    name = row["benchmark"]
    if row["check"] != "ok" or row["family"] != "local" or row["algorithm"] != "gemm":
        fail(f"{name}: check {row['check']}, family {row['family']}")
    if "OpenBLAS" not in row["blas"] or "OPENBLAS_CORETYPE=" not in row["blas"]:
        fail(f"{name}: blas column {row['blas']!r}")
    flops, median, gflops = float(row["flops"]), float(row["median_us"]), float(row["gflops"])
    if abs(gflops - flops / median / 1e3) > 1e-4 * gflops:
        fail(f"{name}: {gflops} GFLOP/s is not {flops} FLOP in {median} us")
    if abs(float(row["efficiency"]) - gflops / peak) > 1e-3 * gflops / peak + 1e-4:
        fail(f"{name}: efficiency {row['efficiency']} is not {gflops} / {peak}")
    if row["pass"] == "peak":
        continue
    if row["model"] != "alexnet" or not name.startswith(f"local/gemm/alexnet/{row['batch']}/{row['pass']}/"):
        fail(f"{name}: model {row['model']}, batch {row['batch']}, pass {row['pass']}")
    key = (row["batch"], row["pass"])
    groups[key] = groups.get(key, 0) + int(row["multiplicity"])
# AlexNet: 5 convolutions and 3 linear layers, at 2 batches, forward and backward.
if groups != {(b, p): 8 for b in ("1", "2") for p in ("forward", "backward")}:
    fail(f"layers per batch and pass: {groups}")
PYTHON
  ;;

train)
  spec=googlenet:ddp=25MiB
  args=(--families train --workload googlenet:ddp --algorithms ring,mpi --train-batch 1
    --compute-scale 0.5 --check --samples 5)
  run 2 "${args[@]}" --csv "$work/train.csv" --timeline "$work/timeline.json"
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
  check_csv "$work/train.csv" <<'PYTHON'
spec = "googlenet:ddp=25MiB"
names = [row["benchmark"] for row in rows]
expected = [f"exchange/ring/{spec}", f"exchange/mpi/{spec}", f"train/none/{spec}",
            f"train/ring/{spec}", f"train/mpi/{spec}"]
if names != expected:
    fail(f"rows {names}, expected {expected}")
by_name = {row["benchmark"]: row for row in rows}
none = by_name[f"train/none/{spec}"]
for row in rows:
    if row["check"] != "ok":
        fail(f"{row['benchmark']}: check {row['check']}")
for algorithm in ("ring", "mpi"):
    row = by_name[f"train/{algorithm}/{spec}"]
    exchange = by_name[f"exchange/{algorithm}/{spec}"]
    if row["family"] != "train" or row["algorithm"] != algorithm or row["batch"] != "1":
        fail(f"{algorithm}: family {row['family']}, algorithm {row['algorithm']}")
    iteration, compute = float(row["median_us"]), float(row["compute_us"])
    communication = float(row["communication_us"])
    if compute != float(none["median_us"]) or communication != float(exchange["median_us"]):
        fail(f"{algorithm}: compute {compute} / communication {communication} are not the "
             f"train/none and exchange medians")
    exposed, overlap = float(row["exposed_us"]), float(row["overlap"])
    if abs(exposed - (iteration - compute)) > 1e-6 * iteration:
        fail(f"{algorithm}: exposed {exposed} is not {iteration} - {compute}")
    if abs(overlap - (1 - exposed / communication)) > 1e-3:
        fail(f"{algorithm}: overlap {overlap} is not 1 - {exposed} / {communication}")
    # No bound between the rows' times: the train, compute-only and exchange
    # rows run at different moments, so on a shared machine any of them can
    # be slowed alone (CI once saw an iteration expose more than the slowest
    # exchange alone took). What one iteration must hold whatever the load
    # is checked on its timeline below.
PYTHON
  "$python" - "$work/timeline.json" <<'PYTHON' || fail "timeline check failed"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
spec = "googlenet:ddp=25MiB"
if sorted(names.values()) != sorted(f"train/{a}/{spec}" for a in ("none", "ring", "mpi")):
    sys.exit(f"timeline processes {names}")
for pid, name in names.items():
    mine = [e for e in events if e["pid"] == pid and e["ph"] != "M"]
    compute = [e for e in mine if e["tid"] == 0]
    iteration = [e for e in mine if e["tid"] == 2]
    starts = [e for e in mine if e.get("cat") == "exchange"]
    ready = [e for e in mine if e.get("cat") == "ready"]
    if len(iteration) != 1:
        sys.exit(f"{name}: {len(iteration)} iteration events")
    end = iteration[0]["dur"]
    # Forward first layer first, then backward last layer first, one after
    # the other. Not back to back within a bound: between two passes the
    # compute thread hands buckets to the communication thread, and on a
    # loaded machine that hand-over can wait a time slice (60 us seen), so
    # only the order is a property of the code.
    forward = [e for e in compute if e["name"].startswith("forward ")]
    backward = [e for e in compute if e["name"].startswith("backward ")]
    if not forward or [e["name"][8:] for e in forward] != [e["name"][9:] for e in backward][::-1]:
        sys.exit(f"{name}: forward and backward do not mirror each other")
    for before, after in zip(compute, compute[1:]):
        if after["ts"] < before["ts"] + before["dur"] - 1:
            sys.exit(f"{name}: {after['name']} starts before {before['name']} ends")
    backward_end = compute[-1]["ts"] + compute[-1]["dur"]
    if backward_end > end + 1:
        sys.exit(f"{name}: the iteration ({end} us) ended before its backward pass ({backward_end})")
    if name.startswith("train/none/"):
        if starts or ready:
            sys.exit(f"{name}: the compute alone exchanged buckets")
        continue
    if not starts or len(starts) != len(ready):
        sys.exit(f"{name}: {len(starts)} exchanges for {len(ready)} ready buckets")
    ends = {e["name"]: e["ts"] + e["dur"] for e in backward}
    # The start of the pass after each backward one (the iteration's end after the last).
    next_starts = {e["name"]: following["ts"] for e, following in zip(backward, backward[1:])}
    if backward:
        next_starts[backward[-1]["name"]] = end
    previous_end = 0
    for bucket, (made, sent) in enumerate(zip(ready, starts)):
        # Handed over when the backward of its ready layer ended, not a layer sooner or later:
        # between that pass's end and the next one's start (how long that hand-over takes
        # is the machine's: a time slice when it is loaded).
        after = made["args"]["after"]
        if after not in ends or not ends[after] - 1 <= made["ts"] <= next_starts[after] + 1:
            sys.exit(f"{name}: bucket {bucket} ready at {made['ts']}, not at the end of {after}")
        if sent["ts"] + 1 < made["ts"] or sent["ts"] + 1 < previous_end:
            sys.exit(f"{name}: bucket {bucket} started before it was ready or before the "
                     f"one before it ended")
        previous_end = sent["ts"] + sent["dur"]
    if previous_end > end + 1:
        sys.exit(f"{name}: the iteration ({end} us) ended before its last exchange ({previous_end})")
    if ready[0]["ts"] < backward_end - 1 and starts[0]["ts"] >= backward_end:
        sys.exit(f"{name}: bucket 0 was ready during backprop but sent only after it")
PYTHON
  # An existing timeline is kept unless --force.
  run 2 "${args[@]}" --timeline "$work/timeline.json"
  [[ $status -eq 2 ]] || fail "status $status for an existing --timeline"
  grep -qF -- "--timeline $work/timeline.json: already exists" "$work/stderr" ||
    { cat "$work/stderr" >&2; fail "existing --timeline not named"; }
  # FSDP and ZeRO-2 over MPI: every message of the iteration checked, and the
  # train row sends what the exchange row (the catalog's order) sends.
  run 2 --families train --workload resnet50:fsdp:f32,resnet50:zero2:f32 --algorithms ring,mpi \
    --train-batch 1 --compute-scale 0.25 --check --samples 2 --csv "$work/sharded.csv"
  [[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "fsdp, zero2: exit status $status"; }
  check_csv "$work/sharded.csv" <<'PYTHON'
by_name = {row["benchmark"]: row for row in rows}
for spec, collectives in (("resnet50:fsdp=block:f32", "allgather+reduce_scatter"),
                          ("resnet50:zero2=500000000:f32", "reduce_scatter+allgather")):
    for algorithm in ("ring", "mpi"):
        row = by_name.get(f"train/{algorithm}/{spec}")
        if row is None:
            fail(f"no train/{algorithm}/{spec} row: {sorted(by_name)}")
        if row["check"] != "ok" or row["collective"] != collectives:
            fail(f"train/{algorithm}/{spec}: check {row['check']}, collective {row['collective']}")
    train, exchange = by_name[f"train/ring/{spec}"], by_name[f"exchange/ring/{spec}"]
    if train["sent_bytes_per_rank"] != exchange["sent_bytes_per_rank"]:
        fail(f"{spec}: train sent {train['sent_bytes_per_rank']} bytes, the exchange "
             f"{exchange['sent_bytes_per_rank']}")
PYTHON
  ;;

window)
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
  ;;

*)
  fail "unknown scenario '$scenario'"
  ;;
esac
echo "PASS ($scenario)"
