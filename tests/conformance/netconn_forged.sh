#!/bin/sh
# SPDX-License-Identifier: MIT
# Forged requests on the ofi driver's side channel (netconn forged): the job
# still runs, and each process says once that it dropped them.
# Usage: netconn_forged.sh BIPLOAD NETCONN NP
set -u
bipload=$1
netconn=$2
np=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bipload" -q -sz "$np" --timeout 60 "$netconn" forged >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
n=$(grep -c "^bip: node [0-9]*: ofi: dropped a connection request" "$out")
[ "$n" -eq "$np" ] || { echo "FAIL: $n of $np processes said they dropped the requests"; exit 1; }
echo "PASS"
