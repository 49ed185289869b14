#!/bin/sh
# SPDX-License-Identifier: MIT
# grow_netns.sh BUILDDIR SOURCEDIR GROW - a job of 3 nodes on 3 test hosts
# made of network namespaces (tests/netns/hosts.sh), over the ofi driver on
# tcp, grows by one node on each host through bipload's proxies (grow.c's
# "hosts" mode), then is refused a missing program and a host that is not
# the job's; nothing it started is left running.
# Skipped (exit 77) without root, namespaces or the ofi driver over tcp.
set -u
build=$1 src=$2 prog=$3
bipload="$build/scripts/bipload"
bipconf="$build/scripts/bipconf"
. "$src/tests/netns/hosts.sh"

ns_ofi_job "$build" 3
set -- $ns_hosts
"$bipconf" -f "$tmp/conf" "$1" "$2" "$3" >/dev/null || { echo "FAIL: bipconf"; exit 1; }
export BIP_NIC=ofi BIP_OFI_PROVIDER=tcp BIP_INIT_TIMEOUT=30
"$bipload" -f "$tmp/conf" -sz 3 --rsh "ip netns exec" --timeout 120 \
	"$prog" hosts 1 "$2" "$3" "$1" >"$out" 2>&1
rc=$?
ns_note_job "$out"
cat "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: grow hosts over 3 hosts: status $rc"; exit 1; }
n=$(grep -c "exchanged with the 3 new nodes on 3 hosts" "$out")
[ "$n" -eq 3 ] || { echo "FAIL: $n of the 3 first nodes say they exchanged with the new ones"; exit 1; }
grep -q "^missing on $1: .*cannot run bip-no-such-program: No such file or directory on host $1" "$out" ||
	{ echo "FAIL: no message for the missing program"; exit 1; }
if pgrep -f "bip-no-such-program" >/dev/null; then
	echo "FAIL: the missing program's process is left"
	exit 1
fi
echo "PASS"
