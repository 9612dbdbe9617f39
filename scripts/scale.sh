#!/usr/bin/env bash
# scale.sh: how far data-parallel training of a model scales, by simulation
# and by formula side by side.
#
# For p = 1, 2, 4, ..., --max-ranks ranks it runs one training iteration of
# WORKLOAD on the simulated cluster (collbench --transport sim --families
# train, size-only, repeated bucket sizes reusing their simulated time) and
# asks collbench-predict for the same iteration (its α-β-γ formula, the same
# compute, buckets and overlap rule), in both scaling modes: strong (the
# global batch --global-batch split over p) and weak (--batch per rank).
# Writes OUT/scale_<workload>.csv (the `simscaling` columns of
# results/README.md) and OUT/scale_<workload>.png (speedup against p, both
# curves, per mode).
#
# Usage: scale.sh WORKLOAD [options]     WORKLOAD: MODEL:ddp, MODEL:ddp=CAP (DDP's bucket cap, e.g.
#                                        50MiB), MODEL:total or MODEL:zero2:f32
#                                        (DeepSpeed ZeRO-2 in f32, the simulator's and the
#                                        formula's dtype)
# Options:
#   --out-dir DIR       where the CSV and the plot go (default: .)
#   --build DIR         build folder with collbench and collbench-predict (default:
#                       $COLLBENCH_BUILD, else build/ of this checkout)
#   --calibration FILE  collbench-fit models.csv of the network (default: the emulated
#                       cluster's fit, results/netsim/uniform/fit/models.csv): α, β of its
#                       p2p fit, γ of its reduce fit, for both the simulator and the formula
#   --network NAME      a collbench-predict network preset instead (fdr, edr, 100gbe, ...:
#                       collbench-predict --help): its α, β and γ (0.1 ns/B) for both
#   --compute-from FILE harness CSV with gemm rows (default: results/gemm/gemm.csv)
#   --flops RATE        assumed FLOP/s per rank instead (SI prefix: 10T)
#   --platform KIND     star (default), fat-tree (two levels, 8 nodes per leaf switch,
#                       2:1 tapered: 4 up-links per leaf; up to 8 nodes, one switch: star;
#                       collbench-predict prices it with --fat-tree 8:4)
#   --uplinks U         the fat-tree's up-links per leaf switch (default 4; 8: no taper)
#   --ppn K             ranks per node (default 1); inside a node every rank has its own link of
#                       100 ns and 50 GB/s, the simulator's and collbench-predict --ppn's
#   --algorithm NAME    allreduce algorithm (default: ring)
#   --no-overlap        buckets wait for the whole backward pass
#   --communication-alone  also simulate each p's buckets exchanged back to back without
#                       compute (collbench's exchange row, about doubling the CPU time): the
#                       simulated overlap fraction (`simulated_overlap`, empty without it)
#   --global-batch B    strong scaling's global batch (default: 1024); p > B is not run
#                       (a rank cannot hold less than one sample: the batch limit)
#   --batch b           weak scaling's batch per rank (default: 32)
#   --modes LIST        strong,weak (default: both)
#   --max-ranks P       largest p, a power of two (default: 1024; at most 1024 on a fat-tree
#                       or with --ppn above 1, where collbench-predict walks every message)
#   --python PATH       Python with matplotlib, for the plot (default: /usr/bin/python3)
#   --ranks LIST        the p to run instead, comma-separated (1 is added: the speedup's base);
#                       each a multiple of --ppn, or below it (one node)
#   -h, --help          this text
#
# Usage: scale.sh agreement --ranks LIST [--cells REGEX] [--out-dir DIR] [--build DIR]
#                           [--python PATH]
# The agreement table of the simulated iteration and collbench-predict: the
# grid of `agreement_workloads` x `agreement_networks` below (workloads x star, 2:1 fat-tree, 4 ranks per
# node x overlap on and off; weak scaling, ring; no --communication-alone, so
# simulated_overlap is empty), each cell whose label
# ("WORKLOAD PLATFORM ppn K overlap on|off") matches REGEX (default: all) run
# by this script at the p of LIST (fat-tree cells only where p fills more
# than one leaf switch: below that they are the star's). Rows are merged
# into DIR/agreement.csv (a cell's p run again replaces its rows), and the
# table of simulated / predicted - 1 per cell and p is printed in Markdown.
# Exit status: 0 done, 2 bad input (one line on stderr), 1 a tool failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(dirname "$here")
usage() { sed -n '2,/^# Exit status/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
bad() { echo "scale.sh: $*" >&2; exit 2; }
# shellcheck source=SCRIPTDIR/lib_options.sh
source "$here/lib_options.sh"

# The grid of `scale.sh agreement`: per workload its compute (this machine's
# GEMM rows where results/gemm has the model, an assumed rate where not),
# per network its platform flags.
agreement_workloads=(
  "resnet50:ddp"
  "bert_base:ddp"
  "vgg16:ddp --flops 10T"
  "llama2_7b:ddp --flops 100T --batch 1"
)
agreement_networks=("star" "fat-tree" "star --ppn 4")
if [[ ${1:-} == agreement ]]; then
  shift
  out_dir=.
  ranks=""
  cells=.
  # shellcheck disable=SC2034  # read by parse_options
  declare -A option_variables=([--out-dir]=out_dir [--ranks]=ranks [--cells]=cells
    [--build]=cell_build [--python]=cell_python)
  parse_options option_variables "$@"
  ((${#arguments[@]} == 0)) || bad "agreement: unknown argument ${arguments[0]} (see --help)"
  # Each cell's own run judges these.
  passed=()
  [[ ! -v cell_build ]] || passed+=(--build "$cell_build")
  [[ ! -v cell_python ]] || passed+=(--python "$cell_python")
  [[ $ranks =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || bad "agreement: give --ranks LIST, e.g. 2,8,64"
  make_out_dir "$out_dir"
  work=$(mktemp -d "${TMPDIR:-/tmp}/scale_agreement.XXXXXX")
  trap 'rm -rf "$work"; unmake_out_dir' EXIT
  cell=0
  for spec in "${agreement_workloads[@]}"; do
    read -r -a workload_flags <<<"$spec"
    for network in "${agreement_networks[@]}"; do
      read -r -a network_flags <<<"--platform $network"
      ppn=1
      [[ $network =~ --ppn\ ([0-9]+) ]] && ppn=${BASH_REMATCH[1]}
      for overlap in on off; do
        label="${workload_flags[0]} ${network%% *} ppn $ppn overlap $overlap"
        [[ $label =~ $cells ]] || continue
        cell_ranks=""
        for p in ${ranks//,/ }; do
          [[ $network != fat-tree* ]] || ((p / ppn > 8)) || continue
          cell_ranks+=${cell_ranks:+,}$p
        done
        [[ -n $cell_ranks ]] || continue
        overlap_flag=()
        [[ $overlap == on ]] || overlap_flag=(--no-overlap)
        cell=$((cell + 1))
        echo "scale.sh agreement: $label, p = $cell_ranks"
        # A cell's failure (its own line on stderr) ends the run with its status.
        "${BASH_SOURCE[0]}" "${workload_flags[@]}" "${network_flags[@]}" "${overlap_flag[@]}" \
          "${passed[@]}" --modes weak --ranks "$cell_ranks" --out-dir "$work/$cell" | sed 's/^/  /'
      done
    done
  done
  ((cell > 0)) || bad "agreement: no cell matches --cells '$cells' at p = $ranks"
  PYTHONPATH=$here python3 - "$work" "$out_dir/agreement.csv" <<'PYTHON'
import csv
import glob
import os
import sys
import collbench_csv
work, out = sys.argv[1:]
columns = collbench_csv.columns("simscaling")
key = lambda r: (r["workload"], r["platform"], r["ppn"], r["overlap"], r["mode"], r["ranks"])
rows = {}
if os.path.exists(out):
    for r in collbench_csv.read_rows(out, columns, "scale.sh agreement", {}):
        rows[key(r)] = r
for path in sorted(glob.glob(f"{work}/*/scale_*.csv")):
    for r in collbench_csv.read_rows(path, columns, "scale.sh agreement", {}):
        rows[key(r)] = r
ordered = sorted(rows.values(), key=lambda r: (r["workload"], r["platform"].split(":")[0],
                                               r["ppn"], r["overlap"] == "off", int(r["ranks"])))
with open(f"{out}.partial", "w", encoding="utf-8", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(ordered)
os.replace(f"{out}.partial", out)
print(f"scale.sh agreement: wrote {out} ({len(ordered)} rows)")
# Per cell, simulated / predicted - 1 at each p (a fat-tree's rows at p
# within one leaf switch are the star's).
ranks = sorted({int(r["ranks"]) for r in ordered if r["ranks"] != "1"})
cells = {}
for r in ordered:
    if r["ranks"] == "1":
        continue
    platform = r["platform"].split(":")[0]
    cells.setdefault((r["workload"], platform, r["ppn"], r["overlap"]), {})[int(r["ranks"])] = (
        f"{100 * float(r['simulated_vs_predicted']):+.2f}%")
print("| workload | platform | ppn | overlap | " + " | ".join(f"p = {p}" for p in ranks) + " |")
print("|---|---|---|---|" + "---:|" * len(ranks))
for (workload, platform, ppn, overlap), values in cells.items():
    print(f"| {workload} | {platform} | {ppn} | {overlap} | " +
          " | ".join(values.get(p, "") for p in ranks) + " |")
PYTHON
  exit
fi

workload=""
out_dir=.
build=${COLLBENCH_BUILD:-$source_dir/build}
calibration=$source_dir/results/netsim/uniform/fit/models.csv
network=""
compute_from=""
flops=""
platform=star
leaf_nodes=8
uplinks=4
ppn=1
algorithm=ring
overlap=1
global_batch=1024
batch=32
modes=strong,weak
max_ranks=1024
ranks_given=""
python=/usr/bin/python3
communication_alone=0
# shellcheck disable=SC2034  # read by parse_options
declare -A option_variables=([--out-dir]=out_dir [--build]=build [--calibration]=calibration_option
  [--network]=network [--compute-from]=compute_from [--flops]=flops [--platform]=platform
  [--ppn]=ppn [--algorithm]=algorithm [--global-batch]=global_batch [--batch]=batch
  [--modes]=modes [--max-ranks]=max_ranks [--ranks]=ranks_given [--python]=python
  [--uplinks]=uplinks)
parse_options option_variables "$@"
for argument in "${arguments[@]}"; do
  case $argument in
    --no-overlap) overlap=0 ;;
    --communication-alone) communication_alone=1 ;;
    -*) bad "unknown option $argument (see --help)" ;;
    *) [[ -z $workload ]] || bad "one WORKLOAD, got '$workload' and '$argument'"; workload=$argument ;;
  esac
done
calibration_given=0
if [[ -v calibration_option ]]; then
  calibration=$calibration_option
  calibration_given=1
fi
[[ -n $workload ]] || bad "give a WORKLOAD, e.g. resnet50:ddp (see --help)"
model=${workload%%:*}
kind=${workload#"$model"}
bucket_cap=()
case $kind in
  :ddp) exchange=ddp ;;
  # The what-if of another bucket size: collbench reads CAP from the
  # workload, collbench-predict from --bucket-cap (one bucketing, the catalog's).
  :ddp=?*) exchange=ddp bucket_cap=(--bucket-cap "${kind#:ddp=}") ;;
  :total) exchange=whole ;;
  :zero2:f32) exchange=zero2 ;;
  *) bad "WORKLOAD '$workload': give MODEL:ddp, MODEL:ddp=CAP, MODEL:total or MODEL:zero2:f32, the exchanges collbench-predict prices" ;;
esac
whole() { [[ $2 =~ ^[1-9][0-9]*$ ]] || bad "$1 '$2' is not a whole number >= 1"; }
whole --ppn "$ppn"
whole --uplinks "$uplinks"
whole --global-batch "$global_batch"
whole --batch "$batch"
whole --max-ranks "$max_ranks"
((max_ranks & (max_ranks - 1))) && bad "--max-ranks $max_ranks is not a power of two"
((max_ranks % ppn == 0 || max_ranks < ppn)) || bad "--max-ranks $max_ranks is not a multiple of --ppn $ppn"
mode_list=()
for mode in ${modes//,/ }; do
  [[ $mode == strong || $mode == weak ]] || bad "--modes: '$mode' is neither strong nor weak"
  [[ " ${mode_list[*]} " != *" $mode "* ]] || bad "--modes: '$mode' given twice"
  mode_list+=("$mode")
done
((${#mode_list[@]} > 0)) || bad "--modes '$modes' names no mode; give strong, weak or strong,weak"
[[ $platform == star || $platform == fat-tree ]] || bad "--platform '$platform': star or fat-tree"
[[ -z $network || $calibration_given == 0 ]] || bad "give --calibration or --network, not both"
[[ -f $calibration ]] || bad "--calibration $calibration: no such file"
[[ -z $compute_from || -z $flops ]] || bad "give --compute-from or --flops, not both"
if [[ -z $flops ]]; then
  compute_from=${compute_from:-$source_dir/results/gemm/gemm.csv}
  [[ -f $compute_from ]] || bad "--compute-from $compute_from: no such file"
fi
collbench=$build/benchmarks/harness/collbench
predict=$build/benchmarks/models/collbench-predict
for tool in "$collbench" "$predict"; do
  [[ -x $tool ]] || bad "$tool not built (cmake --build $build --target collbench_exe collbench-predict, or --build DIR)"
done
"$python" -c "import matplotlib" 2>/dev/null || bad "--python $python: no matplotlib there (give one with --python)"
make_out_dir "$out_dir"
name=scale_${workload//[:=]/_}
work=$(mktemp -d "${TMPDIR:-/tmp}/scale.XXXXXX")
trap 'rm -rf "$work"; unmake_out_dir' EXIT

# A bad CAP said now, not after a first simulation.
if ((${#bucket_cap[@]})); then
  "$predict" --model "$model" --batch 1 --compute-seconds 1 --algorithms ring --max-nodes 1 \
    --exchange ddp "${bucket_cap[@]}" --out-dir "$work" >/dev/null 2>"$work/stderr" ||
    bad "WORKLOAD '$workload': $(head -1 "$work/stderr")"
fi

# α, β, γ of the network, as collbench-predict reads them, for the
# platforms --calibration cannot convert: a calibration's p2p fit and f32
# sum reduce fit, or a preset's values as collbench-predict writes them
# (asked for, not copied: its presets are the one list).
if [[ -n $network ]]; then
  "$predict" --network "$network" --model resnet50 --batch 1 --compute-seconds 1 \
    --algorithms ring --max-nodes 1 --out-dir "$work" >/dev/null 2>"$work/stderr" ||
    bad "--network '$network': $(head -1 "$work/stderr")"
  network_csv=$work/scaling.csv
else
  network_csv=$calibration
fi
read -r alpha_us bandwidth_GBps gamma_GBps < <(PYTHONPATH=$here python3 - "$network_csv" "$network" <<'PYTHON'
import sys
import collbench_csv
path, preset = sys.argv[1:]
if preset:
    row = collbench_csv.read_rows(path, ("alpha_us", "beta_GBps", "gamma_ns_per_byte"),
                                  "scale.sh", {})[0]
    print(row["alpha_us"], row["beta_GBps"], 1 / float(row["gamma_ns_per_byte"]))
    sys.exit()
rows = collbench_csv.read_rows(path, ("model", "dtype", "op", "placement", "alpha_us",
                                      "beta_GBps", "gamma_GBps"), "scale.sh",
                              collbench_csv.column_rules("models"))
link = [r for r in rows if r["model"] == "hockney" and r["placement"] == "inter"]
gamma = [r for r in rows if r["model"] == "reduce_gamma" and r["dtype"] == "f32"]
if len(link) != 1 or not gamma:
    sys.exit(f"scale.sh: {path}: expected one hockney inter row and an f32 reduce_gamma row")
print(link[0]["alpha_us"], link[0]["beta_GBps"], gamma[0]["gamma_GBps"])
PYTHON
) || bad "${network:+--network $network: }$network_csv is not a collbench-fit models.csv with a p2p and a reduce fit, nor collbench-predict's scaling.csv"
if [[ -n $network ]]; then
  predict_network=(--network "$network")
else
  predict_network=(--network-from "$calibration")
fi
[[ $platform == star ]] || predict_network+=(--fat-tree "$leaf_nodes:$uplinks")
# The links inside a node, the simulator's --intra-* (one per rank, so a
# message between two ranks of a node crosses two: twice the latency).
intra_latency_ns=100
intra_bandwidth_GBps=50
if ((ppn > 1)); then
  predict_network+=(--ppn "$ppn" --intra-latency-us "$(awk -v l="$intra_latency_ns" 'BEGIN{print 2 * l / 1000}')"
    --intra-bandwidth-gbps "$((8 * intra_bandwidth_GBps))")
fi

# platform_flags P PPN: the simulated platform's flags for P ranks, PPN to
# a node, into the array sim_flags (an array: --calibration's path may hold
# spaces).
platform_flags() {
  local ppn=$2
  local nodes=$(($1 / ppn))
  ((nodes >= 1)) || nodes=1
  # A route between nodes of a star is two links: each gets half of α.
  local links=(--link-latency "$(awk -v a="$alpha_us" 'BEGIN{print a/2}')us"
    --link-bandwidth "${bandwidth_GBps}GBps" --gamma "${gamma_GBps}GBps")
  ((ppn == 1)) || links+=(--intra-latency "${intra_latency_ns}ns" --intra-bandwidth "${intra_bandwidth_GBps}GBps")
  if [[ $platform == star || $nodes -le $leaf_nodes ]]; then
    if ((ppn == 1)) && [[ -z $network ]]; then
      sim_flags=(--platform star --calibration "$calibration")
    else
      sim_flags=(--platform star --ppn "$ppn" "${links[@]}")
    fi
  else
    sim_flags=(--platform "fat-tree:2;$leaf_nodes,$((nodes / leaf_nodes));1,$uplinks;1,1" --ppn "$ppn" "${links[@]}")
  fi
}

compute_flags=(--compute-from "$compute_from")
predict_compute=(--compute-from "$compute_from")
if [[ -n $flops ]]; then
  compute_flags=(--flops "$flops")
  rate=$(python3 -c "
import sys
t = sys.argv[1]; f = dict(k=1e3, M=1e6, G=1e9, T=1e12, P=1e15, E=1e18)
print(float(t[:-1]) * f[t[-1]] if t[-1] in f else float(t))" "$flops" 2>/dev/null) ||
    bad "--flops '$flops' is not a rate such as 10T"
  predict_compute=(--flops-per-second "$rate")
fi
overlap_flags=()
predict_overlap=()
if ((overlap)); then predict_overlap=(--overlap-buckets); else overlap_flags=(--no-overlap); fi
# The train family's rows: train/none (the same iteration without exchange)
# gives collbench's exposed_us, the exchange alone (run before the
# iteration) its overlap.
benchmarks='^train/'
((communication_alone)) && benchmarks='^(train|exchange)/'

ranks_list=(1)
if [[ -n $ranks_given ]]; then
  for p in ${ranks_given//,/ }; do
    whole --ranks "$p"
    ((p == 1)) || ranks_list+=("$p")
    ((p <= max_ranks)) || max_ranks=$p
  done
else
  for ((p = 2; p <= max_ranks; p *= 2)); do ranks_list+=("$p"); done
fi
# collbench-predict's bound where it walks every message (its --max-nodes):
# said before hours of simulation, not after.
if [[ $platform != star ]] || ((ppn > 1)) && ((max_ranks > 1024)); then
  bad "p = $max_ranks on a fat-tree or with --ppn above 1: collbench-predict prices at most 1024 ranks there"
fi
for p in "${ranks_list[@]}"; do
  ((p % ppn == 0 || p < ppn)) || bad "--ranks $p is not a multiple of --ppn $ppn: its nodes would hold unequal ranks"
  nodes=$((p / ppn))
  [[ $platform == star ]] || ((nodes <= leaf_nodes || nodes % leaf_nodes == 0)) ||
    bad "--ranks $p: $nodes nodes do not fill leaf switches of $leaf_nodes (--platform fat-tree)"
done
echo "scale.sh: $workload, $algorithm, $platform, ppn $ppn, overlap $((overlap)) on p = ${ranks_list[*]} ($modes)"
: >"$work/sim.tsv"
for mode in "${mode_list[@]}"; do
  if [[ $mode == strong ]]; then batch_flags=(--global-batch "$global_batch"); else batch_flags=(--train-batch "$batch"); fi
  for p in "${ranks_list[@]}"; do
    if [[ $mode == strong ]] && ((p > global_batch)); then
      echo "scale.sh: strong p=$p not run: beyond the batch limit (B = $global_batch samples)"
      continue
    fi
    ranks_ppn=$ppn
    ((p >= ppn)) || ranks_ppn=$p
    platform_flags "$p" "$ranks_ppn"
    start=$(date +%s.%N)
    # CPU seconds and peak resident memory of the simulation: the machine's
    # load stretches its wall time, not these.
    if ! /usr/bin/time -f '%U %S %M' -o "$work/time" "$collbench" --transport sim --ranks "$p" "${sim_flags[@]}" \
      --families train --workload "$workload" --algorithms "$algorithm" --no-payload --reuse-buckets \
      --benchmark_filter="$benchmarks" \
      "${compute_flags[@]}" "${batch_flags[@]}" "${overlap_flags[@]}" --csv "$work/sim.csv" --force --quiet \
      >"$work/stdout" 2>"$work/stderr"; then
      cat "$work/stderr" >&2
      echo "scale.sh: collbench failed at p = $p ($mode)" >&2
      exit 1
    fi
    wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e - s}')
    read -r cpu rss < <(awk '{printf "%.1f %.0f\n", $1 + $2, $3 / 1024}' "$work/time")
    PYTHONPATH=$here python3 - "$work/sim.csv" "$mode" "$p" "$wall" "$algorithm" "$cpu" "$rss" \
      >>"$work/sim.tsv" <<'PYTHON'
import sys
import collbench_csv
path, mode, p, wall, algorithm, cpu, rss = sys.argv[1:]
# No value rules: at p = 1 the exchange row beside train's takes 0 us.
rows = collbench_csv.read_rows(path, ("family", "algorithm", "median_us", "sim_compute",
                                      "sim_platform", "overlap"), "scale.sh", {})
train = {r["algorithm"]: r for r in rows if r["family"] == "train"}
row = train[algorithm]
# collbench's exposed_us, which it writes only beside the exchange alone.
exposed_us = float(row["median_us"]) - float(train["none"]["median_us"])
print("\t".join((mode, p, row["median_us"], row["sim_compute"], row["sim_platform"], wall, cpu,
                 rss, f"{exposed_us:.9g}", row["overlap"])))
PYTHON
    echo "scale.sh: $mode p=$p simulated in ${wall}s (${cpu}s CPU, ${rss} MiB): $(tail -1 "$work/sim.tsv" | cut -f3) us"
  done
  if [[ $mode == strong ]]; then predict_batch=(--batch "$global_batch"); else predict_batch=(--batch "$batch" --weak); fi
  "$predict" --model "$model" "${predict_batch[@]}" "${predict_compute[@]}" --exchange "$exchange" "${bucket_cap[@]}" \
    "${predict_overlap[@]}" "${predict_network[@]}" --algorithms "$algorithm" \
    --max-nodes "$max_ranks" --out-dir "$work" >/dev/null 2>"$work/stderr" ||
    { cat "$work/stderr" >&2; echo "scale.sh: collbench-predict failed ($mode)" >&2; exit 1; }
  mv "$work/scaling.csv" "$work/predict_$mode.csv"
done

PYTHONPATH=$here "$python" - "$work" "$out_dir/$name" "$workload" "$algorithm" "$((overlap))" "$ppn" \
  "$source_dir" <<'PYTHON'
import csv
import os
import shutil
import sys
import collbench_csv
work, out, workload, algorithm, overlap, ppn, source_dir = sys.argv[1:]
simulated = [line.rstrip("\n").split("\t") for line in open(f"{work}/sim.tsv", encoding="utf-8")]
first = {}
for mode, p, us, *_ in simulated:
    if p == "1":
        first[mode] = float(us)
columns = collbench_csv.columns("simscaling")
rows = []
for mode, p, us, compute, platform, wall, cpu, rss, exposed_us, overlap_fraction in simulated:
    p = int(p)
    predicted = {int(r["nodes"]): r for r in collbench_csv.read_rows(
        f"{work}/predict_{mode}.csv", ("nodes", "iteration_s", "speedup", "efficiency",
                                       "samples_per_node", "compute_s", "exchange_s",
                                       "hidden_s"), "scale.sh",
        collbench_csv.column_rules("scaling"))}[p]
    exchange_s = float(predicted["exchange_s"])
    sim_s = float(us) * 1e-6
    speedup = (p if mode == "weak" else 1) * first[mode] * 1e-6 / sim_s
    values = {
        "workload": workload, "algorithm": algorithm, "platform": platform, "ppn": ppn,
        "overlap": "on" if overlap == "1" else "off", "mode": mode,
        # The checkout's files by their path in it: the CSV is the same from any clone.
        "compute": compute.replace(source_dir + "/", ""),
        "ranks": p, "samples_per_rank": predicted["samples_per_node"],
        "simulated_iteration_s": f"{sim_s:.6g}",
        "predicted_iteration_s": predicted["iteration_s"],
        "simulated_vs_predicted": f"{sim_s / float(predicted['iteration_s']) - 1:.4g}",
        "simulated_exposed_s": f"{float(exposed_us) * 1e-6:.6g}",
        "predicted_exposed_s":
            f"{float(predicted['iteration_s']) - float(predicted['compute_s']):.6g}",
        "simulated_overlap": overlap_fraction,
        "predicted_overlap":
            f"{float(predicted['hidden_s']) / exchange_s:.4g}" if exchange_s > 0 else "",
        "simulated_speedup": f"{speedup:.6g}", "predicted_speedup": predicted["speedup"],
        "simulated_efficiency": f"{speedup / p:.6g}",
        "predicted_efficiency": predicted["efficiency"], "wall_s": wall, "cpu_s": cpu,
        "peak_rss_MiB": rss}
    rows.append([values[c] for c in columns])
# Both files made in the work folder, then moved beside each other: whole
# or not at all.
with open(f"{work}/out.csv", "w", encoding="utf-8", newline="") as f:
    writer = csv.writer(f, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
modes = sorted({r[columns.index("mode")] for r in rows})
figure, axes = plt.subplots(1, len(modes), figsize=(6 * len(modes), 4.5), squeeze=False)
for axis, mode in zip(axes[0], modes):
    mine = [r for r in rows if r[columns.index("mode")] == mode]
    ranks = [r[columns.index("ranks")] for r in mine]
    for column, label, style in (("simulated_speedup", "simulated (collbench --transport sim)", "o-"),
                                 ("predicted_speedup", "collbench-predict (formula)", "s--")):
        axis.plot(ranks, [float(r[columns.index(column)]) for r in mine], style, label=label)
    axis.plot(ranks, ranks, ":", color="grey", label="ideal")
    axis.set_xscale("log", base=2)
    axis.set_yscale("log", base=2)
    axis.set_xlabel("ranks p")
    axis.set_ylabel("speedup over 1 rank")
    axis.set_title(f"{workload} {mode} scaling, {algorithm}, overlap "
                   f"{'on' if overlap == '1' else 'off'}")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend()
figure.tight_layout()
figure.savefig(f"{work}/out.png", dpi=110)
shutil.copyfile(f"{work}/out.png", f"{out}.png.partial")
shutil.copyfile(f"{work}/out.csv", f"{out}.csv.partial")
os.replace(f"{out}.png.partial", f"{out}.png")
os.replace(f"{out}.csv.partial", f"{out}.csv")
print(f"scale.sh: wrote {out}.csv and {out}.png")
PYTHON
