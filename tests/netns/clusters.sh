#!/bin/sh
# SPDX-License-Identifier: MIT
# Two clusters of three test hosts (network namespaces) each, every host on
# its cluster's data network (interface data0), joined only by two gateway
# pairs, a2 - b0 and a1 - b1, on a third network (hosts.sh,
# ns_setup_clusters).
# As on a real site, every host also has a management interface (eth0, on a
# bridge of its own) that the host names resolve to: bipload's start-up
# exchange goes there, the messages go over the data networks (libfabric's
# tcp provider on data0: FI_TCP_IFACE).  A gateway host reaches the other
# end's data0 address through their link (a host route; nothing is routed
# further: no host of A reaches a host of B but the gateways, checked with
# a connect that must fail).
#
# Usage: clusters.sh BUILDDIR SOURCEDIR MODE ARGS...
#   conformance TEST     the conformance TEST on 12 nodes, 2 per host
#   run PROGRAM ARGS     any program (the MPI tests) on the 12 nodes
#   long                 fwdcheck long between node 0 (a0) and node 1 (b0):
#                        every size up to 64 MiB, every word checked
#   kill                 the relay of a2 killed while nodes 0 and 1 exchange
#                        1 MiB messages: the job goes on through a1 - b1
#   idle                 BIP_WAIT=block: while node 0 pauses outside BIP,
#                        node 1 (in a receive) and the relays, on shm and
#                        ofi, use under 5 % of a processor over 2 s
#   ended                the same once nodes 2 to 11 have ended (fwdcheck
#                        early): the relays that carried their messages
#                        stay idle too, and node 0, back from its pause,
#                        reaches node 1 at once.  The nodes that end wait
#                        for node 0 to confirm their last acknowledgements
#                        (rel.c's linger) with asks spaced as
#                        retransmissions: asked at every BIP_REL_RTO, a
#                        paused node got thousands, which filled its relay
#                        (its wake-ups walked them all) and kept node 1's
#                        goodbye from passing.  BIP_RETRY_TIMEOUT=5 bounds
#                        that wait (30 s by default)
# Skipped (exit 77) without root, network namespaces, or ofi over tcp.
set -u
build=$1
src=$2
mode=$3
shift 3
bipload="$build/scripts/bipload"
bipinfo="$build/scripts/bipinfo"
. "$src/tests/netns/hosts.sh"

unset BIPCONF BIP_OPTS BIP_NODE BIP_JOBID BIP_HOST BIP_RSH BIP_NIC
ns_need_ofi_tcp "$bipinfo"

tmp=$(mktemp -d)
out="$tmp/out"
ns_watch "$out"
trap 'ns_cleanup; rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() {
	[ -f "$out" ] && cat "$out"
	echo "FAIL: $*"
	exit 1
}
. "$src/tests/clusters/wait.sh"

# Hosts in node order, so that nodes 0 and 1 are in different clusters.
hosts="a0 b0 a1 b1 a2 b2"
ns_setup_clusters

# host_procs NAME...: "PID:NODE" for each process of the test hosts whose
# command is one of the NAMEs.
host_procs() {
	for h in $hosts; do
		for p in $(ip netns pids "$ns_prefix-$h"); do
			c=$(cat "/proc/$p/comm" 2>/dev/null)
			for n in "$@"; do
				[ "$c" = "$n" ] || continue
				node=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^BIP_NODE=//p')
				[ -n "$node" ] && echo "$p:$node"
			done
		done
	done
}

# connect HOST ADDRESS: "reached" (answered, even refused) or the error.
connect() {
	ip netns exec "$ns_prefix-$1" python3 -c '
import socket, sys
s = socket.socket()
s.settimeout(3)
try:
    s.connect((sys.argv[1], 9))
    print("reached")
except ConnectionRefusedError:
    print("reached")
except OSError as e:
    print(e.strerror or str(e))' "$2"
}
[ "$(connect a0 "$(ns_data_addr a1)")" = reached ] || fail "a0 cannot reach a1 on its cluster's network"
[ "$(connect a2 "$(ns_data_addr b0)")" = reached ] || fail "the gateway a2 cannot reach b0"
r=$(connect a0 "$(ns_data_addr b2)")
[ "$r" != reached ] || fail "a0 reaches b2 directly: the clusters are not apart"
echo "a direct connect from a0 to b2 ($(ns_data_addr b2)) fails: $r"

# The configuration: 12 nodes, the hosts in turn (in a subshell: set --).
(
	set -f
	echo 12
	n=0
	while [ "$n" -lt 12 ]; do
		set -- $hosts
		shift $((n % 6))
		echo "$ns_prefix-$1 0"
		j=0
		while [ "$j" -lt 12 ]; do
			echo 256
			j=$((j + 1))
		done
		n=$((n + 1))
	done
	echo "cluster A ofi $ns_prefix-a0 $ns_prefix-a1 $ns_prefix-a2"
	echo "cluster B ofi $ns_prefix-b0 $ns_prefix-b1 $ns_prefix-b2"
	echo "gateway A:$ns_prefix-a2 B:$ns_prefix-b0 ofi"
	echo "gateway A:$ns_prefix-a1 B:$ns_prefix-b1 ofi"
) >"$tmp/conf"

export BIP_OFI_PROVIDER=tcp FI_TCP_IFACE=data0 BIP_INIT_TIMEOUT=60
job() {
	"$bipload" -f "$tmp/conf" --rsh "ip netns exec" -x FI_TCP_IFACE --timeout 300 "$@" \
		>"$out" 2>&1
}
case "$mode" in
conformance)
	job "$build/tests/conformance/conformance" "$1" || fail "conformance $1 on 12 nodes"
	! grep -q "dropped" "$out" || fail "a relay dropped a packet of a job that ran clean"
	;;
run)
	job "$@" || fail "$* on 12 nodes"
	;;
long)
	job "$build/tests/clusters/fwdcheck" long 1 || fail "fwdcheck long"
	[ "$(grep -c ': long: done$' "$out")" -eq 12 ] || fail "not every node done"
	;;
kill)
	BIP_RETRY_TIMEOUT=20 job "$build/tests/clusters/fwdcheck" kill "$tmp/go" &
	pid=$!
	wait_line "$out" "node 0 ready" "$pid" 1200
	relay=$(sed -n "s/^bipload: node \([0-9]*\): the relay of gateway host $ns_prefix-a2 .*/\1/p" "$out")
	[ -n "$relay" ] || fail "no relay on a2 in bipload's output"
	victim=""
	for p in $(ip netns pids "$ns_prefix-a2"); do
		{ tr '\0' '\n' <"/proc/$p/environ" | grep -qx "BIP_NODE=$relay"; } 2>/dev/null &&
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = bipgw ] && victim=$p
	done
	[ -n "$victim" ] || fail "the relay process of a2 not found"
	kill -9 "$victim"
	touch "$tmp/go"
	wait "$pid" || fail "the job did not go on through the second gateway"
	grep -q "^node 0: kill: 25 rounds done$" "$out" || fail "node 0 did not finish"
	;;
idle)
	# BIP_WAIT=block: while node 0 waits outside BIP (fwdcheck kill's
	# pause, as the nodes above 1), node 1 waits in a receive and the four
	# relays for packets.  Each has shm beside ofi and must sleep on both
	# at once (lib/bip/core/waitset.c): under 5 % of a processor over 2 s.
	BIP_WAIT=block job "$build/tests/clusters/fwdcheck" kill "$tmp/go" &
	pid=$!
	wait_line "$out" "node 0 ready" "$pid" 1200
	procs=$(host_procs bipgw fwdcheck | grep -v ':0$' | tr '\n' ' ')
	procs=" $procs"
	for want in 1 12 13 14 15; do
		case "$procs " in
		*":$want "*) ;;
		*) fail "node $want not found among:$procs" ;;
		esac
	done
	sleep 1 # what the last round left in flight passes
	idle_ticks $procs >"$tmp/ticks"
	touch "$tmp/go"
	wait "$pid" || fail "the job failed after its pause"
	cat "$tmp/ticks"
	grep -q "^node 0: kill: 25 rounds done$" "$out" || fail "node 0 did not finish"
	[ -z "$idle_busy" ] || fail "nodes$idle_busy used 5 % of a processor or more while idle"
	;;
ended)
	BIP_WAIT=block BIP_RETRY_TIMEOUT=5 job "$build/tests/clusters/fwdcheck" early "$tmp/go" &
	pid=$!
	wait_line "$out" "node 0 ready" "$pid" 1200
	# The others end once answered.
	i=0
	while [ "$(host_procs fwdcheck | wc -l)" -gt 2 ]; do
		i=$((i + 1))
		[ "$i" -lt 600 ] || fail "nodes 2 to 11 did not end"
		sleep 0.1
	done
	procs=$(host_procs bipgw | tr '\n' ' ')
	[ "$(echo $procs | wc -w)" -eq 4 ] || fail "not 4 relays among:$procs"
	sleep 1
	idle_ticks $procs >"$tmp/ticks"
	touch "$tmp/go"
	wait "$pid" || fail "the job failed after its pause"
	cat "$tmp/ticks"
	grep -q "^node 1: early: done$" "$out" || fail "node 1 did not finish"
	! grep -q "cannot be reached" "$out" || fail "a node was lost"
	# Asked as often as retransmissions, over the 5 s a node waits for
	# node 0's last word: tens at most (every BIP_REL_RTO: 2,500).
	acks=$(sed -n 's/^node [0-9]*: acknowledgements sent on their own: //p' "$out")
	[ "$(echo $acks | wc -w)" -eq 10 ] || fail "not 10 counts of acknowledgements"
	for a in $acks; do
		[ "$a" -le 100 ] || fail "a node that ended sent $a acknowledgements on their own"
	done
	[ -z "$idle_busy" ] || fail "relays$idle_busy used 5 % of a processor or more while idle"
	;;
*)
	echo "clusters.sh: unknown mode $mode"
	exit 2
	;;
esac
ns_note_job "$out"
grep -q "driver .*fwd (2 paths)" "$out" || fail "node 0 does not forward on 2 paths"
left=$(ns_leftovers)
[ -z "$left" ] || fail "processes left behind: $left"
cat "$out"
echo PASS
