# SPDX-License-Identifier: MIT
#
# bench_common.sh - what the comparison scripts (compare.sh, compare_mpi.sh)
# share: errors, the peer MPI libraries (building with them, starting
# them), the temporary directory, the header that describes the machine,
# and the awk median.  Sourced, not run; the caller sets $prog first.

bench_die() {
	echo "$prog: $*" >&2
	exit 1
}

# The commands of Open MPI and MPICH that the comparisons use.
bench_need_peers() {
	local t
	for t in mpicc.openmpi mpicc.mpich mpirun.openmpi mpiexec.mpich; do
		command -v "$t" >/dev/null || bench_die "$t not found"
	done
}

# A temporary directory in $tmp, removed at exit unless KEEP is 1.
bench_tmpdir() {
	local keep=$1
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/bip-compare.XXXXXX") || bench_die "mktemp failed"
	if [ "$keep" = 1 ]; then
		trap 'echo "# raw results kept in $tmp" >&2' EXIT
	else
		trap 'rm -rf "$tmp"' EXIT
	fi
}

# bench_build_peers SOURCE NAME: $tmp/NAME.openmpi and $tmp/NAME.mpich.
bench_build_peers() {
	local src=$1 name=$2 dir
	dir=$(dirname "$src")
	mpicc.openmpi -O2 -I"$dir" -o "$tmp/$name.openmpi" "$src" ||
		bench_die "build of $src with mpicc.openmpi failed"
	mpicc.mpich -O2 -I"$dir" -o "$tmp/$name.mpich" "$src" ||
		bench_die "build of $src with mpicc.mpich failed"
}

# bench_run_openmpi TIMEOUT NP PROGRAM ARGS...: shared memory only, more
# processes than cores allowed, allowed as root.
bench_run_openmpi() {
	local t=$1 np=$2
	shift 2
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		timeout "$t" mpirun.openmpi --oversubscribe --mca btl self,vader -n "$np" "$@"
}

# bench_run_mpich TIMEOUT NP PROGRAM ARGS...
bench_run_mpich() {
	local t=$1 np=$2
	shift 2
	timeout "$t" mpiexec.mpich -n "$np" "$@"
}

# The machine and the peer versions, as comment lines.
bench_header() {
	local cpu
	cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
	[ -n "$cpu" ] || cpu=$(uname -m)
	echo "# CPU: $cpu; $(nproc) cores online; Linux $(uname -r)"
	echo "# Open MPI $(mpirun.openmpi --version 2>/dev/null | awk 'NR == 1 { print $NF }')," \
		"MPICH $(mpiexec.mpich --version 2>/dev/null | awk '/^ *Version:/ { print $2; exit }')"
}

# An awk function, median(s): the median of the space-separated numbers in
# s, -1 if there are none.  Prepend it to an awk program.
bench_awk_median='
function median(s,    a, n, i, j, t) {
	n = split(s, a, " ")
	if (n == 0)
		return -1
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}'
