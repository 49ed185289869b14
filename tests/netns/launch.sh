#!/bin/sh
# SPDX-License-Identifier: MIT
# bipload across hosts, on test hosts made of network namespaces.
# Usage: launch.sh CHECK BUILDDIR SOURCEDIR
set -u
check=$1
build=$2
src=$3
bipload="$build/scripts/bipload"
bipconf="$build/scripts/bipconf"
bipinfo="$build/scripts/bipinfo"
helper="$build/tests/tools/helper"
. "$src/tests/netns/hosts.sh"

tmp=$(mktemp -d)
out="$tmp/out"
ns_watch "$out"
unset BIPCONF BIP_OPTS BIP_NODE BIP_JOBID BIP_HOST BIP_RSH
fail() {
	[ -f "$out" ] && cat "$out"
	echo "FAIL: $*"
	exit 1
}
ns_setup 3
trap 'ns_cleanup; rm -rf "$tmp"' EXIT
set -- $ns_hosts
h0=$1 h1=$2 h2=$3
# 3 hosts with 2 processes each, the hosts taken in turn.
"$bipconf" -f "$tmp/conf" "$h0" "$h1" "$h2" "$h0" "$h1" "$h2" >/dev/null || fail "bipconf"
conf="$tmp/conf"

# The network namespace a process runs in, as the helper prints it.
net_of() {
	echo "net:[$(stat -L -c %i "/run/netns/$1")]"
}

# No process may be left on any host once bipload has returned; a process
# whose wrapper was killed may take a moment to be stopped by it.
no_leftovers() {
	n=0
	while [ -n "$(ns_leftovers)" ] && [ "$n" -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	left=$(ns_leftovers)
	[ -z "$left" ] || fail "processes left behind: $left"
}

# Wait until the 6 helpers run (a safety net bounds the wait).
wait_started() {
	n=0
	while [ "$n" -lt 300 ]; do
		started=0
		for h in $ns_hosts; do
			k=$(ip netns pids "$h" | xargs -r ps -ww -o args= -p | grep -c "^$helper")
			started=$((started + k))
		done
		[ "$started" -eq 6 ] && return 0
		sleep 0.1
		n=$((n + 1))
	done
	fail "the helper did not start on every host"
}

case "$check" in
placement)
	# env -i: the remote shell passes no environment, as ssh does; what the
	# processes have comes from bipload.
	mkdir "$tmp/work dir"
	cd "$tmp/work dir" || fail "cd"
	BIPTEST_X2="two words" BIP_TEST_CARRIED=yes NOT_CARRIED=no LD_LIBRARY_PATH="$tmp/lib" \
		"$bipload" -f "$conf" --rsh "env -i ip netns exec" --tag-output \
		-x "BIPTEST_X1=a b'c \$HOME" -x BIPTEST_X2 "$helper" where "q'x" "*" >"$out" 2>&1 ||
		fail "bipload"
	ns_note_job "$out"
	[ "$(grep -c '^\[[0-5]\] node ' "$out")" -eq 6 ] || fail "expected 6 lines"
	# The job's secret: the same on every host (remote ones read it on
	# their remote shell's stdin), 256 bits.
	secret=$(sed -n 's/^\[0\] node 0 .* BIP_SECRET=\[\([0-9a-f]*\)\].*/\1/p' "$out")
	[ "${#secret}" -eq 64 ] || fail "node 0's secret is not 64 hex digits: '$secret'"
	i=0
	for h in "$h0" "$h1" "$h2" "$h0" "$h1" "$h2"; do
		line=$(grep "^\[$i\] node $i " "$out") || fail "node $i printed nothing"
		want="[$i] node $i net $(net_of "$h") cwd [$tmp/work dir] BIP_HOST=[$h] BIP_OPTS=[n6]"
		want="$want BIPCONF=[$conf] BIP_JOBID=[$job] PATH=[$PATH] LD_LIBRARY_PATH=[$tmp/lib]"
		want="$want BIPTEST_X1=[a b'c \$HOME] BIPTEST_X2=[two words] BIP_TEST_CARRIED=[yes]"
		want="$want NOT_CARRIED=[-] BIP_SECRET=[$secret] BIP_APPNUM=[0] BIPTEST_ENV=[-]"
		want="$want arg=[q'x] arg=[*]"
		[ "$line" = "$want" ] || fail "node $i:
got  $line
want $want"
		i=$((i + 1))
	done
	no_leftovers
	;;
shell)
	# A remote shell that, like ssh, joins its words and hands them to a
	# shell on the host: bipload quotes the command for it.
	cd "$tmp" || fail "cd"
	"$bipload" -f "$conf" --rsh "$src/tests/netns/netns-ssh" -x "BIPTEST_X1=a b'c \$HOME" \
		"$helper" where "q'x" >"$out" 2>&1 || fail "bipload through a shell"
	ns_note_job "$out"
	for i in 0 1 2 3 4 5; do
		grep -q "^node $i net .* BIPTEST_X1=\[a b'c \$HOME\] .* arg=\[q'x\]$" "$out" ||
			fail "node $i: words not kept through the remote user's shell"
	done
	grep -qF "node 4 net $(net_of "$h1") " "$out" || fail "node 4 not on $h1"
	no_leftovers
	;;
output)
	"$bipload" -f "$conf" --rsh "ip netns exec" --tag-output "$helper" lines >"$out" 2>&1 ||
		fail "bipload"
	ns_note_job "$out"
	grep -v '^bipload: ' "$out" >"$tmp/lines"
	[ "$(wc -l <"$tmp/lines")" -eq 1200 ] || fail "expected 1200 lines"
	bad=$(grep -cvE '^\[([0-5])\] node \1 line [0-9]+ 0+[0-9]* end$' "$tmp/lines")
	[ "$bad" -eq 0 ] || fail "$bad lines mixed or cut"
	# Our stdin goes to node 0 on another host too (through its proxy), and
	# to no other node.
	echo hello | "$bipload" -q -f "$conf" --rsh "ip netns exec" "$helper" stdin >"$out" 2>&1 ||
		fail "bipload with stdin"
	[ "$(grep -c read "$out")" -eq 1 ] && grep -q "^node 0 read hello$" "$out" ||
		fail "stdin did not reach the remote node 0 alone"
	# Node 0 on this host, the others on test hosts: node 0 has our stdin.
	"$bipconf" -f "$tmp/mixed" "$(uname -n)" "$h1" "$h2" >/dev/null
	echo hello | "$bipload" -q -f "$tmp/mixed" --rsh "ip netns exec" "$helper" stdin >"$out" 2>&1 ||
		fail "bipload with a local node 0"
	grep -q "^node 0 read hello$" "$out" || fail "stdin did not reach the local node 0"
	"$bipload" -f "$tmp/mixed" --rsh "ip netns exec" "$helper" where >"$out" 2>&1 ||
		fail "bipload where with a local node 0"
	ns_note_job "$out"
	grep -qF "node 0 net $(readlink /proc/self/ns/net) " "$out" || fail "node 0 not on this host"
	grep -qF "node 2 net $(net_of "$h2") " "$out" || fail "node 2 not on $h2"
	no_leftovers
	;;
identity)
	# Each process sees the nodes of its own host, and only those, as local.
	"$bipload" -f "$conf" --rsh "ip netns exec" --tag-output "$bipinfo" --parsable >"$out" 2>&1 ||
		fail "bipload bipinfo"
	ns_note_job "$out"
	for i in 0 1 2 3 4 5; do
		for j in 0 1 2 3 4 5; do
			line=$(grep "^\[$i\] conf.node.$j=" "$out") || fail "node $i: no node $j"
			if [ $((i % 3)) -eq $((j % 3)) ]; then
				case "$line" in *"(this host)") ;; *) fail "node $i: node $j not local: $line" ;; esac
			else
				case "$line" in *"(this host)") fail "node $i: node $j local: $line" ;; esac
			fi
		done
	done
	no_leftovers
	;;
kill)
	# Node 2 (on the third host) is killed: the job stops everywhere.
	"$bipload" -f "$conf" --rsh "ip netns exec" "$helper" signal 9 >"$out" 2>&1
	rc=$?
	ns_note_job "$out"
	[ "$rc" -eq 137 ] || fail "exit status $rc, expected 137"
	grep -q "^bipload: node 2 (host $h2, pid [0-9][0-9]* there) killed by signal SIGKILL$" "$out" ||
		fail "node 2 not reported"
	grep -q "^bipload: stopped nodes 0 1 3 4 5$" "$out" || fail "the others not stopped"
	no_leftovers
	# Processes that ignore SIGTERM get SIGKILL after the grace period.
	BIPLOAD_GRACE=1 "$bipload" -f "$conf" --rsh "ip netns exec" "$helper" stubborn 7 >"$out" 2>&1
	rc=$?
	ns_note_job "$out"
	[ "$rc" -eq 7 ] || fail "exit status $rc, expected 7"
	grep -q "^bipload: node 1 (host $h1, pid [0-9][0-9]* there) exited with status 7$" "$out" ||
		fail "node 1 not reported"
	grep -q "^bipload: stopped nodes 0 2 3 4 5$" "$out" || fail "the others not stopped"
	no_leftovers
	# --timeout stops the job everywhere.
	"$bipload" -f "$conf" --rsh "ip netns exec" --timeout 1 "$helper" sleep >"$out" 2>&1
	rc=$?
	ns_note_job "$out"
	[ "$rc" -eq 124 ] || fail "exit status $rc after --timeout, expected 124"
	grep -q "^bipload: timed out after 1 s; stopped nodes 0 1 2 3 4 5$" "$out" || fail "no time-out report"
	no_leftovers
	# bipload stopped by SIGTERM, then killed: either way nothing is left.
	for sig in TERM KILL; do
		"$bipload" -f "$conf" --rsh "ip netns exec" "$helper" sleep >"$out" 2>&1 &
		job_pid=$!
		wait_started
		kill -s $sig "$job_pid"
		wait "$job_pid"
		rc=$?
		ns_note_job "$out"
		case $sig in
		TERM)
			[ "$rc" -eq 143 ] || fail "exit status $rc after SIGTERM, expected 143"
			grep -q "^bipload: got signal SIGTERM; stopped nodes 0 1 2 3 4 5$" "$out" ||
				fail "no report of SIGTERM"
			;;
		KILL) [ "$rc" -eq 137 ] || fail "exit status $rc of a killed bipload, expected 137" ;;
		esac
		no_leftovers
	done
	# The proxy of host 2 (nodes 1 and 4) killed: its processes stop too,
	# and the job.
	"$bipload" -f "$conf" --rsh "ip netns exec" "$helper" sleep >"$out" 2>&1 &
	job_pid=$!
	wait_started
	proxy=$(ip netns pids "$h1" | xargs -r ps -ww -o pid=,args= -p | grep " $build/scripts/bipload-proxy$" |
		awk '{ print $1 }')
	[ -n "$proxy" ] || fail "no proxy on $h1"
	kill -9 $proxy
	wait "$job_pid"
	rc=$?
	ns_note_job "$out"
	[ "$rc" -eq 137 ] || fail "exit status $rc after killing a proxy, expected 137"
	grep -q "^bipload: host $h1 (nodes 1 4, pids [0-9]* [0-9]* there): the proxy (pid $proxy there) ended (killed by signal SIGKILL) before the processes did: connection lost?$" "$out" ||
		fail "killed proxy not reported"
	grep -q "^bipload: stopped nodes 0 2 3 5$" "$out" || fail "the others not stopped"
	no_leftovers
	# A process of the third host crashes (abort(3); a sanitizer build
	# would turn a SIGSEGV into an exit status): the job stops everywhere,
	# and its proxy reports the signal.
	"$bipload" -f "$conf" --rsh "ip netns exec" "$helper" signal 6 >"$out" 2>&1
	rc=$?
	ns_note_job "$out"
	[ "$rc" -eq 134 ] || fail "exit status $rc after a crash, expected 134"
	grep -q "^bipload: node 2 (host $h2, pid [0-9][0-9]* there) killed by signal SIGABRT$" "$out" ||
		fail "the crash of node 2 not reported"
	grep -q "^bipload: stopped nodes 0 1 3 4 5$" "$out" || fail "the others not stopped after a crash"
	no_leftovers
	;;
unreachable)
	# A host that does not exist: named with the command, and the job stops.
	"$bipconf" -f "$tmp/bad" "$h0" "$ns_prefix-9" "$h2" >/dev/null
	"$bipload" -f "$tmp/bad" --rsh "ip netns exec" "$helper" sleep >"$out" 2>&1
	rc=$?
	ns_note_job "$out"
	[ "$rc" -eq 255 ] || fail "exit status $rc, expected 255 (ip netns exec)"
	grep -q "^Cannot open network namespace \"$ns_prefix-9\"" "$out" ||
		fail "the remote shell's own message not forwarded"
	grep -qx "bipload: host $ns_prefix-9 (node 1): the remote shell could not start the proxy (exit status 255); the command was: ip netns exec $ns_prefix-9 $build/scripts/bipload-proxy" "$out" ||
		fail "unreachable host not reported"
	grep -q "^bipload: stopped nodes 0 2$" "$out" || fail "the others not stopped"
	no_leftovers
	# A remote shell that fails; every host fails, one is reported.
	"$bipload" -f "$conf" --rsh "env false" "$helper" sleep >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fail "exit status $rc, expected 1"
	grep -q "^bipload: host \($ns_prefix-[0-2]\) (nodes [0-5] [0-5]): the remote shell could not start the proxy (exit status 1); the command was: env false \1 $build/scripts/bipload-proxy$" "$out" ||
		fail "failing remote shell not reported"
	# A remote shell that hangs without starting its process.
	printf '#!/bin/sh\nexec sleep 297.5\n' >"$tmp/hang"
	chmod +x "$tmp/hang"
	BIPLOAD_START_TIMEOUT=1 BIPLOAD_GRACE=0.5 "$bipload" -f "$conf" --rsh "$tmp/hang" \
		"$helper" sleep >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 255 ] || fail "exit status $rc with a hanging remote shell, expected 255"
	grep -q "^bipload: host $ns_prefix-[0-2] (nodes [0-5] [0-5]): the remote shell has not started the proxy after 1 s; the command was: $tmp/hang $ns_prefix-[0-2] $build/scripts/bipload-proxy$" "$out" ||
		fail "hanging remote shell not reported"
	pgrep -fa "^sleep 297.5" && fail "hanging remote shells left"
	# A program missing on the remote host.
	"$bipload" -f "$conf" --rsh "ip netns exec" "$tmp/no-such-program" >"$out" 2>&1 &&
		fail "a missing program was run"
	ns_note_job "$out"
	grep -q "^bipload: host $ns_prefix-[0-2]: $tmp/no-such-program: program not found (PATH=" "$out" ||
		fail "the remote host did not name the missing program"
	grep -q "^bipload: node [0-5] (host $ns_prefix-[0-2], pid [0-9]* there) exited with status 127$" "$out" ||
		fail "missing program not reported"
	no_leftovers
	;;
cleanup)
	# A test killed in the middle of a job: its hosts, its processes, its
	# /etc/netns entries and its job's shared memory go all the same.
	cat >"$tmp/killed.sh" <<'EOF'
. "$1/tests/netns/hosts.sh"
ns_setup 2
echo "$ns_prefix" >"$2/prefix"
ns_watch "$2/job.out"
set -- "$@" $ns_hosts
"$3" -f "$2/two" "$5" "$6" >/dev/null
"$4" -f "$2/two" --rsh "ip netns exec" "$2/helper" sleep >"$2/job.out" 2>&1 &
k=0
until [ -n "$(ip netns pids "$6")" ] && grep -q ', job ' "$2/job.out"; do
	k=$((k + 1))
	[ "$k" -lt 300 ] || exit 3
	sleep 0.1
done
job=$(sed -n 's/^bipload: .*, job \([A-Za-z0-9]*\)$/\1/p' "$2/job.out")
: >"/dev/shm/bip-$(id -u)-$job-7"
echo "$job" >"$2/job"
kill -s TERM $$
sleep 30
EOF
	# A copy of the helper that no other test runs: a leftover is ours.
	cp "$helper" "$tmp/helper"
	sh "$tmp/killed.sh" "$src" "$tmp" "$bipconf" "$bipload"
	rc=$?
	[ "$rc" -eq 143 ] || fail "the killed test ended with status $rc, expected 143"
	prefix=$(cat "$tmp/prefix")
	job=$(cat "$tmp/job")
	ip netns list | grep -q "^$prefix-" && fail "namespaces left: $(ip netns list | grep "^$prefix-")"
	ls -d /etc/netns/"$prefix"-* 2>/dev/null && fail "/etc/netns entries left"
	ls /dev/shm | grep -q -- "-$job-" && fail "shared memory of job $job left"
	n=0
	while pgrep -f "^$tmp/helper" >/dev/null && [ "$n" -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	pgrep -fa "^$tmp/helper" && fail "processes left"
	;;
*)
	echo "unknown check $check"
	exit 2
	;;
esac
echo "PASS"
