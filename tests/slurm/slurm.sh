#!/bin/sh
# SPDX-License-Identifier: MIT
# BIP and MPI programs under a real Slurm (cluster.sh), started by srun
# through PMIx and PMI-2, and by bipload inside an allocation.
# Usage: slurm.sh VARIANT GROUP BUILDDIR SOURCEDIR
#   VARIANT single: one host with one slurmd; multi: three hosts, one slurmd
#           each, so that srun -N 3 spans hosts and ofi carries the traffic
#   GROUP   start:       srun -n 4 prog (MpiDefault=pmix), both --mpi values,
#                        ranks started seconds apart, and misuse
#           conformance: a subset of the BIP conformance programs
#           mpi:         MPI point-to-point, communicators, MPI_Init_thread,
#                        MPI_COMM_TYPE_SHARED by Slurm's nodes, MPI_Abort
#           failures:    a crashed rank, a rank that never calls bip_init
#           bipload:     bipload inside salloc and sbatch: one srun step of a
#                        proxy per host, whatever the processes; output,
#                        stdin, MPMD, -x, --output-filename, --timeout, a
#                        crash, a killed proxy, a killed bipload
# Skipped (exit 77) with the reason where Slurm cannot run.
set -u
variant=$1
group=$2
build=$3
src=$4
. "$src/tests/netns/hosts.sh"
. "$src/tests/slurm/cluster.sh"

unset BIPCONF BIP_OPTS BIP_NODE BIP_JOBID BIP_HOST BIP_RSH BIP_NIC BIP_BOOTSTRAP
unset SLURM_JOB_ID SLURM_JOB_NODELIST
token="$build/examples/token"
conformance="$build/tests/conformance/conformance"
comm="$build/tests/mpi/mpi_comm"
p2p="$build/tests/mpi/mpi_p2p"
spawn="$build/tests/mpi/dpm/mpi_spawn"
bipload="$build/scripts/bipload"
bipinfo="$build/scripts/bipinfo"
helper="$build/tests/tools/helper"

case "$variant" in
single) nhosts=1 ;;
multi)
	nhosts=3
	ns_need_ofi_tcp "$bipinfo"
	export BIP_OFI_PROVIDER=tcp
	;;
*)
	echo "unknown variant $variant"
	exit 2
	;;
esac
mpis=""
for b in pmix pmi2; do
	"$bipinfo" --parsable | grep -q "^bootstrap\.$b=available" && mpis="$mpis $b"
done
[ -n "$mpis" ] || ns_skip "neither the pmix nor the pmi2 start-up back end can run here"

mkdir -p "$build/tests/slurm" && dir=$(mktemp -d "$build/tests/slurm/run.XXXXXX") || exit 1
out="$dir/out"
trap 'ns_cleanup; rm -rf "$dir"' EXIT
sl_start "$dir" "$nhosts"
cd "$dir" || exit 1
export BIP_INIT_TIMEOUT=30

# srun's placement: over every host in the multi variant, evenly when it can.
spread() {
	k=$nhosts
	[ "$1" -lt "$k" ] && k=$1
	if [ $(($1 % k)) -eq 0 ]; then
		echo "-N $k --ntasks-per-node=$(($1 / k))"
	else
		echo "-N $k"
	fi
}

# The launchers the longer groups use: across hosts, pmi2 differs from
# pmix only at start-up, which start and failures check with both.
across() {
	if [ "$nhosts" -gt 1 ] && echo "$mpis" | grep -q pmix; then
		echo pmix
	else
		echo "$mpis"
	fi
}

# The job's output last, so that the end of a failed test's log shows it.
fail() {
	sl_logs
	[ -f "$out" ] && echo "--- the job's output" && cat "$out"
	echo "FAIL: $*"
	exit 1
}

# run EXPECTED-STATUS DESCRIPTION CMD...: the command's output in $out.
run() {
	want=$1
	what=$2
	shift 2
	sl_run "$@" >"$out" 2>&1
	rc=$?
	[ "$rc" -eq "$want" ] || fail "$what: exit status $rc, expected $want"
	echo "ok: $what"
}

has() {
	grep -q "$1" "$out" || fail "$2: no \"$1\" in the output"
}

# The processes of the job left on the hosts (the daemons are not).
left_running() {
	for h in $ns_hosts; do
		for pid in $(ip netns pids "$h"); do
			case "$(ps -o comm= -p "$pid")" in
			munged | slurmctld | slurmscriptd | slurmd | slurmstepd | "") ;;
			*) echo "$h: $(ps -o pid=,args= -p "$pid")" ;;
			esac
		done
	done
}

# Nothing of the job left: no process of it on any host (after $2 seconds
# at most, 0.5 by default), no segment.
clean() {
	k=0
	sleep 0.5
	while [ -n "$(left_running)" ] && [ "$k" -lt $((${2:-0} * 10)) ]; do
		sleep 0.1
		k=$((k + 1))
	done
	left=$(left_running)
	[ -z "$left" ] || fail "$1: left running: $left"
	left=$(sl_shm_left)
	[ -z "$left" ] || fail "$1: shared memory left: $left"
}

# The pid of bipload's proxy on host $1, once the processes run there.
wait_for_proxy() {
	k=0
	while [ "$k" -lt 300 ]; do
		if ip netns pids "$1" | xargs -r ps -ww -o args= -p | grep -q "^$helper"; then
			ip netns pids "$1" | xargs -r ps -ww -o pid=,args= -p |
				grep " $build/scripts/bipload-proxy --connect" | awk '{ print $1 }'
			return 0
		fi
		sleep 0.1
		k=$((k + 1))
	done
	fail "the processes did not start on $1"
}

# The driver line of node 0: shm only on one host, shm and ofi across hosts.
drivers() {
	if [ "$nhosts" -gt 1 ]; then
		has "driver shm + ofi" "$1"
	else
		has "driver shm$" "$1"
	fi
}

case "$group" in
start)
	run 0 "srun -n 4 (MpiDefault=pmix)" srun $(spread 4) -n 4 "$token"
	has "token arrived" "srun -n 4"
	drivers "srun -n 4"
	for m in $mpis; do
		run 0 "srun --mpi=$m -n 6" srun $(spread 6) -n 6 --mpi="$m" "$token"
		has "token arrived" "--mpi=$m"
		drivers "--mpi=$m"
		run 0 "srun --mpi=$m, ranks started 0 to 3 s apart" srun $(spread 4) -n 4 \
			--mpi="$m" sh -c 'sleep $SLURM_PROCID; exec "$0"' "$token"
		has "token arrived" "late ranks, --mpi=$m"
		run 0 "BIP_BOOTSTRAP=$m under --mpi=$m" env BIP_BOOTSTRAP="$m" \
			srun $(spread 2) -n 2 --mpi="$m" "$token"
		run 1 "BIP_OPTS=n3 with 4 tasks" env BIP_OPTS=n3 srun $(spread 4) -n 4 \
			--mpi="$m" "$token"
		has "BIP_OPTS asks for 3 nodes but the launcher started 4 processes" "BIP_OPTS=n3"
	done
	run 1 "srun --mpi=none" srun $(spread 2) -n 2 --mpi=none "$token"
	has "without a PMI (srun --mpi=none): run it with srun --mpi=pmix or --mpi=pmi2" \
		"--mpi=none"
	run 1 "BIP_BOOTSTRAP=nonsense" env BIP_BOOTSTRAP=nonsense srun -n 1 "$token"
	has "BIP_BOOTSTRAP=nonsense: expected bipload, pmix or pmi2" "BIP_BOOTSTRAP=nonsense"
	for m in $mpis; do
		other=pmix
		[ "$m" = pmix ] && other=pmi2
		run 1 "BIP_BOOTSTRAP=$other under --mpi=$m" env BIP_BOOTSTRAP="$other" \
			srun -n 2 --mpi="$m" "$token"
		has "BIP_BOOTSTRAP=$other: this process was not started by a" "wrong BIP_BOOTSTRAP"
	done
	;;
conformance)
	for m in $(across); do
		for t in sizes:2 alltoall:6 ordering:6 probe:2 stream:2 sources:3 exitflush:3 \
			bytes:2 longblock:3 gone:3; do
			name=${t%:*}
			np=${t#*:}
			run 0 "conformance $name, $np ranks, --mpi=$m" \
				srun $(spread "$np") -n "$np" --mpi="$m" "$conformance" "$name"
		done
	done
	;;
mpi)
	for m in $(across); do
		for t in ring:6 order:6 mix:6 persistent:3 probe:3 unexpected:3 bsend:3; do
			name=${t%:*}
			np=${t#*:}
			run 0 "MPI p2p $name, $np ranks, --mpi=$m" \
				srun $(spread "$np") -n "$np" --mpi="$m" "$p2p" "$name"
		done
		# (split expects one host: MPI_COMM_TYPE_SHARED of all.)
		tests="env group errors threads freecomm slurmhosts"
		[ "$nhosts" -eq 1 ] && tests="split $tests"
		for t in $tests; do
			run 0 "MPI comm $t, 6 ranks, --mpi=$m" \
				srun $(spread 6) -n 6 --mpi="$m" "$comm" "$t"
		done
		has "slurmhosts: 6 ranks; rank 0 on $ns_prefix-0 with $((6 / nhosts))" \
			"MPI_COMM_TYPE_SHARED by Slurm's nodes"
		# A step cannot grow: MPI_Comm_spawn fails at once, and says so.
		run 0 "MPI_Comm_spawn refused, 2 ranks, --mpi=$m" \
			srun $(spread 2) -n 2 --mpi="$m" "$spawn" refused
		has "spawn refused: MPI_ERR_SPAWN" "MPI_Comm_spawn under srun"
		has "bip_grow: this job cannot grow" "MPI_Comm_spawn under srun"
		# MPI_Abort ends the whole step: the others are killed.
		sl_run srun $(spread 3) -n 3 --mpi="$m" "$comm" abort >"$out" 2>&1
		rc=$?
		[ "$rc" -ne 0 ] || fail "MPI_Abort under --mpi=$m: srun exited 0"
		# The rank's own line, or srun's word for its exit: srun may drop
		# the last output of a step it ends at once (seen on a loaded host).
		has "MPI_Abort called with error code 7\|task 0: Exited with exit code 7" "MPI_Abort"
		grep -q "CANCELLED\|Killed\|aborted" "$out" ||
			fail "MPI_Abort under --mpi=$m: the step was not ended"
		echo "ok: MPI_Abort under --mpi=$m ends the step (srun exit $rc)"
		clean "MPI_Abort --mpi=$m"
	done
	;;
failures)
	for m in $mpis; do
		# Node 1 dies of SIGSEGV: the others see it gone and end; srun
		# reports the signal; nothing is left.
		sl_run env ASAN_OPTIONS=handle_segv=0 srun $(spread 6) -n 6 --mpi="$m" \
			"$conformance" crash >"$out" 2>&1
		rc=$?
		[ "$rc" -ne 0 ] || fail "crash under --mpi=$m: srun exited 0"
		grep -q "task 1: Segmentation fault" "$out" ||
			fail "crash under --mpi=$m: srun did not report task 1's SIGSEGV"
		echo "ok: a crashed rank under --mpi=$m ends the step (srun exit $rc)"
		clean "crash --mpi=$m"
		# Node 2 never calls bip_init: the others give up at the time-out.
		# Or Slurm ends the step first: a step daemon that forwards the
		# fence to the host of node 2 after node 2 has ended there finds
		# no one and cancels the step (seen under load), or, under pmix,
		# cannot connect to that daemon at all and aborts the step
		# (seen under load too).  Either way nothing waits for ever and
		# the reason is printed.
		sl_run env BIP_INIT_TIMEOUT=4 srun $(spread 3) -n 3 --mpi="$m" \
			"$conformance" noinit >"$out" 2>&1
		rc=$?
		[ "$rc" -ne 0 ] || fail "noinit under --mpi=$m: srun exited 0"
		if grep -q "did not complete in 4 s (BIP_INIT_TIMEOUT): a process of the job has not reached bip_init" "$out"; then
			how="the others gave up at BIP_INIT_TIMEOUT"
		elif grep -q "STEP [0-9.]* ON .* CANCELLED" "$out"; then
			how="Slurm cancelled the step before BIP_INIT_TIMEOUT"
		elif grep -q "Cannot establish the connection" "$out" &&
			grep -q "srun: Job step aborted" "$out"; then
			how="Slurm aborted the step before BIP_INIT_TIMEOUT (its PMIx fence could not reach a step daemon)"
		else
			fail "noinit --mpi=$m: neither the time-out of bip_init nor Slurm's cancelling of the step in the output"
		fi
		echo "ok: a rank that never starts BIP under --mpi=$m: $how (srun exit $rc)"
		clean "noinit --mpi=$m"
	done
	;;
bipload)
	n=$((2 * nhosts))
	[ "$n" -lt 4 ] && n=4
	run 0 "bipload inside salloc" salloc -N "$nhosts" -n "$n" "$bipload" "$token"
	has "inside Slurm allocation [0-9]*: $n nodes on $nhosts host.*started by one srun step" \
		"bipload inside salloc"
	has "token arrived" "bipload inside salloc"
	drivers "bipload inside salloc"
	# One srun step for the whole job, one task (a proxy) on each host:
	# every slurmd logs the tasks it launches, with their step.
	alloc=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$out")
	[ -n "$alloc" ] || fail "no allocation number in salloc's output"
	steps=$(cat "$dir"/slurmd.*.log | sed -n "s/.*launch task StepId=$alloc\.\([0-9]*\) .*/\1/p" | sort -u)
	[ "$(echo "$steps" | grep -c .)" -eq 1 ] ||
		fail "bipload started $(echo "$steps" | grep -c .) srun steps for $n processes, expected 1"
	[ "$(grep -l "launch task StepId=$alloc\.$steps " "$dir"/slurmd.*.log | wc -l)" -eq "$nhosts" ] ||
		fail "the step did not run on each of the $nhosts hosts"
	echo "ok: one srun step (step $steps of allocation $alloc) for $n processes on $nhosts hosts"
	# What bipload does for a job works through the proxies: --tag-output,
	# -x, MPMD with -env, --output-filename, and stdin to node 0.
	echo hello | sl_run salloc -N "$nhosts" -n "$n" "$bipload" -q --tag-output \
		--output-filename "$dir/of" -x BIPTEST_X1=carried -sz 1 "$helper" stdin : \
		-sz $((n - 1)) -env BIPTEST_ENV=second "$helper" where >"$out" 2>&1 ||
		fail "a job with the job options inside salloc"
	has "^\[0\] node 0 read hello$" "stdin to node 0 inside salloc"
	for k in $(seq 1 $((n - 1))); do
		has "^\[$k\] node $k .*BIPTEST_X1=\[carried\].* BIP_APPNUM=\[1\] BIPTEST_ENV=\[second\]$" \
			"node $k's options inside salloc"
		grep -q "^node $k " "$dir/of/node.$k.out" || fail "node $k's output file"
	done
	echo "ok: stdin, --tag-output, -x, MPMD and --output-filename inside salloc"
	run 124 "--timeout inside salloc" salloc -N "$nhosts" -n "$n" "$bipload" --timeout 1 \
		"$helper" sleep
	has "timed out after 1 s; stopped nodes 0 1 2 3" "--timeout inside salloc"
	clean "--timeout inside salloc"
	run 0 "bipload -sz 3 inside salloc" salloc -N "$nhosts" -n "$n" "$bipload" -sz 3 \
		"$comm" split
	ls .bipload-*.conf >/dev/null 2>&1 && fail "bipload left its configuration file"
	# A job over ofi alone grows inside the allocation: the proxy that
	# srun started on node 0's host starts the children.
	run 0 "MPI_Comm_spawn inside salloc (BIP_NIC=ofi)" salloc -N "$nhosts" -n "$n" \
		env BIP_NIC=ofi BIP_OFI_PROVIDER=tcp "$bipload" -sz 1 "$spawn" basic
	has "spawned 3 workers from 1 parents" "MPI_Comm_spawn inside salloc"
	# With the drivers each process picks, parents on every host: the
	# workers meet node 0 over shm, the others over ofi.
	run 0 "MPI_Comm_spawn inside salloc (BIP_NIC unset)" salloc -N "$nhosts" -n "$n" \
		env BIP_OFI_PROVIDER=tcp "$bipload" -sz 3 --universe 6 "$spawn" basic
	has "spawned 3 workers from 3 parents" "MPI_Comm_spawn inside salloc, BIP_NIC unset"
	# MPI_UNIVERSE_SIZE is the allocation's tasks: 2 children fit in 3,
	# a third does not.
	run 0 "MPI_UNIVERSE_SIZE inside salloc -n 3" salloc -N "$nhosts" -n 3 \
		env BIP_OFI_PROVIDER=tcp "$bipload" -sz 1 "$spawn" slots
	has "slots: a universe of 3, 2 children, one more refused" "MPI_UNIVERSE_SIZE inside salloc"
	if [ "$nhosts" -gt 1 ]; then
		# One process, a worker asked on each host (the "host" info
		# key): the two hosts of the allocation where the job ran no
		# process get their proxies from steps of their own (srun
		# --overlap), and each worker runs in its host's namespace.
		set -- $ns_hosts
		want=""
		for h in "$3" "$1" "$2"; do
			want="$want $h=$(ip netns exec "$h" readlink /proc/self/ns/net)"
		done
		run 0 "MPI_Comm_spawn onto the allocation's hosts without a process" \
			salloc -N "$nhosts" -n "$n" env BIP_OFI_PROVIDER=tcp "$bipload" -sz 1 \
			"$spawn" hosts $want
		has "spawned a worker on each of 3 hosts" "MPI_Comm_spawn onto hosts without a process"
		# The job's first step, then one step for each late proxy.
		alloc=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$out")
		steps=$(grep -h "launch task StepId=$alloc\.[0-9]* " "$dir"/slurmd.*.log |
			sed -n 's/.*StepId=[0-9]*\.\([0-9]*\) .*/\1/p' | sort -un | wc -l)
		[ "$steps" -eq 3 ] ||
			fail "allocation $alloc had $steps steps, expected 3 (the job's, then one per late proxy)"
		echo "ok: workers spawned onto the 2 hosts of the allocation without a process"
	fi
	printf '#!/bin/sh\n"%s" "%s"\n' "$bipload" "$token" >job.sh
	run 0 "bipload inside sbatch" sbatch -W -N "$nhosts" -n "$n" -o "$dir/batch.out" job.sh
	cat batch.out >>"$out"
	has "token arrived" "bipload inside sbatch"
	# A crash inside the allocation: bipload names the node and stops the rest.
	sl_run env ASAN_OPTIONS=handle_segv=0 salloc -N "$nhosts" -n "$n" "$bipload" \
		"$conformance" crash >"$out" 2>&1
	rc=$?
	[ "$rc" -ne 0 ] || fail "crash inside salloc: exit 0"
	has "node 1 (host .*) killed by signal SIGSEGV" "crash inside salloc"
	echo "ok: a crash inside salloc (exit $rc)"
	clean "bipload crash"
	# The proxy of the last host killed: its processes go with it, bipload
	# names them and stops the others.
	last=$(echo $ns_hosts | awk '{ print $NF }')
	sl_run salloc -N "$nhosts" -n "$n" "$bipload" "$helper" sleep >"$out" 2>&1 &
	job=$!
	proxy=$(wait_for_proxy "$last")
	kill -9 $proxy
	wait "$job"
	rc=$?
	[ "$rc" -ne 0 ] || fail "a killed proxy: exit 0"
	has "^bipload: host $last (nodes\? [0-9 ]*, pids\? [0-9 ]* there): the proxy (pid $proxy there) ended (its connection closed) before the process\(es\)\? did: connection lost?$" \
		"a killed proxy"
	[ "$nhosts" -eq 1 ] || has "^bipload: stopped nodes" "a killed proxy"
	echo "ok: a killed proxy inside salloc (exit $rc)"
	clean "a killed proxy"
	# bipload itself killed: the proxies lose bipload and stop their
	# processes; nothing is left anywhere.
	sl_run salloc -N "$nhosts" -n "$n" "$bipload" "$helper" sleep >"$out" 2>&1 &
	job=$!
	wait_for_proxy "$last" >/dev/null
	pid=$(ip netns pids "$sl_login" | xargs -r ps -ww -o pid=,args= -p | grep " $bipload " |
		awk '{ print $1 }')
	[ -n "$pid" ] || fail "no bipload on $sl_login"
	kill -9 $pid
	wait "$job"
	clean "a killed bipload" 10
	echo "ok: a killed bipload inside salloc leaves nothing"
	# bipload's listener for the proxies: an impostor that connects first
	# and sends garbage is dropped, the job runs; a proxy without the job's
	# secret is refused and says so, and bipload names its host.
	printf '#!/bin/sh\na=${2%%%%,*}\npython3 -c "import os, socket; s = socket.create_connection((\\"${a%%:*}\\", ${a##*:})); s.sendall(os.urandom(200)); s.recv(64)"\nexec "%s" "$@"\n' \
		"$build/scripts/bipload-proxy" >"$dir/impostor"
	chmod +x "$dir/impostor"
	run 0 "an impostor at bipload's listener" env BIPLOAD_PROXY="$dir/impostor" \
		salloc -N "$nhosts" -n "$n" "$bipload" "$token"
	has "^bipload: dropped a connection from [0-9.]*:[0-9]*: not a proxy of this job (no proof of the job's secret)$" \
		"an impostor at bipload's listener"
	has "token arrived" "an impostor at bipload's listener"
	printf '#!/bin/sh\nBIP_SECRET=0123456789abcdef0123456789abcdef exec "%s" "$@"\n' \
		"$build/scripts/bipload-proxy" >"$dir/wrong"
	chmod +x "$dir/wrong"
	sl_run env BIPLOAD_PROXY="$dir/wrong" salloc -N "$nhosts" -n "$n" "$bipload" "$token" \
		>"$out" 2>&1 && fail "proxies without the job's secret: exit 0"
	has "not a proxy of this job (no proof of the job's secret)" "a proxy without the secret"
	has "^bipload: host $ns_prefix-0 (nodes\? [0-9 ]*): srun ended (exit status [0-9]*) before the proxy there connected; the command was: srun -N $nhosts -n $nhosts " \
		"a proxy without the secret"
	clean "a proxy without the secret"
	echo "ok: bipload's listener drops an impostor and refuses a proxy without the secret"
	# srun cannot start the proxy: srun's words, and the command.
	sl_run env BIPLOAD_PROXY=/nonexistent/bipload-proxy salloc -N "$nhosts" -n "$n" "$bipload" \
		"$token" >"$out" 2>&1 && fail "a missing proxy: exit 0"
	has "/nonexistent/bipload-proxy" "a missing proxy"
	has "^bipload: host $ns_prefix-0 (nodes\? [0-9 ]*): srun ended (exit status [0-9]*) before the proxy there connected" \
		"a missing proxy"
	echo "ok: a proxy that srun cannot start is reported with srun's command"
	# A configuration of the user's wins over the allocation.
	"$build/scripts/bipconf" -f "$dir/mine" localhost localhost >/dev/null || fail "bipconf"
	run 0 "-f inside salloc" salloc -n 2 "$bipload" -f "$dir/mine" "$token"
	grep -q "inside Slurm allocation" "$out" && fail "-f did not win over the allocation"
	;;
*)
	echo "unknown group $group"
	exit 2
	;;
esac
echo "PASS"
