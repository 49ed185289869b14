#!/bin/sh
# SPDX-License-Identifier: MIT
# grow_netns.sh BUILDDIR SOURCEDIR GROW [DRIVERS] - a job on 3 test hosts
# made of network namespaces (tests/netns/hosts.sh) grows by new nodes on
# each host through bipload's proxies (grow.c's "hosts" mode), then is
# refused a missing program and a host that is not the job's; nothing it
# started is left running.
# DRIVERS: "ofi" (the default), the ofi driver alone on tcp: 3 nodes, one
# per host, and one new node per host.  "auto", BIP_NIC unset: 4 nodes,
# two on the first host and one on each other, and two new nodes per
# host.  The nodes that share a host at start, and the new nodes (each
# pair of siblings shares a host), open shm beside ofi on tcp, and meet
# over shm; the nodes alone on their host open ofi alone, and the new
# nodes of their host meet them over ofi.  "spare", BIP_NIC unset: one
# node, on the first host of "--host H1:2,H2,H3"; the new nodes of the two
# others are started by proxies that bipload starts then, which end with
# the job; then a spare host that cannot be reached.
# Skipped (exit 77) without root, namespaces or the ofi driver over tcp.
set -u
build=$1 src=$2 prog=$(realpath "$3") drivers=${4:-ofi}
bipload="$build/scripts/bipload"
bipconf="$build/scripts/bipconf"
. "$src/tests/netns/hosts.sh"

ns_ofi_job "$build" 3
set -- $ns_hosts
export BIP_OFI_PROVIDER=tcp BIP_INIT_TIMEOUT=30
if [ "$drivers" = auto ]; then
	unset BIP_NIC
	np=4 per=2
	"$bipconf" -f "$tmp/conf" "$1" "$1" "$2" "$3" >/dev/null || { echo "FAIL: bipconf"; exit 1; }
	export BIP_REPORT_BINDINGS=1
else
	export BIP_NIC=ofi
	np=3 per=1
	"$bipconf" -f "$tmp/conf" "$1" "$2" "$3" >/dev/null || { echo "FAIL: bipconf"; exit 1; }
fi
if [ "$drivers" = spare ]; then
	unset BIP_NIC
	np=1 per=1
	export BIP_REPORT_BINDINGS=1
	# The last host named gets the missing program: a spare one here.
	(cd "$tmp" && "$bipload" --host "$1:2,$2,$3" -sz 1 --universe 8 --rsh "ip netns exec" \
		--timeout 120 "$prog" hosts $per "$2" "$1" "$3") >"$out" 2>&1
	rc=$?
	missing=$3
else
	"$bipload" -f "$tmp/conf" -sz $np --rsh "ip netns exec" --timeout 120 \
		"$prog" hosts $per "$2" "$3" "$1" >"$out" 2>&1
	rc=$?
	missing=$1
fi
ns_note_job "$out"
cat "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: grow hosts over 3 hosts: status $rc"; exit 1; }
n=$(grep -c "exchanged with the $((3 * per)) new nodes on 3 hosts" "$out")
[ "$n" -eq $np ] || { echo "FAIL: $n of the $np first nodes say they exchanged with the new ones"; exit 1; }
if [ "$drivers" = spare ]; then
	# Node 0, alone, and the new nodes of the spare hosts: ofi alone;
	# the new node of node 0's host: shm beside ofi (node 0 has no
	# segment, so they meet over ofi).
	n=$(grep -c "^bip: node [0-9]* of [0-9]*: .*driver ofi " "$out")
	[ "$n" -eq 3 ] || { echo "FAIL: $n of 3 processes say they use ofi alone"; exit 1; }
	for h in "$2" "$3"; do
		grep -q "^bip: node [0-9]* of [0-9]*: host $h, " "$out" ||
			{ echo "FAIL: no new node on the spare host $h"; exit 1; }
		[ -z "$(ip netns pids "$h")" ] || { echo "FAIL: processes left on $h"; exit 1; }
	done
	# A spare host whose proxy cannot start (no such namespace): the
	# request fails with EHOSTUNREACH naming the host, and so does the
	# next one; the job goes on and ends well.
	(cd "$tmp" && "$bipload" --host "$1,bip-no-such-ns" -sz 1 --universe 8 --rsh "ip netns exec" \
		--timeout 60 "$prog" unreachable bip-no-such-ns) >"$tmp/unreach" 2>&1
	rc=$?
	ns_note_job "$tmp/unreach"
	cat "$tmp/unreach"
	[ "$rc" -eq 0 ] || { echo "FAIL: a grow onto an unreachable host: status $rc"; exit 1; }
	grep -q "^unreachable 0: .*: No route to host on host bip-no-such-ns$" "$tmp/unreach" ||
		{ echo "FAIL: no message for the unreachable host"; exit 1; }
	grep -q "^unreachable 1: .*host bip-no-such-ns: its proxy has ended$" "$tmp/unreach" ||
		{ echo "FAIL: no message for the second request"; exit 1; }
fi
if [ "$drivers" = auto ]; then
	# Nodes 0 and 1 share a host, and so do each new node's siblings;
	# nodes 2 and 3 are alone on theirs.
	n=$(grep -c "^bip: node [0-9]* of [0-9]*: .*driver shm + ofi " "$out")
	[ "$n" -eq 8 ] || { echo "FAIL: $n of 8 processes say they use shm + ofi"; exit 1; }
	n=$(grep -c "^bip: node [23] of 4: .*driver ofi " "$out")
	[ "$n" -eq 2 ] || { echo "FAIL: $n of nodes 2 and 3 say they use ofi alone"; exit 1; }
fi
grep -q "^missing on $missing: .*cannot run bip-no-such-program: No such file or directory on host $missing" "$out" ||
	{ echo "FAIL: no message for the missing program"; exit 1; }
# In this test's hosts only: another test may be starting its own.
left=""
for ns in $ns_made; do
	for pid in $(ip netns pids "$ns" 2>/dev/null); do
		grep -qa "bip-no-such-program" "/proc/$pid/cmdline" 2>/dev/null && left="$left $pid"
	done
done
if [ -n "$left" ]; then
	echo "FAIL: the missing program's process is left"
	exit 1
fi
echo "PASS"
