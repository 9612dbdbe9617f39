#!/usr/bin/env bash
# scripts/mpi_launcher.sh: the library a build links, from its CMake cache,
# and the launcher named for it, on made-up build folders and PATHs (fake
# launchers that only print a --version banner).
# Usage: tests/mpi_launcher_test.sh SOURCE_DIR
set -euo pipefail
source "$1/scripts/mpi_launcher.sh"
failures=0
expect() { # DESCRIPTION EXPECTED ACTUAL
  if [[ $2 != "$3" ]]; then
    echo "FAIL: $1: expected '$2', got '$3'"
    failures=$((failures + 1))
  else
    echo "ok: $1: $3"
  fi
}

fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
mkdir -p "$fake/unconfigured" "$fake/openmpi" "$fake/mpich" "$fake/bin"
ln -s "$(command -v grep)" "$fake/bin/grep"  # the banner test's
echo 'COLLBENCH_MPI:STRING=openmpi' >"$fake/openmpi/CMakeCache.txt"
printf 'CMAKE_BUILD_TYPE:STRING=Release\nCOLLBENCH_MPI:STRING=mpich\n' >"$fake/mpich/CMakeCache.txt"
expect "a build not configured yet" openmpi "$(mpi_library_of "$fake/unconfigured")"
expect "an Open MPI build" openmpi "$(mpi_library_of "$fake/openmpi")"
expect "an MPICH build" mpich "$(mpi_library_of "$fake/mpich")"

# launcher LIBRARY under a PATH of only the fake launchers made so far.
launcher() { PATH=$fake/bin mpi_launcher_for "$1" 2>/dev/null || echo "refused $?"; }
fake_launcher() { # NAME BANNER
  printf '#!/bin/sh\necho "%s"\n' "$2" >"$fake/bin/$1"
  chmod +x "$fake/bin/$1"
}
expect "no launcher at all" "refused 2" "$(launcher openmpi)"
fake_launcher mpirun "mpirun (Open MPI) 4.1.4"
expect "a plain mpirun that is Open MPI, for Open MPI" mpirun "$(launcher openmpi)"
expect "a plain mpirun that is Open MPI, for MPICH" "refused 2" "$(launcher mpich)"
fake_launcher mpirun.mpich "HYDRA build details:"
fake_launcher mpirun.openmpi "mpirun (Open MPI) 4.1.4"
expect "Debian's suffixed launcher before the alternative" mpirun.openmpi "$(launcher openmpi)"
expect "MPICH's suffixed launcher" mpirun.mpich "$(launcher mpich)"
expect "an unknown library" "refused 2" "$(launcher lam)"
((failures == 0))
