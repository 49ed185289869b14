#!/bin/sh
# SPDX-License-Identifier: MIT
# A conformance test across 3 test hosts (network namespaces), the nodes
# taken from the hosts in turn: h0 h1 h2 h0 h1 h2.
#   perpeer: each peer through its own transport, shm on the same host and
#            ofi over the tcp provider between hosts;
#   ofi:     ofi (tcp) for every peer (BIP_NIC=ofi).
# Usage: conformance.sh MODE BUILDDIR SOURCEDIR NP TEST
# TEST crash: node 1 (second host) dies of SIGSEGV: the job stops on every
# host and leaves no process or shared memory; noinit: node 2 (third host)
# never calls bip_init: the others fail naming it.
# TEST netconn-MODE runs tests/conformance/netconn MODE instead (crossing:
# pairs of nodes sending to each other first at the same moment).
# Skipped (exit 77) when the ofi driver is not compiled in or cannot run.
set -u
mode=$1
build=$2
src=$3
np=$4
name=$5
bipload="$build/scripts/bipload"
bipconf="$build/scripts/bipconf"
bipinfo="$build/scripts/bipinfo"
conformance="$build/tests/conformance/conformance"
case "$name" in
netconn-*)
	conformance="$build/tests/conformance/netconn"
	name=${name#netconn-}
	;;
esac
. "$src/tests/netns/hosts.sh"

unset BIPCONF BIP_OPTS BIP_NODE BIP_JOBID BIP_HOST BIP_RSH BIP_NIC
ns_need_ofi_tcp "$bipinfo"

tmp=$(mktemp -d)
out="$tmp/out"
ns_watch "$out"
fail() {
	[ -f "$out" ] && cat "$out"
	echo "FAIL: $*"
	exit 1
}
ns_setup 3
trap 'ns_cleanup; rm -rf "$tmp"' EXIT
set -- $ns_hosts
"$bipconf" -f "$tmp/conf" "$1" "$2" "$3" "$1" "$2" "$3" >/dev/null || fail "bipconf"

export BIP_OFI_PROVIDER=tcp BIP_INIT_TIMEOUT=30
case "$mode" in
perpeer) ;;
ofi) export BIP_NIC=ofi ;;
*)
	echo "unknown mode $mode"
	exit 2
	;;
esac
case "$name" in
crash)
	# In sanitizer builds, let the signal kill the process as it would without.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
	export ASAN_OPTIONS
	;;
noinit) export BIP_INIT_TIMEOUT=5 ;;
hostdown)
	# Node 1's host goes silent, as after a crash: its process stops and
	# its link goes down, so nothing there answers.  Each process runs in
	# a pid namespace of its own, as on hosts of their own, so that node 0
	# can only learn it over the network.
	printf '#!/bin/sh\nh=$1\nshift\nexec ip netns exec "$h" unshare --pid --fork sh -c "$*"\n' \
		>"$tmp/rsh"
	chmod +x "$tmp/rsh"
	command -v unshare >/dev/null || ns_skip "no unshare command (util-linux)"
	BIP_OFI_ALIVE_TIMEOUT=2 BIPLOAD_GRACE=1 "$bipload" -f "$tmp/conf" -sz 2 --rsh "$tmp/rsh" \
		--timeout 120 "$conformance" hostdown >"$out" 2>&1 &
	job=$!
	k=0
	until grep -q "^node 1 ready$" "$out"; do
		k=$((k + 1))
		[ "$k" -lt 600 ] || fail "node 1 never became ready"
		kill -0 "$job" 2>/dev/null || fail "the job ended before node 1 was ready"
		sleep 0.1
	done
	ip -n "$2" link set eth0 down || fail "cannot take the link of $2 down"
	wait "$job"
	rc=$?
	ns_note_job "$out"
	[ "$rc" -eq 3 ] || fail "exit status $rc, expected 3 (node 0 saw node 1 end)"
	grep -q "^node 0: node 1 counted as ended$" "$out" || fail "node 0 did not count node 1 as ended"
	grep -Eq "^bip: node 0: ofi: the host of node 1 \(10\.254\.77\.2\) (has not answered a liveness check|cannot be reached): node 1 counts as ended$" "$out" ||
		fail "no report of the silent host"
	cat "$out"
	echo "PASS"
	exit 0
	;;
esac
"$bipload" -f "$tmp/conf" -sz "$np" --rsh "ip netns exec" --timeout 300 \
	"$conformance" "$name" >"$out" 2>&1
rc=$?
ns_note_job "$out"
case "$name" in
crash)
	[ "$rc" -eq 139 ] || fail "exit status $rc, expected 139 (128 + SIGSEGV)"
	grep -q "^bipload: node 1 (host $2, pid [0-9][0-9]* there) killed by signal SIGSEGV$" "$out" ||
		fail "node 1 and its signal not named"
	grep -q "^bipload: stopped nodes 0 2 3 4 5$" "$out" || fail "the other nodes were not stopped"
	left=$(ls /dev/shm | grep "^bip-$(id -u)-$job-" || true)
	[ -z "$left" ] || fail "shared memory left behind: $left"
	left=$(ns_leftovers)
	[ -z "$left" ] || fail "processes left behind: $left"
	cat "$out"
	echo "PASS"
	exit 0
	;;
noinit)
	[ "$rc" -ne 0 ] || fail "bipload exited 0"
	[ "$rc" -ne 124 ] || fail "the job hung until bipload's time-out"
	grep -q "waiting for node 2\|node 2 .*never\|nodes* 2\b" "$out" || fail "no message naming node 2"
	grep -q "^bipload: node [013-5] (host $ns_prefix-[0-2], pid [0-9]* there) exited with status 1$" "$out" ||
		fail "bipload does not name the failed node"
	cat "$out"
	echo "PASS"
	exit 0
	;;
esac
[ "$rc" -eq 0 ] || fail "$name on $np nodes over 3 hosts ($mode): exit status $rc"
# Node 0's start-up line names the drivers it uses: shm only for a peer on
# its own host (node 3, from 4 nodes on), ofi for the others.
drivers=$(grep '^bip: [0-9]* nodes, driver ' "$out") || fail "no start-up line of node 0"
case "$mode,$np" in
perpeer,[23]) want="ofi" nowant="shm" ;;
perpeer,*) want="shm ofi" nowant="" ;;
ofi,*) want="ofi" nowant="shm" ;;
esac
for d in $want; do
	echo "$drivers" | grep -q "$d" || fail "node 0 does not use $d: $drivers"
done
for d in $nowant; do
	echo "$drivers" | grep -q "driver $d\|+ $d" && fail "node 0 uses $d: $drivers"
done
cat "$out"
echo "PASS"
