#!/usr/bin/env bash
# scripts/mpi_launcher.sh: the library a build links, from its CMake cache,
# and the launcher named for it, on made-up build folders and PATHs (fake
# launchers that only print a --version banner); each library's launch
# flags, and this machine's launchers starting ranks with them.
# Usage: tests/mpi_launcher_test.sh SOURCE_DIR
set -euo pipefail
source "$1/scripts/mpi_launcher.sh"
source "$1/tests/lib.sh"

scratch_dir mpi_launcher_test
fake=$scratch
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

# The launch flags of each library, and the real launchers here accepting
# them: 2 ranks of `true` (a library whose launcher is missing is skipped,
# said so).
expect "Open MPI's flags, 3 ranks sharing cores" \
  "-np 3 --oversubscribe --bind-to none --mca oob_tcp_if_include lo" "$(mpi_launch_flags openmpi 3 none)"
expect "MPICH's flags, 2 ranks on a core each" "-n 2 -bind-to core" "$(mpi_launch_flags mpich 2 core)"
expect "an unknown library's flags" "refused 2" "$(mpi_launch_flags lam 2 core 2>/dev/null || echo "refused $?")"
launched() { # LIBRARY: "ran", or the launcher's first line of complaint
  local real flags
  real=$(mpi_launcher_for "$1")
  read -ra flags <<<"$(mpi_launch_flags "$1" 2 none)"
  if (open_mpi_environment && timeout 60 "$real" "${flags[@]}" true) >"$fake/launch.log" 2>&1; then
    echo ran
  else
    echo "status $?: $(grep -m1 . "$fake/launch.log")"
  fi
}
for library in openmpi mpich; do
  if mpi_launcher_for "$library" >/dev/null 2>&1; then
    expect "$(mpi_launcher_for "$library") starts 2 ranks with $library's flags" ran "$(launched "$library")"
  else
    echo "skipped: $library's flags on its launcher: $(mpi_launcher_for "$library" 2>&1)"
  fi
done
expectations_met
