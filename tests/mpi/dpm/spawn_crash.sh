#!/bin/sh
# SPDX-License-Identifier: MIT
# A spawned child crashes after MPI_Init: the job ends (exit 134), bipload
# names the child's node and stops the parents, nothing is left in
# /dev/shm.  Usage: spawn_crash.sh BIPLOAD SPAWN NP
set -u
bipload=$1 prog=$2 np=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() {
	echo "FAIL: $*"
	cat "$out"
	exit 1
}
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_abort=0"
export ASAN_OPTIONS
"$bipload" -sz "$np" --timeout 60 "$prog" crash >"$out" 2>&1
rc=$?
[ "$rc" -eq 134 ] || fail "exit status $rc, expected 134 (128 + SIGABRT)"
grep -q "^bipload: node $np (host .*, pid [0-9]*) killed by signal SIGABRT$" "$out" ||
	fail "bipload does not name the child, node $np"
job=$(sed -n 's/^bipload: [0-9]* nodes\{0,1\}, job //p' "$out")
[ -n "$job" ] || fail "no job id"
left=$(ls /dev/shm | grep "^bip-$(id -u)-.*$job" || true)
[ -z "$left" ] || fail "shared memory left behind: $left"
echo "a spawned child's crash ended the job"
