#!/bin/sh
# SPDX-License-Identifier: MIT
# Two jobs started apart share a port name through the name service: the
# connect of the second to the first's port fails cleanly (MPI_ERR_PORT,
# and a message saying that a program started apart connects by joining
# the job: bipload --attach, which attach.sh tests).
# twojobs.sh BIPLOAD PROGRAM NP SCRATCH
set -u
bipload=$1 prog=$2 np=$3 scratch=$4
mkdir -p "$scratch" || exit 1
top=$(mktemp -d "$scratch/twojobs.XXXXXX") || exit 1
trap 'rm -rf "$top"' EXIT
BIP_NAMES_DIR=$top/names
export BIP_NAMES_DIR

"$bipload" -q -sz "$np" --timeout 60 "$prog" twojobs-server > "$top/server.out" 2>&1 &
server=$!

# A connect under MPI_ERRORS_ARE_FATAL ends its job with the message.
"$bipload" -q -sz "$np" --timeout 60 "$prog" twojobs-fatal > "$top/fatal.out" 2>&1
rc=$?
fail=0
if [ "$rc" -eq 0 ]; then
	echo "twojobs: the fatal client ended well; its connect should have ended it"
	fail=1
fi
if ! grep -q "bipload --attach" "$top/fatal.out"; then
	echo "twojobs: the fatal client's output lacks the message:"
	fail=1
fi
[ "$fail" -eq 0 ] || cat "$top/fatal.out"

# Under MPI_ERRORS_RETURN: MPI_ERR_PORT, then the server is told to end.
if ! "$bipload" -q -sz "$np" --timeout 60 "$prog" twojobs-client > "$top/client.out" 2>&1; then
	echo "twojobs: the client failed:"
	cat "$top/client.out"
	fail=1
	: > "$top/client-done"
fi
if ! wait "$server"; then
	echo "twojobs: the server failed:"
	cat "$top/server.out"
	fail=1
fi
exit "$fail"
