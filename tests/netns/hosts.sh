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

# ns_need_ofi_tcp BIPINFO: skip unless the ofi driver is compiled in, can
# run here, and libfabric has its tcp provider.
ns_need_ofi_tcp() {
	line=$("$1" --parsable | grep '^driver\.ofi=')
	case "$line" in
	"") ns_skip "the ofi driver is not compiled in (bipinfo --parsable has no driver.ofi)" ;;
	*=unavailable*) ns_skip "the ofi driver cannot run here: ${line#*=unavailable: }" ;;
	esac
	fi_info -p tcp >/dev/null 2>&1 || ns_skip "libfabric has no tcp provider here (fi_info -p tcp)"
}

# ns_ofi_job BUILDDIR N: the start of a job's test over ofi/tcp across N
# hosts: skipped without namespaces or the driver; a scratch directory
# $tmp under the build directory, the job's output file $out (watched),
# the hosts in $ns_hosts, and everything removed on exit.
ns_ofi_job() {
	unset BIPCONF BIP_OPTS BIP_NODE BIP_JOBID BIP_HOST BIP_RSH
	ns_need_ofi_tcp "$1/scripts/bipinfo"
	tmp=$(mktemp -d "$1/tests/netns-job.XXXXXX") || exit 1
	out="$tmp/out"
	ns_watch "$out"
	ns_setup "$2"
	trap 'ns_cleanup; rm -rf "$tmp"' EXIT
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

# Two clusters of three hosts, a0 a1 a2 and b0 b1 b2 (in $ns_prefix-*),
# each on a data network of its own (bridges bra and brb, interface data0:
# ns_data_addr HOST), joined only by two gateway pairs, a2 - b0 and a1 - b1,
# on a third network (brl, link0), through which each gateway host reaches
# the other end's data0 address (a host route; nothing is routed further).
# Every host also has a management interface, eth0 on bridge brm, which
# the host names resolve to (the start-up exchange goes there).  $hosts
# gives the order of ns_hosts.  Skips the test (exit 77) when it cannot.
ns_data_addr() {
	case $1 in
	a?) echo "$ns_dA.$((${1#a} + 1))" ;;
	b?) echo "$ns_dB.$((${1#b} + 1))" ;;
	esac
}

ns_setup_clusters() {
	[ "$(id -u)" = 0 ] || ns_skip "network namespaces need root (uid $(id -u))"
	command -v ip >/dev/null || ns_skip "no ip command (iproute2)"
	ns_mgmt=10.254.70 ns_dA=10.254.71 ns_dB=10.254.72 ns_link=10.254.73
	br="$ns_prefix-br"
	err=$(ip netns add "$br" 2>&1) || ns_skip "ip netns add failed: $err"
	ns_made="$br"
	ip -n "$br" link set lo up
	for b in brm bra brb brl; do
		ip -n "$br" link add "$b" type bridge || ns_skip "cannot make a bridge"
		ip -n "$br" link set "$b" up
	done
	k=0
	names="127.0.0.1 localhost"
	i=0
	for h in $hosts; do
		i=$((i + 1))
		names="$names
$ns_mgmt.$i $ns_prefix-$h"
	done
	i=0
	for h in $hosts; do
		i=$((i + 1))
		ns_add "$ns_prefix-$h" || ns_skip "ip netns add $ns_prefix-$h failed"
		ns_attach "$h" eth0 brm "$ns_mgmt.$i"
		case $h in
		a?) ns_attach "$h" data0 bra "$(ns_data_addr "$h")" ;;
		b?) ns_attach "$h" data0 brb "$(ns_data_addr "$h")" ;;
		esac
		n=0
		until mkdir -p "/etc/netns/$ns_prefix-$h" 2>/dev/null &&
			printf '%s\n' "$names" 2>/dev/null >"/etc/netns/$ns_prefix-$h/hosts"; do
			n=$((n + 1))
			[ "$n" -lt 10 ] || ns_skip "cannot write /etc/netns/$ns_prefix-$h/hosts"
		done
		ns_hosts="$ns_hosts $ns_prefix-$h"
	done
	ns_attach a2 link0 brl "$ns_link.1"
	ns_attach b0 link0 brl "$ns_link.2"
	ns_attach a1 link0 brl "$ns_link.3"
	ns_attach b1 link0 brl "$ns_link.4"
	ip -n "$ns_prefix-a2" route add "$(ns_data_addr b0)/32" via "$ns_link.2"
	ip -n "$ns_prefix-b0" route add "$(ns_data_addr a2)/32" via "$ns_link.1"
	ip -n "$ns_prefix-a1" route add "$(ns_data_addr b1)/32" via "$ns_link.4"
	ip -n "$ns_prefix-b1" route add "$(ns_data_addr a1)/32" via "$ns_link.3"
}

# ns_attach HOST IFACE BRIDGE ADDRESS: a veth from the bridge into HOST.
ns_attach() {
	k=$((k + 1))
	ip -n "$ns_prefix-br" link add "v$k" type veth peer name "$2" netns "$ns_prefix-$1" ||
		ns_skip "cannot make a veth pair"
	ip -n "$ns_prefix-br" link set "v$k" master "$3" up
	ip -n "$ns_prefix-$1" addr add "$4/24" dev "$2"
	ip -n "$ns_prefix-$1" link set "$2" up
}

# Processes still running on the test hosts (none once a job is over).
ns_leftovers() {
	for h in $ns_hosts; do
		for pid in $(ip netns pids "$h"); do
			echo "$h: $(ps -o pid=,args= -p "$pid")"
		done
	done
}
