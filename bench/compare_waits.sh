#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# compare_waits.sh - waiting modes with more processes than processors:
# two BIP builds (say, before and after a change to the wait) and the
# modes given, interleaved for R rounds, medians over the rounds.
#
#   coll  NP processes of bench/mpi_coll (all collectives, 8 bytes):
#         wall time of the job, processor time of all its processes (user
#         and system, /usr/bin/time per process), the alltoall and barrier
#         latencies in microseconds;
#   pp    2 processes of bench/bip_pingpong, 8 bytes: latency, processor time.
#
# usage: compare_waits.sh [-r ROUNDS] [-n NP] NAME=DIR[:VAR=VALUE,...]...
#   e.g. compare_waits.sh old=../old/build new=build new-block=build:BIP_WAIT=block
set -u
prog=compare_waits.sh
rounds=5
np=8
while [ $# -gt 0 ]; do
	case "$1" in
	-r) rounds=$2; shift 2 ;;
	-n) np=$2; shift 2 ;;
	-h|--help) sed -n 3,16p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "$prog: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "$prog: give at least one NAME=DIR" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "$prog: /usr/bin/time not found" >&2; exit 1; }
out=$(mktemp)
res=$(mktemp)
trap 'rm -f "$out" "$res"' EXIT

# one NAME=DIR[:VAR=VALUE,...] -> name, dir, env words
run() {
	local kind=$1 spec=$2 name dir vars s e
	name=${spec%%=*}
	dir=${spec#*=}
	vars=""
	case "$dir" in *:*) vars=$(echo "${dir#*:}" | tr ',' ' '); dir=${dir%%:*} ;; esac
	[ -x "$dir/scripts/bipload" ] || { echo "$prog: $dir/scripts/bipload not found" >&2; exit 1; }
	s=$(date +%s.%N)
	if [ "$kind" = coll ]; then
		# shellcheck disable=SC2086 # vars are words
		env $vars "$dir/scripts/bipload" -q -sz "$np" /usr/bin/time -f "cpu %U %S" \
			"$dir/bench/mpi_coll" -i 200 -b 3 -t 0.3 >"$out" 2>&1
	else
		# shellcheck disable=SC2086
		env $vars "$dir/scripts/bipload" -q -sz 2 /usr/bin/time -f "cpu %U %S" \
			"$dir/bench/bip_pingpong" -s 8 -S 8 -i 20000 -b 5 >"$out" 2>&1
	fi || { cat "$out" >&2; echo "$prog: $name: $kind failed" >&2; exit 1; }
	e=$(date +%s.%N)
	awk -v k="$kind" -v n="$name" -v w="$(echo "$e - $s" | bc)" '
		$1 == "cpu" { c += $2 + $3 }
		$1 == "alltoall" { a = $3 } $1 == "barrier" { b = $3 }
		$1 == 8 && !l { l = $2 }
		END { if (k == "coll") print k, n, w, c, a, b; else print k, n, w, c, l }' "$out" >>"$res"
}
for r in $(seq "$rounds"); do
	for spec in "$@"; do run coll "$spec"; done
	for spec in "$@"; do run pp "$spec"; done
done
med() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "# $(nproc) processors, load $(cut -d' ' -f1-3 /proc/loadavg); medians of $rounds rounds"
echo "# coll: $np processes of mpi_coll; pp: 2 processes of bip_pingpong, 8 bytes"
printf "%-12s %8s %8s %12s %12s\n" "# coll" wall_s cpu_s alltoall_us barrier_us
for spec in "$@"; do
	n=${spec%%=*}
	printf "%-12s %8s %8s %12s %12s\n" "$n" \
		"$(awk -v n="$n" '$1 == "coll" && $2 == n { print $3 }' "$res" | med)" \
		"$(awk -v n="$n" '$1 == "coll" && $2 == n { print $4 }' "$res" | med)" \
		"$(awk -v n="$n" '$1 == "coll" && $2 == n { print $5 }' "$res" | med)" \
		"$(awk -v n="$n" '$1 == "coll" && $2 == n { print $6 }' "$res" | med)"
done
printf "%-12s %8s %8s %12s\n" "# pp" wall_s cpu_s latency_us
for spec in "$@"; do
	n=${spec%%=*}
	printf "%-12s %8s %8s %12s\n" "$n" \
		"$(awk -v n="$n" '$1 == "pp" && $2 == n { print $3 }' "$res" | med)" \
		"$(awk -v n="$n" '$1 == "pp" && $2 == n { print $4 }' "$res" | med)" \
		"$(awk -v n="$n" '$1 == "pp" && $2 == n { print $5 }' "$res" | med)"
done
