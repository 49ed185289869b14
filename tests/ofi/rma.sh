#!/bin/sh
# SPDX-License-Identifier: MIT
# One-sided operations through libfabric's FI_RMA and FI_ATOMIC (the ofi
# driver's ofi_rma.c, bip_rma(3)), with the program of the board's tests
# (tests/lanai/lanai_rma.c): every word of puts and gets of 1 B to 1 MiB,
# ordering, every operation on every type, CSWAP, contention, a lock made
# of CSWAP, out of range (-ERANGE, nothing written), withdrawn and forged
# keys (-EACCES).  Over tcp;ofi_rxm with the progress thread (which makes
# the nodes capable), with every buffer registered (FI_MR_LOCAL's path),
# over sockets (whose data progress is automatic: no thread needed), tcp
# without the thread, where no node is capable, and with BIP_OFI_RMA=0.
#
# Usage: rma.sh CASE BIPINFO BIPLOAD LANAI_RMA
set -u
what=$1 bipinfo=$2 bipload=$3 prog=$4
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
has_re() {
	grep -qE "$1" "$out" || fail "no line matching: $1"
}
. "$(dirname "$0")/need.sh"
# The provider with FI_RMA and FI_ATOMIC, or exit 77 (skipped).
need() {
	ofi_need "$bipinfo" "$1" "FI_RMA|FI_ATOMIC"
}
run() {
	np=$1 mode=$2
	shift 2
	env "$@" "$bipload" -sz "$np" --timeout 240 "$prog" "$mode" >"$out" 2>&1
	rc=$?
	grep -q FAIL "$out" && fail "a check failed"
	[ "$rc" -eq 0 ] || fail "the job ended with status $rc"
}
all_ok="^node 0: one-sided operations of [0-9]+ nodes: every word right\$"

case $what in
tcp-2 | tcp-4)
	need tcp
	run "${what#tcp-}" all BIP_NIC=ofi BIP_OFI_PROVIDER=tcp BIP_PROGRESS_THREAD=1 BIP_OFI_RMA=1
	has_re "$all_ok"
	;;
mr-3)
	need tcp
	run 3 all BIP_NIC=ofi BIP_OFI_PROVIDER=tcp BIP_OFI_MR_LOCAL=1 BIP_PROGRESS_THREAD=1 \
		BIP_OFI_RMA=1
	has_re "$all_ok"
	;;
sockets-3)
	need sockets
	run 3 all BIP_NIC=ofi BIP_OFI_PROVIDER=sockets BIP_OFI_RMA=1
	has_re "$all_ok"
	;;
unserved-3)
	need tcp
	run 3 unserved BIP_NIC=ofi BIP_OFI_PROVIDER=tcp BIP_PROGRESS_THREAD=0
	has_re "^node 0: no node capable, as expected\$"
	;;
off-2)
	need tcp
	run 2 notcapable BIP_NIC=ofi BIP_OFI_PROVIDER=tcp BIP_PROGRESS_THREAD=1 BIP_OFI_RMA=0
	has_re "^node 0: no node capable, as expected\$"
	;;
*)
	echo "rma.sh: unknown case '$what'" >&2
	exit 2
	;;
esac
echo "ok: $what"
