#!/bin/sh
# SPDX-License-Identifier: MIT
# BIP_WAIT=block: a process blocked 2 s in bip_trecv uses almost no
# processor, and a message still wakes it.  The longest sleep is made 30 s
# (BIP_SLEEP_MAX) and the job's time limit 20 s: the job ends in time only
# if the sender's message wakes the receiver, and the sender's answer
# wakes the sender.  A short message, a long one prepushed into the pipe,
# and a long one the receiver claims.
# Usage: sleep.sh BIPLOAD SLEEPWAIT
set -u
bipload=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
for words in 8 16384 65536; do
	BIP_WAIT=block BIP_SLEEP_MAX=30 "$bipload" -q -sz 2 --timeout 20 "$prog" "$words" \
		>"$out" 2>&1 || fail "$words words: the job failed (not woken?)"
	line=$(grep "^node 1: $words words right; blocked" "$out") || fail "$words words: no result"
	# Processor time over the time blocked: under 5 %.
	echo "$line" | awk '{ t = $(NF - 4); c = $(NF - 1); exit !(t >= 1.5 && c < 0.05 * t) }' ||
		fail "$words words: $line (more than 5 % of a processor while blocked)"
	echo "$line"
done
# Misuse.
BIP_WAIT=sleep "$bipload" -q -sz 2 "$prog" 8 >"$out" 2>&1 && fail "BIP_WAIT=sleep accepted"
grep -q "BIP_WAIT=sleep: expected spin, yield, block or auto" "$out" || fail "BIP_WAIT=sleep not named"
BIP_WAIT=block BIP_SLEEP_MAX=0 "$bipload" -q -sz 2 "$prog" 8 >"$out" 2>&1 &&
	fail "BIP_SLEEP_MAX=0 accepted"
grep -q "BIP_SLEEP_MAX=0: expected seconds" "$out" || fail "BIP_SLEEP_MAX=0 not named"
exit 0
