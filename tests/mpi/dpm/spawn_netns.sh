#!/bin/sh
# SPDX-License-Identifier: MIT
# spawn_netns.sh BUILDDIR SOURCEDIR SPAWN - an MPI job of 3 processes on 3
# test hosts made of network namespaces (tests/netns/hosts.sh), over the
# ofi driver on tcp, spawns one worker on each host (spawn.c's "hosts"):
# each runs where its "host" info key asked.
# Skipped (exit 77) without root, namespaces or the ofi driver over tcp.
set -u
build=$1 src=$2 prog=$3
bipload="$build/scripts/bipload"
bipconf="$build/scripts/bipconf"
. "$src/tests/netns/hosts.sh"

ns_ofi_job "$build" 3
set -- $ns_hosts
"$bipconf" -f "$tmp/conf" "$1" "$2" "$3" >/dev/null || { echo "FAIL: bipconf"; exit 1; }
# Each host with its network namespace, as the workers will see it.
want=""
for h in "$3" "$1" "$2"; do
	want="$want $h=$(ip netns exec "$h" readlink /proc/self/ns/net)"
done
export BIP_NIC=ofi BIP_OFI_PROVIDER=tcp BIP_INIT_TIMEOUT=30
# $want: one word per host, split on purpose.
"$bipload" -f "$tmp/conf" -sz 3 --rsh "ip netns exec" --timeout 120 \
	"$prog" hosts $want >"$out" 2>&1
rc=$?
ns_note_job "$out"
cat "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: a spawn on 3 hosts: status $rc"; exit 1; }
grep -q "spawned a worker on each of 3 hosts" "$out" || { echo "FAIL: no report"; exit 1; }
echo "PASS"
