#!/bin/bash
# Builds ring_store_variants.c and runs it alone on the machine, NP=2 bound
# to a core each, at the sizes and prefetch distances given; one line per job.
# Usage: run.sh JOBS "SIZES" "DISTANCES" > log
set -euo pipefail
cd "$(dirname "$0")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
mpicc -O2 -mavx2 -mprfchw -Wall ring_store_variants.c -o /tmp/ring_store_variants
for job in $(seq "$1"); do
  for bytes in $2; do
    for distance in $3; do
      mpirun -np 2 --bind-to core /tmp/ring_store_variants "$bytes" "$distance"
    done
  done
done
