#!/bin/sh
# SPDX-License-Identifier: MIT
# Start-up under Slurm: the wall time of a whole NP-process MPI job
# (MPI_Init, a barrier, MPI_Finalize) under bipload (on the login host, and
# inside an allocation, where it starts one srun step of a proxy per host),
# under srun --mpi=pmix and --mpi=pmi2 with the MPI shim, and under srun
# --mpi=pmix with Open MPI; then the MPI ping-pong latency of the shim under
# srun beside bipload.  Rounds interleaved, medians.  Runs a Slurm cluster
# of HOSTS hosts (1) in network namespaces (tests/slurm/cluster.sh): root,
# with Slurm and munge installed (dev/deps.sh), Open MPI for its column
# (dev/deps.sh --bench).  --base DIR adds the bipload rows of another build
# (the one before a change), interleaved in the same rounds.
#
# --local "N..." times bipload -sz N of the same program on this host
# instead (no Slurm), for each N, with --base as above.
#
#   bench/slurm_start.sh [--build DIR] [--base DIR] [-n NP] [-N HOSTS] [-r ROUNDS]
#   bench/slurm_start.sh --local "8 32 64" [--build DIR] [--base DIR] [-r ROUNDS]
set -u
prog=slurm_start.sh
src=$(cd "$(dirname "$0")/.." && pwd)
build="$src/build"
base=""
local=""
np=8
nhosts=1
rounds=7
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--base) base=$(cd "$2" && pwd); shift 2 ;;
	--local) local=$2; shift 2 ;;
	-n) np=$2; shift 2 ;;
	-N) nhosts=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	*) echo "usage: $prog [--build DIR] [--base DIR] [-n NP] [-N HOSTS] [-r ROUNDS] | --local \"N...\" ..." >&2; exit 2 ;;
	esac
done
median() {
	sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
now() {
	date +%s.%N
}

if [ -n "$local" ]; then
	dir=$(mktemp -d) || exit 1
	trap 'rm -rf "$dir"' EXIT
	builds="$build${base:+ $base}"
	r=0
	while [ "$r" -lt "$rounds" ]; do
		for n in $local; do
			k=0
			for b in $builds; do
				t0=$(now)
				"$b/scripts/bipload" -q -sz "$n" "$b/bench/mpi_startup_shim" >"$dir/out" 2>&1 ||
					{ cat "$dir/out"; exit 1; }
				t1=$(now)
				echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$dir/t.$n.$k"
				k=$((k + 1))
			done
		done
		r=$((r + 1))
	done
	echo "# bipload -sz N of mpi_startup (MPI_Init, a barrier, MPI_Finalize) on this host, seconds,"
	echo "# median (min) of $rounds interleaved rounds; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%6s %18s' "N" "this build"
	[ -n "$base" ] && printf ' %18s %8s' "base" "/base"
	echo
	for n in $local; do
		m0=$(median <"$dir/t.$n.0")
		printf '%6s %9.3f (%6.3f)' "$n" "$m0" "$(sort -g "$dir/t.$n.0" | head -1)"
		if [ -n "$base" ]; then
			m1=$(median <"$dir/t.$n.1")
			printf ' %9.3f (%6.3f) %8.2f' "$m1" "$(sort -g "$dir/t.$n.1" | head -1)" \
				"$(echo "$m0 $m1" | awk '{ print $1 / $2 }')"
		fi
		echo
	done
	exit 0
fi

. "$src/tests/netns/hosts.sh"
. "$src/tests/slurm/cluster.sh"
unset BIPCONF BIP_OPTS BIP_NODE BIP_JOBID BIP_HOST BIP_RSH BIP_NIC BIP_BOOTSTRAP SLURM_JOB_ID

dir=$(mktemp -d "$build/bench-slurm.XXXXXX") || exit 1
trap 'ns_cleanup; rm -rf "$dir"' EXIT
ompi=""
# Open MPI's TCP transport between network-namespace hosts is left out: it
# does not find its way between them here (its processes wait for ever).
if [ "$nhosts" -gt 1 ]; then
	echo "# Open MPI left out: several network-namespace hosts"
elif command -v mpicc.openmpi >/dev/null; then
	mpicc.openmpi -O2 -o "$dir/mpi_startup.openmpi" "$src/bench/mpi_startup.c" &&
		ompi="$dir/mpi_startup.openmpi"
fi
sl_start "$dir" "$nhosts"
cd "$dir" || exit 1
shim="$build/bench/mpi_startup_shim"
pp="$build/bench/mpi_pingpong_shim"

# seconds of one run of a command on the login host (the job must succeed)
timed() {
	t0=$(now)
	sl_run "$@" >"$dir/out" 2>&1 || { cat "$dir/out"; sl_fail "$*: failed"; }
	t1=$(now)
	echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }'
}

keys="bipload salloc"
[ -n "$base" ] && keys="$keys bipload.base salloc.base"
keys="$keys pmix pmi2"
[ -n "$ompi" ] && keys="$keys ompi"
for k in $keys; do
	: >"$dir/t.$k"
done
# The allocation of the rows inside one, and of the srun rows.
alloc="-N $nhosts -n $np"
r=0
while [ "$r" -lt "$rounds" ]; do
	timed "$build/scripts/bipload" -q -sz "$np" "$shim" >>"$dir/t.bipload"
	timed salloc $alloc "$build/scripts/bipload" -q "$shim" >>"$dir/t.salloc"
	if [ -n "$base" ]; then
		timed "$base/scripts/bipload" -q -sz "$np" "$base/bench/mpi_startup_shim" \
			>>"$dir/t.bipload.base"
		timed salloc $alloc "$base/scripts/bipload" -q "$base/bench/mpi_startup_shim" \
			>>"$dir/t.salloc.base"
	fi
	timed srun $alloc --mpi=pmix "$shim" >>"$dir/t.pmix"
	timed srun $alloc --mpi=pmi2 "$shim" >>"$dir/t.pmi2"
	[ -n "$ompi" ] && timed srun $alloc --mpi=pmix "$ompi" >>"$dir/t.ompi"
	r=$((r + 1))
done
echo "# start-up of an $np-process MPI job (init, barrier, finalize), seconds, median of $rounds interleaved rounds"
echo "# $nhosts Slurm node(s) (network namespaces), $(nproc) cores, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-52s %8s %8s\n' "launcher" "median" "min"
for k in $keys; do
	[ -s "$dir/t.$k" ] || continue
	case $k in
	bipload) what="bipload -sz $np (login host)" ;;
	salloc) what="salloc $alloc bipload (one srun step)" ;;
	bipload.base) what="bipload -sz $np (login host), base" ;;
	salloc.base) what="salloc $alloc bipload, base" ;;
	pmix) what="srun $alloc --mpi=pmix (MPI shim)" ;;
	pmi2) what="srun $alloc --mpi=pmi2 (MPI shim)" ;;
	ompi) what="srun $alloc --mpi=pmix (Open MPI)" ;;
	esac
	printf '%-52s %8.3f %8.3f\n' "$what" "$(median <"$dir/t.$k")" "$(sort -g "$dir/t.$k" | head -1)"
done

# MPI ping-pong latency: the same binary under each launcher.
: >"$dir/l.bipload"; : >"$dir/l.pmix"; : >"$dir/l.pmi2"
r=0
while [ "$r" -lt "$rounds" ]; do
	for k in bipload pmix pmi2; do
		case $k in
		bipload) set -- "$build/scripts/bipload" -q -sz 2 ;;
		*) set -- srun -N 1 -n 2 --mpi=$k ;;
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
