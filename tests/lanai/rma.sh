#!/bin/sh
# SPDX-License-Identifier: MIT
# One-sided operations executed by the simulated board (bip_rma(3)), with
# lanai_rma: datagram mode (the default) and message mode at 2 and 4
# nodes, a wire that loses, corrupts, duplicates and reorders (the board's
# own reliability of one-sided packets), a target asleep in a blocking
# wait, answers and requests lost one by one, two rails, and shm, where no
# node is capable.
#
# Usage: rma.sh CASE BIPLOAD LANAI_RMA
set -u
what=$1 bipload=$2 prog=$3
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
	np=$1 mode=$2
	shift 2
	env "$@" "$bipload" -sz "$np" --timeout 240 "$prog" "$mode" >"$out" 2>&1
	rc=$?
	grep -q FAIL "$out" && fail "a check failed"
	[ "$rc" -eq 0 ] || fail "the job ended with status $rc"
}
faults="BIP_LANAI_LOSS=1 BIP_LANAI_CORRUPT=1 BIP_LANAI_DUPLICATE=1 BIP_LANAI_SEED=5"

case $what in
dgram-2 | dgram-4)
	run "${what#dgram-}" all BIP_NIC=lanai
	has_re "^node 0: one-sided operations of [0-9]+ nodes: every word right\$"
	;;
messages-2 | messages-4)
	run "${what#messages-}" all BIP_NIC=lanai BIP_LANAI_RELIABLE=0
	has_re "^node 0: one-sided operations of [0-9]+ nodes: every word right\$"
	;;
faulty-2 | faulty-4)
	# shellcheck disable=SC2086
	run "${what#faulty-}" all BIP_NIC=lanai $faults
	has_re "^node 0: one-sided operations of [0-9]+ nodes: every word right\$"
	has_re "injected: loss [1-9][0-9]*, corrupt [1-9][0-9]*, duplicate [1-9][0-9]*"
	has_re "^lanai-sim: one-sided: [0-9]+ requests, [1-9][0-9]* sent again, [1-9][0-9]* answered again"
	;;
rails-3)
	# Two boards per node: the operations take rail 0's, the messages both.
	run 3 all BIP_NIC=lanai BIP_LANAI_RAILS=2
	has_re "^node 0: one-sided operations of [0-9]+ nodes: every word right\$"
	has_re "^lanai-sim: rail 1: [1-9][0-9]* packets"
	;;
drop-answer)
	# The first answer of node 1 to node 0 lost: node 0's board sends
	# the request again, node 1's answers it from what it kept, without
	# executing it twice (the checks would see a fetch-add counted twice).
	run 2 all BIP_NIC=lanai BIP_LANAI_DROP=RMA_ANS:1:0:0
	has_re "^lanai-sim: one-sided: [0-9]+ requests, 1 sent again, 1 answered again"
	;;
drop-request)
	run 2 all BIP_NIC=lanai BIP_LANAI_DROP=RMA_REQ:0:1:40
	has_re "^lanai-sim: one-sided: [0-9]+ requests, [1-9][0-9]* sent again, 0 answered again"
	;;
reorder-3)
	run 3 all BIP_NIC=lanai BIP_LANAI_REORDER=2 BIP_LANAI_DELAY=50us BIP_LANAI_SEED=9
	has_re "^node 0: one-sided operations of [0-9]+ nodes: every word right\$"
	has_re "reorder [1-9][0-9]*, link-down 0;"
	has_re "^lanai-sim: one-sided: [0-9]+ requests, [1-9][0-9]* sent again, [0-9]+ answered again, [1-9][0-9]* dropped as early"
	;;
sleep-3)
	run 3 sleep BIP_NIC=lanai BIP_WAIT=block
	has_re "^node 0: slept [1-9][0-9]* times, woken [0-2] times"
	;;
sleep-messages-3)
	run 3 sleep BIP_NIC=lanai BIP_LANAI_RELIABLE=0 BIP_WAIT=block
	has_re "^node 0: slept [1-9][0-9]* times, woken [0-2] times"
	;;
shm)
	run 2 notcapable BIP_NIC=shm
	has_re "^node 0: no node capable, as expected\$"
	;;
*)
	echo "rma.sh: unknown case '$what'" >&2
	exit 2
	;;
esac
echo "ok: $what"
