#!/bin/sh
# SPDX-License-Identifier: MIT
# BIP_WAIT=block: a process blocked 2 s in bip_trecv uses almost no
# processor, and a message still wakes it.  The longest sleep is made 30 s
# (BIP_SLEEP_MAX) and the job's time limit 20 s: the job ends in time only
# if the sender's message wakes the receiver, and the sender's answer
# wakes the sender.  A short message, a long one prepushed into the pipe
# (shm), and a long one the receiver claims (on the networks: a rendezvous
# whose transfer must wake the waiter too); then a long one whose sender
# stops calling BIP halfway.
# Usage: sleep.sh BIPLOAD SLEEPWAIT [BIPINFO VAR=VALUE...]
# With BIPINFO and variables (BIP_NIC=lanai, BIP_NIC=ofi
# BIP_OFI_PROVIDER=tcp, ...): the same over that driver, skipped (exit
# 77, with the reason) where the driver cannot run or cannot sleep; the
# misuse checks run without them only.
set -u
bipload=$1
prog=$2
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
if [ $# -gt 0 ]; then
	bipinfo=$1
	shift
	for v in "$@"; do export "$v"; done
	line=$("$bipinfo" --parsable | grep "^driver\.$BIP_NIC=")
	case "$line" in
	"") echo "SKIP: driver $BIP_NIC is not compiled in"; exit 77 ;;
	*=unavailable*) echo "SKIP: driver $BIP_NIC cannot run here: ${line#*=unavailable: }"; exit 77 ;;
	esac
	# The driver says why it cannot sleep (bipinfo --job shows its line).
	BIP_WAIT=block "$bipload" -q -sz 2 --timeout 20 "$bipinfo" --job >"$out" 2>&1 ||
		fail "$*: bipinfo --job failed"
	if grep -q "cannot sleep" "$out"; then
		echo "SKIP: $*: $(grep -o "cannot sleep[^)]*" "$out" | head -1)"
		exit 77
	fi
	grep "^node 1 of 2" "$out"
fi
for words in 8 16384 65536; do
	BIP_WAIT=block BIP_SLEEP_MAX=30 "$bipload" -q -sz 2 --timeout 20 "$prog" "$words" \
		>"$out" 2>&1 || fail "$words words: the job failed (not woken?)"
	line=$(grep "^node 1: $words words right; blocked" "$out") || fail "$words words: no result"
	# Processor time over the time blocked: under 5 %.
	echo "$line" | awk '{ t = $(NF - 4); c = $(NF - 1); exit !(t >= 1.5 && c < 0.05 * t) }' ||
		fail "$words words: $line (more than 5 % of a processor while blocked)"
	echo "$line"
done
# A long message that stands halfway while its sender does not call BIP
# (sleepwait -s): the receiver, whose transfer waits for the sender, sleeps
# too.  Over shm it is blocked about 4 s, 2 of them stalled; a NIC that
# moves the data by itself ends the transfer sooner.
words=1048576
BIP_WAIT=block BIP_SLEEP_MAX=30 "$bipload" -q -sz 2 --timeout 20 "$prog" -s "$words" \
	>"$out" 2>&1 || fail "stalled send: the job failed"
line=$(grep "^node 1: $words words right; blocked" "$out") || fail "stalled send: no result"
echo "$line" | awk '{ t = $(NF - 4); c = $(NF - 1); exit !(t >= 1.5 && c < 0.05 * t) }' ||
	fail "stalled send: $line (more than 5 % of a processor while blocked)"
echo "stalled send: $line"
[ -n "${BIP_NIC:-}" ] && exit 0
# Misuse.
BIP_WAIT=sleep "$bipload" -q -sz 2 "$prog" 8 >"$out" 2>&1 && fail "BIP_WAIT=sleep accepted"
grep -q "BIP_WAIT=sleep: expected spin, yield, block or auto" "$out" || fail "BIP_WAIT=sleep not named"
BIP_WAIT=block BIP_SLEEP_MAX=0 "$bipload" -q -sz 2 "$prog" 8 >"$out" 2>&1 &&
	fail "BIP_SLEEP_MAX=0 accepted"
grep -q "BIP_SLEEP_MAX=0: expected seconds" "$out" || fail "BIP_SLEEP_MAX=0 not named"
exit 0
