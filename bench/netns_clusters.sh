#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# netns_clusters.sh - two clusters of network-namespace hosts joined by
# gateways (tests/netns/hosts.sh, ns_setup_clusters): BIP between the
# clusters through the gateways' relays, beside the direct path between the
# two gateway hosts over the network that joins them; and the 8-byte
# MPI_Allreduce on 12 nodes through the clusters' leaders beside the flat
# algorithms.  Interleaved rounds, medians.  Needs root.
#
# The namespace hosts share this machine's processors, which a real
# cluster's hosts do not: a process that spins while it waits takes a
# processor from the relays and the other hosts.  So every process waits
# as BIP_WAIT=block by default (-w), on both paths.
#
#   link     node 0 on a2, node 1 on b0, a file without clusters: one hop,
#            ofi/tcp over the link between the gateway hosts, the path the
#            issue's goal measures forwarding against
#   gateway  node 0 on a0, node 1 on b2, clusters A and B joined by the
#            gateway a2 - b0: a0 -> relay a2 -> relay b0 -> b2, three hops
#            of ofi/tcp, the reliability layer end to end
#   chain    the same three hops and four processes without relays: nodes
#            on a0, a2, b0 and b2 in a file without clusters, the two in
#            the middle forwarding each message whole in the program
#            (bip_pingpong --chain).  What these hosts cost a path of three
#            hops and two forwarders, whatever forwards.
#
# usage: netns_clusters.sh --build DIR [-r ROUNDS] [-w MODE] [-- BENCH_OPTIONS]
#
#   --build DIR        BIP build directory
#   -r, --rounds R     rounds (default 3)
#   -w, --wait MODE    BIP_WAIT of every process (default block)
#   -- BENCH_OPTIONS   passed to bench/bip_pingpong (-s, -S, -i, -w, -b)

set -u -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"
build=
rounds=3
wait=block
bench_opts=()

usage() {
	sed -n '/^# usage:/,/^# *-- BENCH/s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
	-r | --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
	-w | --wait) [ $# -ge 2 ] || usage; wait=$2; shift 2 ;;
	-h | --help) usage 0 ;;
	--) shift; bench_opts=("$@"); break ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done
[ -n "$build" ] || { echo "$prog: --build DIR is required" >&2; usage; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || bench_die "ROUNDS must be a positive number"
[[ $wait =~ ^(auto|spin|yield|block)$ ]] || bench_die "MODE must be auto, spin, yield or block"
build=$(cd "$build" 2>/dev/null && pwd) || bench_die "no build directory '$build'"
bipload=$build/scripts/bipload
pingpong=$build/bench/bip_pingpong
coll=$build/bench/mpi_coll
for f in "$pingpong" "$coll" "$build/scripts/bipgw"; do
	[ -x "$f" ] || bench_die "$f not found (ninja -C $build)"
done

. "$here/../tests/netns/hosts.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bip-netns.XXXXXX") || bench_die "mktemp failed"
hosts="a0 a1 a2 b0 b1 b2"
ns_setup_clusters
trap 'ns_cleanup; rm -rf "$tmp"' EXIT

# conf HOST... [-- STATEMENT...]: one node per host, routes direct.
conf() {
	local n=0 h j statements=() nodes=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do nodes+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	statements=("$@")
	echo "${#nodes[@]}"
	for h in "${nodes[@]}"; do
		echo "$ns_prefix-$h 0"
		for ((j = 0; j < ${#nodes[@]}; j++)); do echo 256; done
	done
	for h in "${statements[@]}"; do echo "$h"; done
}
p=$ns_prefix
conf a2 b0 >"$tmp/link.conf"
conf a0 b2 a2 b0 -- "cluster A ofi $p-a0 $p-a2" "cluster B ofi $p-b0 $p-b2" \
	"gateway A:$p-a2 B:$p-b0 ofi" >"$tmp/gateway.conf"
conf a0 a2 b0 b2 >"$tmp/chain.conf"
conf a0 b0 a1 b1 a2 b2 a0 b0 a1 b1 a2 b2 -- "cluster A ofi $p-a0 $p-a1 $p-a2" \
	"cluster B ofi $p-b0 $p-b1 $p-b2" "gateway A:$p-a2 B:$p-b0 ofi" \
	"gateway A:$p-a1 B:$p-b1 ofi" >"$tmp/c12.conf"

export BIP_OFI_PROVIDER=tcp FI_TCP_IFACE=data0 BIP_WAIT=$wait
run() {
	timeout 900 "$bipload" -q -f "$1" --rsh "ip netns exec" -x FI_TCP_IFACE -x BIP_WAIT "${@:2}"
}
for r in $(seq "$rounds"); do
	for way in link gateway chain; do
		chain=()
		[ "$way" = chain ] && chain=(--chain)
		run "$tmp/$way.conf" "$pingpong" "${chain[@]}" --csv "${bench_opts[@]}" \
			>"$tmp/$way.$r.csv" 2>"$tmp/$way.$r.err" ||
			bench_die "round $r, $way: $(cat "$tmp/$way.$r.err")"
	done
	for how in topo flat; do
		flat=1
		[ "$how" = flat ] && flat=0
		BIP_MPI_COLL_CLUSTERS=$flat run "$tmp/c12.conf" -x BIP_MPI_COLL_CLUSTERS "$coll" \
			-c allreduce -B 8 --csv >"$tmp/ar.$how.$r.csv" 2>"$tmp/ar.$how.$r.err" ||
			bench_die "round $r, allreduce $how: $(cat "$tmp/ar.$how.$r.err")"
	done
done

echo "# BIP ping-pong between two clusters of network-namespace hosts (ofi/tcp):"
echo "# through the gateway's relays (a0 -> a2 -> b0 -> b2) beside the link"
echo "# between the two gateway hosts (a2 -> b0), and the same three hops"
echo "# forwarded by the program on a0, a2, b0 and b2 without relays (chain);"
echo "# median of $rounds rounds; BIP_WAIT=$wait; $(nproc) processors, load $(cut -d' ' -f1 /proc/loadavg)"
bench_gateway_table "$tmp" chain
echo
echo "# MPI_Allreduce of 8 bytes on 12 nodes, 2 per host, two gateways, BIP_WAIT=$wait;"
echo "# median of $rounds rounds: topo through the clusters' leaders, flat with BIP_MPI_COLL_CLUSTERS=0"
printf '%6s %12s %12s %10s\n' ranks topo_us flat_us topo/flat
bench_topo_row 12 "$tmp"/ar.*.csv
