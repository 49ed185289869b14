#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# lanai_vs_shm.sh - the BIP ping-pong table over the shm driver and over the
# simulated LANai board (lanai), side by side, from one run.
#
# Runs bench/bip_pingpong between two processes of this host with BIP_NIC=shm
# and BIP_NIC=lanai, interleaved for R rounds, and prints per size the median
# over the rounds of each one's latency and bandwidth.
#
# usage: lanai_vs_shm.sh --build DIR [-r ROUNDS] [-- BENCH_OPTIONS]
#
#   --build DIR        BIP build directory (DIR/scripts/bipload,
#                      DIR/bench/bip_pingpong)
#   -r, --rounds R     rounds (default 3)
#   -- BENCH_OPTIONS   passed to every run (-s, -S, -i, -w, -b)

set -u -o pipefail

prog=${0##*/}
build=
rounds=3
bench_opts=()

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
	-h | --help) usage 0 ;;
	--) shift; bench_opts=("$@"); break ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done
[ -n "$build" ] || { echo "$prog: --build DIR is required" >&2; usage; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive number"
bipload=$build/scripts/bipload
exe=$build/bench/bip_pingpong
[ -x "$exe" ] || die "$exe not found (ninja -C $build bench/bip_pingpong)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for r in $(seq "$rounds"); do
	for nic in shm lanai; do
		BIP_NIC=$nic "$bipload" -q -sz 2 --timeout 600 "$exe" --csv "${bench_opts[@]}" \
			>"$tmp/$nic.$r.csv" 2>"$tmp/$nic.$r.err" ||
			die "round $r over $nic failed: $(cat "$tmp/$nic.$r.err")"
	done
done

echo "# BIP ping-pong over shm and over the simulated LANai board, 2 processes,"
echo "# median of $rounds rounds; $(nproc) processors, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%12s %14s %14s %16s %16s\n' bytes shm_lat_us lanai_lat_us shm_bw_MBps lanai_bw_MBps
awk -F, -v rounds="$rounds" '
	function median(key,    n, i, j, t, a) {
		n = cnt[key]
		for (i = 1; i <= n; i++) a[i] = val[key, i]
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	FNR == 1 { nic = FILENAME; sub(/.*\//, "", nic); sub(/\..*/, "", nic); next }
	{
		if (!($1 in seen)) { seen[$1] = 1; sizes[++ns] = $1 }
		val[nic "lat" $1, ++cnt[nic "lat" $1]] = $2
		val[nic "bw" $1, ++cnt[nic "bw" $1]] = $3
	}
	END {
		for (i = 1; i <= ns; i++) {
			s = sizes[i]
			printf "%12d %14.3f %14.3f %16.1f %16.1f\n", s, median("shmlat" s),
				median("lanailat" s), median("shmbw" s), median("lanaibw" s)
		}
	}' "$tmp"/shm.*.csv "$tmp"/lanai.*.csv
