#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# compare_jobs.sh - two jobs started apart that connect (MPI-3.1 10.4),
# with the MPI shim (BIP), Open MPI and MPICH on this host: a server job of
# one process (bench/mpi_spawn.c "server") opens a port and writes its name
# to a file; then a client command of one process is started ("client"),
# connects 20 times, sending one integer that comes back each time.  Per
# implementation and round:
#   command (ms)   the client command's wall time, from its launch to its
#                  end (start-up, 20 connects, MPI_Finalize);
#   first (ms)     its first MPI_Comm_connect and the answer to its message;
#   connect (us)   the median of the 20 connects (connect to return).
# How each runs two jobs:
#   BIP       bipload -sz 1 server; bipload --attach PORT -sz 1 client (the
#             client's processes join the server's job);
#   Open MPI  an ompi-server, and mpirun --ompi-server for both jobs (tcp
#             BTL too: its shared-memory BTL does not reach another job);
#   MPICH     mpiexec for both.
# An implementation that fails shows its first error line instead.  The
# table gives the medians over the rounds and the best peer over the shim.
#
# usage: compare_jobs.sh [--build DIR] [-r ROUNDS]
#   --build DIR   BIP build directory (its uninstalled wrappers and bipload);
#                 without it, mpicc.bip and bipload from PATH
set -u -o pipefail
prog=compare_jobs.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"
build= rounds=5 connects=20
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	-r) rounds=$2; shift 2 ;;
	*) bench_die "usage: compare_jobs.sh [--build DIR] [-r ROUNDS]" ;;
	esac
done
bench_need_peers
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bip-jobs.XXXXXX") || bench_die "mktemp failed"
ompi_server=
trap '[ -n "$ompi_server" ] && kill "$ompi_server" 2>/dev/null; rm -rf "$tmp"' EXIT
bench_build_three "$build" "$here/mpi_spawn.c"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ompi-server --no-daemonize -r "$tmp/uri" >"$tmp/ompi-server.out" 2>&1 &
ompi_server=$!
for _ in $(seq 100); do [ -s "$tmp/uri" ] && break; sleep 0.1; done
ms() { date +%s%N; }
# job IMPL ROLE: one process of ROLE (server, client) under IMPL.
job() {
	local impl=$1 role=$2
	case $impl in
	bip)
		if [ "$role" = server ]; then
			timeout 120 "$bipload" -q -sz 1 "$tmp/bip" server "$connects" "$tmp/port"
		else
			timeout 60 "$bipload" -q --attach "$(cat "$tmp/port")" -sz 1 "$tmp/bip" client \
				"$connects" "$tmp/port"
		fi ;;
	ompi) timeout 60 mpirun.openmpi --ompi-server "file:$tmp/uri" --oversubscribe -np 1 \
		--mca btl self,vader,tcp "$tmp/ompi" "$role" "$connects" "$tmp/port" ;;
	mpich) timeout 60 mpiexec.mpich -n 1 "$tmp/mpich" "$role" "$connects" "$tmp/port" ;;
	esac
}
for r in $(seq "$rounds"); do
	for impl in bip ompi mpich; do
		rm -f "$tmp/port"
		job "$impl" server >"$tmp/server.out" 2>&1 &
		server=$!
		for _ in $(seq 200); do
			[ -s "$tmp/port" ] && break
			kill -0 "$server" 2>/dev/null || break
			sleep 0.05
		done
		if [ ! -s "$tmp/port" ]; then
			wait "$server"
			grep -m1 -i -e error -e abort "$tmp/server.out" >"$tmp/$impl.err"
			continue
		fi
		t0=$(ms)
		out=$(job "$impl" client 2>&1)
		t1=$(ms)
		wait "$server"
		c=$(echo "$out" | sed -n "s/^across $connects \([0-9.]*\)$/\1/p")
		f=$(echo "$out" | sed -n "s/^first $connects \([0-9.]*\)$/\1/p")
		if [ -z "$c" ] || [ -z "$f" ]; then
			echo "$out" | grep -m1 -i -e error -e abort -e failed >"$tmp/$impl.err"
			continue
		fi
		awk "BEGIN { printf \"%.1f\\n\", ($t1 - $t0) / 1e6 }" >>"$tmp/$impl.command"
		awk "BEGIN { printf \"%.2f\\n\", $f / 1e3 }" >>"$tmp/$impl.first"
		echo "$c" >>"$tmp/$impl.connect"
	done
done
bench_peer_header
for row in "command:ms" "first:ms" "connect:us"; do
	bench_peer_row "${row%%:*} (${row#*:})" "$tmp" "${row%%:*}"
done
for f in "$tmp"/*.err; do
	[ -s "$f" ] && echo "$(basename "$f" .err): $(head -c 200 "$f")"
done
exit 0
