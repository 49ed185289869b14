#!/bin/sh
# SPDX-License-Identifier: MIT
# BIP over plain UDP (the udp driver: libfabric's udp datagram provider
# under the reliability layer) between two test hosts (network
# namespaces), one process each.
#   loss:    1% of the datagrams dropped by the driver's knob: relcheck
#            checks every word and the order, the counters show the repairs;
#   corrupt: 1% corrupted and 1% duplicated: the same, and the counters show
#            corrupt datagrams dropped and duplicates dropped;
#   clean T: conformance test T over udp, no fault;
#   badvar:  a bad knob fails the job naming it.
# Usage: udp.sh CASE BUILDDIR SOURCEDIR [TEST]
# Skipped (exit 77) without root, without the udp driver or provider.
set -u
name=$1
build=$2
src=$3
test=${4:-}
bipload="$build/scripts/bipload"
bipconf="$build/scripts/bipconf"
bipinfo="$build/scripts/bipinfo"
relcheck="$build/tests/lanai/relcheck"
conformance="$build/tests/conformance/conformance"
. "$src/tests/netns/hosts.sh"

unset BIPCONF BIP_OPTS BIP_NODE BIP_JOBID BIP_HOST BIP_RSH BIP_NIC BIP_OFI_PROVIDER
line=$("$bipinfo" --parsable | grep '^driver\.udp=')
case "$line" in
"") ns_skip "the udp driver is not compiled in (bipinfo --parsable has no driver.udp)" ;;
*=unavailable*) ns_skip "the udp driver cannot run here: ${line#*=unavailable: }" ;;
esac

tmp=$(mktemp -d)
out="$tmp/out"
ns_watch "$out"
fail() {
	[ -f "$out" ] && cat "$out"
	echo "FAIL: $*"
	exit 1
}
# Sum of one counter over the nodes' lines of relcheck.
total() {
	sed -n "s/^node .* $1 \([0-9]*\).*/\1/p" "$out" | awk '{ s += $1 } END { print s + 0 }'
}
# The count of one fault the drivers injected, summed over the nodes.
injected() {
	case $1 in
	lost) sed -n 's/^bip: node [0-9]*: udp: \([0-9]*\) datagrams lost.*/\1/p' "$out" ;;
	corrupted) sed -n 's/^bip: node [0-9]*: udp: .* lost, \([0-9]*\) corrupted.*/\1/p' "$out" ;;
	duplicated) sed -n 's/^bip: node [0-9]*: udp: .* corrupted, \([0-9]*\) duplicated.*/\1/p' "$out" ;;
	esac | awk '{ s += $1 } END { print s + 0 }'
}
ns_setup 2
trap 'ns_cleanup; rm -rf "$tmp"' EXIT
set -- $ns_hosts
"$bipconf" -f "$tmp/conf" "$1" "$2" >/dev/null || fail "bipconf"
export BIP_NIC=udp BIP_INIT_TIMEOUT=30
run() {
	"$bipload" -f "$tmp/conf" -sz 2 --rsh "ip netns exec" --timeout 300 "$@" >"$out" 2>&1
	rc=$?
	ns_note_job "$out"
}
relcheck_ok() {
	[ "$rc" -eq 0 ] || fail "the job ended with status $rc"
	grep -q WRONG "$out" && fail "wrong data"
	[ "$(grep -c "every word and the order right" "$out")" -eq 2 ] ||
		fail "not every node checked everything"
	grep -q "^bip: 2 nodes, driver udp (udp, datagrams of [0-9]* bytes), reliability layer" \
		"$out" || fail "node 0 does not use the udp driver through the layer"
}

case "$name" in
loss)
	BIP_UDP_LOSS=1 BIP_UDP_SEED=5 run "$relcheck" 20000 200
	relcheck_ok
	[ "$(injected lost)" -gt 0 ] || fail "no datagram lost"
	[ "$(total retransmits)" -gt 0 ] || fail "no retransmission"
	;;
corrupt)
	BIP_UDP_CORRUPT=1 BIP_UDP_DUPLICATE=1 BIP_UDP_SEED=5 run "$relcheck" 20000 200
	relcheck_ok
	[ "$(injected corrupted)" -gt 0 ] || fail "no datagram corrupted"
	[ "$(injected duplicated)" -gt 0 ] || fail "no datagram duplicated"
	[ "$(total corrupt)" -gt 0 ] || fail "no corrupt datagram seen by the hosts"
	[ "$(total duplicates)" -gt 0 ] || fail "no duplicate dropped"
	;;
clean)
	[ -n "$test" ] || fail "clean needs the conformance test"
	run "$conformance" "$test"
	[ "$rc" -eq 0 ] || fail "conformance $test over udp: exit status $rc"
	;;
badvar)
	BIP_UDP_LOSS=abc run "$relcheck" 10 1
	[ "$rc" -ne 0 ] || fail "BIP_UDP_LOSS=abc accepted"
	grep -q "BIP_UDP_LOSS=abc: expected a percentage from 0 to 100" "$out" ||
		fail "no clear error for BIP_UDP_LOSS"
	BIP_UDP_SEED=x run "$relcheck" 10 1
	[ "$rc" -ne 0 ] || fail "BIP_UDP_SEED=x accepted"
	grep -q "BIP_UDP_SEED=x: expected a number" "$out" || fail "no clear error for BIP_UDP_SEED"
	;;
*)
	echo "unknown case $name"
	exit 2
	;;
esac
grep "^node\|udp:" "$out"
echo "PASS"
exit 0
