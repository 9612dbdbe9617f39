# shellcheck shell=bash
# Sourced (not run) by the scripts that start ranks: which MPI library a
# build links, and the launcher that belongs to it. Debian installs Open MPI
# and MPICH side by side behind one `mpirun` alternative, so a plain `mpirun`
# is whichever was installed or selected last; a binary started by the other
# library's launcher runs as N separate one-rank jobs. The scripts therefore
# name the launcher of the library the build was configured with
# (cmake -DCOLLBENCH_MPI=openmpi|mpich, README.md), and keep each library's
# own flags (mpi_launch_flags) and Open MPI's variables (the root ones,
# PMIX_MCA_gds) behind that choice.

# mpi_library_of BUILD: openmpi or mpich, the COLLBENCH_MPI of BUILD's
# CMake cache (openmpi, the default, when BUILD is not configured yet).
mpi_library_of() {
  local cache=$1/CMakeCache.txt library=""
  [[ -f $cache ]] && library=$(sed -n 's/^COLLBENCH_MPI:[A-Z]*=//p' "$cache")
  echo "${library:-openmpi}"
}

# mpi_launcher_for LIBRARY: prints the launcher's command: Debian's
# mpirun.openmpi or mpirun.mpich; elsewhere (a cluster's module, a source
# install) a plain `mpirun` whose --version names the same library. Otherwise
# says on stderr what is missing and returns 2.
mpi_launcher_for() {
  local command package banner
  case $1 in
    openmpi) command=mpirun.openmpi package=openmpi-bin banner="Open MPI" ;;
    mpich) command=mpirun.mpich package=mpich banner="HYDRA" ;;
    *)
      echo "unknown MPI library '$1' (COLLBENCH_MPI is openmpi or mpich)" >&2
      return 2
      ;;
  esac
  if command -v "$command" >/dev/null; then
    echo "$command"
  # Not grep -q: under pipefail, the writer's SIGPIPE would make this false.
  elif mpirun --version 2>/dev/null | grep "$banner" >/dev/null; then
    echo mpirun
  else
    echo "neither $command nor an $1 mpirun found: the build links $1 (Debian package $package)" >&2
    return 2
  fi
}

# mpi_launch_flags LIBRARY NP BINDING: the launcher's flags for NP ranks on
# this machine, each bound to BINDING (core, or none when ranks share cores:
# machine_binding), on one line. MPICH's Hydra: -n and -bind-to (hwloc's
# names). Open MPI: -np, --bind-to, --oversubscribe (it refuses more ranks
# than cores without it, and places the same ranks with it) and its
# out-of-band channel on loopback. Otherwise says so on stderr and returns 2.
mpi_launch_flags() {
  case $1 in
    openmpi) echo "-np $2 --oversubscribe --bind-to $3 --mca oob_tcp_if_include lo" ;;
    mpich) echo "-n $2 -bind-to $3" ;;
    *)
      echo "unknown MPI library '$1' (COLLBENCH_MPI is openmpi or mpich)" >&2
      return 2
      ;;
  esac
}

# open_mpi_environment: what Open MPI needs here before any launch: root may
# run it (containers run as root), and PMIx's shared-memory store is off
# (PMIX_MCA_gds=hash: its dstore fails in some containers).
open_mpi_environment() {
  export PMIX_MCA_gds=hash
  if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
}
