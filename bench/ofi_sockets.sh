#!/bin/sh
# SPDX-License-Identifier: MIT
#
# ofi_sockets.sh - what BIP over ofi (tcp;ofi_rxm) holds per process, in two
# builds side by side: the sockets of each process after a ring exchange and
# after an all-to-all (tests/conformance/netconn, which counts
# /proc/self/fd), its resident memory, and the 8-byte ping-pong latency of
# two processes, rounds interleaved.
#
# usage: bench/ofi_sockets.sh [-r ROUNDS] [-n "8 16 32"] BUILD_A BUILD_B
#   BUILD_A, BUILD_B  two build directories (say, the main branch's and
#                     this one's); netconn comes from BUILD_B and runs
#                     against each build's libbip (LD_LIBRARY_PATH)
#   -r ROUNDS         rounds of each measurement (default 3); the table has
#                     the medians
#   -n COUNTS         process counts of the ring and the all-to-all
#   (short messages only, BIP_NETCONN_SHORT=1: see below)
#
# Prints one table: per build, process count and pattern, the largest and
# the median socket count of the processes, their median resident memory
# (VmRSS) and the job's wall time; then the ping-pong latency.
set -eu
prog=ofi_sockets.sh
rounds=3
counts="8 16 32"
while getopts r:n: o; do
	case $o in
	r) rounds=$OPTARG ;;
	n) counts=$OPTARG ;;
	*) echo "usage: $prog [-r ROUNDS] [-n COUNTS] BUILD_A BUILD_B" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: $prog [-r ROUNDS] [-n COUNTS] BUILD_A BUILD_B" >&2; exit 2; }
a=$(cd "$1" && pwd)
b=$(cd "$2" && pwd)
netconn=$b/tests/conformance/netconn
for d in "$a" "$b"; do
	for f in scripts/bipload lib/bip/libbip.so bench/bip_pingpong; do
		[ -e "$d/$f" ] || { echo "$prog: $d/$f not found (ninja -C $d)" >&2; exit 1; }
	done
done
[ -x "$netconn" ] || { echo "$prog: $netconn not found" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bip-sockets.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export BIP_NIC=ofi BIP_OFI_PROVIDER=tcp BIP_INIT_TIMEOUT=120
# Short messages only: a build whose receive pool takes every peer's
# credits at start-up fills ofi_rxm's 2048 posted receives from 32
# processes on, and then waits for ever on a long message (no bounce buffer
# and no data receive can be posted); the sockets do not depend on it.
export BIP_NETCONN_SHORT=1

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

# run BUILD NAME NP MODE ROUND: netconn's lines in $tmp/NAME.NP.MODE.ROUND
run() {
	t0=$(date +%s.%N)
	LD_LIBRARY_PATH=$1/lib/bip timeout 300 "$1/scripts/bipload" -q -sz "$3" --timeout 280 \
		"$netconn" "$4" >"$tmp/$2.$3.$4.$5" 2>&1 || echo "failed" >>"$tmp/$2.$3.$4.$5"
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{ printf "%.1f\n", $2 - $1 }' >>"$tmp/$2.$3.$4.time"
}

r=1
while [ $r -le "$rounds" ]; do
	for np in $counts; do
		for mode in ring alltoall; do
			run "$a" A "$np" "$mode" "$r"
			run "$b" B "$np" "$mode" "$r"
		done
	done
	for name in A B; do
		[ $name = A ] && d=$a || d=$b
		LD_LIBRARY_PATH=$d/lib/bip timeout 120 "$d/scripts/bipload" -q -sz 2 \
			"$d/bench/bip_pingpong" -s 8 -S 8 -b 7 2>&1 |
			awk '$1 == 8 { print $2 }' >>"$tmp/$name.pp"
	done
	r=$((r + 1))
done

echo "# BIP over ofi (tcp;ofi_rxm), $(nproc) processors, $rounds rounds (medians)"
echo "# A = $a"
echo "# B = $b"
printf '%-5s %5s %-9s %12s %15s %12s %8s\n' build procs pattern "max sockets" "median sockets" "median RSS" "wall s"
for np in $counts; do
	for mode in ring alltoall; do
		for name in A B; do
			f=$(ls "$tmp/$name.$np.$mode."[0-9]* 2>/dev/null)
			if cat $f | grep -q failed; then
				printf '%-5s %5s %-9s %12s\n' $name "$np" $mode "(failed)"
				continue
			fi
			mx=$(cat $f | awk '/sockets after/ { print $3 }' | sort -n | tail -1)
			md=$(cat $f | awk '/sockets after/ { print $3 }' | median)
			rss=$(cat $f | awk '/sockets after/ { print $(NF - 1) }' | median)
			wall=$(median <"$tmp/$name.$np.$mode.time")
			printf '%-5s %5s %-9s %12s %15s %9s KiB %8s\n' $name "$np" $mode "$mx" "$md" "$rss" "$wall"
		done
	done
done
echo
echo "# 8-byte ping-pong latency, 2 processes (us; median of the rounds' medians)"
printf '%-5s %10s\n' build latency
for name in A B; do
	printf '%-5s %10s\n' $name "$(median <"$tmp/$name.pp")"
done
