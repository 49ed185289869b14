#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scale.sh - what a job costs its host as it grows, BIP's MPI shim beside
# Open MPI (vader) and MPICH, on one host.
#
# For each rank count, bench/mpi_scale.c (MPI_Init, an all-to-all of 8
# bytes and one of 64 KiB between every pair, MPI_Finalize) runs under
# each library, interleaved for R rounds; the script prints the medians of
# the host's shared memory after the exchange ("Shmem:" of /proc/meminfo,
# less its value before the job, read by rank 0 while every rank still
# holds what the exchange made it allocate) and of the whole run's wall
# time (launcher included), with BIP's ratios to Open MPI.
#
# usage: scale.sh --build DIR [-r ROUNDS] [-n N,N,...] [--peers-max N]
#                 [--timeout SEC] [--plot FILE.png] [--keep]
#
#   --build DIR       BIP build directory (DIR/scripts/bipload,
#                     DIR/bench/mpi_scale_shim)
#   -r ROUNDS         rounds (default 3)
#   -n LIST           rank counts (default 32,64,128,256)
#   --peers-max N     run Open MPI and MPICH only up to N ranks (default
#                     128: above, they take minutes on a small machine)
#   --timeout SEC     limit of one run (default 600)
#   --plot FILE.png   also draw shared memory against the rank count
#                     (log-log) with gnuplot
#   --keep            keep the temporary directory (every run's output)

set -u -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"
build=
rounds=3
counts=32,64,128,256
peers_max=128
timeout_s=600
plot=
keep=0

usage() {
	sed -n '/^# usage:/,/^# *--keep/s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
	-r) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
	-n) [ $# -ge 2 ] || usage; counts=$2; shift 2 ;;
	--peers-max) [ $# -ge 2 ] || usage; peers_max=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	--plot) [ $# -ge 2 ] || usage; plot=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done

[ -n "$build" ] || { echo "$prog: --build DIR is required" >&2; usage; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || bench_die "ROUNDS must be a positive number"
[[ $counts =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || bench_die "-n wants counts like 32,64"
[[ $peers_max =~ ^[0-9]+$ ]] || bench_die "--peers-max wants a number"
[ -z "$plot" ] || bench_need_gnuplot "$plot"
build=$(cd "$build" 2>/dev/null && pwd) || bench_die "no build directory '$build'"
bipload=$build/scripts/bipload
bip_exe=$build/bench/mpi_scale_shim
[ -x "$bip_exe" ] || bench_die "$bip_exe not found (ninja -C $build bench/mpi_scale_shim)"
bench_need_peers
bench_tmpdir "$keep"
bench_build_peers "$here/mpi_scale.c" mpi_scale
IFS=, read -r -a ns <<<"$counts"
impls=(BIP OpenMPI MPICH)

shmem_kb() {
	awk '/^Shmem:/ { print $2 }' /proc/meminfo
}

# run IMPL N OUT: one job; OUT gets "ranks N shmem_kb K errors E" and the
# wall time in seconds.
run() {
	local impl=$1 n=$2 out=$3 before t0 t1 rc
	before=$(shmem_kb)
	t0=$(date +%s.%N)
	case $impl in
	BIP) SCALE_SHMEM_BEFORE=$before timeout "$timeout_s" "$bipload" -q -sz "$n" "$bip_exe" ;;
	OpenMPI) SCALE_SHMEM_BEFORE=$before bench_run_openmpi "$timeout_s" "$n" \
			-x SCALE_SHMEM_BEFORE "$tmp/mpi_scale.openmpi" ;;
	MPICH) SCALE_SHMEM_BEFORE=$before bench_run_mpich "$timeout_s" "$n" \
			"$tmp/mpi_scale.mpich" ;;
	esac >"$out" 2>"$out.err"
	rc=$?
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "wall %.3f\n", b - a }' >>"$out"
	return $rc
}

bench_header
echo "# BIP from $build; $rounds rounds, interleaved; rank counts ${ns[*]}"
echo "# Open MPI and MPICH up to $peers_max ranks"
failed=0
for ((r = 1; r <= rounds; r++)); do
	for n in "${ns[@]}"; do
		for impl in "${impls[@]}"; do
			[ "$impl" != BIP ] && [ "$n" -gt "$peers_max" ] && continue
			out=$tmp/$impl.$n.$r
			if ! run "$impl" "$n" "$out" || ! grep -q '^ranks .* errors 0$' "$out"; then
				echo "# round $r: $impl on $n ranks failed:" >&2
				sed 's/^/#   /' "$out" "$out.err" | head -20 >&2
				failed=$((failed + 1))
				rm -f "$out"
			fi
		done
	done
	echo "# round $r of $rounds done" >&2
done

(cd "$tmp" && awk -v counts="${ns[*]}" -v impls="${impls[*]}" -v dat="$tmp/plot.dat" \
	"$bench_awk_median"'
FNR == 1 { split(FILENAME, f, "."); impl = f[1]; n = f[2] }
/^ranks / { mem[impl, n] = mem[impl, n] " " $4 / 1024 }
/^wall / { wall[impl, n] = wall[impl, n] " " $2 }
function fmt(v, w, p) { return v < 0 ? sprintf("%" w "s", "-") : sprintf("%" w "." p "f", v) }
function ratio(a, b) { return a >= 0 && b > 0 ? sprintf(" %8.2f", a / b) : sprintf(" %8s", "-") }
END {
	nc = split(counts, c, " ")
	ni = split(impls, im, " ")
	printf "\n# shared memory after the exchange (MiB) and the whole run (s), medians\n"
	printf "%6s %9s %9s %9s %8s %8s %8s %8s %8s\n", "ranks", "BIP_MiB", "OMPI_MiB",
		"MPICH_MiB", "BIP/OMPI", "BIP_s", "OMPI_s", "MPICH_s", "BIP/OMPI"
	print "ranks BIP OpenMPI MPICH" > dat
	for (k = 1; k <= nc; k++) {
		n = c[k]
		line = sprintf("%6d", n)
		for (i = 1; i <= ni; i++) {
			m[im[i]] = median(mem[im[i], n])
			t[im[i]] = median(wall[im[i], n])
			line = line " " fmt(m[im[i]], 9, 1)
		}
		line = line ratio(m["BIP"], m["OpenMPI"])
		for (i = 1; i <= ni; i++)
			line = line " " fmt(t[im[i]], 8, 2)
		line = line ratio(t["BIP"], t["OpenMPI"])
		print line
		printf "%d", n > dat
		for (i = 1; i <= ni; i++)
			printf " %s", m[im[i]] < 0 ? "-" : m[im[i]] > dat
		print "" > dat
	}
}' $(ls "$tmp" | grep -E '^(BIP|OpenMPI|MPICH)\.[0-9]+\.[0-9]+$'))

if [ -n "$plot" ]; then
	term=png
	gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo && term=pngcairo
	cat >"$tmp/plot.gp" <<GPEND
set terminal $term size 560,400 noenhanced font ",10"
set output "$plot"
set datafile missing "-"
set title "Shared memory of one host after an all-pairs exchange"
set logscale xy 2
set grid lt 1 lc "gray85" lw 1
set key top left
set xlabel "ranks on the host"
set ylabel "MiB"
set xtics (8, 16, 32, 64, 128, 256, 512)
set format y "%g"
plot "$tmp/plot.dat" using 1:2 with linespoints pt 7 lw 1.5 title "BIP", \\
     "$tmp/plot.dat" using 1:3 with linespoints pt 5 lw 1.5 title "Open MPI", \\
     "$tmp/plot.dat" using 1:4 with linespoints pt 9 lw 1.5 title "MPICH"
GPEND
	gnuplot "$tmp/plot.gp" 2>"$tmp/plot.err" && [ -s "$plot" ] ||
		{ sed 's/^/#   /' "$tmp/plot.err" >&2; bench_die "gnuplot could not draw $plot"; }
	echo "# plot written to $plot" >&2
fi
if [ $failed -gt 0 ]; then
	echo "# $failed run(s) failed; their medians are over fewer rounds" >&2
	exit 1
fi
exit 0
