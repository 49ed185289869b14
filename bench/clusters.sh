#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# clusters.sh - messages between clusters through the gateways' relays,
# beside the direct path, and the 8-byte Allreduce through the clusters'
# leaders beside the flat algorithms, from one run of interleaved rounds.
#
# The clusters are made of this machine's names (bipconf(5) "Clusters"):
# node 0 on `hostname`, node 1 on localhost.
#   link     the two nodes in a file without clusters, over the driver of
#            the link that joins the clusters (BIP_NIC=ofi): one hop, the
#            path the issue's goal measures forwarding against
#   gateway  the same two nodes in two clusters joined by a gateway over
#            that driver: three hops (node 0 -> relay (shm) -> relay (ofi)
#            -> node 1 (shm)), the reliability layer end to end
#   shm      the two nodes in a file without clusters: one shm hop, the
#            fastest path between them, for reference
# Then MPI_Allreduce of 8 bytes (bench/mpi_coll) on NP ranks spread over
# the two clusters in turn, with the collectives through the clusters'
# leaders (topo) and without (flat: BIP_MPI_COLL_CLUSTERS=0).
#
# usage: clusters.sh --build DIR [-r ROUNDS] [-n NP,...] [-- BENCH_OPTIONS]
#
#   --build DIR        BIP build directory
#   -r, --rounds R     rounds (default 3)
#   -n NP,...          process counts of the Allreduce (default 4,8,12)
#   -- BENCH_OPTIONS   passed to bench/bip_pingpong (-s, -S, -i, -w, -b)

set -u -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"
build=
rounds=3
counts=4,8,12
bench_opts=()

usage() {
	sed -n '/^# usage:/,/^# *-- BENCH/s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
	-r | --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
	-n) [ $# -ge 2 ] || usage; counts=$2; shift 2 ;;
	-h | --help) usage 0 ;;
	--) shift; bench_opts=("$@"); break ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done
[ -n "$build" ] || { echo "$prog: --build DIR is required" >&2; usage; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || bench_die "ROUNDS must be a positive number"
[[ $counts =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || bench_die "NP must be numbers separated by commas"
bipload=$build/scripts/bipload
pingpong=$build/bench/bip_pingpong
coll=$build/bench/mpi_coll
for f in "$pingpong" "$coll" "$build/scripts/bipgw"; do
	[ -x "$f" ] || bench_die "$f not found (ninja -C $build)"
done
host=$(hostname)
[ "$host" != localhost ] || bench_die "this host is called localhost: no second name for it"

bench_tmpdir "${KEEP:-0}"

# conf NP CLUSTERS: NP nodes on hostname and localhost in turn.
conf() {
	local np=$1 i j
	echo "$np"
	for ((i = 0; i < np; i++)); do
		if ((i % 2)); then echo "localhost 0"; else echo "$host 0"; fi
		for ((j = 0; j < np; j++)); do echo 256; done
	done
	if [ "$2" = yes ]; then
		echo "cluster A shm $host"
		echo "cluster B shm localhost"
		echo "gateway A:$host B:localhost ofi"
	fi
}
conf 2 no >"$tmp/shm.conf"
conf 2 no >"$tmp/link.conf"
conf 2 yes >"$tmp/gateway.conf"
for np in ${counts//,/ }; do
	conf "$np" yes >"$tmp/c$np.conf"
done

for r in $(seq "$rounds"); do
	for way in link gateway shm; do
		nic=()
		[ "$way" = link ] && nic=(env BIP_NIC=ofi)
		"${nic[@]}" "$bipload" -q -f "$tmp/$way.conf" --timeout 600 "$pingpong" --csv "${bench_opts[@]}" \
			>"$tmp/$way.$r.csv" 2>"$tmp/$way.$r.err" ||
			bench_die "round $r, $way: $(cat "$tmp/$way.$r.err")"
	done
	for np in ${counts//,/ }; do
		for how in topo flat; do
			flat=1
			[ "$how" = flat ] && flat=0
			BIP_MPI_COLL_CLUSTERS=$flat "$bipload" -q -f "$tmp/c$np.conf" --timeout 600 \
				"$coll" -c allreduce -B 8 --csv >"$tmp/ar.$how.$np.$r.csv" \
				2>"$tmp/ar.$how.$np.$r.err" ||
				bench_die "round $r, allreduce $how on $np: $(cat "$tmp/ar.$how.$np.$r.err")"
		done
	done
done

echo "# BIP ping-pong between two clusters through the gateways' relays (gateway),"
echo "# beside the link that joins them (ofi between the same two nodes) and, for"
echo "# reference, their shm path; median of $rounds rounds; $(nproc) processors,"
echo "# load $(cut -d' ' -f1 /proc/loadavg); 4 processes with the relays, 2 without"
bench_gateway_table "$tmp" shm

echo
echo "# MPI_Allreduce of 8 bytes over two clusters (ranks in turn), median of $rounds rounds:"
echo "# topo through the clusters' leaders, flat with BIP_MPI_COLL_CLUSTERS=0"
printf '%6s %12s %12s %10s\n' ranks topo_us flat_us topo/flat
for np in ${counts//,/ }; do
	bench_topo_row "$np" "$tmp"/ar.*."$np".*.csv
done
