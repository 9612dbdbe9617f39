#!/usr/bin/env bash
# slurm_stage.sh: scripts/slurm/collbench.sbatch under a real Slurm on this machine.
#
# Installs Slurm from Debian when it is missing (apt-get update once, then
# apt-get install -y slurm-wlm munge; no daemon of the packages is started),
# starts munged, slurmctld and slurmd on a generated one-node configuration
# (this host, 2 CPUs, loopback only) whose config, key, state, spool, logs and
# pid files all live in one temporary folder (SLURM_CONF points the Slurm
# commands at it; nothing is written to /etc), and submits two jobs, each
# bounded by --job-timeout:
#   1. collbench.sbatch with 2 tasks on the one node, MPI_STACK=shm, LAUNCHER
#      auto (srun --mpi=pmix here): matrix skipped (no host pairs), an
#      intra-node sweep at p = 2 with --check, fit, report;
#   2. the same with MPI_STACK=tcp TCP_IF=lo LAUNCHER=mpirun (mpirun inside
#      the allocation), sweep only.
# It checks the jobs' CSVs (rows at p = 2, 2 ranks per node, every median
# > 0, every allreduce check ok and no other check wrong), the launcher (in
# run.env, and job 1's srun steps in slurmd's log, job 2's none) and report.md (it says the matrix was skipped and the sweep is
# intra-node), then stops every daemon it started, by pid, whatever
# happens (trap on EXIT, INT and TERM; running jobs are cancelled first).
#
# Usage: tests/slurm_stage.sh [--build DIR] [--job-timeout S] [--keep] [--no-install]
#   --build DIR      collbench build folder (default: $COLLBENCH_BUILD, else build/ of
#                    this checkout)
#   --job-timeout S  seconds a job may take from submission to its end (default 300);
#                    then it is cancelled and the stage fails
#   --keep           keep the temporary folder (config, logs, the jobs' output folders);
#                    it is also kept when the stage fails
#   --no-install     skip (77) instead of installing missing packages
#   -h, --help       this text
#   Every option once: a second value is refused, not silently preferred.
# Exit status: 0 passed, 1 failed, 2 bad arguments, 77 skipped (not root; or Slurm
# missing with --no-install).
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/.." && pwd)

log() { echo "slurm stage: $*"; }
die() {
  echo "slurm_stage.sh: $*" >&2
  exit 2
}
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

build=${COLLBENCH_BUILD:-$repo/build} job_timeout=300 keep=0 install=1
bad() { die "$@"; } # lib_options.sh's name for it
# shellcheck source=SCRIPTDIR/../scripts/lib_options.sh
source "$repo/scripts/lib_options.sh"
# shellcheck disable=SC2034  # read by parse_options
declare -A option_variables=([--build]=build [--job-timeout]=job_timeout)
parse_options option_variables "$@"
for argument in "${arguments[@]}"; do
  case $argument in
    --keep) keep=1 ;;
    --no-install) install=0 ;;
    *) die "unknown argument '$argument' (see --help)" ;;
  esac
done
if ! [[ $job_timeout =~ ^[0-9]+$ ]] || ((job_timeout < 10 || job_timeout > 3600)); then
  die "--job-timeout must be whole seconds from 10 to 3600, got '$job_timeout'"
fi
[[ -d $build ]] || die "--build $build is not a folder"
build=$(cd "$build" && pwd)
for tool in benchmarks/harness/collbench benchmarks/linkmatrix/collbench-linkmatrix \
  benchmarks/models/collbench-fit benchmarks/models/collbench-predict; do
  [[ -x $build/$tool ]] || die "$build/$tool not found; build it first (cmake --build $build)"
done

if ((EUID != 0)); then
  echo "slurm stage: skipped: needs root (it installs packages and runs slurmd, which starts jobs as their user)"
  exit 77
fi

stage_start=$SECONDS
# ---------------------------------------------------------------- install
missing=()
for c in munged munge unmunge slurmctld slurmd sbatch srun scontrol sinfo scancel; do
  command -v "$c" >/dev/null || missing+=("$c")
done
if ((${#missing[@]} > 0)); then
  if ((!install)); then
    echo "slurm stage: skipped: ${missing[*]} missing (apt-get install slurm-wlm munge; --no-install given)"
    exit 77
  fi
  log "installing slurm-wlm and munge (missing: ${missing[*]})"
  t0=$SECONDS
  # No daemon of the packages may start (this stage starts its own): a
  # policy-rc.d that denies every start, for the install only, unless one is there.
  policy=""
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
  fi
  status=0
  {
    timeout 600 apt-get update &&
      DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y slurm-wlm munge
  } >/tmp/slurm_stage_apt.log 2>&1 || status=$?
  [[ -z $policy ]] || rm -f "$policy"
  if ((status != 0)); then
    tail -20 /tmp/slurm_stage_apt.log >&2
    echo "slurm stage: FAIL: apt-get failed (exit $status; /tmp/slurm_stage_apt.log)" >&2
    exit 1
  fi
  log "installed in $((SECONDS - t0)) s"
fi

# ---------------------------------------------------------------- daemons
tmp=$(mktemp -d /tmp/collbench-slurm.XXXXXX)
# munged wants every folder above its socket searchable by all, none writable by others.
chmod 711 "$tmp"
mkdir -p "$tmp"/{munge,state,spool,log,run,tmpfs,jobs}
chmod 711 "$tmp/munge"
host=$(hostname -s)
declare -A pid=()
jobs_started=()
passed=0
stepds_before=$(pgrep -x slurmstepd | sort || true)

alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null; }
# stop NAME: TERM to the daemon's pid, KILL after 15 s.
stop() {
  local name=$1 p=${pid[$1]:-} i
  alive "$p" || return 0
  kill -TERM "$p" 2>/dev/null || true
  for ((i = 0; i < 150; i++)); do
    alive "$p" || break
    sleep 0.1
  done
  if alive "$p"; then
    kill -KILL "$p" 2>/dev/null || true
    sleep 0.2
  fi
  wait "$p" 2>/dev/null || true
}
cleaned=0
cleanup() {
  local status=$? j p i left=() stray
  ((cleaned)) && return 0
  cleaned=1
  trap '' INT TERM
  # Jobs first (their slurmstepd would outlive slurmd), while the controller is up.
  if alive "${pid[slurmctld]:-}" && ((${#jobs_started[@]} > 0)); then
    for j in "${jobs_started[@]}"; do scancel "$j" 2>/dev/null || true; done
    for ((i = 0; i < 100; i++)); do
      [[ -z $(squeue -h -j "$(IFS=,; echo "${jobs_started[*]}")" -o %i 2>/dev/null) ]] && break
      sleep 0.2
    done
  fi
  # The slurmstepd processes that were not there before are ours: a finished job's
  # end within moments; any still there after 15 s (and slurmd's stop) are killed.
  new_stepds() { comm -13 <(echo "$stepds_before") <(pgrep -x slurmstepd | sort || true) | paste -sd' ' -; }
  for ((i = 0; i < 150; i++)); do
    [[ -z $(new_stepds) ]] && break
    sleep 0.1
  done
  for name in slurmd slurmctld munged; do stop "$name"; done
  stray=$(new_stepds)
  for p in $stray; do kill -KILL "$p" 2>/dev/null || true; done
  for name in munged slurmctld slurmd; do
    if alive "${pid[$name]:-}"; then left+=("$name ${pid[$name]}"); fi
  done
  if ((${#pid[@]} > 0)); then
    if ((${#left[@]} == 0)); then
      log "daemons stopped (${#pid[@]}: $(for n in "${!pid[@]}"; do printf '%s %s ' "$n" "${pid[$n]}"; done | sed 's/ $//')${stray:+; killed stray slurmstepd $stray})"
    else
      echo "slurm stage: FAIL: still running: ${left[*]}" >&2
      status=1
    fi
  fi
  if ((keep || !passed)) && [[ -d $tmp ]]; then
    if ((!passed)); then
      for f in "$tmp"/log/*.log "$tmp"/jobs/*.out; do
        [[ -s $f ]] || continue
        echo "---- $f (last lines)" >&2
        tail -15 "$f" >&2
      done
    fi
    log "kept $tmp"
  else
    rm -rf "$tmp"
  fi
  log "$( ((status == 0)) && echo passed || echo "FAILED (exit $status)") in $((SECONDS - stage_start)) s"
  exit "$status"
}
trap cleanup EXIT
trap 'echo "slurm stage: interrupted (SIGINT)" >&2; exit 130' INT
trap 'echo "slurm stage: terminated (SIGTERM)" >&2; exit 143' TERM

fail() {
  echo "slurm stage: FAIL: $*" >&2
  exit 1
}
# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds, at most SECONDS.
wait_for() {
  local limit=$1 what=$2 deadline
  shift 2
  deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "$what not within $limit s"
    sleep 0.2
  done
}
# Two free loopback ports for slurmctld and slurmd.
mapfile -t ports < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
for s in socks:
    print(s.getsockname()[1])
')
((${#ports[@]} == 2)) || fail "no free loopback ports"

# munge: a fresh key, its own socket.
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
socket=$tmp/munge/munge.socket
munged --foreground --socket="$socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/run/munged.pid" --seed-file="$tmp/munge/munged.seed" \
  --log-file="$tmp/log/munged.log" >"$tmp/log/munged.out" 2>&1 &
pid[munged]=$!
munge_ok() { munge -n -S "$socket" | unmunge -S "$socket"; }
wait_for 20 "munged answering on $socket" munge_ok
log "munged started (pid ${pid[munged]})"

# The configuration: one node, this host at 127.0.0.1 with 2 CPUs (config_overrides:
# also on a machine with fewer), no cgroups, no accounting.
conf=$tmp/slurm.conf
cat >"$conf" <<EOF
ClusterName=collbench-stage
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
TmpFS=$tmp/tmpfs
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
PlugStackConfig=$tmp/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
SlurmctldDebug=info
SlurmdDebug=info
NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host CPUs=2 State=UNKNOWN
PartitionName=stage Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
: >"$tmp/plugstack.conf"
export SLURM_CONF=$conf

slurmctld -D -i -f "$conf" >"$tmp/log/slurmctld.out" 2>&1 &
pid[slurmctld]=$!
ctld_up() { scontrol ping | grep -q 'is UP'; }
wait_for 30 "slurmctld answering (scontrol ping)" ctld_up
log "slurmctld started (pid ${pid[slurmctld]}, port ${ports[0]})"

slurmd -D -f "$conf" -N "$host" >"$tmp/log/slurmd.out" 2>&1 &
pid[slurmd]=$!
node_idle() { [[ $(sinfo -h -n "$host" -o %T) == idle ]]; }
wait_for 30 "node $host idle (sinfo)" node_idle
log "slurmd started (pid ${pid[slurmd]}, port ${ports[1]}); node $host idle"
log "srun --mpi=list: $(srun --mpi=list 2>&1 | awk '/^[ \t]/ { printf "%s%s", sep, $1; sep = ", " }')"

# ---------------------------------------------------------------- jobs
# MPI as root (slurmd runs a root's job as root) and the PMIx store Debian's
# OpenMPI needs; sbatch passes the environment on.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
minutes=$(((job_timeout + 59) / 60 + 1))
# submit NAME VAR=VALUE...: the sbatch template with 2 tasks on the node; prints the job id.
submit() {
  local name=$1
  shift
  (cd "$repo" && env "$@" BUILD="$build" OUT="$tmp/jobs/$name" sbatch --parsable --job-name="$name" \
    --nodes=1 --ntasks-per-node=2 --time="$minutes" --output="$tmp/jobs/$name.out" \
    scripts/slurm/collbench.sbatch)
}
# wait_job ID NAME: until the job ends (bounded); fails unless it COMPLETED.
wait_job() {
  local j=$1 name=$2 t0=$SECONDS state="" info
  while :; do
    info=$(scontrol show job "$j" -o 2>/dev/null || true)
    state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$info")
    case $state in
      PENDING | RUNNING | CONFIGURING | COMPLETING | "") ;;
      *) break ;;
    esac
    if ((SECONDS - t0 >= job_timeout)); then
      scancel "$j" || true
      fail "job $j ($name) not finished within $job_timeout s (state ${state:-unknown}); cancelled"
    fi
    sleep 1
  done
  exit_code=$(sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' <<<"$info")
  log "job $j ($name) finished in $((SECONDS - t0)) s: $state, exit $exit_code"
  [[ $state == COMPLETED ]] || {
    sed 's/^/    /' "$tmp/jobs/$name.out" >&2 || true
    fail "job $j ($name) ended $state"
  }
}

# check_csvs OUT: every CSV of OUT/sweep has rows at p = 2 (2 on the node; local.csv: 1),
# medians > 0, every allreduce check ok and no other check wrong; prints the row count.
check_csvs() {
  python3 - "$1" <<'EOF'
import csv, glob, math, os, sys
out = sys.argv[1]
files = sorted(glob.glob(os.path.join(out, "sweep", "*.csv")))
need = {"allreduce_mpi_p2.csv", "p2p_mpi.csv", "sendrecv_mpi_p2.csv", "local.csv"}
names = {os.path.basename(f) for f in files}
if not need <= names:
    sys.exit(f"{out}/sweep: missing {sorted(need - names)}; has {sorted(names)}")
rows = 0
for path in files:
    name = os.path.basename(path)
    with open(path, newline="") as f:
        data = list(csv.DictReader(f))
    if not data:
        sys.exit(f"{path}: no rows")
    for i, row in enumerate(data, 1):
        where = f"{name} row {i} ({row.get('name', '')})"
        p = 1 if name == "local.csv" else 2
        if row.get("ranks") != str(p):
            sys.exit(f"{where}: ranks {row.get('ranks')!r}, expected {p}")
        if p == 2 and row.get("ranks_per_node") != "2":
            sys.exit(f"{where}: ranks_per_node {row.get('ranks_per_node')!r}, expected 2 (one node)")
        try:
            median = float(row.get("median_us", ""))
        except ValueError:
            median = math.nan
        if not (median > 0 and math.isfinite(median)):
            sys.exit(f"{where}: median_us {row.get('median_us')!r}, expected > 0")
        # --check reaches the collectives (allreduce) only; nothing may be wrong.
        wanted = ("ok",) if name.startswith("allreduce_") else ("ok", "skipped")
        if row.get("check") not in wanted:
            sys.exit(f"{where}: check {row.get('check')!r}, expected {' or '.join(wanted)}")
    rows += len(data)
print(rows)
EOF
}

# shellcheck disable=SC2054 # commas inside values
common=(SIZES=8B:4KiB:x8 P2P_SIZES=8B:4KiB:x8 LOCAL_SIZES=4KiB:64KiB:x4 ALGORITHMS=ring,tree,mpi)
extra="--ranks 2 --repetitions 1 --min-time 0.01 --min-samples 3 --check --collectives none --predict resnet50:256:0.8 --max-nodes 8"

j=$(submit shm MPI_STACK=shm PPN=2 "${common[@]}" EXTRA="$extra") || fail "sbatch failed"
jobs_started+=("$j")
log "job $j (shm) submitted: collbench.sbatch, 2 tasks on $host, MPI_STACK=shm, LAUNCHER auto"
wait_job "$j" shm
rows=$(check_csvs "$tmp/jobs/shm") || fail "job $j's CSVs (above)"
log "CSV checked: $rows rows (job $j: ranks 2 on one node, medians > 0, allreduce checks ok)"
grep -qx 'launcher=srun' "$tmp/jobs/shm/run.env" ||
  fail "job $j: run.env says $(grep '^launcher=' "$tmp/jobs/shm/run.env"), expected launcher=srun (srun --mpi=list names pmix)"
grep -q 'matrix: skipped: one host' "$tmp/jobs/shm.out" || fail "job $j: no 'matrix: skipped' line in its log"
# srun started the ranks: every launch is a job step slurmd logs (local, p2p, allreduce, sendrecv).
steps=$(grep -c "launch task StepId=$j\." "$tmp/log/slurmd.log" || true)
((steps >= 4)) || fail "job $j: $steps srun job steps in slurmd.log, expected 4 or more (one per launch)"
log "job $j: $steps srun steps launched by slurmd"
report=$tmp/jobs/shm/report.md
[[ -s $report ]] || fail "job $j wrote no report.md"
if ! grep -q 'Skipped: one host' "$report" || ! grep -q 'intra-node' "$report"; then
  fail "job $j: report.md does not say the sweep is intra-node"
fi
grep -q 'allreduce' "$report" || fail "job $j: report.md has no allreduce table"
log "report checked: $report says the matrix is skipped and the sweep intra-node"

j=$(submit tcp MPI_STACK=tcp TCP_IF=lo LAUNCHER=mpirun PPN=2 "${common[@]}" \
  EXTRA="$extra --steps matrix,sweep") || fail "sbatch failed"
jobs_started+=("$j")
log "job $j (tcp) submitted: MPI_STACK=tcp TCP_IF=lo LAUNCHER=mpirun, sweep only"
wait_job "$j" tcp
rows=$(check_csvs "$tmp/jobs/tcp") || fail "job $j's CSVs (above)"
log "CSV checked: $rows rows (job $j: ranks 2 on one node, medians > 0, allreduce checks ok)"
grep -qx 'launcher=mpirun' "$tmp/jobs/tcp/run.env" || fail "job $j: run.env does not say launcher=mpirun"
# mpirun started them on its own node: no job step.
steps=$(grep -c "launch task StepId=$j\." "$tmp/log/slurmd.log" || true)
((steps == 0)) || fail "job $j: $steps srun job steps in slurmd.log; mpirun on one node needs none"

passed=1
