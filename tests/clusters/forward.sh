#!/bin/sh
# SPDX-License-Identifier: MIT
# Messages between clusters through the relays of the gateway hosts
# (bipconf(5) "Clusters", bipgw(1)), on this machine: its names make the
# hosts, each cluster a set of them, so every message between the two
# clusters goes through two relays (bipload starts one per gateway host).
#
#   forward.sh BUILD MODE ARGS...
#   conformance GW NP TEST   conformance TEST on NP nodes
#   long GW NP               fwdcheck long: every size up to 64 MiB, checked
#   kill GW                  a relay is killed mid-job: with two gateways the
#                            job completes through the other; with one it
#                            fails naming the lost link
#   run GW NP PROGRAM ARGS   any program (the MPI tests) on NP nodes
#   grow GW NP               a job that grows (bip_grow(3), tests/grow):
#                            new nodes on bipload's host, then on a host of
#                            each cluster, exchange with every node directly
#                            or through the relays; a missing program, a
#                            host of no cluster, and a relay named as a
#                            destination fail clearly; --universe and
#                            MPI_UNIVERSE_SIZE leave the relays out
#   idle                     BIP_WAIT=block: a waiting node and the relays
#                            use under 5 % of a processor over an idle 2 s
#   retired                  the same with two gateways, after one's relay
#                            was killed while the rounds ran: node 1 has a
#                            path retired and probes it every BIP_REL_PROBE,
#                            asleep in between, and the job ends at once
#   ended                    node 3 ends while node 0 waits outside BIP: it
#                            asks node 0 for its last word as often as
#                            packets are sent again (tens of times, not
#                            every BIP_REL_RTO), the relays stay idle, and
#                            node 0 then reaches node 1 at once
#   waits                    auto mode counts the relays among the processes
#                            that share the host's processors (bipinfo --job)
#   bipgw                    bipgw's own usage and misuse
#
# GW: one (hosts H and localhost, one gateway) or two (clusters
# {H, 127.0.0.1} and {localhost, 127.0.0.2}, two gateways side by side).
set -u
build=$1 mode=$2
shift 2
bipload="$build/scripts/bipload"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
host=$(hostname 2>/dev/null || uname -n)
[ "$host" != localhost ] || { echo "SKIP: this host is called localhost"; exit 77; }
unset BIPCONF BIP_OPTS BIP_NODE BIP_JOBID BIP_HOST BIP_NIC

fail() {
	[ -f "$tmp/out" ] && cat "$tmp/out"
	echo "FAIL: $*"
	exit 1
}
. "$(dirname "$0")/wait.sh"

# kill_relay: the relay of gateway host $host killed (SIGKILL), in the job
# whose bipload writes to $tmp/out; sets id (the job's) and relay (its node).
kill_relay() {
	id=$(sed -n 's/^bipload: [0-9]* nodes*, job \([A-Za-z0-9]*\)$/\1/p' "$tmp/out")
	relay=$(sed -n "s/^bipload: node \([0-9]*\): the relay of gateway host $host .*/\1/p" "$tmp/out")
	[ -n "$id" ] && [ -n "$relay" ] || fail "no job id or relay node in bipload's output"
	_pid=""
	for _p in $(pgrep -x bipgw); do
		if { tr "\0" "\n" <"/proc/$_p/environ" | grep -qx "BIP_JOBID=$id"; } 2>/dev/null &&
			{ tr "\0" "\n" <"/proc/$_p/environ" | grep -qx "BIP_NODE=$relay"; } 2>/dev/null; then
			_pid=$_p
		fi
	done
	[ -n "$_pid" ] || fail "relay node $relay of job $id not found"
	kill -9 "$_pid"
}

# job_procs JOB: PID:NODE of every process of job JOB but node 0.
job_procs() {
	for _p in $(pgrep -x bipgw) $(pgrep -x fwdcheck); do
		_env=$(tr "\0" "\n" <"/proc/$_p/environ" 2>/dev/null) || continue
		echo "$_env" | grep -qx "BIP_JOBID=$1" || continue
		_node=$(echo "$_env" | sed -n 's/^BIP_NODE=//p')
		[ "$_node" = 0 ] || echo "$_p:$_node"
	done
}

# conf GW NP: NP nodes spread over the hosts in turn.
conf() {
	gw=$1 np=$2
	if [ "$gw" = two ]; then
		set -- "$host" localhost 127.0.0.1 127.0.0.2
	else
		set -- "$host" localhost
	fi
	nh=$#
	echo "$np"
	i=0
	while [ "$i" -lt "$np" ]; do
		k=$((i % nh + 1))
		eval "echo \"\${$k} 0\""
		j=0
		while [ "$j" -lt "$np" ]; do
			echo 256
			j=$((j + 1))
		done
		i=$((i + 1))
	done
	if [ "$gw" = two ]; then
		echo "cluster A shm $1 $3"
		echo "cluster B shm localhost $4"
		echo "gateway A:$1 B:localhost ofi"
		echo "gateway A:$3 B:$4 ofi"
	else
		echo "cluster A shm $1"
		echo "cluster B shm localhost"
		echo "gateway A:$1 B:localhost ofi"
	fi
}

case "$mode" in
conformance)
	conf "$1" "$2" >"$tmp/conf"
	"$bipload" -f "$tmp/conf" --timeout 100 "$build/tests/conformance/conformance" "$3" \
		>"$tmp/out" 2>&1 || fail "conformance $3 on $2 nodes in two clusters"
	grep -q "^bipload: node $2: the relay of gateway host $host " "$tmp/out" ||
		fail "no relay started on $host"
	grep -q "driver shm + fwd" "$tmp/out" || fail "node 0 does not forward"
	! grep -q "dropped" "$tmp/out" || fail "a relay dropped a packet of a job that ran clean"
	cat "$tmp/out"
	;;
waits)
	# Two nodes and two relays, all on this machine: four processes
	# that wait (spinning as if each had a processor of its own, when
	# there are fewer, made the relays' ping-pong 17 times slower).
	conf one 2 >"$tmp/conf"
	"$bipload" -f "$tmp/conf" --timeout 100 "$build/scripts/bipinfo" --job >"$tmp/out" 2>&1 ||
		fail "bipinfo --job in two clusters"
	[ "$(grep -c "^node [01] waits: auto: 4 processes on " "$tmp/out")" -eq 2 ] ||
		fail "the nodes do not count the two relays among the host's 4 processes"
	cat "$tmp/out"
	;;
run)
	gw=$1 np=$2
	shift 2
	conf "$gw" "$np" >"$tmp/conf"
	"$bipload" -f "$tmp/conf" --timeout 100 "$@" >"$tmp/out" 2>&1 ||
		fail "$* on $np nodes in two clusters"
	grep -q "driver shm + fwd" "$tmp/out" || fail "node 0 does not forward"
	cat "$tmp/out"
	;;
grow)
	conf "$1" "$2" >"$tmp/conf"
	if [ "$1" = two ]; then
		a=127.0.0.1 b=127.0.0.2
	else
		a=$host b=localhost
	fi
	"$bipload" -f "$tmp/conf" --timeout 100 "$build/tests/grow/grow" grow 2 \
		>"$tmp/out" 2>&1 || fail "grow 2 on $2 nodes in two clusters"
	relays=$(grep -c "^bipload: node [0-9]*: the relay of gateway host" "$tmp/out")
	first=$(($2 + relays))
	[ "$(grep -c ": exchanged with the 2 new nodes $first to $((first + 1))$" "$tmp/out")" \
		-eq "$2" ] || fail "not every node exchanged with nodes $first and $((first + 1))"
	grep -q "is a relay of the gateways" "$tmp/out" || fail "a relay as a destination: no message"
	cat "$tmp/out"
	"$bipload" -f "$tmp/conf" --timeout 100 "$build/tests/grow/grow" hosts 2 "$a" "$b" \
		>"$tmp/out" 2>&1 || fail "grow on hosts $a and $b"
	[ "$(grep -c ": exchanged with the 4 new nodes on 2 hosts" "$tmp/out")" -eq "$2" ] ||
		fail "not every node exchanged with the new nodes of both clusters"
	grep -q "^missing on $b: .*No such file or directory" "$tmp/out" ||
		fail "a missing program on $b: no message"
	grep -q "^other host: .*host bip-no-such-host: in no cluster of the job" "$tmp/out" ||
		fail "a host of no cluster: no message"
	cat "$tmp/out"
	# --universe counts the program's processes, not the relays, and so
	# does MPI_UNIVERSE_SIZE: NP + 2 leaves room for 2 children.
	BIP_INIT_TIMEOUT=20 "$bipload" -f "$tmp/conf" --universe $(($2 + 2)) --timeout 100 \
		"$build/tests/mpi/dpm/mpi_spawn" slots $(($2 + 2)) >"$tmp/out" 2>&1 ||
		fail "MPI_UNIVERSE_SIZE with --universe $(($2 + 2))"
	grep -q "^slots: a universe of $(($2 + 2)), 2 children, one more refused" "$tmp/out" ||
		fail "MPI_UNIVERSE_SIZE: no result"
	cat "$tmp/out"
	;;
long)
	conf "$1" "$2" >"$tmp/conf"
	"$bipload" -f "$tmp/conf" --timeout 200 "$build/tests/clusters/fwdcheck" long \
		>"$tmp/out" 2>&1 || fail "fwdcheck long on $2 nodes"
	[ "$(grep -c ': long: done$' "$tmp/out")" -eq "$2" ] || fail "not every node done"
	if [ "$1" = two ]; then
		grep -q "fwd (2 paths)" "$tmp/out" || fail "two gateways side by side: not 2 paths"
	fi
	cat "$tmp/out"
	;;
kill)
	gw=$1
	np=2
	[ "$gw" = two ] && np=4
	conf "$gw" "$np" >"$tmp/conf"
	# One gateway: the job must fail, and soon.  Two: the surviving path
	# must not be given up for slowness on a loaded machine (its relays
	# share the cores with everything else), so it gets a longer timeout.
	rt=3
	[ "$gw" = two ] && rt=15
	BIP_RETRY_TIMEOUT=$rt "$bipload" -f "$tmp/conf" --timeout 100 \
		"$build/tests/clusters/fwdcheck" kill "$tmp/go" >"$tmp/out" 2>&1 &
	job=$!
	wait_line "$tmp/out" "node 0 ready" "$job"
	kill_relay
	touch "$tmp/go"
	wait "$job"
	rc=$?
	grep -q "^bipload: node $relay, the relay of gateway host $host, ended (killed by signal SIGKILL)" \
		"$tmp/out" || fail "bipload did not report the relay's end"
	if [ "$gw" = two ]; then
		[ "$rc" -eq 0 ] || fail "exit status $rc: the job did not go on through the other gateway"
		grep -q "^node 0: kill: 25 rounds done$" "$tmp/out" || fail "node 0 did not finish"
	else
		[ "$rc" -eq 3 ] || fail "exit status $rc, expected 3 (a round failed)"
		# The first node to give up says why: the one that reached the
		# killed relay names it and the link lost; the one on the other
		# side, told by the relay that could no longer reach it, names
		# the killed relay through that one.  Which comes first is a
		# race of their timers.
		if grep -q "cannot be reached.*the relay of gateway host $host (node $relay) ended.*link A:$host - B:localhost" \
			"$tmp/out"; then
			echo "(the error names the lost link)"
		elif grep -q "cannot be reached.*the relay of gateway host [^ ]* (node [0-9]*) cannot reach node $relay (host $host): it ended" \
			"$tmp/out"; then
			echo "(the error names the killed relay, as the other relay said)"
		else
			fail "the error names neither the lost link nor the killed relay"
		fi
	fi
	cat "$tmp/out"
	;;
idle)
	# BIP_WAIT=block: while node 0 waits outside BIP (fwdcheck kill's
	# pause), node 1 waits in a receive and the relays have nothing to
	# forward.  Each must sleep: its processor time over 2 s stays under
	# 5 % (a relay that napped or yielded would use far more).  Here the
	# two relays share a host and reach each other over shm; with shm and
	# ofi (netns-clusters/idle) they sleep on both at once.
	conf one 2 >"$tmp/conf"
	BIP_WAIT=block "$bipload" -f "$tmp/conf" --timeout 100 \
		"$build/tests/clusters/fwdcheck" kill "$tmp/go" >"$tmp/out" 2>&1 &
	job=$!
	wait_line "$tmp/out" "node 0 ready" "$job"
	id=$(sed -n 's/^bipload: [0-9]* nodes*, job \([A-Za-z0-9]*\)$/\1/p' "$tmp/out")
	[ -n "$id" ] || fail "no job id in bipload's output"
	pids=" $(job_procs "$id" | tr '\n' ' ')"
	[ "$(echo $pids | wc -w)" -eq 3 ] || fail "node 1 and two relays expected, found:$pids"
	sleep 1 # what the last round left in flight passes
	idle_ticks $pids
	touch "$tmp/go"
	wait "$job" || fail "the job failed after its pause"
	grep -q "^node 0: kill: 25 rounds done$" "$tmp/out" || fail "node 0 did not finish"
	[ -z "$idle_busy" ] || fail "nodes$idle_busy used 5 % of a processor or more while idle"
	;;
retired)
	# Probes on a retired path are timers like the others: once they
	# stopped being kept (nothing else to do, another path up), the
	# probe's due time stayed past and node 1 yielded for ever instead
	# of sleeping.  And at the end, node 1's goodbye went on the path
	# through the killed relay only, and node 0 waited for node 1's last
	# word until BIP_RETRY_TIMEOUT: here past the job's time limit.
	conf two 4 >"$tmp/conf"
	BIP_WAIT=block BIP_RETRY_TIMEOUT=60 "$bipload" -f "$tmp/conf" --timeout 40 \
		"$build/tests/clusters/fwdcheck" kill "$tmp/go" "$tmp/go2" >"$tmp/out" 2>&1 &
	job=$!
	wait_line "$tmp/out" "node 0 ready" "$job"
	kill_relay
	touch "$tmp/go"
	wait_line "$tmp/out" "node 0 paused" "$job"
	pids=" $(job_procs "$id" | grep -v ":$relay\$" | tr '\n' ' ')"
	case "$pids " in
	*":1 "*) ;;
	*) fail "node 1 not found among:$pids" ;;
	esac
	[ "$(echo $pids | wc -w)" -eq 6 ] || fail "nodes 1 to 3 and three relays expected, found:$pids"
	sleep 1
	idle_ticks $pids
	touch "$tmp/go2"
	wait "$job" || fail "the job failed after its pause"
	grep -q "^node 0: kill: 25 rounds done$" "$tmp/out" || fail "node 0 did not finish"
	[ -z "$idle_busy" ] || fail "nodes$idle_busy used 5 % of a processor or more while idle"
	;;
ended)
	conf one 4 >"$tmp/conf"
	BIP_WAIT=block BIP_RETRY_TIMEOUT=3 "$bipload" -f "$tmp/conf" --timeout 100 \
		"$build/tests/clusters/fwdcheck" early "$tmp/go" >"$tmp/out" 2>&1 &
	job=$!
	wait_line "$tmp/out" "node 0 ready" "$job"
	id=$(sed -n 's/^bipload: [0-9]* nodes*, job \([A-Za-z0-9]*\)$/\1/p' "$tmp/out")
	[ -n "$id" ] || fail "no job id in bipload's output"
	wait_line "$tmp/out" "node 3: acknowledgements sent on their own: [0-9]*" "$job"
	pids=""
	for p in $(pgrep -x bipgw); do
		env=$(tr "\0" "\n" <"/proc/$p/environ" 2>/dev/null) || continue
		echo "$env" | grep -qx "BIP_JOBID=$id" || continue
		pids="$pids $p:$(echo "$env" | sed -n 's/^BIP_NODE=//p')"
	done
	[ "$(echo $pids | wc -w)" -eq 2 ] || fail "two relays expected, found:$pids"
	idle_ticks $pids
	touch "$tmp/go"
	wait "$job" || fail "the job failed after its pause"
	grep -q "^node 1: early: done$" "$tmp/out" || fail "node 1 did not finish"
	! grep -q "cannot be reached" "$tmp/out" || fail "a node was lost"
	a=$(sed -n 's/^node 3: acknowledgements sent on their own: //p' "$tmp/out")
	[ "$a" -le 100 ] || fail "node 3 sent $a acknowledgements on their own while node 0 paused"
	[ -z "$idle_busy" ] || fail "relays$idle_busy used 5 % of a processor or more while idle"
	cat "$tmp/out"
	;;
bipgw)
	"$build/scripts/bipgw" --help >"$tmp/out" 2>&1 || fail "bipgw --help"
	grep -q "^usage: bipgw" "$tmp/out" || fail "bipgw --help: no usage"
	"$build/scripts/bipgw" extra >"$tmp/out" 2>&1
	[ $? -eq 2 ] || fail "bipgw with an argument: exit status not 2"
	# A file whose relays leave a gateway host without one: no route.
	conf one 3 >"$tmp/conf"
	echo "relays 1" >>"$tmp/conf"
	"$bipload" -f "$tmp/conf" --timeout 60 "$build/tests/conformance/conformance" token \
		>"$tmp/out" 2>&1 && fail "a gateway host without relay was accepted"
	grep -q "no route through the gateways' relays reaches it" "$tmp/out" ||
		fail "no message on the missing relay"
	cat "$tmp/out"
	BIPCONF=/nonexistent "$build/scripts/bipgw" >"$tmp/out" 2>&1 && fail "bipgw outside a job"
	grep -q "bip_init" "$tmp/out" || fail "bipgw outside a job: no start-up error"
	cat "$tmp/out"
	;;
*)
	echo "forward.sh: unknown mode $mode"
	exit 2
	;;
esac
echo PASS
