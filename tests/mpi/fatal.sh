#!/bin/sh
# SPDX-License-Identifier: MIT
# fatal.sh BIPLOAD PROGRAM WHAT NP - a job stopped by MPI_ERRORS_ARE_FATAL
# (WHAT=fatal; WHAT=count, a byte count that overflows; WHAT=onebad, an
# error in a collective that only rank 1 sees) or by MPI_Abort
# (WHAT=abort), or by bipload when rank 1 exits after such an error was
# returned to it (WHAT=onebadreturn): bipload fails, and the message
# names the host, the pid, the rank, the call, the error and a hint.
# The other ranks wait in the collective: bipload stops them, before its
# own --timeout.
set -u
bipload=$1 prog=$2 what=$3 np=$4
err=$(mktemp)
trap 'rm -f "$err"' EXIT

mode=$what
[ "$what" = count ] && mode=overflowfatal
"$bipload" -q -sz "$np" --timeout 60 "$prog" "$mode" 2>"$err" >/dev/null
rc=$?
fail() {
	echo "fatal.sh: $what: $1" >&2
	echo "--- stderr ---" >&2
	cat "$err" >&2
	exit 1
}
[ "$rc" -ne 0 ] || fail "bipload succeeded"
grep -q "^bipload: timed out" "$err" && fail "the job ran until bipload's timeout"
grep -q "FAILED" "$err" && fail "a process went on after the error"
host=$(uname -n)
case "$what" in
fatal)
	last=$((np - 1))
	grep -q "^mpi: host $host, pid [0-9]*, rank $last: MPI_Send: MPI_ERR_RANK: rank $((np + 5)) is not in the communicator (size $np)" "$err" ||
		fail "no message naming host, pid, rank, call, error and values"
	grep -q "^mpi: hint: ranks are 0 to" "$err" || fail "no hint"
	grep -q "MPI_ERRORS_ARE_FATAL" "$err" || fail "the handler is not named"
	;;
count)
	grep -q "^mpi: host $host, pid [0-9]*, rank 0: MPI_Send: MPI_ERR_COUNT: count 5 times the datatype's size (4611686018427387904 bytes) or extent (4611686018427387904 bytes) overflows the byte count" "$err" ||
		fail "no message naming the call and the overflow"
	;;
onebad)
	grep -q "^mpi: host $host, pid [0-9]*, rank 1: MPI_Allgatherv: MPI_ERR_COUNT: count -1 is negative" "$err" ||
		fail "no message naming host, pid, rank, call, error and value"
	grep -q "MPI_ERRORS_ARE_FATAL" "$err" || fail "the handler is not named"
	;;
onebadreturn)
	grep -q "^rank 1: MPI_Allgatherv returned MPI_ERR_COUNT" "$err" ||
		fail "rank 1 did not get MPI_ERR_COUNT"
	grep -q "^bipload: node 1 (host $host, pid [0-9]*) exited with status 3" "$err" ||
		fail "bipload does not say which node ended and how"
	[ "$rc" -eq 3 ] || fail "exit status $rc, expected 3"
	;;
abort)
	grep -q "^mpi: host $host, pid [0-9]*, rank 0: MPI_Abort called with error code 7" "$err" ||
		fail "no message naming host, pid, rank and the code"
	[ "$rc" -eq 7 ] || fail "exit status $rc, expected 7"
	;;
esac
echo "fatal.sh: $what on $np processes: stopped, status $rc, message as expected"
