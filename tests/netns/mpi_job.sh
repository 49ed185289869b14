#!/bin/sh
# SPDX-License-Identifier: MIT
# mpi_job.sh BUILDDIR SOURCEDIR NP PROGRAM ARG [VAR=value]... - one MPI
# test program (PROGRAM ARG) across 3 test hosts made of network
# namespaces (tests/netns/hosts.sh), the processes taken from the hosts in
# turn, over the ofi driver on tcp; each VAR=value is given to every
# process (bipload -x).  IO_TEST_DIR is a scratch directory under the build
# directory that the hosts share, as they share this machine's file system:
# the I/O tests assume no more of it than NFS gives (what a process wrote
# is seen by another after the writer's sync or close and the reader's sync
# or open, and byte-range locks work across hosts).
# Skipped (exit 77) without root, namespaces or the ofi driver over tcp.
set -u
build=$1 src=$2 np=$3 prog=$4 name=$5
shift 5
bipload="$build/scripts/bipload"
bipconf="$build/scripts/bipconf"
. "$src/tests/netns/hosts.sh"

unset BIP_NIC
ns_ofi_job "$build" 3
extra=""
for v in "$@"; do
	extra="$extra -x $v"
done
set -- $ns_hosts
"$bipconf" -f "$tmp/conf" "$1" "$2" "$3" "$1" "$2" "$3" >/dev/null || { echo "FAIL: bipconf"; exit 1; }
export BIP_OFI_PROVIDER=tcp BIP_INIT_TIMEOUT=30 IO_TEST_DIR="$tmp"
# $extra: words of the form -x VAR=value, split on purpose.
"$bipload" -f "$tmp/conf" -sz "$np" --rsh "ip netns exec" -x IO_TEST_DIR $extra --timeout 120 \
	"$prog" "$name" >"$out" 2>&1
rc=$?
ns_note_job "$out"
cat "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: $(basename "$prog") $name on $np processes over 3 hosts: status $rc"; exit 1; }
echo "PASS"
