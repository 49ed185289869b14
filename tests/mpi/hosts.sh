#!/bin/sh
# SPDX-License-Identifier: MIT
# hosts.sh BIPLOAD PROGRAM NP [clusters] - MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
# groups processes by host as BIP sees hosts: a configuration whose nodes
# name this machine by its own name (hostname) and by "localhost" is one
# host, so every process is in one shared communicator.  With clusters,
# the file also makes each name a cluster (bipconf(5), "Clusters"), joined
# by a gateway: BIP_COMM_TYPE_CLUSTER splits the two halves.
set -u
bipload=$1 prog=$2 np=$3 mode=${4:-hosts}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
host=$(hostname 2>/dev/null || uname -n)
[ "$host" != localhost ] || { echo "hosts.sh: this host is called localhost: skipped"; exit 77; }
{
	echo "$np"
	i=0
	while [ "$i" -lt "$np" ]; do
		if [ "$i" -lt $((np / 2)) ]; then echo "$host 0"; else echo "localhost 0"; fi
		j=0
		while [ "$j" -lt "$np" ]; do echo 256; j=$((j + 1)); done
		i=$((i + 1))
	done
	if [ "$mode" = clusters ]; then
		echo "cluster here shm $host"
		echo "cluster there shm localhost"
		echo "gateway here:$host there:localhost ofi"
	fi
} >"$dir/conf"
if [ "$mode" = clusters ]; then
	"$bipload" -q -f "$dir/conf" --timeout 60 "$prog" clusters || {
		echo "hosts.sh: BIP_COMM_TYPE_CLUSTER over two clusters of this host failed" >&2
		exit 1
	}
	echo "hosts.sh: $np processes in clusters $host and localhost: split in two"
	exit 0
fi
"$bipload" -q -f "$dir/conf" --timeout 60 "$prog" hosts || {
	echo "hosts.sh: MPI_Comm_split_type over two names of this host failed" >&2
	exit 1
}
echo "hosts.sh: $np processes configured as $host and localhost: one shared communicator"
