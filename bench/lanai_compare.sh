#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# lanai_compare.sh - the BIP ping-pong over the simulated LANai board in
# several configurations (builds and variables), interleaved, in one table.
#
# Each round runs bench/bip_pingpong between two processes once per
# configuration, in turn, so that every configuration sees the same load;
# the table gives per size the median over the rounds of each one's
# latency and bandwidth, and each one's ratio to the first configuration.
#
# usage: lanai_compare.sh -c 'NAME DIR [VAR=VALUE ...]' ... [-r ROUNDS] [-n NODES] [-- BENCH_OPTIONS]
#
#   -c 'NAME DIR VARS'  a configuration: its name, a BIP build directory
#                       (DIR/scripts/bipload, DIR/bench/bip_pingpong), and
#                       variables for the run (BIP_NIC=lanai is set already)
#   -r, --rounds R      rounds (default 5)
#   -- BENCH_OPTIONS    passed to every run (-s, -S, -i, -w, -b)
#
# Examples (bip_lanai(7), bip(7) Reliability):
#   the layer, without it, and a build of an earlier commit:
#     lanai_compare.sh -c 'layer build' -c 'nolayer build BIP_LANAI_RELIABLE=0' \
#         -c 'before ../old/build' -- -s 8 -S 65536
#   goodput under faults:
#     lanai_compare.sh -c 'clean build' -c 'faults build BIP_LANAI_LOSS=1 \
#         BIP_LANAI_CORRUPT=1 BIP_LANAI_DUPLICATE=1 BIP_LANAI_REORDER=1' -- -s 65536 -S 1048576
#   rails on links of 250 MB/s:
#     lanai_compare.sh -c '1rail build BIP_LANAI_RATE=250' \
#         -c '2rails build BIP_LANAI_RATE=250 BIP_LANAI_RAILS=2' -- -s 1048576 -S 16777216

set -u -o pipefail

prog=${0##*/}
rounds=5
configs=()
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
	-c) [ $# -ge 2 ] || usage; configs+=("$2"); shift 2 ;;
	-r | --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
	-h | --help) usage 0 ;;
	--) shift; bench_opts=("$@"); break ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done
[ ${#configs[@]} -ge 1 ] || { echo "$prog: at least one -c is required" >&2; usage; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive number"
names=()
for c in "${configs[@]}"; do
	read -r name dir _ <<<"$c"
	[ -n "${dir:-}" ] || die "-c '$c': expected NAME DIR [VAR=VALUE ...]"
	[[ $name =~ ^[A-Za-z0-9_.+-]+$ ]] || die "-c '$c': a name of letters, digits and _.+-"
	[ -x "$dir/scripts/bipload" ] && [ -x "$dir/bench/bip_pingpong" ] ||
		die "-c '$c': $dir/scripts/bipload or $dir/bench/bip_pingpong not found"
	names+=("$name")
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for r in $(seq "$rounds"); do
	for c in "${configs[@]}"; do
		read -r name dir vars <<<"$c"
		# shellcheck disable=SC2086
		env BIP_NIC=lanai $vars "$dir/scripts/bipload" -q -sz 2 --timeout 900 \
			"$dir/bench/bip_pingpong" --csv "${bench_opts[@]}" \
			>"$tmp/$name.$r.csv" 2>"$tmp/$name.$r.err" ||
			die "round $r of $name failed: $(tail -5 "$tmp/$name.$r.err")"
	done
done

echo "# BIP ping-pong over the simulated LANai board, 2 processes, median of $rounds"
echo "# interleaved rounds; $(nproc) processors, load $(cut -d' ' -f1 /proc/loadavg)"
for c in "${configs[@]}"; do
	echo "#   $c"
done
files=()
for n in "${names[@]}"; do
	files+=("$tmp/$n".*.csv)
done
awk -F, -v list="${names[*]}" '
	function median(key,    n, i, j, t, a) {
		n = cnt[key]
		for (i = 1; i <= n; i++) a[i] = val[key, i]
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	BEGIN { nc = split(list, cfg, " ") }
	FNR == 1 { c = FILENAME; sub(/.*\//, "", c); sub(/\.[0-9]+\.csv$/, "", c); next }
	{
		if (!($1 in seen)) { seen[$1] = 1; sizes[++ns] = $1 }
		val[c "lat" $1, ++cnt[c "lat" $1]] = $2
		val[c "bw" $1, ++cnt[c "bw" $1]] = $3
	}
	END {
		for (what = 0; what < 2; what++) {
			key = what ? "bw" : "lat"
			if (what)
				title = "bandwidth, MB/s (ratio to " cfg[1] ")"
			else
				title = "latency, us (ratio to " cfg[1] ")"
			printf "\n%s\n%10s", title, "bytes"
			for (k = 1; k <= nc; k++) printf " %18s", cfg[k]
			printf "\n"
			for (i = 1; i <= ns; i++) {
				s = sizes[i]
				base = median(cfg[1] key s)
				printf "%10d", s
				for (k = 1; k <= nc; k++) {
					m = median(cfg[k] key s)
					if (k == 1) printf " %18.3f", m
					else printf " %10.3f (%5.3f)", m, base ? m / base : 0
				}
				printf "\n"
			}
		}
	}' "${files[@]}"
