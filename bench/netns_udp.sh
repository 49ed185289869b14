#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# netns_udp.sh - BIP over plain UDP between two test hosts (network
# namespaces): the udp driver under BIP's reliability layer, beside the ofi
# driver on libfabric's own reliable datagram provider over the same UDP
# ("udp;ofi_rxd"), interleaved round by round.
#
# Prints per size the median over the rounds of each one's one-way latency
# and streaming bandwidth (bench/bip_pingpong), and the ratio udp/rxd.
# Needs root (network namespaces) and libfabric's udp provider; exits 77
# with the reason otherwise.
#
# usage: netns_udp.sh --build DIR [-r ROUNDS] [-- BENCH_OPTIONS]
#
#   --build DIR      BIP build directory (DIR/scripts/bipload,
#                    DIR/bench/bip_pingpong)
#   -r, --rounds R   rounds (default 5)
#   -- BENCH_OPTIONS passed to every run (-s, -S, -i, -w, -b)

set -u -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
build=
rounds=5
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
build=$(cd "$build" 2>/dev/null && pwd) || die "no build directory '$build'"
bipload=$build/scripts/bipload
bipconf=$build/scripts/bipconf
bipinfo=$build/scripts/bipinfo
exe=$build/bench/bip_pingpong
[ -x "$exe" ] || die "$exe not found (ninja -C $build bench/bip_pingpong)"

. "$here/../tests/netns/hosts.sh"
"$bipinfo" --parsable | grep -q '^driver\.udp=available' ||
	ns_skip "the udp driver cannot run here ($("$bipinfo" --parsable | grep '^driver\.udp='))"
fi_info -p "udp;ofi_rxd" >/dev/null 2>&1 || ns_skip "libfabric has no udp;ofi_rxd provider here"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bip-udp.XXXXXX") || die "mktemp failed"
ns_setup 2
trap 'ns_cleanup; rm -rf "$tmp"' EXIT
read -r h0 h1 <<<"$ns_hosts"
"$bipconf" -f "$tmp/conf" "$h0" "$h1" >/dev/null || die "bipconf failed"

for r in $(seq "$rounds"); do
	BIP_NIC=udp "$bipload" -q -f "$tmp/conf" --rsh "ip netns exec" --timeout 600 "$exe" \
		--csv "${bench_opts[@]}" >"$tmp/udp.$r.csv" 2>"$tmp/udp.$r.err" ||
		die "round $r over udp failed: $(tail -3 "$tmp/udp.$r.err")"
	BIP_NIC=ofi BIP_OFI_PROVIDER="udp;ofi_rxd" "$bipload" -q -f "$tmp/conf" \
		--rsh "ip netns exec" --timeout 600 "$exe" --csv "${bench_opts[@]}" \
		>"$tmp/rxd.$r.csv" 2>"$tmp/rxd.$r.err" ||
		die "round $r over udp;ofi_rxd failed: $(tail -3 "$tmp/rxd.$r.err")"
done

echo "# BIP between two namespace hosts over UDP: the udp driver under BIP's"
echo "# reliability layer (udp) and the ofi driver on libfabric's udp;ofi_rxd (rxd);"
echo "# median of $rounds interleaved rounds; $(nproc) processors, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%10s %12s %12s %8s %12s %12s %8s\n' bytes udp_lat_us rxd_lat_us ratio udp_MBps \
	rxd_MBps ratio
awk -F, '
	function median(key,    n, i, j, t, a) {
		n = cnt[key]
		for (i = 1; i <= n; i++) a[i] = val[key, i]
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	FNR == 1 { c = FILENAME; sub(/.*\//, "", c); sub(/\..*/, "", c); next }
	{
		if (!($1 in seen)) { seen[$1] = 1; sizes[++ns] = $1 }
		val[c "lat" $1, ++cnt[c "lat" $1]] = $2
		val[c "bw" $1, ++cnt[c "bw" $1]] = $3
	}
	END {
		for (i = 1; i <= ns; i++) {
			s = sizes[i]
			ul = median("udplat" s); rl = median("rxdlat" s)
			ub = median("udpbw" s); rb = median("rxdbw" s)
			printf "%10d %12.2f %12.2f %8.3f %12.1f %12.1f %8.3f\n", s, ul, rl,
				rl ? ul / rl : 0, ub, rb, rb ? ub / rb : 0
		}
	}' "$tmp"/udp.*.csv "$tmp"/rxd.*.csv
