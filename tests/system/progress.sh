#!/bin/sh
# SPDX-License-Identifier: MIT
# BIP_PROGRESS_THREAD=1: a 64 MiB send (bip_tisend, and MPI_Isend with a
# 1 MiB MPI_Iallreduce) completes while its sender computes without
# calling the library (overlap.c): over shm's pipelined path (the one that
# needs the sender's help: process_vm_readv off), ofi over tcp, and the
# simulated board.  Without the thread, the same run on shm's pipelined
# path does not move (the control: the test can fail).  The time limit is
# only where a failing run gives up.
# Usage: progress.sh BIPLOAD OVERLAP [shm]   (shm: over shm only)
set -u
bipload=$1
prog=$2
only=${3:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out
n=0
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
words=16777216
run() { # NAME MODE ENV...
	name=$1 mode=$2
	shift 2
	n=$((n + 1))
	env "$@" "$bipload" -q -sz 2 --timeout 150 "$prog" "$mode" "$dir/flag$n" "$words" 60 \
		>"$out" 2>&1 || fail "$name $mode: the job failed"
	grep -q "moved while computing; test after: complete" "$out" ||
		fail "$name $mode: not moved while the sender computed"
	echo "$name $mode: $(grep 'test after' "$out")"
}
for mode in bip mpi; do
	run shm "$mode" BIP_NIC=shm BIP_SHM_CMA=0 BIP_PROGRESS_THREAD=1
	[ "$only" = shm ] && continue
	run ofi-tcp "$mode" BIP_NIC=ofi BIP_OFI_PROVIDER=tcp BIP_PROGRESS_THREAD=1
	run lanai "$mode" BIP_NIC=lanai BIP_PROGRESS_THREAD=1
done
# The control: no thread, the sender's help needed, nothing moves.
BIP_NIC=shm BIP_SHM_CMA=0 "$bipload" -q -sz 2 --timeout 150 "$prog" bip "$dir/flag0" \
	"$words" 3 >"$out" 2>&1 && fail "without the thread: moved while the sender computed"
grep -q "nothing moved while computing; test after: not complete" "$out" ||
	fail "without the thread: not the expected failure"
echo "control without the thread: $(grep 'test after' "$out")"
# Misuse.
BIP_PROGRESS_THREAD=yes "$bipload" -q -sz 2 "$prog" bip "$dir/flag9" 8 1 >"$out" 2>&1 &&
	fail "BIP_PROGRESS_THREAD=yes accepted"
grep -q "BIP_PROGRESS_THREAD=yes: expected 0 or 1" "$out" || fail "BIP_PROGRESS_THREAD=yes not named"
exit 0
