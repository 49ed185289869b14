#!/bin/sh
# SPDX-License-Identifier: MIT
# attach_netns.sh BUILDDIR SOURCEDIR ATTACH - a server job on 2 test hosts
# made of network namespaces (tests/netns/hosts.sh), its nodes on both
# (shm beside ofi on tcp, BIP_NIC unset), bipload running none of them;
# then a client started apart with bipload --attach, whose 2 processes the
# job starts where it grows by default (its first node's host, through
# that host's proxy) and which connect to the server across the hosts.
# The client's output comes to the job's bipload (its processes run on
# another host); its exit status to the attaching one.
# Skipped (exit 77) without root, namespaces or the ofi driver over tcp.
set -u
build=$1 src=$2 prog=$(realpath "$3")
bipload="$build/scripts/bipload"
bipconf="$build/scripts/bipconf"
. "$src/tests/netns/hosts.sh"

ns_ofi_job "$build" 2
set -- $ns_hosts
unset BIP_NIC
export BIP_OFI_PROVIDER=tcp BIP_INIT_TIMEOUT=30
BIP_NAMES_DIR=$tmp/names
BIP_ATTACH_DIR=$tmp/run
mkdir -m 700 "$BIP_ATTACH_DIR" || exit 1
export BIP_NAMES_DIR BIP_ATTACH_DIR
"$bipconf" -f "$tmp/conf" "$1" "$2" >/dev/null || { echo "FAIL: bipconf"; exit 1; }
"$bipload" -f "$tmp/conf" -sz 2 --rsh "ip netns exec" --timeout 120 "$prog" server 1 \
	>"$out" 2>&1 &
server=$!
i=0
while ! grep -q "port published" "$out" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -lt 600 ] || { cat "$out"; echo "FAIL: the server did not publish its port"; exit 1; }
	sleep 0.1
done
"$bipload" --attach name:attach-svc -sz 2 "$prog" client >"$tmp/client" 2>&1
rc=$?
wait "$server"
src_rc=$?
echo "--- the server's job"
cat "$out"
echo "--- the attaching bipload"
cat "$tmp/client"
[ "$rc" -eq 0 ] || { echo "FAIL: the attached client: status $rc"; exit 1; }
[ "$src_rc" -eq 0 ] || { echo "FAIL: the server's job: status $src_rc"; exit 1; }
grep -q "^client 2: ok$" "$out" || { echo "FAIL: no word from the client"; exit 1; }
grep -q "server: served 1" "$out" || { echo "FAIL: the server did not serve"; exit 1; }
grep -q "^bipload: nodes 2 to 3 joined job " "$tmp/client" ||
	{ echo "FAIL: the attaching bipload did not say which nodes joined"; exit 1; }
echo "PASS"
