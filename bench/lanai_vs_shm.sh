#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# lanai_vs_shm.sh - the BIP ping-pong table over the shm driver and over the
# simulated LANai board (lanai), side by side, from one run.
#
# Runs bench/bip_pingpong between two processes of this host with BIP_NIC=shm
# and BIP_NIC=lanai, interleaved for R rounds, and prints per size the median
# over the rounds of each one's latency and bandwidth.  The floor
# (bench/floor: a cache line between two processors, memcpy) runs in every
# round too, and every figure is also given as a ratio to it.
#
# usage: lanai_vs_shm.sh --build DIR [-r ROUNDS] [--plot FILE.png] [-- BENCH_OPTIONS]
#
#   --build DIR        BIP build directory (DIR/scripts/bipload,
#                      DIR/bench/bip_pingpong)
#   -r, --rounds R     rounds (default 3)
#   --plot FILE.png    also draw latency and bandwidth against the size
#                      (log-log, the floor dashed) with gnuplot
#   -- BENCH_OPTIONS   passed to every run (-s, -S, -i, -w, -b)

set -u -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"
build=
rounds=3
bench_opts=()
plot=

usage() {
	sed -n '/^# usage:/,/^# *-- BENCH/s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

die() {
	echo "$prog: $*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
	-r | --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
	--plot) [ $# -ge 2 ] || usage; plot=$2; shift 2 ;;
	--plot=*) plot=${1#*=}; shift ;;
	-h | --help) usage 0 ;;
	--) shift; bench_opts=("$@"); break ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done
[ -n "$build" ] || { echo "$prog: --build DIR is required" >&2; usage; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive number"
[ -z "$plot" ] || bench_need_gnuplot "$plot"
bipload=$build/scripts/bipload
exe=$build/bench/bip_pingpong
[ -x "$exe" ] || die "$exe not found (ninja -C $build bench/bip_pingpong)"
bench_need_floor "$build"
bench_floor_sizes "${bench_opts[@]}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for r in $(seq "$rounds"); do
	for nic in shm lanai; do
		BIP_NIC=$nic "$bipload" -q -sz 2 --timeout 600 "$exe" --csv "${bench_opts[@]}" \
			>"$tmp/$nic.$r.csv" 2>"$tmp/$nic.$r.err" ||
			die "round $r over $nic failed: $(cat "$tmp/$nic.$r.err")"
	done
	bench_run_floor 600 "$tmp/floor.$r.csv" 2>"$tmp/floor.$r.err" &&
		grep -q '^[0-9]' "$tmp/floor.$r.csv" ||
		die "round $r: the floor failed: $(cat "$tmp/floor.$r.err")"
done

echo "# BIP ping-pong over shm and over the simulated LANai board, 2 processes,"
echo "# median of $rounds rounds; $(nproc) processors, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%12s %14s %14s %16s %16s %10s %12s %12s %12s %12s %12s\n' bytes shm_lat_us lanai_lat_us \
	shm_bw_MBps lanai_bw_MBps floor_us shm/floor lanai/floor memcpy_MBps shm/memcpy lanai/memcpy
awk -F, -v rounds="$rounds" -v latdat="$tmp/plot.lat" -v bwdat="$tmp/plot.bw" '
	function median(key,    n, i, j, t, a) {
		n = cnt[key]
		if (n == 0)
			return -1
		for (i = 1; i <= n; i++) a[i] = val[key, i]
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function cell(v, w, p) { return v < 0 ? sprintf(" %" w "s", "-") : sprintf(" %" w "." p "f", v) }
	function ratio(a, b) { return a >= 0 && b > 0 ? sprintf(" %12.2f", a / b) : sprintf(" %12s", "-") }
	function dat(v) { return v < 0 ? " -" : " " v }
	FNR == 1 { nic = FILENAME; sub(/.*\//, "", nic); sub(/\..*/, "", nic) }
	FNR == 1 && nic == "floor" && /^# half_rtt_us [0-9]/ { split($0, hh, " "); val["half", ++cnt["half"]] = hh[3] }
	FNR == 1 { next }
	{
		if (nic != "floor" && !($1 in seen)) { seen[$1] = 1; sizes[++ns] = $1 }
		if ($2 != "-")
			val[nic "lat" $1, ++cnt[nic "lat" $1]] = $2
		val[nic "bw" $1, ++cnt[nic "bw" $1]] = $3
	}
	END {
		print "bytes shm lanai floor" > latdat
		print "bytes shm lanai memcpy" > bwdat
		for (i = 1; i <= ns; i++) {
			s = sizes[i]
			sl = median("shmlat" s); ll = median("lanailat" s); fl = median("floorlat" s)
			sb = median("shmbw" s); lb = median("lanaibw" s); fb = median("floorbw" s)
			printf "%12d %14.3f %14.3f %16.1f %16.1f", s, sl, ll, sb, lb
			printf "%s%s%s%s%s%s\n", cell(fl, 10, 3), ratio(sl, fl), ratio(ll, fl),
				cell(fb, 12, 1), ratio(sb, fb), ratio(lb, fb)
			print s dat(sl) dat(ll) dat(fl) > latdat
			print s dat(sb) dat(lb) dat(fb) > bwdat
		}
		h = median("half")
		printf "# floor: half round trip of a cache line between two processors: %s;\n", h < 0 ? "not measured" : sprintf("%.3f us", h)
		printf "# floor_us = that + one memcpy of the size; memcpy from buffers larger than the last-level cache\n"
	}' "$tmp"/shm.*.csv "$tmp"/lanai.*.csv "$tmp"/floor.*.csv
bench_floor_note "$tmp"/floor.*.csv
[ -z "$plot" ] || bench_plot "$plot" "BIP over shm and over the simulated LANai board, 2 processes of one host; the floor dashed" \
	"$tmp/plot.lat" "$tmp/plot.bw"
