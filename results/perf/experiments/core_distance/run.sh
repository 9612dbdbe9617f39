#!/usr/bin/env bash
# Which part of a 2-rank allreduce slows down when the two cores are far
# apart. Builds the two probes with mpicc and runs them alternately, one job
# at a time, N rounds (default 40), 1 s apart:
#   sendrecv_fresh  core-to-core latency (cache-line ping-pong in an MPI
#                   shared window) and MPI_Sendrecv of 512 KiB from a buffer
#                   left unchanged ("static") or rewritten before each call
#                   ("fresh", rewrite untimed), and MPI_Allreduce of 1 MiB
#   ring_phases     a 2-rank ring allreduce of 1 MiB by hand, timed per phase:
#                   A sendrecv of the input's half, B the reduction into out,
#                   C sendrecv of the reduced half; then the same reduction
#                   again on its own ("local reduce")
# Usage: run.sh [N]   (writes sendrecv_fresh.log and ring_phases.log here)
set -euo pipefail
cd "$(dirname "$0")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
mpicc -O2 sendrecv_fresh.c -o "$build/sendrecv_fresh"
mpicc -O2 -march=x86-64-v3 ring_phases.c -o "$build/ring_phases"
: >sendrecv_fresh.log
: >ring_phases.log
for ((i = 0; i < ${1:-40}; i++)); do
  for probe in sendrecv_fresh ring_phases; do
    mpirun -np 2 --bind-to core --mca btl self,vader "$build/$probe" |
      sed "s/^/$(date +%T) /" >>"$probe.log"
    sleep 1
  done
done
