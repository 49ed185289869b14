#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# compare_spawn.sh - the cost of growing a job (MPI-3.1 chapter 10) with
# the MPI shim (BIP), Open MPI and MPICH on this host: bench/mpi_spawn.c,
# built with each MPI's compiler wrapper, spawns 1, 4 and 16 children from
# one process and exchanges one message with each (milliseconds, from the
# call to the last answer), and times MPI_Comm_connect/accept between two
# processes of one job (median microseconds of one connect).  Each round
# runs every implementation once, in turn; the table gives the median over
# the rounds and the shim's time over the best peer's.  An implementation
# whose spawn fails on this machine shows its first error line instead.
# Open MPI runs with the tcp BTL too: its shared-memory BTL does not reach
# the processes of another job (the children).
#
# usage: compare_spawn.sh [--build DIR] [-r ROUNDS] [-c CONNECTS]
#   --build DIR   BIP build directory (its uninstalled wrappers and bipload);
#                 without it, mpicc.bip and bipload from PATH
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
prog=compare_spawn.sh
. "$here/bench_common.sh"
build= rounds=5 connects=200
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	-c) connects=$2; shift 2 ;;
	*) bench_die "usage: compare_spawn.sh [--build DIR] [-r ROUNDS] [-c CONNECTS]" ;;
	esac
done
bench_need_peers
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_build_three "$build" "$here/mpi_spawn.c"
run() { # impl np args...
	local impl=$1 np=$2
	shift 2
	case $impl in
	bip) timeout 120 "$bipload" -q -sz "$np" --universe 64 --timeout 100 "$tmp/bip" "$@" ;;
	ompi) timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np" \
		--mca btl self,vader,tcp "$tmp/ompi" "$@" ;;
	mpich) timeout 120 mpiexec.mpich -n "$np" "$tmp/mpich" "$@" ;;
	esac
}
rows="spawn:1 spawn:4 spawn:16 connect:$connects"
for r in $(seq "$rounds"); do
	for row in $rows; do
		what=${row%%:*} arg=${row#*:}
		np=1
		[ "$what" = connect ] && np=2
		for impl in bip ompi mpich; do
			out=$(run "$impl" "$np" "$what" "$arg" 2>&1)
			v=$(echo "$out" | sed -n "s/^$what $arg \([0-9.]*\)$/\1/p" | head -1)
			if [ -n "$v" ]; then
				echo "$v" >>"$tmp/$impl.$what.$arg"
			else
				echo "$out" | grep -m1 -i -e error -e "not supported" >"$tmp/$impl.$what.$arg.err"
			fi
		done
	done
done
bench_peer_header
for row in $rows; do
	what=${row%%:*} arg=${row#*:}
	unit=ms
	[ "$what" = connect ] && unit=us
	bench_peer_row "$what $arg ($unit)" "$tmp" "$what.$arg"
done
for f in "$tmp"/*.err; do
	[ -s "$f" ] && echo "$(basename "$f" .err): $(head -c 200 "$f")"
done
exit 0
