#!/bin/sh
# SPDX-License-Identifier: MIT
# A node that joined the job crashes: the job ends, bipload names it, and
# nothing of the job is left in /dev/shm.
# Usage: grow.sh BIPLOAD GROW
set -u
bipload=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() {
	echo "FAIL: $*"
	cat "$out"
	exit 1
}
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_abort=0"
export ASAN_OPTIONS
"$bipload" -sz 2 --timeout 60 "$prog" crash >"$out" 2>&1
rc=$?
[ "$rc" -eq 134 ] || fail "exit status $rc, expected 134 (128 + SIGABRT)"
grep -q "^bipload: node 2 (host .*, pid [0-9]*) killed by signal SIGABRT$" "$out" ||
	fail "bipload does not name the new node 2 and its signal"
grep -q "^bipload: stopped nodes 0 1$" "$out" || fail "the first nodes were not stopped"
job=$(sed -n 's/^bipload: 2 nodes, job //p' "$out")
[ -n "$job" ] || fail "no job id"
left=$(ls /dev/shm | grep "^bip-$(id -u)-.*$job" || true)
[ -z "$left" ] || fail "shared memory left behind: $left"
echo "a new node's crash ended the job"
