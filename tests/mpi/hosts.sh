#!/bin/sh
# SPDX-License-Identifier: MIT
# hosts.sh BIPLOAD PROGRAM NP - MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
# groups processes by the host their node names in the configuration.  Only
# this machine can run processes here, so the two hosts are two names of
# it: its own name (uname -n) and "localhost".
set -u
bipload=$1 prog=$2 np=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
host=$(uname -n)
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
} >"$dir/conf"
"$bipload" -q -f "$dir/conf" --timeout 60 "$prog" hosts || {
	echo "hosts.sh: MPI_Comm_split_type over two configured hosts failed" >&2
	exit 1
}
echo "hosts.sh: $np processes on two configured hosts, grouped by host"
