#!/bin/sh
# SPDX-License-Identifier: MIT
# Sleeping beyond one thread in block mode (sleepwait.c):
#  auto     BIP_WAIT=auto (the default) with more processes than
#           processors: each receiver blocked 2 s uses almost no processor
#           (it sleeps once its wait lasts BIP_SLEEP_AFTER), and the
#           sender's message still wakes it;
#  threads  BIP_WAIT=block, two threads of one process blocked on two
#           tags: the process uses almost no processor, and both are woken.
#  affinity auto again, two processes on a host of two or more processors,
#           but the job confined to one of them (taskset): the processors
#           counted are the affinity's, so they sleep as well; bipinfo --job
#           says so, and says where the count comes from (the affinity,
#           SLURM_CPUS_ON_NODE, or the processors online with BIP_BIND=core).
# The longest sleep is made 30 s (BIP_SLEEP_MAX) and the job's time limit
# 20 s: the job ends in time only if the messages wake the sleepers.  A
# short message, and a long one (a transfer that must wake the waiters too).
# Usage: sleepmore.sh auto|threads BIPLOAD SLEEPWAIT [BIPINFO VAR=VALUE...]
# With BIPINFO and variables (BIP_NIC=lanai, ...): the same over that
# driver, skipped (exit 77, with the reason) where the driver cannot run or
# cannot sleep; the misuse checks run without them only.
set -u
mode=$1
bipload=$2
prog=$3
shift 3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() {
	cat "$out"
	echo "FAIL: $mode: $*"
	exit 1
}
ncpu=$(getconf _NPROCESSORS_ONLN)
case "$mode" in
auto)
	# One process more than the processors: this host is oversubscribed.
	np=$((ncpu + 1))
	if [ "$np" -gt 17 ]; then
		echo "SKIP: $ncpu processors: oversubscribing them takes more processes than this test starts"
		exit 77
	fi
	set_wait="BIP_WAIT=auto"
	args=""
	;;
threads)
	np=2
	set_wait="BIP_WAIT=block"
	args="-t"
	;;
affinity)
	np=2
	set_wait="BIP_WAIT=auto"
	args=""
	if [ "$ncpu" -lt 2 ]; then
		echo "SKIP: one processor: two processes outnumber it without confining them"
		exit 77
	fi
	command -v taskset >/dev/null || { echo "SKIP: no taskset (util-linux)"; exit 77; }
	# The first processor this test may use.
	cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
	confine="taskset -c $cpu"
	;;
*)
	echo "usage: sleepmore.sh auto|threads|affinity BIPLOAD SLEEPWAIT [BIPINFO VAR=VALUE...]"
	exit 2
	;;
esac
export "$set_wait"
if [ "$mode" != affinity ] && [ $# -gt 0 ]; then
	bipinfo=$1
	shift
	for v in "$@"; do export "$v"; done
	line=$("$bipinfo" --parsable | grep "^driver\.$BIP_NIC=")
	case "$line" in
	"") echo "SKIP: driver $BIP_NIC is not compiled in"; exit 77 ;;
	*=unavailable*) echo "SKIP: driver $BIP_NIC cannot run here: ${line#*=unavailable: }"; exit 77 ;;
	esac
	# The driver says why it cannot sleep (bipinfo --job shows its line).
	"$bipload" -q -sz "$np" --timeout 20 "$bipinfo" --job >"$out" 2>&1 ||
		fail "$*: bipinfo --job failed"
	if grep -q "cannot sleep" "$out"; then
		echo "SKIP: $*: $(grep -o "cannot sleep[^)]*" "$out" | head -1)"
		exit 77
	fi
	grep "^node 1 of $np" "$out"
fi
if [ "$mode" = affinity ]; then
	bipinfo=$1
	# How each process counts: confined, under Slurm's count, bound by the
	# launcher, and a count from Slurm that is not one (ignored).
	check_count() { # WHAT EXPECTED-WORDS COMMAND...
		what=$1 want=$2
		shift 2
		"$@" "$bipload" -q -sz 2 "$bipinfo" --job >"$out" 2>&1 || fail "$what: bipinfo --job failed"
		for k in 0 1; do
			grep -q "^node $k waits: $want" "$out" ||
				fail "$what: node $k does not say '$want'"
		done
		grep "^node 0 waits" "$out"
	}
	check_count "taskset" "auto: 2 processes on 1 processor (affinity): spins 5 rounds, yields" \
		$confine
	check_count "SLURM_CPUS_ON_NODE=1" "auto: 2 processes on 1 processor (SLURM_CPUS_ON_NODE)" \
		env SLURM_CPUS_ON_NODE=1
	check_count "--bind-to core" "auto: 2 processes on $ncpu processors (online)" \
		env BIP_BIND=core
	check_count "SLURM_CPUS_ON_NODE=x" "auto: 2 processes on $(nproc) processors (affinity)" \
		env SLURM_CPUS_ON_NODE=x
	shift
fi
for words in 8 65536; do
	# shellcheck disable=SC2086 # args is empty or one word; confine, words or none
	BIP_SLEEP_MAX=30 ${confine:-} "$bipload" -q -sz "$np" --timeout 60 "$prog" $args "$words" \
		>"$out" 2>&1 || fail "$words words: the job failed (not woken?)"
	n=1
	while [ "$n" -lt "$np" ]; do
		line=$(grep "^node $n: $words words right; blocked" "$out") ||
			fail "$words words: no result from node $n"
		# Processor time over the time blocked: under 5 %.
		echo "$line" | awk '{ t = $(NF - 4); c = $(NF - 1); exit !(t >= 1.5 && c < 0.05 * t) }' ||
			fail "$words words: $line (more than 5 % of a processor while blocked)"
		echo "$line"
		n=$((n + 1))
	done
done
[ -n "${BIP_NIC:-}" ] && exit 0
[ "$mode" = auto ] || exit 0
# Misuse.
for bad in x -1 60000001; do
	BIP_SLEEP_AFTER=$bad "$bipload" -q -sz 2 "$prog" 8 >"$out" 2>&1 &&
		fail "BIP_SLEEP_AFTER=$bad accepted"
	grep -q "BIP_SLEEP_AFTER=$bad: expected microseconds, 0 to 60000000" "$out" ||
		fail "BIP_SLEEP_AFTER=$bad not named"
done
exit 0
