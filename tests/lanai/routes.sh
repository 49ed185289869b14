#!/bin/bash
# SPDX-License-Identifier: MIT
# Packets follow the routes of the configuration through simulated switches.
# The hosts of chain.topo are loopback addresses, so the whole switched
# network runs on this machine: four switches in a chain, routes of 1 to 4
# hops, and two nodes sharing host 127.0.0.1.
# Usage: routes.sh good|wrong|nowhere|notopology BIPLOAD CONFORMANCE SRCDIR
#        routes.sh tools BIPLOAD CONFORMANCE SRCDIR BIPROUTE BIPCONF
set -u
# A wrong route ends the job at once in message mode; in datagram mode it
# is a path down, which reliable.sh tests.
export BIP_LANAI_RELIABLE=0
what=$1
bipload=$2
prog=$3
dir=$4
out=$(mktemp)
trace=$(mktemp)
trap 'rm -f "$out" "$trace"' EXIT
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
has() {
	grep -qxF -- "$1" "$out" || fail "missing line: $1"
}
has_re() {
	grep -qE -- "$1" "$out" || fail "no line matching: $1"
}
BIP_TOPOLOGY=$dir/chain.topo
export BIP_TOPOLOGY
unset BIP_NIC

case "$what" in
good)
	# The conformance program over the switched network.  BIP_NIC is not
	# set: a configuration whose routes cross switches asks for the board.
	for t in token alltoall ordering sources; do
		BIP_LANAI_TRACE=$trace "$bipload" -f "$dir/chain.conf" --timeout 60 "$prog" $t \
			>"$out" 2>&1 || fail "conformance $t over the switched network"
		has "bip: 6 nodes, driver lanai"
		has_re "detected: crc 0, duplicate 0, gap 0, reorder 0, wrong-route 0, link-down 0\$"
	done
	# The trace shows routes of every length, each delivered.
	cat "$trace" >>"$out"
	for r in "src 0 dst 1 route 1 " "src 0 dst 2 route 7,0 " "src 0 dst 3 route 7,7,0 " \
		"src 0 dst 4 route 7,7,7,0 " "src 4 dst 0 route 6,6,6,0 " "src 0 dst 5 route 256 "; do
		grep -q "recv $r.*: delivered\$" "$trace" || fail "no packet delivered with $r"
	done
	# A link's SYNC or its answer may find the other host ended (they only
	# confirm the link); no other packet is ever dropped.
	! grep "dropped" "$trace" | grep -qv " kind SYNC\(_ACK\)\? " ||
		fail "a packet was dropped"
	;;
wrong)
	# Node 1's route to node 2 leads to host 127.0.0.1: detected, never delivered there.
	"$bipload" -q -f "$dir/wrongroute.conf" --timeout 60 "$prog" token >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fail "exit status $rc, expected 1"
	has "bip: node 1: lanai: wrong route: route 0 from host 127.0.0.2 lands on host 127.0.0.1, not on host 127.0.0.3; SHORT packet to node 2 on tag 0, sequence 0 dropped, not delivered"
	has_re "^bipload: node 1 \(host 127\.0\.0\.2, pid [0-9]+\) exited with status 1\$"
	has_re "detected: crc 0, duplicate 0, gap 0, reorder 0, wrong-route 1, link-down 0\$"
	! grep -q "FAILED" "$out" || fail "a node received what it should not"
	;;
nowhere)
	"$bipload" -q -f "$dir/noroute.conf" --timeout 60 "$prog" token >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fail "exit status $rc, expected 1"
	has "bip: node 1: lanai: wrong route: route \"5\" from 127.0.0.2: hop 1: no cable on port 5 of switch s1, so it cannot reach host 127.0.0.3; SHORT packet to node 2 on tag 0, sequence 0 dropped, not delivered"
	;;
tools)
	# biproute computes the routes of chain.topo, bipconf writes them: the
	# same as chain.conf, and the job runs over them.
	biproute=$5
	bipconf=$6
	home=$(mktemp -d)
	HOME=$home "$biproute" -t "$dir/chain.topo" 127.0.0.1 127.0.0.2 127.0.0.3 127.0.0.4 \
		127.0.0.5 >"$out" 2>&1 || { rm -rf "$home"; fail "biproute failed"; }
	HOME=$home "$bipconf" -f "$home/conf" 127.0.0.1 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 \
		127.0.0.1 >>"$out" 2>&1 || { rm -rf "$home"; fail "bipconf failed"; }
	if ! grep -v '^#' "$home/conf" | cmp -s - <(grep -v '^#' "$dir/chain.conf"); then
		cat "$home/conf" >>"$out"
		rm -rf "$home"
		fail "bipconf's routes differ from chain.conf"
	fi
	"$bipload" -f "$home/conf" --timeout 60 "$prog" alltoall >>"$out" 2>&1
	rc=$?
	rm -rf "$home"
	[ "$rc" -eq 0 ] || fail "conformance alltoall over bipconf's routes"
	has "bip: 6 nodes, driver lanai"
	;;
notopology)
	# Without a topology only direct routes exist.
	BIP_TOPOLOGY=$dir/no-such-topology "$bipload" -q -f "$dir/chain.conf" --timeout 60 \
		"$prog" token >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fail "exit status $rc, expected 1"
	has "bip: node 0: lanai: wrong route: route 1 from host 127.0.0.1 to host 127.0.0.2: there is no topology (BIP_TOPOLOGY, ~/.bip/biptopology), so only direct routes (256) exist; SHORT packet to node 1 on tag 0, sequence 0 dropped, not delivered"
	;;
*)
	echo "usage: routes.sh good|wrong|nowhere|notopology BIPLOAD CONFORMANCE SRCDIR"
	exit 2
	;;
esac
cat "$out"
echo "PASS"
