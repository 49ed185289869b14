#!/bin/sh
# SPDX-License-Identifier: MIT
# An eager test (eager.c) across 3 test hosts (network namespaces), one
# node on each, over ofi's tcp provider: the eager messages and their
# bounce buffers cross a real (virtual) network.
# Usage: netns.sh BUILDDIR SOURCEDIR EAGER TEST [VAR=VALUE...]
# Skipped (exit 77) without root, or when the ofi driver cannot run.
set -u
build=$1
src=$2
eager=$3
name=$4
shift 4
bipload="$build/scripts/bipload"
bipconf="$build/scripts/bipconf"
bipinfo="$build/scripts/bipinfo"
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
set -- $ns_hosts "$@"
"$bipconf" -f "$tmp/conf" "$1" "$2" "$3" >/dev/null || fail "bipconf"
shift 3
env BIP_NIC=ofi BIP_OFI_PROVIDER=tcp BIP_INIT_TIMEOUT=30 "$@" \
	"$bipload" -f "$tmp/conf" -sz 3 --rsh "ip netns exec" --timeout 300 \
	"$eager" "$name" >"$out" 2>&1 </dev/null
rc=$?
ns_note_job "$out"
[ "$rc" -eq 0 ] || fail "$name over 3 hosts: exit status $rc"
grep -q '^bip: 3 nodes, driver ofi (tcp' "$out" || fail "node 0 does not use ofi over tcp"
cat "$out"
echo "PASS"
