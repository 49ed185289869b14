#!/bin/sh
# SPDX-License-Identifier: MIT
# A process ends while a long message's data is still coming to it
# (closing.c): over tcp;ofi_rxm the data is read from the sender while the
# receiver closes.  Three runs, since how far the read has come when the
# receiver closes varies: each must end with status 0, node 1's send done
# and no line saying that a send failed.
#
# Usage: closing.sh BIPINFO BIPLOAD CLOSING
set -u
bipinfo=$1 bipload=$2 prog=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
. "$(dirname "$0")/need.sh"
ofi_need "$bipinfo" tcp
for run in 1 2 3; do
	BIP_NIC=ofi BIP_OFI_PROVIDER=tcp "$bipload" -sz 2 --timeout 120 "$prog" >"$out" 2>&1
	rc=$?
	cat "$out"
	[ "$rc" -eq 0 ] || { echo "FAIL: run $run: the job ended with status $rc"; exit 1; }
	grep -q '^node 0: closing$' "$out" || { echo "FAIL: run $run: node 0 did not close"; exit 1; }
	grep -q '^node 1: send done$' "$out" || { echo "FAIL: run $run: node 1's send"; exit 1; }
	if grep -q 'failed\|FAIL' "$out"; then
		echo "FAIL: run $run: a send failed"
		exit 1
	fi
done
echo "closing: 3 runs, every send done"
