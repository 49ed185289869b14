#!/bin/sh
# SPDX-License-Identifier: MIT
# A second, unprivileged user of the machine attacks jobs of this one (the
# threat model of bip(7)).  The test creates that user (useradd) and runs
# each attack with its identity (setpriv); the jobs are started by hand
# with a known job id, the worst case, since bipload's job ids cannot be
# guessed.  Each attack must leave the job either running correctly or
# failing with a clear message naming the cause: never a crash, never a
# hang, and no file outside the job's own touched.
#
#  shm-empty, shm-random, shm-forged, shm-symlink
#      the attacker creates the job's segment names in /dev/shm first: an
#      empty file, random bytes, a header with the right magic and bad
#      offsets, a symlink to a file of the victim's
#  oob-silent, oob-garbage, oob-replay
#      over ofi, the attacker connects to node 0's start-up port and says
#      nothing, sends garbage, or replays what a real node 1 sent in an
#      earlier job of the same id and secret (recorded by a relay); node 1
#      is on another host name of this machine (localhost), so that the
#      exchange goes over TCP as between hosts
#  oob-local-silent, oob-local-garbage
#      over ofi with both nodes on one host name, the attacker connects to
#      node 0's UNIX socket of the start-up exchange (its name, which only
#      the secret gives beforehand, is visible once it listens) and says
#      nothing or sends garbage
#  trace-symlink
#      over lanai, the attacker plants a symlink at the path of the trace
#      file, in a directory of its own, pointing at a file of the victim's
#
# Usage: attack.sh BIPINFO BIPLOAD CONFORMANCE ATTACKER_PY SHM_LAYOUT_H [ATTACK...]
set -u
bipinfo=$1
bipload=$2
prog=$3
attacker_py=$4
layout_h=$5
shift 5
attacks=${*:-shm-empty shm-random shm-forged shm-symlink oob-silent oob-garbage oob-replay oob-local-silent oob-local-garbage trace-symlink}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: creating a second user (useradd) needs root"
	exit 77
fi
# The attacker cannot run an interpreter from this user's home.
python=/usr/bin/python3
for c in useradd setpriv $python; do
	if ! command -v "$c" >/dev/null; then
		echo "SKIP: $c is not installed"
		exit 77
	fi
done
user=bipattack
if ! id -u "$user" >/dev/null 2>&1 &&
   ! useradd -r -M -d /nonexistent -s /usr/sbin/nologin "$user" 2>/dev/null; then
	echo "SKIP: cannot create the user $user"
	exit 77
fi
uid=$(id -u "$user")
as_attacker() {
	setpriv --reuid="$uid" --regid="$(id -g "$user")" --clear-groups -- "$@"
}

dir=$(mktemp -d)
chmod 755 "$dir"
trap 'rm -rf "$dir"; rm -f /dev/shm/bip-0-atk$$*' EXIT
# Where the attacker may write (its markers and recordings).
adir=$dir/scratch
mkdir "$adir"
chmod 777 "$adir"
# A file of the victim's that no attack may touch.
precious=$dir/precious
echo "the victim's data" >"$precious"
chmod 600 "$precious"
sum=$(cksum <"$precious")
{
	echo 2
	for _ in 0 1; do
		echo "127.0.0.1 0"
		echo 256
		echo 256
	done
} >"$dir/conf"
# The same two nodes on two host names of this machine: between "hosts".
sed '5s/^127.0.0.1 0$/localhost 0/' "$dir/conf" >"$dir/conf2"
secret=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
failures=0

fail() {
	echo "FAIL: $attack: $*"
	failures=$((failures + 1))
}

# Start node $2 then node $3 of job $1 by hand, with the environment in
# $jobenv and the configuration $jobconf, running the command in $between
# (if any) in between; wait for both.  Sets rc0, rc1; output in $dir/out0,
# $dir/out1.
run_job() {
	for node in $2 $3; do
		env $jobenv BIPCONF="$jobconf" BIP_NODE=$node BIP_JOBID="$1" BIP_SECRET="$secret" \
			BIP_OPTS= BIP_INIT_TIMEOUT=10 \
			timeout 60 "$prog" token >"$dir/out$node" 2>&1 &
		eval "pid$node=$!"
		if [ "$node" = "$2" ]; then
			sleep 0.2
			[ -n "$between" ] && eval "$between"
		fi
	done
	wait "$pid0"
	rc0=$?
	wait "$pid1"
	rc1=$?
}

# Start the attacker ($*) as the other user, and wait until it is connected.
attack_connected() {
	rm -f "$adir/connected"
	ATTACKER_CONNECTED=$adir/connected as_attacker $python "$attacker_py" "$@" &
	apid=$!
	n=0
	while [ ! -e "$adir/connected" ] && [ "$n" -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
}

# The name of node 0's UNIX socket of the start-up exchange, as this
# machine lists it (/proc/net/unix, which every user can read) once node 0
# listens: the socket of node 0's among the listed ones (node 0 runs under
# timeout, $pid0).
local_name() {
	k=0
	while [ "$k" -lt 100 ]; do
		inodes=$(for p in $(pgrep -P "$pid0"); do ls -l /proc/"$p"/fd 2>/dev/null; done |
			sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p')
		for i in $inodes; do
			name=$(awk -v i="$i" '$7 == i && $8 ~ /^@bip-oob-/ { print substr($8, 2) }' \
				/proc/net/unix)
			[ -n "$name" ] && echo "$name" && return 0
		done
		sleep 0.1
		k=$((k + 1))
	done
	return 1
}

# The other user connects to node 0's UNIX socket ($1: silent or garbage).
local_attack() {
	name=$(local_name) || { fail "node 0 never listened on a UNIX socket"; return; }
	attack_connected "unix-$1" "$name"
}

# The job ran, or failed with a message matching $1 (grep -E); no crash.
judge() {
	for node in 0 1; do
		eval "rc=\$rc$node"
		if [ "$rc" -eq 124 ]; then
			fail "node $node hung"
		elif [ "$rc" -gt 128 ]; then
			fail "node $node died of signal $((rc - 128))"
		elif grep -qE 'Sanitizer|Segmentation|runtime error' "$dir/out$node"; then
			fail "node $node crashed"
		elif [ "$rc" -ne 0 ] && ! grep -qE "$1" "$dir/out$node"; then
			fail "node $node failed (status $rc) without naming the cause"
		fi
		sed "s/^/    node $node: /" "$dir/out$node"
	done
	if [ "$(cksum <"$precious")" != "$sum" ]; then
		fail "the victim's file was changed"
	fi
}

# The job must have run correctly.
judge_ran() {
	judge "^$"
	if [ "$rc0" -ne 0 ] || [ "$rc1" -ne 0 ]; then
		fail "the job did not run (status $rc0, $rc1)"
	fi
}

# A segment header of node $1 with the right magic and version (from the
# layout header) and hostile sizes and offsets, marked ready.
forged_header() {
	version=$(sed -n 's/^#define BIP_SHM_VERSION \([0-9]*\).*/\1/p' "$layout_h")
	$python -c '
import os, struct, sys
node, version = int(sys.argv[1]), int(sys.argv[2])
seg = bytearray(os.urandom(65536))
struct.pack_into("<IIIIiIQQQQQ", seg, 0, 0x42495053, version, 2, node, 1, 0,
                 1 << 62, 0xfffffffffffff000, 1 << 40, 65530, 0x7fffffffffff)
struct.pack_into("<I", seg, 128, 1)
sys.stdout.buffer.write(seg)' "$1" "$version"
}

ofi_ok() {
	line=$("$bipinfo" --parsable | grep "^driver\.ofi=")
	case "$line" in
	*=available*) return 0 ;;
	esac
	return 1
}

lanai_ok() {
	line=$("$bipinfo" --parsable | grep "^driver\.lanai=")
	case "$line" in
	*=available*) return 0 ;;
	esac
	return 1
}

n=0
for attack in $attacks; do
	n=$((n + 1))
	job=atk$$x$n
	jobenv="BIP_NIC=shm"
	jobconf=$dir/conf
	echo "== $attack"
	case $attack in
	shm-empty | shm-random | shm-forged | shm-symlink)
		for node in 0 1; do
			name=/dev/shm/bip-0-$job-$node
			case $attack in
			shm-empty) as_attacker sh -c ": >$name && chmod 600 $name" ;;
			shm-random) as_attacker sh -c "head -c 65536 /dev/urandom >$name && chmod 666 $name" ;;
			shm-forged) forged_header $node | as_attacker sh -c "cat >$name && chmod 600 $name" ;;
			shm-symlink) as_attacker ln -s "$precious" "$name" ;;
			esac
		done
		between= run_job "$job" 1 0
		judge "/dev/shm/bip-0-$job-[01]"
		grep -q "$user\|uid $uid" "$dir/out0" "$dir/out1" ||
			fail "no message names the owner, $user"
		rm -f /dev/shm/bip-0-"$job"-*
		;;
	oob-silent | oob-garbage | oob-replay)
		if ! ofi_ok; then
			echo "   skipped: the ofi driver cannot run here"
			continue
		fi
		port=$((30000 + $$ % 10000 + n * 20))
		jobenv="BIP_NIC=ofi BIP_OFI_PROVIDER=tcp BIP_OOB_PORT=$port"
		jobconf=$dir/conf2
		case $attack in
		oob-silent) between="attack_connected silent 127.0.0.1 $port 30" ;;
		oob-garbage) between="attack_connected garbage 127.0.0.1 $port" ;;
		oob-replay)
			# A first job whose node 1 goes through the attacker's relay,
			# recording what node 1 says.
			rec=$dir/recorded
			as_attacker $python "$attacker_py" proxy $((port + 10)) 127.0.0.1 "$port" \
				"$adir/rec.tmp" &
			apid=$!
			sleep 0.3
			BIPCONF="$jobconf" BIP_NODE=1 BIP_JOBID="$job" BIP_SECRET="$secret" \
				BIP_OPTS= BIP_INIT_TIMEOUT=8 BIP_NIC=ofi BIP_OFI_PROVIDER=tcp \
				BIP_OOB_PORT=$((port + 10)) timeout 60 "$prog" token >"$dir/out1" 2>&1 &
			p1=$!
			BIPCONF="$jobconf" BIP_NODE=0 BIP_JOBID="$job" BIP_SECRET="$secret" \
				BIP_OPTS= BIP_INIT_TIMEOUT=8 BIP_NIC=ofi BIP_OFI_PROVIDER=tcp \
				BIP_OOB_PORT=$port timeout 60 "$prog" token >"$dir/out0" 2>&1
			rc0=$?
			wait "$p1"
			rc1=$?
			wait "$apid"
			mv "$adir/rec.tmp" "$rec" 2>/dev/null
			if [ "$rc0" -ne 0 ] || [ "$rc1" -ne 0 ] || [ ! -s "$rec" ]; then
				fail "the recording job did not run through the relay ($rc0, $rc1)"
				sed 's/^/    /' "$dir/out0" "$dir/out1"
				continue
			fi
			# The same job id and secret again: node 0, the replay, node 1.
			between="attack_connected replay 127.0.0.1 $port $rec"
			;;
		esac
		run_job "$job" 0 1
		kill "$apid" 2>/dev/null
		wait "$apid" 2>/dev/null
		judge_ran
		grep -q "dropped a connection" "$dir/out0" ||
			fail "node 0 did not report the dropped connection"
		;;
	oob-local-silent | oob-local-garbage)
		if ! ofi_ok; then
			echo "   skipped: the ofi driver cannot run here"
			continue
		fi
		jobenv="BIP_NIC=ofi BIP_OFI_PROVIDER=tcp"
		between="local_attack ${attack#oob-local-}"
		run_job "$job" 0 1
		kill "$apid" 2>/dev/null
		wait "$apid" 2>/dev/null
		judge_ran
		grep -q "dropped a connection from this host (pid [0-9]*, uid $uid): a process of another user" \
			"$dir/out0" || fail "node 0 did not report the other user's connection"
		;;
	trace-symlink)
		if ! lanai_ok; then
			echo "   skipped: the lanai driver cannot run here"
			continue
		fi
		tdir=$dir/attacker
		mkdir "$tdir"
		chown "$user" "$tdir"
		as_attacker ln -s "$precious" "$tdir/trace"
		out=$dir/out0
		BIP_NIC=lanai BIP_LANAI_TRACE="$tdir/trace" BIP_SECRET="$secret" \
			timeout 60 "$bipload" -q -sz 2 "$prog" token >"$out" 2>&1
		rc0=$?
		rc1=0
		: >"$dir/out1"
		judge "$tdir/trace"
		rm -rf "$tdir"
		;;
	*)
		echo "attack.sh: no attack $attack" >&2
		exit 2
		;;
	esac
done

if [ "$failures" -ne 0 ]; then
	echo "FAIL: $failures attack(s) got through"
	exit 1
fi
echo "PASS"
