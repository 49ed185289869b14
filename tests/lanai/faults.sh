#!/bin/sh
# SPDX-License-Identifier: MIT
# Faults injected on the simulated wire are detected and reported, and no
# wrong data reaches the program.  With the seed fixed (BIP_LANAI_SEED,
# default 1) and one sender, the wire sees the same packets in the same
# order at every run, so each report is exact.  A board sends a SYNC on a
# link idle for 1 ms with packets not yet confirmed (the tail of the link):
# when depends on time, so the tests of the other faults put it off
# (BIP_LANAI_SYNC=60s, far beyond their run) to keep their packets the same
# at every run; the tail tests use it as it is.
# These are the board's own checks, in message mode (BIP_LANAI_RELIABLE=0,
# where the first fault ends the job); reliable.sh tests the repairs of the
# reliability layer, the default.
# Usage: faults.sh loss|corrupt|corrupt-long|duplicate|reorder|delay|linkdown|trace|tracelink|blackout|fwdeath|knobfile|badknob
#                  |tail|tail-stream|tail-sync|tail-ack|tail-answer|tail-delay|tail-reorder
#        BIPLOAD STREAM
set -u
export BIP_LANAI_RELIABLE=0
what=$1
bipload=$2
prog=$3
conformance=${4:-}
out=$(mktemp)
tdir=$(mktemp -d)
trace=$tdir/trace
trap 'rm -rf "$out" "$tdir"' EXIT
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
# Run the stream over the board with the given knobs; output in $out.
run() {
	mode=$1
	shift
	env BIP_NIC=lanai BIP_LANAI_SYNC=60s "$@" "$bipload" -q -sz 2 --timeout 60 "$prog" $mode \
		>"$out" 2>&1
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
	has "lanai-sim: $knobs:1: unknown knob 'jitter' (loss, corrupt, duplicate, reorder, delay, seed, link-down, trace, drop, sync, link-timeout, rate)"
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
	run short BIP_LANAI_DROP=SHORT:1
	has "lanai-sim: BIP_LANAI_DROP=SHORT:1: expected KIND:SRC:DST:N, the N-th packet (from 0) of KIND from node SRC to node DST (e.g. SHORT:1:0:0)"
	run short BIP_LANAI_DROP=SHORT:0:5:0
	has "lanai-sim: BIP_LANAI_DROP: node 0 or 5 is not one of the 2 nodes"
	run short BIP_LANAI_DROP=PING:1:0:0
	has "lanai-sim: BIP_LANAI_DROP=PING:1:0:0: unknown packet kind 'PING' (SHORT, RTS, CTS, DATA, ACK, ABORT, SYNC, SYNC_ACK, DGRAM, RMA_REQ, RMA_ANS)"
	run short BIP_LANAI_SYNC=0
	has "lanai-sim: BIP_LANAI_SYNC=0: expected a time above 0 (1ms, 500us, 1s)"
	;;
fwdeath)
	# lanai-sim dies under a job: each host says so once, and nothing
	# else (not that every other node has ended, which they have not).
	env BIP_NIC=lanai "$bipload" -sz 2 --timeout 60 "$conformance" orphan >"$out" 2>&1 &
	bl=$!
	n=0
	while [ "$(grep -c 'runs as pid' "$out")" -lt 2 ] && [ "$n" -lt 300 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	job=$(sed -n 's/^job //p' "$out")
	pkill -9 -f "lanai-sim -j $job" || fail "no lanai-sim of job $job to kill"
	wait "$bl"
	rc=$?
	[ "$rc" -eq 1 ] || fail "exit status $rc, expected 1"
	has_re "^bip: node [01]: lanai: the firmware \(lanai-sim, pid [0-9]*\) has ended: no message can move any more\$"
	grep -q "every other node has ended" "$out" && fail "a wrong second message"
	;;
blackout)
	# Every packet is lost: the link is declared down after
	# BIP_LANAI_LINK_TIMEOUT, and the job fails naming the link and the
	# peer, instead of retrying its SYNC forever.
	run short BIP_LANAI_LOSS=100 BIP_LANAI_LINK_TIMEOUT=2 BIP_LANAI_SYNC=1ms
	[ "$rc" -ne 124 ] || fail "the job hung until bipload's time-out"
	[ "$rc" -ne 0 ] || fail "the job ran with every packet lost"
	has_re "^bip: node [01]: lanai: lanai: the link from node ([01]) to node [01] is down: no packet of it was acknowledged for 2.0 s \(BIP_LANAI_LINK_TIMEOUT\); node [01] cannot be reached\$"
	run short BIP_LANAI_LINK_TIMEOUT=soon
	has "lanai-sim: BIP_LANAI_LINK_TIMEOUT=soon: expected a time above 0 (10, 10s, 500ms)"
	;;
tracelink)
	# A link planted at the trace path is replaced by the trace, never
	# followed: the file it points to is untouched; the trace is mode 0600.
	echo "keep me" >"$tdir/target"
	ln -s "$tdir/target" "$trace"
	run short BIP_LANAI_TRACE="$trace"
	[ "$rc" -eq 0 ] || fail "exit status $rc"
	[ "$(cat "$tdir/target")" = "keep me" ] || fail "the link's target was written"
	[ -L "$trace" ] && fail "the trace is still a link"
	grep -q "^# lanai-sim trace" "$trace" || fail "no trace written"
	[ "$(stat -c %a "$trace")" = 600 ] || fail "the trace is not mode 0600"
	;;
tail)
	# The only message of the run is lost: no later packet of the link
	# shows the gap, the SYNC that follows it does; the receiver's job
	# fails instead of waiting for ever.
	run tail BIP_LANAI_SYNC=1ms BIP_LANAI_DROP=SHORT:0:1:0 BIP_LANAI_TRACE="$trace"
	cat "$trace" >>"$out"
	node_failed 1
	has "bip: node 1: lanai: sequence gap: the SYNC packet from node 0 on tag 0 has sequence 1 where 0 was expected: packet 0 was lost; nothing more from node 0 is delivered"
	has_re "^[0-9.]+ board 0 send src 0 dst 1 route 256 kind SHORT tag 5 seq 0 len 16 crc 0x[0-9a-f]{8}: lost \(injected\)\$"
	has_re "^[0-9.]+ board 0 send src 0 dst 1 route 256 kind SYNC tag 0 seq 1 len 0 crc 0x[0-9a-f]{8}: sent\$"
	has_re "^[0-9.]+ board 1 recv src 0 dst 1 route 256 kind SYNC tag 0 seq 1 len 0 crc 0x[0-9a-f]{8}: dropped: sequence gap\$"
	has_re "^lanai-sim: [0-9]+ packets; injected: loss 1, corrupt 0, duplicate 0, delay 0, reorder 0, link-down 0; detected: crc 0, duplicate 0, gap 1, reorder 0, wrong-route 0, link-down 0\$"
	no_wrong_data
	;;
tail-stream)
	# The last of 200 messages is lost.  Its sequence number depends on
	# the SYNCs sent while the link waited, if any: the trace tells it.
	run "tail 200" BIP_LANAI_DROP=SHORT:0:1:199 BIP_LANAI_TRACE="$trace" BIP_LANAI_SYNC=1ms
	cat "$trace" >>"$out"
	node_failed 1
	lost=$(sed -n 's/^[0-9.]* board 0 send src 0 dst 1 route 256 kind SHORT tag 5 seq \([0-9]*\) .*: lost (injected)$/\1/p' "$trace")
	[ -n "$lost" ] || fail "no lost SHORT packet in the trace"
	has "bip: node 1: lanai: sequence gap: the SYNC packet from node 0 on tag 0 has sequence $((lost + 1)) where $lost was expected: packet $lost was lost; nothing more from node 0 is delivered"
	! grep -q "every word right" "$out" || fail "node 1 says it received all 200 messages"
	;;
tail-sync)
	# The message arrives, the SYNC after it is lost: the next SYNC shows it.
	run tail BIP_LANAI_SYNC=1ms BIP_LANAI_DROP=SYNC:0:1:0 BIP_LANAI_TRACE="$trace"
	cat "$trace" >>"$out"
	node_failed 1
	# (the host may see the report before it takes the message: it ends at
	# the first report it reads)
	has_re "^[0-9.]+ board 1 recv src 0 dst 1 route 256 kind SHORT tag 5 seq 0 len 16 crc 0x[0-9a-f]{8}: delivered\$"
	has_re "^[0-9.]+ board 0 send src 0 dst 1 route 256 kind SYNC tag 0 seq 1 len 0 crc 0x[0-9a-f]{8}: lost \(injected\)\$"
	has "bip: node 1: lanai: sequence gap: the SYNC packet from node 0 on tag 0 has sequence 2 where 1 was expected: packet 1 was lost; nothing more from node 0 is delivered"
	;;
tail-ack)
	# The answer to the SYNC is lost: the answer to the next SYNC shows it.
	run tail BIP_LANAI_SYNC=1ms BIP_LANAI_DROP=SYNC_ACK:1:0:0 BIP_LANAI_TRACE="$trace"
	cat "$trace" >>"$out"
	node_failed 0
	has "bip: node 0: lanai: sequence gap: the SYNC_ACK packet from node 1 on tag 0 has sequence 1 where 0 was expected: packet 0 was lost; nothing more from node 1 is delivered"
	has_re "^[0-9.]+ board 1 recv src 0 dst 1 route 256 kind SYNC tag 0 seq 1 len 0 crc 0x[0-9a-f]{8}: delivered\$"
	has_re "^[0-9.]+ board 1 send src 1 dst 0 route 256 kind SYNC_ACK tag 0 seq 0 len 0 crc 0x[0-9a-f]{8}: lost \(injected\)\$"
	has_re "^[0-9.]+ board 0 send src 0 dst 1 route 256 kind SYNC tag 0 seq 2 len 0 crc 0x[0-9a-f]{8}: sent\$"
	;;
tail-answer)
	# The last message of the stream, node 1's answer, is lost; node 1 has
	# ended, its board still sends the SYNC.  A SYNC_ACK of node 1's board,
	# for the link from node 0, may show the gap first.
	run short BIP_LANAI_SYNC=1ms BIP_LANAI_DROP=SHORT:1:0:0
	node_failed 0
	has "node 1: 200 messages, every word right"
	has_re "^bip: node 0: lanai: sequence gap: the (SYNC|SYNC_ACK) packet from node 1 on tag 0 has sequence ([0-9]+) where [0-9]+ was expected: packet [0-9]+ was lost; nothing more from node 1 is delivered\$"
	;;
tail-delay)
	# Delayed longer than the wait for a SYNC_ACK, SYNCs follow one another
	# and nothing is lost: no fault is reported, the job ends well.
	run short BIP_LANAI_SYNC=1ms BIP_LANAI_DELAY=3ms
	[ "$rc" -eq 0 ] || fail "exit status $rc"
	has "node 1: 200 messages, every word right"
	has_re "^lanai-sim: [0-9]+ packets; injected: loss 0, corrupt 0, duplicate 0, delay [0-9]+, reorder 0, link-down 0; detected: crc 0, duplicate 0, gap 0, reorder 0, wrong-route 0, link-down 0\$"
	;;
tail-reorder)
	# Held back with nothing behind it, the last message is overtaken by
	# the SYNC: reported as reordered, not delivered late.
	run tail BIP_LANAI_SYNC=1ms BIP_LANAI_REORDER=100
	node_failed 1
	has "bip: node 1: lanai: reordered packets: the SYNC packet from node 0 on tag 0 has sequence 1, but sequence 0 comes after it: dropped, not delivered; nothing more from node 0 is delivered"
	no_wrong_data
	;;
*)
	echo "usage: faults.sh KIND BIPLOAD STREAM"
	exit 2
	;;
esac
cat "$out"
echo "PASS"
