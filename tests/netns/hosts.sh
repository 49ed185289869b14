# SPDX-License-Identifier: MIT
# Test hosts made of network namespaces, for the tests of a job across hosts.
# Sourced by the test scripts:
#
#   . hosts.sh
#   ns_setup 3          # hosts bipns<pid>-0 .. -2, in $ns_hosts
#   ...                 # ip netns exec HOST runs a command on HOST
#
# Each host is a network namespace with lo up and an eth0 (a veth pair)
# joined to a bridge that lives in a namespace of its own, so that the root
# namespace's network is left alone and several tests can use the same
# addresses at once: 10.254.77.<i+1>/24, a /24 reserved for these tests.
# The host names resolve inside the hosts through /etc/netns/<name>/hosts,
# which ip netns exec mounts over /etc/hosts.  All hosts share this kernel,
# and so its host name: BIP_HOST, set by bipload, tells them apart.
#
# ns_cleanup (on EXIT, INT and TERM) kills what still runs in the hosts and
# removes the namespaces, their /etc/netns entries and the shared memory of
# the jobs noted with ns_note_job or found in the files given to ns_watch.
# Without root, or when ip netns add fails, the test is skipped (exit 77)
# with the reason.

ns_prefix="bipns$$"
ns_net=10.254.77
ns_hosts=""
ns_made=""
ns_jobs=""
ns_outputs=""

ns_skip() {
	echo "SKIP: $*"
	exit 77
}

ns_cleanup() {
	for ns in $ns_made; do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill -9 $pids 2>/dev/null
		ip netns del "$ns" 2>/dev/null
		rm -rf "/etc/netns/$ns"
	done
	ns_made=""
	# /etc/netns goes too once no test uses it (ns_setup retries its mkdir).
	rmdir /etc/netns 2>/dev/null
	for f in $ns_outputs; do
		[ -f "$f" ] && ns_note_job "$f"
	done
	for job in $ns_jobs; do
		rm -f /dev/shm/bip-*-"$job"-*
	done
	ns_jobs=""
}

# The job id of a bipload run from its "bipload: N nodes, job ID" line, so
# that the cleanup can remove the job's shared memory whatever happens.
ns_note_job() {
	job=$(sed -n 's/^bipload: [0-9]* nodes*, job \([A-Za-z0-9]*\)$/\1/p' "$1" | head -1)
	[ -n "$job" ] && ns_jobs="$ns_jobs $job"
}

# Files that bipload's output goes to: the cleanup finds the jobs there too,
# should the test end before it noted them.
ns_watch() {
	ns_outputs="$ns_outputs $*"
}

ns_add() {
	ip netns add "$1" || return 1
	ns_made="$ns_made $1"
	ip -n "$1" link set lo up
}

ns_setup() {
	count=$1
	[ "$(id -u)" = 0 ] || ns_skip "network namespaces need root (uid $(id -u))"
	command -v ip >/dev/null || ns_skip "no ip command (iproute2)"
	trap ns_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	err=$(ip netns add "$ns_prefix-br" 2>&1) || ns_skip "ip netns add failed: $err"
	ns_made="$ns_prefix-br"
	ip -n "$ns_prefix-br" link set lo up
	ip -n "$ns_prefix-br" link add br0 type bridge || ns_skip "cannot make a bridge"
	ip -n "$ns_prefix-br" link set br0 up
	hosts="127.0.0.1 localhost
::1 localhost"
	i=0
	while [ "$i" -lt "$count" ]; do
		hosts="$hosts
$ns_net.$((i + 1)) $ns_prefix-$i"
		i=$((i + 1))
	done
	i=0
	while [ "$i" -lt "$count" ]; do
		h="$ns_prefix-$i"
		ns_add "$h" || ns_skip "ip netns add $h failed"
		ip -n "$ns_prefix-br" link add "v$i" type veth peer name eth0 netns "$h" ||
			ns_skip "cannot make a veth pair"
		ip -n "$ns_prefix-br" link set "v$i" master br0 up
		ip -n "$h" addr add "$ns_net.$((i + 1))/24" dev eth0
		ip -n "$h" link set eth0 up
		k=0
		until mkdir -p "/etc/netns/$h" 2>/dev/null &&
			printf '%s\n' "$hosts" 2>/dev/null >"/etc/netns/$h/hosts"; do
			k=$((k + 1))
			[ "$k" -lt 10 ] || ns_skip "cannot write /etc/netns/$h/hosts"
		done
		ns_hosts="$ns_hosts $h"
		i=$((i + 1))
	done
}

# Processes still running on the test hosts (none once a job is over).
ns_leftovers() {
	for h in $ns_hosts; do
		for pid in $(ip netns pids "$h"); do
			echo "$h: $(ps -o pid=,args= -p "$pid")"
		done
	done
}
