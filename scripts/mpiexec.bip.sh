#!/bin/sh
# SPDX-License-Identifier: MIT
# mpiexec.bip - start an MPI program with bipload (mpiexec.bip(1)).
#   mpiexec.bip [-n N | -np N] [--] program [arguments...]
# A minimal front end for scripts and build systems (CMake's
# MPIEXEC_EXECUTABLE): it runs "bipload -q -sz N program arguments...".
# Any other option is refused with its name, never ignored.
set -u

me=mpiexec.bip
bipload="$(dirname "$(readlink -f -- "$0")")/bipload"
usage() {
	echo "$me: $*" >&2
	echo "usage: $me [-n N | -np N] [--] program [arguments...]" >&2
	echo "(only -n and -np are accepted; bipload(1) has the other options)" >&2
	exit 2
}

n=""
while [ "$#" -gt 0 ]; do
	case "$1" in
	-n | -np)
		[ "$#" -ge 2 ] || usage "$1 needs a number of processes"
		case "$2" in
		'' | *[!0-9]* | 0*) usage "$1 $2: expected a positive number of processes" ;;
		esac
		n=$2
		shift 2 ;;
	--)
		shift
		break ;;
	-*) usage "option $1 is not supported" ;;
	*) break ;;
	esac
done
[ "$#" -gt 0 ] || usage "no program to run"
[ -x "$bipload" ] || usage "bipload is not installed beside $me ($bipload)"
if [ -n "$n" ]; then
	exec "$bipload" -q -sz "$n" "$@"
fi
exec "$bipload" -q "$@"
