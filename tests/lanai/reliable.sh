#!/bin/sh
# SPDX-License-Identifier: MIT
# The reliability layer over the simulated board (datagram mode, the
# default): with the wire's faults on, every message arrives intact, once
# and in order, and the counters show the faults were injected and repaired.
# relcheck checks every word and the order (status 3 and "WRONG" at the
# first wrong one) and prints each node's counters.  Seeds are fixed.
#
# Usage: reliable.sh KIND-PERCENT|all-1|clean|window-16 NODES SHORTS LONGS BIPLOAD RELCHECK
#        reliable.sh lost BIPLOAD STREAM      every path down for good
#        reliable.sh badvar BIPLOAD STREAM    misuse of the variables
#        reliable.sh soak BIPLOAD RELCHECK [ROUNDS]
#                                             the long run (not in the suite):
#                                             10^6 short and 10^4 long messages
#                                             per round, all faults at 1%, 4 nodes
# KIND: loss, corrupt, duplicate, reorder.
set -u
what=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
# Sum of one counter over the nodes' lines of relcheck.
total() {
	sed -n "s/.* $1 \([0-9]*\).*/\1/p" "$out" | awk '{ s += $1 } END { print s + 0 }'
}
# The count of one fault injected, from lanai-sim's summary.
injected() {
	sed -n 's/.*injected: \([^;]*\);.*/\1/p' "$out" | head -1 |
		sed -n "s/.*$1 \([0-9]*\).*/\1/p"
}
check_run() {
	nodes=$1
	[ "$rc" -eq 0 ] || fail "the job ended with status $rc"
	grep -q WRONG "$out" && fail "wrong data"
	n=$(grep -c "every word and the order right" "$out")
	[ "$n" -eq "$nodes" ] || fail "$n of $nodes nodes checked everything"
}

case $what in
clean|all-1|all-1-rdv|loss-*|corrupt-*|duplicate-*|reorder-*|window-16)
	nodes=$1 shorts=$2 longs=$3 bipload=$4 relcheck=$5
	case $what in
	clean) knobs= ;;
	# The smallest window (fewer packets than the selective ACK covers).
	window-16) knobs="BIP_REL_WINDOW=16 BIP_LANAI_LOSS=1 BIP_LANAI_REORDER=1" ;;
	all-1) knobs="BIP_LANAI_LOSS=1 BIP_LANAI_CORRUPT=1 BIP_LANAI_DUPLICATE=1 BIP_LANAI_REORDER=1" ;;
	# The same with every long message announced and fetched (no eager
	# ones, which the others send up to BIP_REL_EAGER).
	all-1-rdv) knobs="BIP_REL_EAGER=0 BIP_LANAI_LOSS=1 BIP_LANAI_CORRUPT=1 BIP_LANAI_DUPLICATE=1 BIP_LANAI_REORDER=1" ;;
	*) kind=${what%-*} pct=${what#*-}
	   knobs="BIP_LANAI_$(echo "$kind" | tr a-z A-Z)=$pct" ;;
	esac
	# shellcheck disable=SC2086
	env BIP_NIC=lanai BIP_LANAI_SEED=7 $knobs "$bipload" -q -sz "$nodes" --timeout 600 \
		"$relcheck" "$shorts" "$longs" >"$out" 2>&1
	rc=$?
	check_run "$nodes"
	case $what in
	clean)
		[ "$(total corrupt)" -eq 0 ] || fail "corrupt packets on a clean wire"
		[ "$(total duplicates)" -eq "$(total retransmits)" ] ||
			[ "$(total retransmits)" -gt 0 ] || fail "duplicates without retransmissions" ;;
	loss-*)
		[ "$(injected loss)" -gt 0 ] || fail "no loss injected"
		[ "$(total retransmits)" -gt 0 ] || fail "no retransmission" ;;
	corrupt-*)
		[ "$(injected corrupt)" -gt 0 ] || fail "no corruption injected"
		# On the wire the board drops it (a loss); on its bus only the
		# host's CRC32C sees it, and asks again.
		[ "$(total corrupt)" -gt 0 ] || fail "no corrupt data seen by the hosts"
		# A corrupt header draws no NACK (its sender cannot be trusted):
		# at 0.1 % the few faults the hosts see may all strike headers.
		case "$what" in
		corrupt-0.1) ;;
		*) [ "$(total nacks)" -gt 0 ] || fail "no NACK" ;;
		esac ;;
	duplicate-*)
		[ "$(injected duplicate)" -gt 0 ] || fail "no duplicate injected"
		[ "$(total duplicates)" -ge "$(injected duplicate)" ] ||
			fail "fewer duplicates dropped than injected" ;;
	reorder-*)
		[ "$(injected reorder)" -gt 0 ] || fail "no reordering injected"
		[ "$(total early)" -gt 0 ] || fail "no message came early" ;;
	window-16)
		[ "$(injected loss)" -gt 0 ] || fail "no loss injected"
		[ "$(total retransmits)" -gt 0 ] || fail "no retransmission" ;;
	all-1|all-1-rdv)
		for k in loss corrupt duplicate reorder; do
			[ "$(injected $k)" -gt 0 ] || fail "no $k injected"
		done
		[ "$(total retransmits)" -gt 0 ] && [ "$(total corrupt)" -gt 0 ] &&
			[ "$(total duplicates)" -gt 0 ] || fail "no repairs counted" ;;
	esac
	grep "^node\|injected" "$out"
	;;
lost)
	bipload=$1 stream=$2
	# The link of node 1 goes down after 300 packets and stays down.
	env BIP_NIC=lanai BIP_LANAI_LINK_DOWN=1@300 BIP_RETRY_TIMEOUT=2 BIP_REL_PROBE=0.2 \
		"$bipload" -sz 2 --timeout 60 "$stream" long 2000 >"$out" 2>&1
	rc=$?
	[ "$rc" -ne 0 ] || fail "the job succeeded with a link down for good"
	grep -qE "node [01] \(host [^)]*\) cannot be reached: nothing came from it for 2\.0 s \(BIP_RETRY_TIMEOUT\)" "$out" ||
		fail "no message naming the node lost"
	grep -qE "path 0: (down|retired) for [0-9.]+ s" "$out" || fail "no state of the path"
	grep -q "timed out\|bipload: node . (host" "$out" || fail "bipload did not name the nodes"
	pgrep -f "$stream long 2000" >/dev/null && fail "a process of the job is left"
	grep "cannot be reached" "$out"
	;;
badvar)
	bipload=$1 stream=$2
	env BIP_NIC=lanai BIP_LANAI_RELIABLE=yes "$bipload" -q -sz 2 --timeout 30 "$stream" short 10 \
		>"$out" 2>&1 && fail "BIP_LANAI_RELIABLE=yes accepted"
	grep -q "BIP_LANAI_RELIABLE=yes: expected 1" "$out" || fail "no clear error for BIP_LANAI_RELIABLE"
	env BIP_NIC=lanai BIP_REL_WINDOW=100 "$bipload" -q -sz 2 --timeout 30 "$stream" short 10 \
		>"$out" 2>&1 && fail "BIP_REL_WINDOW=100 accepted"
	grep -q "BIP_REL_WINDOW=100: expected a power of two" "$out" || fail "no clear error for BIP_REL_WINDOW"
	env BIP_NIC=lanai BIP_RETRY_TIMEOUT=soon "$bipload" -q -sz 2 --timeout 30 "$stream" short 10 \
		>"$out" 2>&1 && fail "BIP_RETRY_TIMEOUT=soon accepted"
	grep -q "BIP_RETRY_TIMEOUT=soon: expected a number" "$out" || fail "no clear error for BIP_RETRY_TIMEOUT"
	env BIP_NIC=lanai BIP_REL_EAGER=lots "$bipload" -q -sz 2 --timeout 30 "$stream" short 10 \
		>"$out" 2>&1 && fail "BIP_REL_EAGER=lots accepted"
	grep -q "BIP_REL_EAGER=lots: expected a number" "$out" || fail "no clear error for BIP_REL_EAGER"
	# The switch off: message mode still runs a fault-free wire.
	env BIP_NIC=lanai BIP_LANAI_RELIABLE=0 "$bipload" -q -sz 2 --timeout 60 "$stream" long 5 \
		>"$out" 2>&1 || fail "message mode failed"
	;;
soak)
	bipload=$1 relcheck=$2 rounds=${3:-5}
	i=1
	while [ "$i" -le "$rounds" ]; do
		env BIP_NIC=lanai BIP_LANAI_SEED=$i BIP_LANAI_LOSS=1 BIP_LANAI_CORRUPT=1 \
			BIP_LANAI_DUPLICATE=1 BIP_LANAI_REORDER=1 \
			"$bipload" -q -sz 4 --timeout 3600 "$relcheck" 1000000 10000 >"$out" 2>&1
		rc=$?
		check_run 4
		echo "round $i (seed $i):"
		grep "^node\|injected" "$out"
		i=$((i + 1))
	done
	;;
*)
	echo "usage: reliable.sh KIND-PERCENT|all-1|clean|lost|badvar|soak ..." >&2
	exit 2
	;;
esac
exit 0
