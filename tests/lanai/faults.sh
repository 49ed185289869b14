#!/bin/sh
# SPDX-License-Identifier: MIT
# Faults injected on the simulated wire are detected and reported, and no
# wrong data reaches the program.  With the seed fixed (BIP_LANAI_SEED,
# default 1) and one sender, the wire sees the same packets in the same
# order at every run, so each report is exact.
# Usage: faults.sh loss|corrupt|corrupt-long|duplicate|reorder|delay|linkdown|trace|knobfile|badknob
#        BIPLOAD STREAM
set -u
what=$1
bipload=$2
prog=$3
out=$(mktemp)
trace=$(mktemp)
trap 'rm -f "$out" "$trace"' EXIT
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
# Run the stream over the board with the given knobs; output in $out.
run() {
	mode=$1
	shift
	env BIP_NIC=lanai "$@" "$bipload" -q -sz 2 --timeout 60 "$prog" "$mode" >"$out" 2>&1
	rc=$?
}
has() {
	grep -qxF -- "$1" "$out" || fail "missing line: $1"
}
has_re() {
	grep -qE -- "$1" "$out" || fail "no line matching: $1"
}
no_wrong_data() {
	! grep -q "WRONG DATA" "$out" || fail "wrong data was delivered"
	! grep -q "every word right" "$out" || fail "the stream completed despite the fault"
}
# The job failed because of node N, after a report from the board.
node_failed() {
	[ "$rc" -eq 1 ] || fail "exit status $rc, expected 1"
	has_re "^bipload: node $1 \(host .*, pid [0-9]+\) exited with status 1\$"
}

case "$what" in
loss)
	run short BIP_LANAI_LOSS=5
	node_failed 1
	has "bip: node 1: lanai: sequence gap: the SHORT packet from node 0 on tag 5 has sequence 60 where 59 was expected: packet 59 was lost; nothing more from node 0 is delivered"
	has_re "^lanai-sim: [0-9]+ packets; injected: loss [1-9][0-9]*, corrupt 0, duplicate 0, delay 0, reorder 0, link-down 0; detected: crc 0, duplicate 0, gap [1-9][0-9]*, reorder 0, wrong-route 0, link-down 0\$"
	no_wrong_data
	;;
corrupt)
	run short BIP_LANAI_CORRUPT=5
	node_failed 1
	has "bip: node 1: lanai: corrupt packet: CRC32C mismatch (packet 0x955ec329, computed 0x85000446) in the SHORT packet from node 0 on tag 5, sequence 59: dropped, not delivered"
	has_re "injected: loss 0, corrupt [1-9][0-9]*, duplicate 0, delay 0, reorder 0, link-down 0; detected: crc [1-9][0-9]*, duplicate 0, gap 0, reorder 0, wrong-route 0, link-down 0\$"
	no_wrong_data
	;;
corrupt-long)
	# Seed 3 hits a DATA packet: the bytes never reach the user's buffer.
	run long BIP_LANAI_CORRUPT=5 BIP_LANAI_SEED=3
	node_failed 1
	has "bip: node 1: lanai: corrupt packet: CRC32C mismatch (packet 0xfe8dc985, computed 0x10813d94) in the DATA packet from node 0 on tag 5, sequence 19: dropped, not delivered"
	has_re "detected: crc [1-9][0-9]*, duplicate 0, gap 0, reorder 0, wrong-route 0, link-down 0\$"
	no_wrong_data
	;;
duplicate)
	run short BIP_LANAI_DUPLICATE=5
	node_failed 1
	has "bip: node 1: lanai: duplicate packet: the SHORT packet from node 0 on tag 5 has sequence 59, already received (next expected 60): dropped, not delivered"
	has_re "injected: loss 0, corrupt 0, duplicate [1-9][0-9]*, delay 0, reorder 0, link-down 0; detected: crc 0, duplicate [1-9][0-9]*, gap 0, reorder 0, wrong-route 0, link-down 0\$"
	no_wrong_data
	;;
reorder)
	run short BIP_LANAI_REORDER=5
	node_failed 1
	has "bip: node 1: lanai: reordered packets: the SHORT packet from node 0 on tag 5 has sequence 60, but sequence 59 comes after it: dropped, not delivered; nothing more from node 0 is delivered"
	has_re "injected: loss 0, corrupt 0, duplicate 0, delay 0, reorder [1-9][0-9]*, link-down 0; detected: crc 0, duplicate 0, gap 0, reorder [1-9][0-9]*, wrong-route 0, link-down 0\$"
	no_wrong_data
	;;
delay)
	# A delay keeps the order: everything arrives, late, and right.
	run short BIP_LANAI_DELAY=2ms
	[ "$rc" -eq 0 ] || fail "exit status $rc"
	has "node 1: 200 messages, every word right"
	has "lanai-sim: 201 packets; injected: loss 0, corrupt 0, duplicate 0, delay 201, reorder 0, link-down 0; detected: crc 0, duplicate 0, gap 0, reorder 0, wrong-route 0, link-down 0"
	;;
linkdown)
	# The link of node 1 goes down after 30 packets: node 0's next send fails.
	run short BIP_LANAI_LINK_DOWN=1@30
	node_failed 0
	has_re "^bip: node 0: lanai: link of node 1 \(host [^)]*\) is down after 30 packets on the wire: SHORT packet to node 1 on tag 5, sequence 30 not delivered\$"
	has_re "injected: loss 0, corrupt 0, duplicate 0, delay 0, reorder 0, link-down 1; detected: crc 0, duplicate 0, gap 0, reorder 0, wrong-route 0, link-down [1-9][0-9]*\$"
	no_wrong_data
	;;
trace)
	# Every packet is logged where it leaves and where it arrives, with its verdict.
	run long BIP_LANAI_TRACE="$trace"
	[ "$rc" -eq 0 ] || fail "exit status $rc"
	cat "$trace" >>"$out"
	sent=$(grep -c " send src .*: sent\$" "$trace")
	got=$(grep -c " recv src .*: delivered\$" "$trace")
	# 20 long messages: RTS, CTS, 2 DATA, ACK each; then the answer.
	[ "$sent" -eq 101 ] || fail "$sent packets sent in the trace, expected 101"
	[ "$got" -eq 101 ] || fail "$got packets delivered in the trace, expected 101"
	has_re "^[0-9]+\.[0-9]{6} board 0 send src 0 dst 1 route 256 kind RTS tag 5 seq 0 len 0 crc 0x[0-9a-f]{8}: sent\$"
	has_re "^[0-9]+\.[0-9]{6} board 1 recv src 0 dst 1 route 256 kind DATA tag 5 seq 1 len 65536 crc 0x[0-9a-f]{8}: delivered\$"
	# A fault shows as its verdict.
	run short BIP_LANAI_CORRUPT=5 BIP_LANAI_TRACE="$trace"
	cat "$trace" >>"$out"
	has_re "^[0-9.]+ board 0 send src 0 dst 1 route 256 kind SHORT tag 5 seq 59 len 16 crc 0x955ec329: corrupted \(injected\)\$"
	has_re "^[0-9.]+ board 1 recv src 0 dst 1 route 256 kind SHORT tag 5 seq 59 len 16 crc 0x955ec329: dropped: CRC32C mismatch\$"
	;;
knobfile)
	# The knobs from a file ($BIP_LANAI_CONF); the variables win over it.
	knobs=$(mktemp)
	printf '# a knob file\n\nduplicate 5%%\ntrace %s\n' "$trace" >"$knobs"
	run short BIP_LANAI_CONF="$knobs"
	node_failed 1
	has "bip: node 1: lanai: duplicate packet: the SHORT packet from node 0 on tag 5 has sequence 59, already received (next expected 60): dropped, not delivered"
	grep -q "seq 59 len 16 crc 0x[0-9a-f]*: duplicated (injected)\$" "$trace" ||
		{ rm -f "$knobs"; fail "no trace from the knob file"; }
	printf 'loss 5\n' >"$knobs"
	run short BIP_LANAI_CONF="$knobs" BIP_LANAI_LOSS=0
	[ "$rc" -eq 0 ] || { rm -f "$knobs"; fail "the variable did not win over the file"; }
	has "node 1: 200 messages, every word right"
	printf 'seed 3\nloss lots\n' >"$knobs"
	run short BIP_LANAI_CONF="$knobs"
	[ "$rc" -eq 1 ] || { rm -f "$knobs"; fail "exit status $rc"; }
	has "lanai-sim: $knobs:2: loss lots: expected a percentage from 0 to 100 (e.g. 5%)"
	printf 'jitter 3ms\n' >"$knobs"
	run short BIP_LANAI_CONF="$knobs"
	has "lanai-sim: $knobs:1: unknown knob 'jitter' (loss, corrupt, duplicate, reorder, delay, seed, link-down, trace)"
	rm -f "$knobs"
	run short BIP_LANAI_CONF="$knobs"
	has "lanai-sim: $knobs: No such file or directory"
	;;
badknob)
	run short BIP_LANAI_LOSS=lots
	[ "$rc" -eq 1 ] || fail "exit status $rc"
	has "lanai-sim: BIP_LANAI_LOSS=lots: expected a percentage from 0 to 100 (e.g. 5%)"
	has_re "^bipload: the board firmware .*lanai-sim did not start \(exit status 1\)\$"
	run short BIP_LANAI_LINK_DOWN=7@3
	has "lanai-sim: BIP_LANAI_LINK_DOWN: node 7 is not one of the 2 nodes"
	run short BIP_LANAI_DELAY=soon
	has "lanai-sim: BIP_LANAI_DELAY=soon: expected a time (10ms, 250us, 1s)"
	;;
*)
	echo "usage: faults.sh KIND BIPLOAD STREAM"
	exit 2
	;;
esac
cat "$out"
echo "PASS"
