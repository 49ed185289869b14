#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# compare_mpi.sh - the MPI shim against Open MPI and MPICH, the same MPI
# programs built three ways, on this host: small collectives (mpi_coll.c)
# on 2 and 4 processes, ping-pong latency and bandwidth (mpi_pingpong.c) on
# 2.  The three run interleaved for R rounds; one table gives, per row, the
# median over the rounds of each, and the shim relative to the better of
# the two others.  The floor (bench/floor: a cache line between two
# processors, memcpy) runs in every round too, and every figure is also
# given as a ratio to it.
#
# usage: compare_mpi.sh --build DIR [-r ROUNDS] [-n "NP..."] [--timeout SEC]
#                       [--shim-env VAR=VALUE]... [--shim2-env VAR=VALUE]...
#                       [--coll-opts "OPTIONS"] [--pp-opts "OPTIONS"]
#                       [--no-pingpong] [--plot FILE.png] [--keep]
#
#   --build DIR          BIP build directory (DIR/scripts/bipload, and
#                        DIR/scripts/bipcc-uninstalled to build with the shim)
#   -r, --rounds R       rounds (default 5)
#   -n, --procs "NP..."  process counts of the collectives (default "2 4")
#   --timeout SEC        limit of one run (default 120)
#   --shim-env V=X       extra environment of the shim's runs (repeatable),
#                        e.g. BIP_WAIT=spin
#   --shim2-env V=X      adds a second configuration of the shim, "Shim2",
#                        run in every round too (repeatable), e.g.
#                        BIP_SPIN=5, or LD_LIBRARY_PATH=DIR to run the same
#                        programs on another build of the libraries
#   --coll-opts OPTS     options of mpi_coll (default "-i 2000 -b 5")
#   --pp-opts OPTS       options of mpi_pingpong (default "-S 1048576 -b 5")
#   --no-pingpong        the collectives only
#   --plot FILE.png      also draw the ping-pong's latency and bandwidth
#                        against the size (log-log, the floor dashed) with
#                        gnuplot
#   --keep               keep the temporary directory (raw CSV of every run)

set -u -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"

build=
rounds=5
nps="2 4"
timeout_s=120
coll_opts="-i 2000 -b 5"
pp_opts="-S 1048576 -b 5"
keep=0
pingpong=1
shim_env=()
shim2_env=()
have_shim2=0
plot=

usage() {
	sed -n '/^# usage:/,/^# *--keep/s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
	--build=*) build=${1#*=}; shift ;;
	-r | --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
	--rounds=*) rounds=${1#*=}; shift ;;
	-n | --procs) [ $# -ge 2 ] || usage; nps=$2; shift 2 ;;
	--procs=*) nps=${1#*=}; shift ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	--shim-env) [ $# -ge 2 ] || usage; shim_env+=("$2"); shift 2 ;;
	--shim-env=*) shim_env+=("${1#*=}"); shift ;;
	--shim2-env) [ $# -ge 2 ] || usage; shim2_env+=("$2"); have_shim2=1; shift 2 ;;
	--shim2-env=*) shim2_env+=("${1#*=}"); have_shim2=1; shift ;;
	--coll-opts) [ $# -ge 2 ] || usage; coll_opts=$2; shift 2 ;;
	--pp-opts) [ $# -ge 2 ] || usage; pp_opts=$2; shift 2 ;;
	--no-pingpong) pingpong=0; shift ;;
	--plot) [ $# -ge 2 ] || usage; plot=$2; shift 2 ;;
	--plot=*) plot=${1#*=}; shift ;;
	--keep) keep=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done

[ -n "$build" ] || { echo "$prog: --build DIR is required" >&2; usage; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || bench_die "ROUNDS must be a positive number"
for np in $nps; do
	[[ $np =~ ^[1-9][0-9]*$ ]] || bench_die "'$np' is not a process count"
done
for e in "${shim_env[@]}" "${shim2_env[@]}"; do
	[[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || bench_die "'$e' is not VAR=VALUE"
done
if [ -n "$plot" ]; then
	[ "$pingpong" = 1 ] || bench_die "--plot draws the ping-pong: not with --no-pingpong"
	bench_need_gnuplot "$plot"
fi

build=$(cd "$build" 2>/dev/null && pwd) || bench_die "no build directory '$build'"
bipload=$build/scripts/bipload
bipcc=$build/scripts/bipcc-uninstalled
[ -x "$bipload" ] || bench_die "$bipload not found (ninja -C $build)"
[ -f "$bipcc" ] || bench_die "$bipcc not found (ninja -C $build)"
bench_need_floor "$build"
bench_need_peers
bench_tmpdir "$keep"

read -r -a coll_args <<<"$coll_opts"
read -r -a pp_args <<<"$pp_opts"
# The floor over the ping-pong's sizes, or only its round trip.
if [ "$pingpong" = 1 ]; then
	bench_floor_sizes "${pp_args[@]}"
else
	floor_min=4 floor_max=4
fi

# The build tree keeps the shim in its own directory, next to libbip's.
shim_lib=$build/lib/mpi_shim
for b in mpi_coll mpi_pingpong; do
	sh "$bipcc" -O2 -I"$here" -o "$tmp/$b.shim" "$here/$b.c" \
		-L"$shim_lib" -Wl,-rpath,"$shim_lib" -lmpi ||
		bench_die "build of $b.c with the shim (bipcc -lmpi) failed"
	bench_build_peers "$here/$b.c" "$b"
done

# run IMPL NP PROGRAM ARGS...
run() {
	local impl=$1 np=$2 exe=$3
	shift 3
	case $impl in
	Shim) env "${shim_env[@]}" timeout "$timeout_s" "$bipload" -sz "$np" "$tmp/$exe.shim" "$@" ;;
	Shim2) env "${shim2_env[@]}" timeout "$timeout_s" "$bipload" -sz "$np" "$tmp/$exe.shim" "$@" ;;
	OpenMPI) bench_run_openmpi "$timeout_s" "$np" "$tmp/$exe.openmpi" "$@" ;;
	MPICH) bench_run_mpich "$timeout_s" "$np" "$tmp/$exe.mpich" "$@" ;;
	esac
}

impls=(Shim)
[ "$have_shim2" = 1 ] && impls+=(Shim2)
impls+=(OpenMPI MPICH)
bench_header
echo "# the shim from $build, started by bipload; environment: ${shim_env[*]:-(none)}"
[ "$have_shim2" = 1 ] && echo "# Shim2: the same, environment: ${shim2_env[*]}"
echo "# mpi_coll ${coll_opts} on ${nps// /, } processes;" \
	"$([ "$pingpong" = 1 ] && echo "mpi_pingpong ${pp_opts} on 2;" || echo "no ping-pong;")" \
	"$rounds rounds, interleaved"

# Result files, in the order of the table: coll.NP.IMPL.R.csv, pp.2.IMPL.R.csv
files=()
failed=0
for ((r = 1; r <= rounds; r++)); do
	for np in $nps; do
		for impl in "${impls[@]}"; do
			jobs=("coll mpi_coll")
			[ "$np" = 2 ] && [ "$pingpong" = 1 ] && jobs+=("pp mpi_pingpong")
			for j in "${jobs[@]}"; do
				set -- $j
				out=$tmp/$1.$np.$impl.$r.csv
				if [ "$1" = coll ]; then
					run "$impl" "$np" "$2" --csv "${coll_args[@]}"
				else
					run "$impl" "$np" "$2" --csv "${pp_args[@]}"
				fi >"$out" 2>"$out.err"
				rc=$?
				if [ $rc != 0 ] || ! grep -q '^[0-9a-z]*,[0-9]' "$out"; then
					echo "# round $r: $impl, $2 on $np processes failed (exit $rc):" >&2
					sed 's/^/#   /' "$out.err" | head -20 >&2
					: >"$out"
					failed=$((failed + 1))
				fi
				[ $r = 1 ] && [ "$impl" = Shim ] && files+=("$1.$np")
			done
		done
	done
	out=$tmp/floor.0.FLOOR.$r.csv
	if ! bench_run_floor "$timeout_s" "$out" 2>"$out.err" || ! grep -q '^[0-9]' "$out"; then
		echo "# round $r: the floor failed:" >&2
		sed 's/^/#   /' "$out.err" | head -20 >&2
		: >"$out"
		failed=$((failed + 1))
	fi
	echo "# round $r of $rounds done" >&2
done

# One row per (benchmark, processes, bytes, measure); medians over the rounds.
# The floor of a row: the half round trip for a collective, the floor
# latency (half round trip and one memcpy) or memcpy at that size for the
# ping-pong.
(cd "$tmp" && awk -F, -v impls="${impls[*]}" -v rounds="$rounds" \
	-v latdat="$tmp/plot.lat" -v bwdat="$tmp/plot.bw" "$bench_awk_median"'
FNR == 1 { split(FILENAME, f, "."); kind = f[1]; np = f[2]; impl = f[3] }
FNR == 1 && kind == "floor" && /^# half_rtt_us [0-9]/ { split($0, hh, " "); halves = halves " " hh[3] }
FNR == 1 { next }
function add(key, v, lower, what, z) {
	if (!(key in seen)) {
		seen[key] = 1; keys[++nkeys] = key; low[key] = lower
		what_of[key] = what; bytes_of[key] = z
	}
	val[impl, key] = val[impl, key] " " v
}
kind == "coll" && /^[a-z]/ { add(sprintf("%-10s %5d %10s %9d %-9s", $1, np, "-", $2, "us"), $4, 1, "coll", $2) }
kind == "pp" && /^[0-9]/ {
	add(sprintf("%-10s %5d %10s %9d %-9s", "pingpong", np, "latency", $1, "us"), $2, 1, "lat", $1)
	add(sprintf("%-10s %5d %10s %9d %-9s", "pingpong", np, "bandwidth", $1, "MB/s"), $3, 0, "bw", $1)
}
kind == "floor" && /^[0-9]/ {
	if ($2 != "-")
		fl_lat[$1] = fl_lat[$1] " " $2
	fl_bw[$1] = fl_bw[$1] " " $3
}
function cell(v, p) { return v < 0 ? sprintf(" %10s", "-") : sprintf(" %10." p "f", v) }
function ratio(a, b) { return a >= 0 && b > 0 ? sprintf(" %12.2f", a / b) : sprintf(" %12s", "-") }
# A line of plot data: the size, the implementations, the floor.
function plotline(file, z, key, fl,    i, v) {
	printf "%d", z > file
	for (i = 1; i <= ni; i++) {
		v = median(val[im[i], key])
		printf " %s", (v < 0 ? "-" : v) > file
	}
	print " " (fl < 0 ? "-" : fl) > file
}
END {
	ni = split(impls, im, " ")
	for (i = 1; i <= ni; i++)
		if (im[i] ~ /^Shim/)
			shims[++ns] = im[i]
	h = median(halves)
	printf "\n# floor: half round trip of a cache line between two processors: %s;\n", h < 0 ? "not measured" : sprintf("%.3f us", h)
	printf "# ping-pong latency floor = that + one memcpy of the size; bandwidth floor = memcpy from buffers larger than the last-level cache\n"
	printf "\n# median over %d rounds; Shim/best: the shim over the better of Open MPI and MPICH\n", rounds
	printf "# (latency: below 1, the shim is faster; bandwidth: above 1, the shim is faster)\n"
	printf "# floor: the half round trip (collectives), the floor latency or memcpy (ping-pong); X/floor: X over it\n"
	hdr = sprintf("%-10s %5s %10s %9s %-9s", "benchmark", "procs", "measure", "bytes", "unit")
	for (i = 1; i <= ni; i++)
		hdr = hdr sprintf(" %10s", im[i])
	for (i = 1; i <= ns; i++)
		hdr = hdr sprintf(" %10s", shims[i] "/best")
	hdr = hdr sprintf(" %10s", "floor")
	for (i = 1; i <= ni; i++)
		hdr = hdr sprintf(" %12s", im[i] "/floor")
	print hdr
	printf "bytes" > latdat
	printf "bytes" > bwdat
	for (i = 1; i <= ni; i++) {
		printf " %s", im[i] > latdat
		printf " %s", im[i] > bwdat
	}
	print " floor" > latdat
	print " memcpy" > bwdat
	for (k = 1; k <= nkeys; k++) {
		key = keys[k]
		line = key
		for (i = 1; i <= ni; i++) {
			m[im[i]] = median(val[im[i], key])
			line = line cell(m[im[i]], 3)
		}
		a = m["OpenMPI"]; b = m["MPICH"]
		if (low[key])
			best = a < 0 ? b : b < 0 ? a : (a < b ? a : b)
		else
			best = a > b ? a : b
		for (i = 1; i <= ns; i++)
			line = line (best > 0 && m[shims[i]] >= 0 ? sprintf(" %10.2f", m[shims[i]] / best) : sprintf(" %10s", "-"))
		w = what_of[key]; z = bytes_of[key]
		fl = w == "coll" ? h : w == "lat" ? median(fl_lat[z]) : median(fl_bw[z])
		line = line cell(fl, 3)
		for (i = 1; i <= ni; i++)
			line = line ratio(m[im[i]], fl)
		print line
		if (w == "lat")
			plotline(latdat, z, key, fl)
		else if (w == "bw")
			plotline(bwdat, z, key, fl)
	}
}' $(for f in "${files[@]}"; do for i in "${impls[@]}"; do for ((r = 1; r <= rounds; r++)); do
	echo "${f%%.*}.${f#*.}.$i.$r.csv"; done; done; done
	for ((r = 1; r <= rounds; r++)); do echo "floor.0.FLOOR.$r.csv"; done))
bench_floor_note "$tmp"/floor.0.FLOOR.*.csv
[ -z "$plot" ] || bench_plot "$plot" "MPI ping-pong: the MPI shim (over BIP), Open MPI and MPICH, 2 processes of one host; the floor dashed" \
	"$tmp/plot.lat" "$tmp/plot.bw"

if [ $failed -gt 0 ]; then
	echo "# $failed run(s) failed; their medians are over fewer rounds" >&2
	exit 1
fi
exit 0
