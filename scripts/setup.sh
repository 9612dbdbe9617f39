#!/usr/bin/env bash
# Installs the Debian packages collbench needs to build, test and plot, when
# any is missing. Idempotent and silent when everything is there.
# Usage: scripts/setup.sh            (called by run.sh and test.sh)
#        scripts/setup.sh --mpich    also MPICH 4 (test.sh --full's second
#                                    library, cmake -DCOLLBENCH_MPI=mpich)
#        scripts/setup.sh --help     this text
# Open MPI stays the system's mpicc/mpirun: Debian switches the `mpi` and
# `mpirun` alternatives by priority (Open MPI's is the higher here, but not
# on every architecture), so after installing MPICH they are set to Open
# MPI's by hand. Scripts name the launcher they mean (mpirun.openmpi,
# mpirun.mpich).
set -euo pipefail

packages=(
  openmpi-bin libopenmpi-dev libfabric-dev libfabric-bin libbenchmark-dev libfmt-dev
  libgtest-dev libgmock-dev libcli11-dev libeigen3-dev libopenblas-dev libsimgrid-dev libjemalloc-dev
  python3-matplotlib iproute2
  cmake g++
  make pkg-config git clang libclang-rt-14-dev
)
if (($# > 1)); then
  echo "setup.sh: takes one argument at most, got $# ($*) (accepted: --mpich, --help)" >&2
  exit 2
fi
case "${1:-}" in
  "") ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  --mpich) packages+=(mpich libmpich-dev) ;;
  *)
    echo "setup.sh: unknown argument '$1' (accepted: --mpich, --help)" >&2
    exit 2
    ;;
esac

# Open MPI's compilers and launcher as the unsuffixed ones, when MPICH is
# installed beside it.
keep_open_mpi_default() {
  if [[ -e /usr/bin/mpicc.mpich && -e /usr/bin/mpicc.openmpi ]]; then
    "${sudo_cmd[@]}" update-alternatives --quiet --set mpi /usr/bin/mpicc.openmpi
    "${sudo_cmd[@]}" update-alternatives --quiet --set mpirun /usr/bin/mpirun.openmpi
  fi
}

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  # Root can put the alternatives back even when nothing is missing.
  if [[ $(id -u) -eq 0 ]]; then
    sudo_cmd=()
    keep_open_mpi_default
  fi
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo)
  else
    echo "setup.sh: missing Debian packages: ${missing[*]}" >&2
    echo "setup.sh: run as root (or install them yourself) and try again" >&2
    exit 2
  fi
else
  sudo_cmd=()
fi

echo "setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
keep_open_mpi_default
