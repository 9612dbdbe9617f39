# What this machine offers MPI ranks, read off /sys and nproc; sourced by
# run.sh and perf.sh (bash). Ranks that share a core take turns on it, so
# their times include waiting for the core: the scripts bind a rank to a
# core while there are enough, and say when there are not.
# MACHINE_SYS and MACHINE_STATUS name another /sys and /proc/self/status
# (tests/machine_test.sh gives it a machine with two threads per core).

# machine_cores: the physical cores this process may run on: distinct
# (package, core) pairs of the CPUs its affinity mask allows (Cpus_allowed_list
# of /proc/self/status: two hardware threads of one core count once), at most
# nproc; nproc where /sys has no topology. CPU quotas of a cgroup are not seen.
machine_cores() {
  local cpus list part cpu pairs="" topology
  cpus=$(nproc)
  list=$(awk '/^Cpus_allowed_list:/ { print $2 }' "${MACHINE_STATUS:-/proc/self/status}" \
    2>/dev/null) || list=""
  local allowed=()
  for part in ${list//,/ }; do
    if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then
      for ((cpu = BASH_REMATCH[1]; cpu <= BASH_REMATCH[2]; cpu++)); do allowed+=("$cpu"); done
    elif [[ $part =~ ^[0-9]+$ ]]; then
      allowed+=("$part")
    fi
  done
  for cpu in "${allowed[@]}"; do
    topology=${MACHINE_SYS:-/sys}/devices/system/cpu/cpu$cpu/topology
    [[ -r $topology/core_id && -r $topology/physical_package_id ]] || continue
    pairs+="$(<"$topology/physical_package_id"):$(<"$topology/core_id")"$'\n'
  done
  local cores
  cores=$(printf '%s' "$pairs" | sort -u | grep -c . || true)
  if ((cores == 0 || cores > cpus)); then
    cores=$cpus
  fi
  echo "$cores"
}

# machine_numa_nodes: NUMA nodes the kernel reports (1 without /sys/.../node).
machine_numa_nodes() {
  local nodes
  nodes=$(ls -d "${MACHINE_SYS:-/sys}"/devices/system/node/node[0-9]* 2>/dev/null | wc -l) ||
    nodes=0
  echo $((nodes > 0 ? nodes : 1))
}

# machine_binding NP: Open MPI's --bind-to for NP ranks on this machine: a
# core each while there are enough cores (two busy-polling ranks that the
# scheduler puts on one core for a moment double a sub-microsecond time:
# unbound, recursive_doubling/mpi at 8 B..1 KiB, NP 2, ranged 0.85..1.77 over
# two runs, bound 1.01..1.26), none when they must share.
machine_binding() {
  if (($1 <= $(machine_cores))); then echo core; else echo none; fi
}
