#!/bin/sh
# SPDX-License-Identifier: MIT
# Datagrams whose data the board reads from the sender's memory when they
# are delivered (bip_lanai(7), a datagram's descriptor): messages of every
# size around the inline payload and the fragments, and one of many MiB,
# both ways, every byte checked, each sent from a buffer unmapped as soon as
# its send completes; clean, under every fault of the wire, over two rails,
# and in message mode for comparison.
#
# Usage: gather.sh clean|faults|rails|messages BIPLOAD GATHER
set -u
what=$1 bipload=$2 gather=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
has_re() {
	grep -qE "$1" "$out" || fail "no line matching: $1"
}
run() {
	env BIP_NIC=lanai "$@" "$bipload" -sz 2 --timeout 240 "$gather" $mib >"$out" 2>&1
	rc=$?
	grep -q WRONG "$out" && fail "wrong data"
	[ "$rc" -eq 0 ] || fail "the job ended with status $rc"
	has_re "^node 0: [0-9]+ messages, [0-9]+ bytes each way, every byte right\$"
}

case $what in
clean)
	mib=64
	run BIP_LANAI_SEED=1
	;;
faults)
	# Duplicates and reordered packets still on the wire when their
	# sender's buffer is gone; corrupt descriptors and corrupt data.
	mib=16
	run BIP_LANAI_LOSS=1 BIP_LANAI_CORRUPT=2 BIP_LANAI_DUPLICATE=5 BIP_LANAI_REORDER=2 \
		BIP_LANAI_SEED=7
	has_re "injected: loss [1-9][0-9]*, corrupt [1-9][0-9]*, duplicate [1-9][0-9]*, delay 0, reorder [1-9][0-9]*, link-down 0; detected: crc [1-9][0-9]*,"
	;;
rails)
	mib=16
	run BIP_LANAI_RAILS=2 BIP_LANAI_CORRUPT=1 BIP_LANAI_DUPLICATE=2
	has_re "^lanai-sim: rail 1: [1-9][0-9]* packets"
	;;
messages)
	mib=64
	run BIP_LANAI_RELIABLE=0
	;;
*)
	echo "gather.sh: unknown case '$what'" >&2
	exit 2
	;;
esac
echo "ok: $what"
