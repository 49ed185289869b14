#!/bin/sh
# SPDX-License-Identifier: MIT
# One job, two "hosts" on this machine: nodes 0 and 1 on 127.0.0.1, nodes
# 2 and 3 on this machine's first non-loopback IPv4 address.  A loopback
# name is this host for the configuration, the other address is not, so
# nodes on the same name talk through shm and the others through the
# network driver (ofi), in one job.  The processes are started by hand,
# without bipload, in reverse order, as a user may; BIP_HOST is set as
# bipload sets it.  Then a node whose node 0 cannot be reached must fail
# naming that host.
# Usage: mix.sh BIPINFO PROGRAM TEST...
set -u
bipinfo=$1
prog=$2
shift 2

line=$("$bipinfo" --parsable | grep "^driver\.ofi=")
case "$line" in
"") echo "SKIP: the ofi driver is not compiled in"; exit 77 ;;
*=unavailable*) echo "SKIP: the ofi driver cannot run here: ${line#*=unavailable: }"; exit 77 ;;
esac
other=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
if [ -z "$other" ]; then
	echo "SKIP: this machine has no non-loopback IPv4 address to play a second host"
	exit 77
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
{
	echo 4
	for h in 127.0.0.1 127.0.0.1 "$other" "$other"; do
		echo "$h 0"
		for _ in 1 2 3 4; do echo 256; done
	done
} >"$dir/conf"

# Processes started by hand share the job's secret, as bipload gives it.
secret=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
for t in "$@"; do
	job=mix$$$(echo "$t" | tr -cd 'a-z')
	pids=""
	for node in 3 2 1 0; do
		case $node in 0|1) host=127.0.0.1 ;; *) host=$other ;; esac
		BIPCONF="$dir/conf" BIP_NODE=$node BIP_JOBID=$job BIP_HOST=$host \
			BIP_INIT_TIMEOUT=30 BIP_NIC= BIP_OPTS= BIP_SECRET=$secret \
			timeout 120 "$prog" "$t" >"$dir/out$node" 2>&1 &
		pids="$pids $!"
	done
	fail=0
	for pid in $pids; do
		wait "$pid" || fail=1
	done
	cat "$dir/out0" "$dir/out1" "$dir/out2" "$dir/out3"
	if [ "$fail" -ne 0 ]; then
		echo "FAIL: $t: a node failed"
		exit 1
	fi
	grep -q "^bip: 4 nodes, driver shm + ofi (" "$dir/out0" ||
		{ echo "FAIL: $t: node 0 does not use shm and ofi together"; exit 1; }
done
# A node whose node 0 is on a host that cannot be reached fails within its
# start-up time-out, naming that host.
{
	echo 2
	for h in no-such-host.invalid 127.0.0.1; do
		echo "$h 0"
		echo 256
		echo 256
	done
} >"$dir/conf2"
BIPCONF="$dir/conf2" BIP_NODE=1 BIP_JOBID=mix$$u BIP_HOST=127.0.0.1 BIP_INIT_TIMEOUT=3 BIP_SECRET=$secret \
	BIP_NIC= BIP_OPTS= timeout 60 "$prog" token >"$dir/out" 2>&1
rc=$?
cat "$dir/out"
[ "$rc" -eq 1 ] || { echo "FAIL: unreachable node 0: exit status $rc, expected 1"; exit 1; }
grep -q "^bip: bip_init: ofi: .*host no-such-host.invalid (node 0)" "$dir/out" ||
	{ echo "FAIL: unreachable node 0: the host is not named"; exit 1; }
left=$(ls /dev/shm | grep "^bip-$(id -u)-mix$$" || true)
[ -z "$left" ] || { echo "FAIL: shared memory left behind: $left"; exit 1; }
echo PASS
