#!/usr/bin/env bash
# scripts/machine.sh on this machine under taskset, and on a made-up one (a
# /sys with 4 hardware threads on 2 cores, 2 NUMA nodes, and an affinity
# mask): cores counted over the allowed CPUs, two threads of a core once.
# Usage: tests/machine_test.sh SOURCE_DIR
set -euo pipefail
source "$1/scripts/machine.sh"
source "$1/tests/lib.sh"

# This machine, one CPU allowed: one core, and 2 ranks must share it.
expect "one CPU by taskset: cores" 1 "$(taskset -c 0 bash -c "source '$1/scripts/machine.sh'; machine_cores")"
expect "one CPU by taskset: binding of 2 ranks" none \
  "$(taskset -c 0 bash -c "source '$1/scripts/machine.sh'; machine_binding 2")"
expect "binding of 1 rank" core "$(machine_binding 1)"

scratch_dir machine_test
fake=$scratch
for cpu in 0 1 2 3; do # threads 0,1 on core 0 and 2,3 on core 1, one package
  mkdir -p "$fake/sys/devices/system/cpu/cpu$cpu/topology"
  echo 0 >"$fake/sys/devices/system/cpu/cpu$cpu/topology/physical_package_id"
  echo $((cpu / 2)) >"$fake/sys/devices/system/cpu/cpu$cpu/topology/core_id"
done
export MACHINE_SYS=$fake/sys MACHINE_STATUS=$fake/status
allowed() { printf 'Name:\tbash\nCpus_allowed_list:\t%s\n' "$1" >"$fake/status"; }
allowed 0-1
expect "both threads of one core allowed: cores" 1 "$(machine_cores)"
allowed 0,2
expect "a thread of each core allowed: cores (at most nproc)" $(($(nproc) < 2 ? 1 : 2)) "$(machine_cores)"
expect "no NUMA node in /sys: nodes" 1 "$(machine_numa_nodes)"
mkdir -p "$fake/sys/devices/system/node/node0" "$fake/sys/devices/system/node/node1"
expect "two NUMA nodes" 2 "$(machine_numa_nodes)"
expectations_met
