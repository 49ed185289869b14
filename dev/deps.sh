#!/bin/sh
# SPDX-License-Identifier: MIT
# Install what building and testing BIP needs (Debian 12 packages): gfortran
# for the Fortran binding of the MPI shim, cmake and autoconf for the
# projects that tests/buildsys builds with the MPI wrappers, PMIx
# and PMI-2 for the start-up back ends, and munge and Slurm for the tests
# under a real Slurm (tests/slurm), and gdb and strace for what a test of
# idle processes prints when one is busy (tests/clusters/wait.sh).
# Usage: dev/deps.sh [--bench]   (--bench adds Open MPI and MPICH for bench/compare.sh,
# and gnuplot for the scripts' --plot)
set -eu

pkgs="build-essential meson ninja-build pkg-config check libsubunit-dev python3 g++
      libfabric-dev libfabric-bin libpsm2-dev libsodium-dev iproute2 procps
      clang libclang-rt-14-dev gfortran cmake autoconf
      libpmix-dev libpmi2-0-dev munge slurmctld slurmd slurm-client
      libotf2-trace-dev otf2-tools chromium gdb strace"
case "${1:-}" in
--bench) pkgs="$pkgs openmpi-bin libopenmpi-dev mpich libmpich-dev gnuplot-nox" ;;
esac

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	sudo=""
else
	sudo="sudo"
fi
echo "Installing:$missing"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
