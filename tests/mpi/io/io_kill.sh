#!/bin/sh
# SPDX-License-Identifier: MIT
# io_kill.sh BIPLOAD PROGRAM NP DIR MODE - a job writes part A of a file
# collectively, MPI_File_sync, then writes part B until it is killed:
#   timeout: bipload's --timeout stops the job (status 124);
#   kill:    the job's bipload is sent SIGKILL once A is synced.
# A second job then checks that part A is intact byte for byte
# (io_kill.c).  DIR is made under the build directory and removed.
set -u
bipload=$1 prog=$2 np=$3 base=$4 mode=$5
dir=$(mktemp -d "$base/io_kill.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
case "$mode" in
timeout)
	"$bipload" -q -sz "$np" --timeout 4 "$prog" write "$dir" >"$dir/out" 2>&1
	rc=$?
	[ "$rc" -eq 124 ] || { cat "$dir/out"; echo "FAIL: status $rc, want 124 (--timeout)"; exit 1; }
	;;
kill)
	"$bipload" -q -sz "$np" --timeout 60 "$prog" write "$dir" >"$dir/out" 2>&1 &
	job=$!
	k=0
	until [ -f "$dir/synced" ]; do
		k=$((k + 1))
		kill -0 "$job" 2>/dev/null || { cat "$dir/out"; echo "FAIL: the job ended before part A was synced"; exit 1; }
		[ "$k" -lt 600 ] || { kill -9 "$job"; echo "FAIL: part A never synced"; exit 1; }
		sleep 0.1
	done
	sleep 0.5
	kill -9 "$job"
	wait "$job"
	# The processes of a launcher killed outright are left to die on
	# their own (their connection to it is gone); wait for them.
	k=0
	while pgrep -f "$prog write $dir" >/dev/null 2>&1; do
		k=$((k + 1))
		[ "$k" -lt 100 ] || break
		sleep 0.1
	done
	;;
*)
	echo "unknown mode $mode"
	exit 2
	;;
esac
grep -q "part A synced" "$dir/out" || { cat "$dir/out"; echo "FAIL: part A was never synced"; exit 1; }
"$bipload" -q -sz "$np" --timeout 60 "$prog" check "$dir" || { echo "FAIL: part A damaged"; exit 1; }
echo "PASS: part A intact after the job was killed ($mode)"
