# SPDX-License-Identifier: MIT
# A real Slurm cluster for the tests, on test hosts made of network
# namespaces (../netns/hosts.sh).  Sourced:
#
#   . cluster.sh
#   sl_start DIR COUNT     # COUNT hosts, one slurmd each; the controller,
#                          # munged and the login shell on the first
#   sl_run CMD ARGS...     # run CMD on the first host, as a user of the cluster
#   (ns_cleanup, on exit, stops everything and removes the hosts)
#
# Debian's munge and slurm-wlm (slurmctld, slurmd, srun): munged with a key
# and a socket of its own, slurm.conf generated into DIR with ports of its
# own, proctrack/pgid and task/none (no cgroups), MpiDefault=pmix, and each
# node declaring 8 CPUs whatever the machine has (SlurmdParameters=
# config_overrides), so that more tasks than cores can run.  Since each
# test's cluster lives in hosts of its own, several tests may run at once.
# Skipped (exit 77) with the reason when a piece is missing or not root.

sl_dir=""
sl_conf=""
sl_login=""

sl_logs() {
	[ -n "$sl_dir" ] && for f in "$sl_dir"/*.log; do
		[ -f "$f" ] || continue
		echo "--- last lines of $f"
		tail -15 "$f"
	done
}

sl_fail() {
	sl_logs
	echo "FAIL: $*"
	exit 1
}

sl_start() {
	sl_dir=$1
	count=$2
	[ "$(id -u)" = 0 ] || ns_skip "a Slurm cluster needs root (uid $(id -u))"
	for p in munged slurmctld slurmd srun salloc sinfo nsenter unshare; do
		command -v "$p" >/dev/null || [ -x "/usr/sbin/$p" ] ||
			ns_skip "no $p (Debian packages munge, slurmctld, slurmd, slurm-client)"
	done
	PATH="$PATH:/usr/sbin"
	ns_setup "$count"
	set -- $ns_hosts
	ctl=$1
	sl_login=$1
	mkdir -p "$sl_dir/state" "$sl_dir/spool" || sl_fail "cannot make $sl_dir"
	sl_conf="$sl_dir/slurm.conf"
	head -c 128 /dev/urandom >"$sl_dir/munge.key" && chmod 600 "$sl_dir/munge.key"
	nodes=""
	i=0
	for h in $ns_hosts; do
		nodes="$nodes
NodeName=$h NodeAddr=$ns_net.$((i + 1)) CPUs=8 RealMemory=1000 State=UNKNOWN"
		i=$((i + 1))
	done
	cat >"$sl_conf" <<EOF
# A test cluster (tests/slurm/cluster.sh); bip_slurm(7) has one for a machine.
ClusterName=bip$$
SlurmctldHost=$(uname -n)($ns_net.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sl_dir/munge.sock
CredType=cred/munge
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$sl_dir/state
SlurmdSpoolDir=$sl_dir/spool/%n
SlurmctldPidFile=$sl_dir/slurmctld.pid
SlurmdPidFile=$sl_dir/slurmd.%n.pid
SlurmctldLogFile=$sl_dir/slurmctld.log
SlurmdLogFile=$sl_dir/slurmd.%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=pmix
ReturnToService=2
InactiveLimit=0
KillWait=2
MinJobAge=5
$nodes
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
	export SLURM_CONF="$sl_conf"
	sl_on "$ctl" munged --key-file="$sl_dir/munge.key" --socket="$sl_dir/munge.sock" \
		--pid-file="$sl_dir/munged.pid" --log-file="$sl_dir/munged.log" \
		--seed-file="$sl_dir/munge.seed" --force || sl_fail "munged did not start"
	sl_on "$ctl" slurmctld -f "$sl_conf" || sl_fail "slurmctld did not start"
	for h in $ns_hosts; do
		mkdir -p "$sl_dir/spool/$h"
		sl_on "$h" slurmd -f "$sl_conf" -N "$h" || sl_fail "slurmd $h did not start"
	done
	k=0
	until [ "$(sl_run sinfo -h -o %t 2>/dev/null | sort -u)" = idle ] &&
		[ "$(sl_run sinfo -h -o %D 2>/dev/null)" = "$count" ]; do
		k=$((k + 1))
		[ "$k" -lt 300 ] || sl_fail "the nodes did not come up: $(sl_run sinfo 2>&1)"
		sleep 0.1
	done
}

# Run a command on host h.  Not ip netns exec, which mounts a /sys of the
# network namespace without the cgroup file systems that slurmd wants even
# with proctrack/pgid: the network namespace, and the host's /etc/hosts
# (ns_setup's /etc/netns/h/hosts) in a mount namespace of its own.
# Each host has a /tmp of its own too: Slurm's PMIx plugin makes
# directories there named after the job, and every test cluster numbers its
# jobs from 1.  The cluster's hosts share a /dev/shm of their own
# ($sl_dir/shm, which sl_shm_left reads), so that a test sees only its own
# jobs' shared memory, not that of a test running beside it.
sl_on() {
	h=$1
	shift
	mkdir -p "$sl_dir/tmp/$h" "$sl_dir/shm" && chmod 1777 "$sl_dir/tmp/$h" "$sl_dir/shm"
	nsenter --net="/run/netns/$h" unshare --mount --propagation private sh -c \
		'mount --bind "/etc/netns/$0/hosts" /etc/hosts &&
		 mount --bind "$1" /tmp && mount --bind "$2" /dev/shm && shift 2 &&
		 exec "$@"' "$h" "$sl_dir/tmp/$h" "$sl_dir/shm" \
		env SLURM_CONF="$sl_conf" "$@"
}

# The BIP segments left in the cluster's /dev/shm.
sl_shm_left() {
	ls "$sl_dir/shm" 2>/dev/null | grep "^bip-" || true
}

sl_run() {
	sl_on "$sl_login" "$@"
}
