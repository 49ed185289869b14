#!/bin/sh
# SPDX-License-Identifier: MIT
# lanai-sim starts with a job and goes away with it, leaving no process
# and no shared memory, whatever the way the job ends.
# Usage: startstop.sh job|killed|byhand|nofirmware|idle BIPLOAD STREAM LANAI_SIM
set -u
what=$1
bipload=$2
prog=$3
sim=$4
out=$(mktemp)
trap 'rm -f "$out"' EXIT
uid=$(id -u)
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
# Wait (at most 30 s, a safety net) until the command succeeds.
wait_until() {
	i=0
	until "$@"; do
		i=$((i + 1))
		[ "$i" -lt 300 ] || return 1
		sleep 0.1
	done
}
firmware_of() {
	pgrep -f "lanai-sim -j $1 " || true
}
no_firmware() {
	[ -z "$(firmware_of "$1")" ]
}
no_segment() {
	! ls /dev/shm | grep -q "^bip-$uid-$1-"
}
job_of_output() {
	sed -n 's/^bipload: [0-9]* nodes, job \([0-9A-Za-z]*\)$/\1/p' "$out" | head -1
}
both_waiting() {
	grep -q "^node 0: waiting" "$out" && grep -q "^node 1: waiting" "$out"
}
state_of() {
	sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null
}

case "$what" in
job)
	BIP_NIC=lanai "$bipload" -sz 2 --timeout 60 "$prog" short >"$out" 2>&1 ||
		fail "the job failed"
	job=$(job_of_output)
	[ -n "$job" ] || fail "no job id"
	grep -q "^bip: 2 nodes, driver lanai" "$out" || fail "not run on the board"
	no_firmware "$job" || fail "lanai-sim still runs"
	no_segment "$job" || fail "shared memory left: $(ls /dev/shm | grep "$job")"
	;;
killed)
	# bipload killed with SIGKILL: the firmware ends (its parent died), the
	# processes' waits then fail, and nothing is left.
	BIP_NIC=lanai "$bipload" -sz 2 "$prog" hang "$$" >"$out" 2>&1 &
	loader=$!
	wait_until both_waiting || { kill -9 $loader; fail "the nodes did not start"; }
	job=$(job_of_output)
	fwpid=$(firmware_of "$job")
	[ -n "$fwpid" ] || { kill -9 $loader; fail "no lanai-sim for job $job"; }
	kill -9 $loader
	wait $loader 2>/dev/null
	wait_until no_firmware "$job" || { kill -9 $fwpid; fail "lanai-sim outlived bipload"; }
	nodes_gone() {
		[ -z "$(pgrep -f "$prog hang $$\$" || true)" ]
	}
	if ! wait_until nodes_gone; then
		pkill -9 -f "$prog hang $$\$"
		fail "the nodes kept waiting without a firmware"
	fi
	no_segment "$job" || fail "shared memory left: $(ls /dev/shm | grep "$job")"
	;;
byhand)
	# The firmware started by hand ends by itself once the job's processes
	# have attached and released their boards.
	job=hand$$
	"$sim" -j "$job" -n 2 -q >"$out" 2>&1 &
	fw=$!
	wait_until test -e "/dev/shm/bip-$uid-$job-lanai" || fail "no board segment"
	for n in 0 1; do
		BIP_NIC=lanai BIP_JOBID=$job BIP_NODE=$n BIP_OPTS=n2q "$prog" short 30 >>"$out" 2>&1 &
	done
	wait %2 || fail "node 0 failed"
	wait %3 || fail "node 1 failed"
	grep -q "^node 1: 30 messages, every word right" "$out" || fail "the stream failed"
	wait $fw
	rc=$?
	[ "$rc" -eq 0 ] || fail "lanai-sim exited with $rc"
	no_segment "$job" || fail "shared memory left"
	;;
nofirmware)
	job=none$$
	BIP_NIC=lanai BIP_JOBID=$job BIP_NODE=0 BIP_OPTS=n2 "$prog" short >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fail "exit status $rc, expected 1"
	grep -qxF "bip: bip_init: lanai: no simulated board: lanai-sim is not running for job $job on this host (no /dev/shm/bip-$uid-$job-lanai); run the program with bipload (BIP_NIC=lanai starts lanai-sim), or start 'lanai-sim -j $job -n 2' first" "$out" ||
		fail "not the message expected"
	# A second firmware for the same job is refused, the first left alone.
	"$sim" -j "$job" -n 2 -q >>"$out" 2>&1 &
	fw=$!
	wait_until test -e "/dev/shm/bip-$uid-$job-lanai" || fail "no board segment"
	"$sim" -j "$job" -n 2 -q >>"$out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || { kill $fw; fail "second firmware: exit status $rc"; }
	grep -qF "lanai-sim: /dev/shm/bip-$uid-$job-lanai exists: a firmware already serves job $job" "$out" ||
		{ kill $fw; fail "no message for the second firmware"; }
	kill $fw
	wait $fw
	no_segment "$job" || fail "shared memory left after SIGTERM"
	;;
idle)
	# With nothing to do the firmware sleeps (on its wake word), so it
	# takes no core while the processes wait.
	BIP_NIC=lanai "$bipload" -sz 2 "$prog" hang "$$" >"$out" 2>&1 &
	loader=$!
	wait_until both_waiting || { kill $loader; fail "the nodes did not start"; }
	job=$(job_of_output)
	fwpid=$(firmware_of "$job")
	sleeping() {
		[ "$(state_of "$fwpid")" = S ]
	}
	wait_until sleeping
	ok=$?
	kill $loader
	wait $loader
	[ "$ok" -eq 0 ] || fail "lanai-sim (pid $fwpid) never slept"
	wait_until no_firmware "$job" || fail "lanai-sim still runs"
	no_segment "$job" || fail "shared memory left"
	;;
*)
	echo "usage: startstop.sh job|killed|byhand|nofirmware|idle BIPLOAD STREAM LANAI_SIM"
	exit 2
	;;
esac
cat "$out"
echo "PASS"
