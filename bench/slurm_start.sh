#!/bin/sh
# SPDX-License-Identifier: MIT
# Start-up under Slurm: the wall time of a whole 8-process MPI job (MPI_Init,
# a barrier, MPI_Finalize) under bipload, under srun --mpi=pmix and
# --mpi=pmi2 with the MPI shim, and under srun --mpi=pmix with Open MPI;
# then the MPI ping-pong latency of the shim under srun beside bipload.
# Rounds interleaved, medians.  Runs a Slurm cluster of one host in a
# network namespace (tests/slurm/cluster.sh): root, with Slurm and munge
# installed (dev/deps.sh), Open MPI for its column (dev/deps.sh --bench).
#
#   bench/slurm_start.sh [--build DIR] [-n NP] [-r ROUNDS]
set -u
prog=slurm_start.sh
src=$(cd "$(dirname "$0")/.." && pwd)
build="$src/build"
np=8
rounds=7
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	-n) np=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	*) echo "usage: $prog [--build DIR] [-n NP] [-r ROUNDS]" >&2; exit 2 ;;
	esac
done
. "$src/tests/netns/hosts.sh"
. "$src/tests/slurm/cluster.sh"
unset BIPCONF BIP_OPTS BIP_NODE BIP_JOBID BIP_HOST BIP_RSH BIP_NIC BIP_BOOTSTRAP SLURM_JOB_ID

dir=$(mktemp -d "$build/bench-slurm.XXXXXX") || exit 1
trap 'ns_cleanup; rm -rf "$dir"' EXIT
ompi=""
if command -v mpicc.openmpi >/dev/null; then
	mpicc.openmpi -O2 -o "$dir/mpi_startup.openmpi" "$src/bench/mpi_startup.c" &&
		ompi="$dir/mpi_startup.openmpi"
fi
sl_start "$dir" 1
cd "$dir" || exit 1
shim="$build/bench/mpi_startup_shim"
pp="$build/bench/mpi_pingpong_shim"

# seconds of one run of a command on the login host (the job must succeed)
timed() {
	t0=$(date +%s.%N)
	sl_run "$@" >"$dir/out" 2>&1 || { cat "$dir/out"; sl_fail "$*: failed"; }
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }'
}
median() {
	sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

: >"$dir/t.bipload"; : >"$dir/t.pmix"; : >"$dir/t.pmi2"; : >"$dir/t.ompi"
r=0
while [ "$r" -lt "$rounds" ]; do
	timed "$build/scripts/bipload" -q -sz "$np" "$shim" >>"$dir/t.bipload"
	timed srun -n "$np" --mpi=pmix "$shim" >>"$dir/t.pmix"
	timed srun -n "$np" --mpi=pmi2 "$shim" >>"$dir/t.pmi2"
	[ -n "$ompi" ] && timed srun -n "$np" --mpi=pmix "$ompi" >>"$dir/t.ompi"
	r=$((r + 1))
done
echo "# start-up of an $np-process MPI job (init, barrier, finalize), seconds, median of $rounds interleaved rounds"
echo "# one Slurm node (network namespace), $(nproc) cores, $(uname -m)"
printf '%-40s %8s %8s\n' "launcher" "median" "min"
for k in bipload pmix pmi2 ompi; do
	[ -s "$dir/t.$k" ] || continue
	case $k in
	bipload) what="bipload -sz $np (MPI shim)" ;;
	pmix) what="srun -n $np --mpi=pmix (MPI shim)" ;;
	pmi2) what="srun -n $np --mpi=pmi2 (MPI shim)" ;;
	ompi) what="srun -n $np --mpi=pmix (Open MPI)" ;;
	esac
	printf '%-40s %8.3f %8.3f\n' "$what" "$(median <"$dir/t.$k")" "$(sort -g "$dir/t.$k" | head -1)"
done

# MPI ping-pong latency: the same binary under each launcher.
: >"$dir/l.bipload"; : >"$dir/l.pmix"; : >"$dir/l.pmi2"
r=0
while [ "$r" -lt "$rounds" ]; do
	for k in bipload pmix pmi2; do
		case $k in
		bipload) set -- "$build/scripts/bipload" -q -sz 2 ;;
		*) set -- srun -n 2 --mpi=$k ;;
		esac
		sl_run "$@" "$pp" -s 8 -S 8 -i 20000 >"$dir/out" 2>&1 || sl_fail "ping-pong under $k"
		awk '!/^#/ && $1 == 8 { print $2 }' "$dir/out" >>"$dir/l.$k"
	done
	r=$((r + 1))
done
echo
echo "# MPI ping-pong (MPI shim), 8 bytes, one-way latency in us, median of $rounds interleaved runs"
b=$(median <"$dir/l.bipload")
printf '%-32s %10s %10s\n' "launcher" "latency" "/bipload"
for k in bipload pmix pmi2; do
	v=$(median <"$dir/l.$k")
	printf '%-32s %10.3f %10.2f\n' "$k" "$v" "$(echo "$v $b" | awk '{ print $1 / $2 }')"
done
