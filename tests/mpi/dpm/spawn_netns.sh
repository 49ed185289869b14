#!/bin/sh
# SPDX-License-Identifier: MIT
# spawn_netns.sh BUILDDIR SOURCEDIR SPAWN [DRIVERS] - an MPI job on 3 test
# hosts made of network namespaces (tests/netns/hosts.sh) spawns one
# worker on each host (spawn.c's "hosts"): each runs where its "host" info
# key asked.  DRIVERS: "ofi" (the default), the ofi driver alone on tcp, 3
# processes, one per host.  "auto", BIP_NIC unset: 4 processes, two on
# the first host (shm beside ofi on tcp) and one on each other (ofi
# alone); the workers open shm beside ofi, as a process of their host runs
# there, and meet the two of the first host over shm.  "spare", BIP_NIC
# unset: one process, on the first host of "--host H1:2,H2,H3" (room for
# the process and its 3 workers: MPI_UNIVERSE_SIZE 4); the workers
# of the two others are started by proxies that bipload starts then.
# Skipped (exit 77) without root, namespaces or the ofi driver over tcp.
set -u
build=$1 src=$2 prog=$(realpath "$3") drivers=${4:-ofi}
bipload="$build/scripts/bipload"
bipconf="$build/scripts/bipconf"
. "$src/tests/netns/hosts.sh"

ns_ofi_job "$build" 3
set -- $ns_hosts
# Each host with its network namespace, as the workers will see it.
want=""
for h in "$3" "$1" "$2"; do
	want="$want $h=$(ip netns exec "$h" readlink /proc/self/ns/net)"
done
export BIP_OFI_PROVIDER=tcp BIP_INIT_TIMEOUT=30
if [ "$drivers" = spare ]; then
	unset BIP_NIC
elif [ "$drivers" = auto ]; then
	unset BIP_NIC
	export BIP_REPORT_BINDINGS=1
	np=4
	"$bipconf" -f "$tmp/conf" "$1" "$1" "$2" "$3" >/dev/null || { echo "FAIL: bipconf"; exit 1; }
else
	export BIP_NIC=ofi
	np=3
	"$bipconf" -f "$tmp/conf" "$1" "$2" "$3" >/dev/null || { echo "FAIL: bipconf"; exit 1; }
fi
# $want: one word per host, split on purpose.
if [ "$drivers" = spare ]; then
	(cd "$tmp" && "$bipload" --host "$1:2,$2,$3" -sz 1 --rsh "ip netns exec" --timeout 120 \
		"$prog" hosts $want) >"$out" 2>&1
	rc=$?
else
	"$bipload" -f "$tmp/conf" -sz $np --rsh "ip netns exec" --timeout 120 \
		"$prog" hosts $want >"$out" 2>&1
	rc=$?
fi
ns_note_job "$out"
cat "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: a spawn on 3 hosts: status $rc"; exit 1; }
grep -q "spawned a worker on each of 3 hosts" "$out" || { echo "FAIL: no report"; exit 1; }
if [ "$drivers" = auto ]; then
	# Nodes 0 and 1, and the 3 workers; nodes 2 and 3 are alone.
	n=$(grep -c "^bip: node [0-9]* of [0-9]*: .*driver shm + ofi " "$out")
	[ "$n" -eq 5 ] || { echo "FAIL: $n of 5 processes say they use shm + ofi"; exit 1; }
	n=$(grep -c "^bip: node [23] of 4: .*driver ofi " "$out")
	[ "$n" -eq 2 ] || { echo "FAIL: $n of nodes 2 and 3 say they use ofi alone"; exit 1; }
fi
echo "PASS"
