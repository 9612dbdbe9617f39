#!/usr/bin/env bash
# Installs the Debian packages collbench needs to build, test and plot, when
# any is missing. Idempotent and silent when everything is there.
# Usage: scripts/setup.sh            (called by run.sh and test.sh)
set -euo pipefail

packages=(
  openmpi-bin libopenmpi-dev libfabric-dev libfabric-bin libbenchmark-dev libfmt-dev
  libgtest-dev libgmock-dev libcli11-dev libeigen3-dev libopenblas-dev libsimgrid-dev
  python3-matplotlib iproute2
  cmake g++
  make pkg-config git clang libclang-rt-14-dev
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

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
