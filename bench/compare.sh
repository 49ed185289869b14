#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# compare.sh - ping-pong latency and streaming bandwidth of BIP, Open MPI and
# MPICH between two processes of this host.
#
# Builds bench/mpi_pingpong.c with mpicc.openmpi and mpicc.mpich into a
# temporary directory, runs the three (BIP, Open MPI, MPICH) interleaved for
# R rounds and prints, per size, the median over the rounds of each one's
# latency and bandwidth, and BIP relative to the better of the two MPIs.
# The floor (bench/floor: a cache line between two processors, memcpy) runs
# in every round too; every figure is also given as a ratio to it.
#
# usage: compare.sh --build DIR [-r ROUNDS] [--bip-env VAR=VALUE]...
#                   [--bip2-env VAR=VALUE]... [--bip2-build DIR]
#                   [--plot FILE.png] [--keep] [-- BENCH_OPTIONS]
#
#   --build DIR        BIP build directory (DIR/scripts/bipload,
#                      DIR/bench/bip_pingpong)
#   -r, --rounds R     rounds (default 5)
#   --bip-env V=X      extra environment of the BIP runs (repeatable)
#   --bip2-env V=X     adds a second BIP configuration, "BIP2", run with
#                      this environment (repeatable), to compare two settings
#   --bip2-build DIR   BIP2 from another build (say, before a change): an
#                      A/B of two builds, interleaved with the peers; the
#                      tables then have a column BIP/BIP2
#   --timeout SEC      limit of one run (default 120)
#   --plot FILE.png    also draw latency and bandwidth against the size
#                      (log-log, the floor dashed) with gnuplot
#   --keep             keep the temporary directory (raw CSV of every run)
#   -- BENCH_OPTIONS   passed to every benchmark run (-s, -S, -i, -w, -b)

set -u -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"
build=
rounds=5
timeout_s=120
keep=0
bip_env=()
bip2_env=()
bip2_build=
have_bip2=0
bench_opts=()
plot=

usage() {
	sed -n '/^# usage:/,/^# *-- BENCH/s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
	--build=*) build=${1#*=}; shift ;;
	-r | --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
	--rounds=*) rounds=${1#*=}; shift ;;
	--bip-env) [ $# -ge 2 ] || usage; bip_env+=("$2"); shift 2 ;;
	--bip-env=*) bip_env+=("${1#*=}"); shift ;;
	--bip2-env) [ $# -ge 2 ] || usage; bip2_env+=("$2"); have_bip2=1; shift 2 ;;
	--bip2-env=*) bip2_env+=("${1#*=}"); have_bip2=1; shift ;;
	--bip2-build) [ $# -ge 2 ] || usage; bip2_build=$2; have_bip2=1; shift 2 ;;
	--bip2-build=*) bip2_build=${1#*=}; have_bip2=1; shift ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	--plot) [ $# -ge 2 ] || usage; plot=$2; shift 2 ;;
	--plot=*) plot=${1#*=}; shift ;;
	--keep) keep=1; shift ;;
	-h | --help) usage 0 ;;
	--) shift; bench_opts=("$@"); break ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done

[ -n "$build" ] || { echo "$prog: --build DIR is required" >&2; usage; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || bench_die "ROUNDS must be a positive number"
for e in "${bip_env[@]}" "${bip2_env[@]}"; do
	[[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || bench_die "'$e' is not VAR=VALUE"
done
[ -z "$plot" ] || bench_need_gnuplot "$plot"

build=$(cd "$build" 2>/dev/null && pwd) || bench_die "no build directory '$build'"
[ -x "$build/bench/bip_pingpong" ] ||
	bench_die "$build/bench/bip_pingpong not found (ninja -C $build bench/bip_pingpong)"
if [ -n "$bip2_build" ]; then
	bip2_build=$(cd "$bip2_build" 2>/dev/null && pwd) ||
		bench_die "no build directory '$bip2_build'"
	[ -x "$bip2_build/bench/bip_pingpong" ] ||
		bench_die "$bip2_build/bench/bip_pingpong not found"
else
	bip2_build=$build
fi
[ -f "$here/mpi_pingpong.c" ] || bench_die "mpi_pingpong.c not found next to $prog"
bench_need_floor "$build"
bench_floor_sizes "${bench_opts[@]}"
bench_need_peers
bench_tmpdir "$keep"
bench_build_peers "$here/mpi_pingpong.c" mpi_pingpong

# Start the BIP pair of build $1: with bipload if it is there, by hand
# otherwise.
run_bip() {
	local bipload=$1/scripts/bipload bip_exe=$1/bench/bip_pingpong
	shift
	local -a envs=("$@")

	if [ -x "$bipload" ]; then
		env "${envs[@]}" timeout "$timeout_s" \
			"$bipload" -sz 2 "$bip_exe" --csv "${bench_opts[@]}"
	else
		local job=cmp$$r$RANDOM pids=() rc=0 i
		for i in 0 1; do
			env "${envs[@]}" BIP_NODE=$i BIP_JOBID=$job BIP_OPTS=n2q \
				timeout "$timeout_s" "$bip_exe" --csv "${bench_opts[@]}" &
			pids+=($!)
		done
		for i in "${pids[@]}"; do
			wait "$i" || rc=$?
		done
		return $rc
	fi
}

run_openmpi() {
	bench_run_openmpi "$timeout_s" 2 "$tmp/mpi_pingpong.openmpi" --csv "${bench_opts[@]}"
}

run_mpich() {
	bench_run_mpich "$timeout_s" 2 "$tmp/mpi_pingpong.mpich" --csv "${bench_opts[@]}"
}

impls=(BIP)
[ "$have_bip2" = 1 ] && impls+=(BIP2)
impls+=(OpenMPI MPICH)

bench_header
echo "# BIP from $build ($([ -x "$build/scripts/bipload" ] && echo bipload || echo "started by hand"))"
[ "$bip2_build" != "$build" ] && echo "# BIP2 from $bip2_build"
echo "# BIP env: ${bip_env[*]:-(none)}"
[ "$have_bip2" = 1 ] && echo "# BIP2 env: ${bip2_env[*]}"
echo "# benchmark options: --csv ${bench_opts[*]}; $rounds rounds, interleaved"

failed=0
for ((r = 1; r <= rounds; r++)); do
	for impl in "${impls[@]}" FLOOR; do
		out=$tmp/$impl.$r.csv
		case $impl in
		BIP) run_bip "$build" "${bip_env[@]}" >"$out" 2>"$tmp/$impl.$r.err" ;;
		BIP2) run_bip "$bip2_build" "${bip2_env[@]}" >"$out" 2>"$tmp/$impl.$r.err" ;;
		OpenMPI) run_openmpi >"$out" 2>"$tmp/$impl.$r.err" ;;
		MPICH) run_mpich >"$out" 2>"$tmp/$impl.$r.err" ;;
		FLOOR) bench_run_floor "$timeout_s" "$out" 2>"$tmp/$impl.$r.err" ;;
		esac
		rc=$?
		if [ $rc != 0 ] || ! grep -q '^[0-9]' "$out"; then
			echo "# round $r: $impl failed (exit $rc):" >&2
			sed 's/^/#   /' "$tmp/$impl.$r.err" | head -20 >&2
			: >"$out"
			failed=$((failed + 1))
		fi
	done
	echo "# round $r of $rounds done" >&2
done

# Medians over the rounds, per implementation and size.
(cd "$tmp" && awk -F, -v impls="${impls[*]}" -v rounds="$rounds" \
	-v latdat="$tmp/plot.lat" -v bwdat="$tmp/plot.bw" "$bench_awk_median"'
FNR == 1 { split(FILENAME, f, "."); impl = f[1] }
FNR == 1 && /^# half_rtt_us [0-9]/ { split($0, hh, " "); halves = halves " " hh[3] }
FNR == 1 { next }
/^[0-9]/ {
	if (impl != "FLOOR" && !($1 in seen)) { seen[$1] = 1; sizes[++nsizes] = $1 }
	if ($2 != "-")
		lat[impl, $1] = lat[impl, $1] " " $2
	bw[impl, $1] = bw[impl, $1] " " $3
}
function fmt(v, w, p) { return v < 0 ? sprintf("%" w "s", "-") : sprintf("%" w "." p "f", v) }
function ratio(a, b, w) { return a >= 0 && b > 0 ? sprintf(" %" w ".2f", a / b) : sprintf(" %" w "s", "-") }
# The header: the implementations, their ratios to the best MPI, the floor
# (named fl) and the ratios to it.
function header(fl,    h, i) {
	h = sprintf("%10s", "bytes")
	for (i = 1; i <= ni; i++)
		h = h sprintf(" %9s", im[i])
	for (i = 1; i <= nb; i++)
		h = h sprintf(" %10s", bips[i] "/best")
	if (nb > 1)
		h = h sprintf(" %9s", "BIP/BIP2")
	h = h sprintf(" %9s", fl)
	for (i = 1; i <= ni; i++)
		h = h sprintf(" %14s", im[i] "/" fl)
	return h
}
END {
	ni = split(impls, im, " ")
	for (i = 1; i <= ni; i++)
		if (im[i] ~ /^BIP/)
			bips[++nb] = im[i]
	# sizes in numeric order
	for (i = 2; i <= nsizes; i++)
		for (j = i; j > 1 && sizes[j - 1] + 0 > sizes[j] + 0; j--) {
			t = sizes[j]; sizes[j] = sizes[j - 1]; sizes[j - 1] = t
		}
	h = median(halves)
	printf "\n# floor: half round trip of a cache line between two processors: %s;\n", h < 0 ? "not measured" : sprintf("%.3f us", h)
	printf "# floor latency = that + one memcpy of the size; memcpy from buffers larger than the last-level cache\n"
	printf "\n# latency_us: one-way, median over %d rounds; %s/best < 1: BIP lower; X/floor: times the floor\n", rounds, "BIP"
	print header("floor")
	printf "bytes" > latdat
	for (i = 1; i <= ni; i++)
		printf " %s", im[i] > latdat
	print " floor" > latdat
	for (s = 1; s <= nsizes; s++) {
		z = sizes[s]
		line = sprintf("%10d", z)
		printf "%d", z > latdat
		for (i = 1; i <= ni; i++) {
			m[im[i]] = median(lat[im[i], z])
			line = line " " fmt(m[im[i]], 9, 3)
			printf " %s", (m[im[i]] < 0 ? "-" : m[im[i]]) > latdat
		}
		best = m["OpenMPI"]
		if (best < 0 || (m["MPICH"] >= 0 && m["MPICH"] < best))
			best = m["MPICH"]
		for (i = 1; i <= nb; i++)
			line = line ratio(m[bips[i]], best, 10)
		if (nb > 1)
			line = line ratio(m["BIP"], m["BIP2"], 9)
		fl = median(lat["FLOOR", z])
		line = line " " fmt(fl, 9, 3)
		for (i = 1; i <= ni; i++)
			line = line ratio(m[im[i]], fl, 14)
		print line
		print " " (fl < 0 ? "-" : fl) > latdat
	}
	printf "\n# bandwidth_MBps: window streaming, median over %d rounds; BIP/best > 1: BIP higher; X/memcpy: fraction of memcpy\n", rounds
	print header("memcpy")
	printf "bytes" > bwdat
	for (i = 1; i <= ni; i++)
		printf " %s", im[i] > bwdat
	print " memcpy" > bwdat
	for (s = 1; s <= nsizes; s++) {
		z = sizes[s]
		line = sprintf("%10d", z)
		printf "%d", z > bwdat
		for (i = 1; i <= ni; i++) {
			m[im[i]] = median(bw[im[i], z])
			line = line " " fmt(m[im[i]], 9, 1)
			printf " %s", (m[im[i]] < 0 ? "-" : m[im[i]]) > bwdat
		}
		best = m["OpenMPI"] > m["MPICH"] ? m["OpenMPI"] : m["MPICH"]
		for (i = 1; i <= nb; i++)
			line = line ratio(m[bips[i]], best, 10)
		if (nb > 1)
			line = line ratio(m["BIP"], m["BIP2"], 9)
		fl = median(bw["FLOOR", z])
		line = line " " fmt(fl, 9, 1)
		for (i = 1; i <= ni; i++)
			line = line ratio(m[im[i]], fl, 14)
		print line
		print " " (fl < 0 ? "-" : fl) > bwdat
	}
}' $(for i in "${impls[@]}" FLOOR; do for ((r = 1; r <= rounds; r++)); do echo "$i.$r.csv"; done; done))
bench_floor_note "$tmp"/FLOOR.*.csv
[ -z "$plot" ] || bench_plot "$plot" "BIP, Open MPI and MPICH, 2 processes of one host; the floor dashed" \
	"$tmp/plot.lat" "$tmp/plot.bw"

if [ $failed -gt 0 ]; then
	echo "# $failed run(s) failed; their medians are over fewer rounds" >&2
	exit 1
fi
exit 0
