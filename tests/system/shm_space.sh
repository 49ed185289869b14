#!/bin/sh
# SPDX-License-Identifier: MIT
# A /dev/shm too small for the job is a clear error at start-up, never a
# SIGBUS: run the token example in a private mount namespace whose /dev/shm
# is a 16 KiB tmpfs.
# Usage: shm_space.sh BIPLOAD PROGRAM
set -u
bipload=$1
prog=$2

if ! unshare -m true 2>/dev/null; then
	echo "SKIP: cannot create a mount namespace here (needs root or user namespaces)"
	exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
unshare -m sh -c 'mount -t tmpfs -o size=16k tmpfs /dev/shm && exec "$0" -sz 2 "$1"' \
	"$bipload" "$prog" >"$out" 2>&1
rc=$?
cat "$out"
if [ "$rc" -eq 0 ]; then
	echo "FAIL: the job ran although /dev/shm had no room"
	exit 1
fi
if [ "$rc" -gt 128 ]; then
	echo "FAIL: a process died of a signal ($rc) instead of reporting the shortage"
	exit 1
fi
if ! grep -q "/dev/shm has .* KiB free, the shm driver needs" "$out"; then
	echo "FAIL: no message about the space of /dev/shm"
	exit 1
fi
echo "PASS"
