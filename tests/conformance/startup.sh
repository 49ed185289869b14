#!/bin/sh
# SPDX-License-Identifier: MIT
# Start-up failure, crash and error messages, seen from the user's side.
# Usage: startup.sh noinit|crash|killed|exited|orphans|messages BIPLOAD PROG
set -u
what=$1
bipload=$2
prog=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}

case "$what" in
noinit)
	# Node 2 never calls bip_init: the others fail naming it.
	BIP_INIT_TIMEOUT=2 "$bipload" -sz 3 --timeout 60 "$prog" noinit >"$out" 2>&1
	rc=$?
	[ "$rc" -ne 0 ] || fail "bipload exited 0"
	[ "$rc" -ne 124 ] || fail "the job hung until bipload's time-out"
	grep -q "bip_init: \([a-z0-9]*: \)\{0,1\}timed out .* waiting for node 2 " "$out" ||
		fail "no message naming node 2"
	grep -q "bipload: node [01] (host .*, pid [0-9]*) exited with status 1" "$out" ||
		fail "bipload does not name the failed node"
	;;
crash)
	# In sanitizer builds, let the signal kill the process as it would without.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
	export ASAN_OPTIONS
	"$bipload" -sz 4 --timeout 60 "$prog" crash >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 139 ] || fail "exit status $rc, expected 139 (128 + SIGSEGV)"
	grep -q "bipload: node 1 (host .*, pid [0-9]*) killed by signal SIGSEGV" "$out" ||
		fail "bipload does not name node 1 and its signal"
	grep -q "bipload: stopped nodes 0 2 3" "$out" || fail "the other nodes were not stopped"
	job=$(sed -n 's/^job //p' "$out")
	[ -n "$job" ] || fail "node 0 did not print its job id"
	left=$(ls /dev/shm | grep "^bip-$(id -u)-" | grep -F -- "$job" || true)
	[ -z "$left" ] || fail "shared memory left behind: $left"
	;;
killed | exited)
	# Node 1 is killed with SIGKILL, or leaves with _exit(1) as a library's
	# fatal error may: no handler of its own runs, so what it had in shared
	# memory (libfabric's shm provider names regions "PID:...") is for
	# bipload to remove.
	case "$what" in
	killed) want=137 how="killed by signal SIGKILL" ;;
	exited) want=1 how="exited with status 1" ;;
	esac
	"$bipload" -sz 4 --timeout 60 "$prog" "$what" >"$out" 2>&1
	rc=$?
	[ "$rc" -eq "$want" ] || fail "exit status $rc, expected $want"
	pid=$(sed -n "s/^bipload: node 1 (host .*, pid \\([0-9]*\\)) $how\$/\\1/p" "$out")
	[ -n "$pid" ] || fail "bipload does not name node 1, its pid and how it ended"
	job=$(sed -n 's/^job //p' "$out")
	[ -n "$job" ] || fail "node 0 did not print its job id"
	left=$(ls /dev/shm | grep -e "^bip-$(id -u)-.*$job" -e "^$pid:" || true)
	[ -z "$left" ] || fail "shared memory left behind: $left"
	;;
orphans)
	# bipload is killed with SIGKILL while its job exchanges messages: no
	# handler of its own runs, yet every process of the job (and lanai-sim)
	# must be gone within 2 s, and nothing of the job left in /dev/shm.
	"$bipload" -sz 3 --timeout 60 "$prog" orphan >"$out" 2>&1 &
	bl=$!
	n=0
	while [ "$(grep -c '^node [0-9] runs as pid' "$out")" -lt 3 ]; do
		n=$((n + 1))
		[ "$n" -lt 300 ] || { kill -9 "$bl"; fail "the job did not start within 30 s"; }
		sleep 0.1
	done
	job=$(sed -n 's/^job //p' "$out")
	pids=$(sed -n 's/^node [0-9] runs as pid \([0-9]*\)$/\1/p' "$out")
	# Whatever else runs for the job (lanai-sim) names its id in its arguments.
	for f in /proc/[0-9]*/cmdline; do
		p=${f#/proc/}
		p=${p%/cmdline}
		[ "$p" = "$bl" ] && continue
		tr '\0' ' ' <"$f" 2>/dev/null | grep -q -- "$job" && pids="$pids $p"
	done
	kill -9 "$bl"
	wait "$bl" 2>/dev/null
	n=0
	while :; do
		alive=""
		for p in $pids; do
			if [ -d "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then
				alive="$alive $p"
			fi
		done
		[ -z "$alive" ] && break
		n=$((n + 1))
		if [ "$n" -ge 20 ]; then
			for p in $alive; do
				echo "left: $p $(tr '\0' ' ' <"/proc/$p/cmdline")"
				kill -9 "$p"
			done
			fail "processes of the job still run 2 s after bipload's death:$alive"
		fi
		sleep 0.1
	done
	left=$(ls /dev/shm | grep "^bip-$(id -u)-.*$job" || true)
	[ -z "$left" ] || fail "shared memory left behind: $left"
	echo "all $(echo $pids | wc -w) processes of job $job ended within 2 s of bipload's death"
	;;
messages)
	# Misuse: each error counted by a node is one line on stderr naming the
	# node and the call (PROG is the bad-input program).
	"$bipload" -sz 2 --timeout 60 "$prog" >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] || fail "exit status $rc"
	for node in 0 1; do
		want=$(sed -n "s/^node $node errors \([0-9]*\)\$/\1/p" "$out")
		[ -n "$want" ] || fail "node $node did not print its error count"
		got=$(grep -c "^bip: node $node: bip_[a-z_]*: ." "$out")
		[ "$got" -eq "$want" ] ||
			fail "node $node: $got error lines for $want errors counted"
	done
	# Before bip_init there is no node number yet; the call is still named.
	grep -q "^bip: bip_tisend: called before bip_init\$" "$out" ||
		fail "no message for a call before bip_init"
	;;
*)
	echo "usage: startup.sh noinit|crash|killed|exited|orphans|messages BIPLOAD PROG"
	exit 2
	;;
esac
cat "$out"
echo "PASS"
