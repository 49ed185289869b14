#!/bin/sh
# SPDX-License-Identifier: MIT
# Several boards per node (rails) under the reliability layer: fragments
# striped over every rail, a rail whose link goes down and comes back while
# a large transfer runs or from the start (nothing lost, the counters show
# the rebinding and the fail-back), rails through switches with a wrong
# route on one rail only, and misuse.
#
# Usage: rails.sh stripe|four BIPLOAD RELCHECK
#        rails.sh failover|failstart BIPLOAD RAILCHECK
#        rails.sh routes|wrongroute BIPLOAD RELCHECK SRCDIR
#        rails.sh badvar BIPLOAD RELCHECK
set -u
what=$1
shift
out=$(mktemp)
tmp=$(mktemp -d)
trap 'rm -rf "$out" "$tmp"' EXIT
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
# Packets node N sent on path P (relcheck's and railcheck's lines).
sent_on() {
	sed -n "s/^node $1: .* path $2: sent \([0-9]*\).*/\1/p" "$out"
}
# Sum of one counter over the nodes' lines.
total() {
	sed -n "s/^node .* $1 \([0-9]*\).*/\1/p" "$out" | awk '{ s += $1 } END { print s + 0 }'
}
relcheck_ok() {
	[ "$rc" -eq 0 ] || fail "the job ended with status $rc"
	grep -q WRONG "$out" && fail "wrong data"
	n=$(grep -c "every word and the order right" "$out")
	[ "$n" -eq "$1" ] || fail "$n of $1 nodes checked everything"
}

case $what in
stripe|four)
	bipload=$1 relcheck=$2
	if [ "$what" = stripe ]; then rails=2 nodes=3; else rails=4 nodes=2; fi
	env BIP_NIC=lanai BIP_LANAI_RAILS=$rails "$bipload" -sz $nodes --timeout 300 \
		"$relcheck" 20000 200 >"$out" 2>&1
	rc=$?
	relcheck_ok $nodes
	# Every node sent on every rail; the firmware carried packets on each.
	node=0
	while [ $node -lt $nodes ]; do
		r=0
		while [ $r -lt $rails ]; do
			s=$(sent_on $node $r)
			[ -n "$s" ] && [ "$s" -gt 0 ] || fail "node $node sent nothing on path $r"
			r=$((r + 1))
		done
		node=$((node + 1))
	done
	r=0
	while [ $r -lt $rails ]; do
		grep -qE "^lanai-sim: rail $r: [1-9][0-9]* packets" "$out" ||
			fail "no packets counted on rail $r"
		r=$((r + 1))
	done
	grep -q "lanai-sim: $((rails * nodes)) boards" "$out" || fail "not $rails boards per node"
	grep "^node" "$out"
	;;
failover|failstart)
	bipload=$1 railcheck=$2
	if [ "$what" = failover ]; then
		# The link of node 1's board on rail 1 goes down at that rail's
		# 500th packet, in the middle of 4 x 64 MiB, and comes back at its
		# 700th (the packets sent before the hosts heard of it, then
		# probes).  Which packet meets the dead link first depends on
		# timing: it may be an acknowledgement sent while nothing else was
		# in flight on that rail, so that nothing needs rebinding.
		down=1@500:700
	else
		# Down from the first packet to the 300th: node 1 cannot be heard
		# on rail 1, so node 0 sends only fragments, RTS and short
		# messages there (acknowledgements go back by the path they came
		# on); the first is lost and must be rebound.
		down=1@0:300
	fi
	env BIP_NIC=lanai BIP_LANAI_RAILS=2 BIP_LANAI_RAIL1_LINK_DOWN=$down \
		BIP_REL_PROBE=0.01 "$bipload" -sz 2 --timeout 300 "$railcheck" 64 4 >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || fail "the job ended with status $rc"
	grep -q WRONG "$out" && fail "wrong data"
	[ "$(grep -c "4 x 64 MiB: every word right" "$out")" -eq 2 ] || fail "not every word right"
	if [ "$what" = failstart ]; then
		grep -qE "^node 0: .* rebinds [1-9]" "$out" ||
			fail "node 0 rebound no packet to the other rail"
	fi
	grep -qE "^node 0: .* failbacks [1-9]" "$out" || fail "node 0 saw no fail-back"
	grep -qE "^node 1: .* failbacks [1-9]" "$out" || fail "node 1 saw no fail-back"
	grep -qE "path 1: sent [0-9]+ retired [1-9][0-9]* restored [1-9]" "$out" ||
		fail "path 1 not retired then restored"
	grep -qE "^lanai-sim: rail 1: .* link-down 1; detected: .*link-down [1-9]" "$out" ||
		fail "the link did not go down on rail 1"
	grep -qE "^lanai-sim: rail 0: .* link-down 0; detected: .*link-down 0" "$out" ||
		fail "rail 0 was touched"
	grep "^node\|rail" "$out"
	;;
routes|wrongroute)
	bipload=$1 relcheck=$2 src=$3
	# Four hosts on two parallel networks (rails.topo); routes from
	# biproute (rails.conf), one per rail on each line.
	conf=$src/rails.conf
	if [ "$what" = wrongroute ]; then
		# Node 0's route to node 2 on rail 1 leaves its switch by a port
		# with no cable: that path is down, rail 0 carries its traffic.
		# (line 5: node 0's routes to node 2, rail 0 / rail 1)
		sed '5s|/ 6$|/ 1|' "$src/rails.conf" >"$tmp/conf"
		conf=$tmp/conf
		grep -q "^2 / 1$" "$conf" || fail "could not make the wrong route"
	fi
	env BIP_NIC=lanai BIPCONF=$conf BIP_TOPOLOGY=$src/rails.topo "$bipload" -sz 4 \
		--timeout 300 "$relcheck" 20000 200 >"$out" 2>&1
	rc=$?
	relcheck_ok 4
	for r in 0 1; do
		grep -qE "^lanai-sim: rail $r: [1-9][0-9]* packets" "$out" ||
			fail "no packets counted on rail $r"
	done
	if [ "$what" = routes ]; then
		grep -qE "wrong-route [1-9]" "$out" && fail "a route of rails.conf is wrong"
	else
		grep -qE "^lanai-sim: rail 1: .*wrong-route [1-9]" "$out" ||
			fail "the wrong route was not detected on rail 1"
		grep -qE "^lanai-sim: rail 0: .*wrong-route 0" "$out" || fail "rail 0 had a wrong route"
		grep -qE "^node 0: .* path 1: sent [0-9]+ retired [1-9]" "$out" ||
			fail "node 0 did not retire path 1"
	fi
	grep "^node\|rail" "$out"
	;;
badvar)
	bipload=$1 relcheck=$2
	env BIP_NIC=lanai BIP_LANAI_RAILS=5 "$bipload" -q -sz 2 --timeout 30 "$relcheck" 10 1 \
		>"$out" 2>&1 && fail "BIP_LANAI_RAILS=5 accepted"
	grep -q "BIP_LANAI_RAILS=5: expected 1 to 4 boards per node" "$out" ||
		fail "no clear error for BIP_LANAI_RAILS"
	env BIP_NIC=lanai BIP_LANAI_RAILS=2 BIP_LANAI_RAIL2_LOSS=1 "$bipload" -q -sz 2 --timeout 30 \
		"$relcheck" 10 1 >"$out" 2>&1 && fail "a knob of rail 2 accepted with 2 rails"
	grep -q "BIP_LANAI_RAIL2_LOSS: rail 2, but the job has 2 rails" "$out" ||
		fail "no clear error for a knob of a rail that does not exist"
	env BIP_NIC=lanai BIP_LANAI_RAILS=2 BIP_LANAI_RELIABLE=0 "$bipload" -q -sz 2 --timeout 30 \
		"$relcheck" 10 1 >"$out" 2>&1 && fail "message mode accepted two rails"
	grep -q "message mode (BIP_LANAI_RELIABLE=0) uses one" "$out" ||
		fail "no clear error for message mode on two rails"
	;;
*)
	echo "usage: rails.sh stripe|four|failover|routes|wrongroute|badvar ..." >&2
	exit 2
	;;
esac
exit 0
