#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# compare_mpi.sh - the MPI shim against Open MPI and MPICH, the same MPI
# programs built three ways, on this host: small collectives (mpi_coll.c)
# on 2 and 4 processes, ping-pong latency and bandwidth (mpi_pingpong.c) on
# 2.  The three run interleaved for R rounds; one table gives, per row, the
# median over the rounds of each, and the shim relative to the better of
# the two others.
#
# usage: compare_mpi.sh --build DIR [-r ROUNDS] [-n "NP..."] [--timeout SEC]
#                       [--shim-env VAR=VALUE]... [--shim2-env VAR=VALUE]...
#                       [--coll-opts "OPTIONS"] [--pp-opts "OPTIONS"]
#                       [--no-pingpong] [--keep]
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

build=$(cd "$build" 2>/dev/null && pwd) || bench_die "no build directory '$build'"
bipload=$build/scripts/bipload
bipcc=$build/scripts/bipcc-uninstalled
[ -x "$bipload" ] || bench_die "$bipload not found (ninja -C $build)"
[ -f "$bipcc" ] || bench_die "$bipcc not found (ninja -C $build)"
bench_need_peers
bench_tmpdir "$keep"

read -r -a coll_args <<<"$coll_opts"
read -r -a pp_args <<<"$pp_opts"

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
	echo "# round $r of $rounds done" >&2
done

# One row per (benchmark, processes, bytes, measure); medians over the rounds.
(cd "$tmp" && awk -F, -v impls="${impls[*]}" -v rounds="$rounds" "$bench_awk_median"'
FNR == 1 { split(FILENAME, f, "."); kind = f[1]; np = f[2]; impl = f[3]; next }
function add(key, v, lower) {
	if (!(key in seen)) { seen[key] = 1; keys[++nkeys] = key; low[key] = lower }
	val[impl, key] = val[impl, key] " " v
}
kind == "coll" && /^[a-z]/ { add(sprintf("%-10s %5d %10s %9d %-9s", $1, np, "-", $2, "us"), $4, 1) }
kind == "pp" && /^[0-9]/ {
	add(sprintf("%-10s %5d %10s %9d %-9s", "pingpong", np, "latency", $1, "us"), $2, 1)
	add(sprintf("%-10s %5d %10s %9d %-9s", "pingpong", np, "bandwidth", $1, "MB/s"), $3, 0)
}
END {
	ni = split(impls, im, " ")
	for (i = 1; i <= ni; i++)
		if (im[i] ~ /^Shim/)
			shims[++ns] = im[i]
	printf "\n# median over %d rounds; Shim/best: the shim over the better of Open MPI and MPICH\n", rounds
	printf "# (latency: below 1, the shim is faster; bandwidth: above 1, the shim is faster)\n"
	hdr = sprintf("%-10s %5s %10s %9s %-9s", "benchmark", "procs", "measure", "bytes", "unit")
	for (i = 1; i <= ni; i++)
		hdr = hdr sprintf(" %10s", im[i])
	for (i = 1; i <= ns; i++)
		hdr = hdr sprintf(" %10s", shims[i] "/best")
	print hdr
	for (k = 1; k <= nkeys; k++) {
		key = keys[k]
		line = key
		for (i = 1; i <= ni; i++) {
			m[im[i]] = median(val[im[i], key])
			line = line (m[im[i]] < 0 ? sprintf(" %10s", "-") : sprintf(" %10.3f", m[im[i]]))
		}
		a = m["OpenMPI"]; b = m["MPICH"]
		if (low[key])
			best = a < 0 ? b : b < 0 ? a : (a < b ? a : b)
		else
			best = a > b ? a : b
		for (i = 1; i <= ns; i++)
			line = line (best > 0 && m[shims[i]] >= 0 ? sprintf(" %10.2f", m[shims[i]] / best) : sprintf(" %10s", "-"))
		print line
	}
}' $(for f in "${files[@]}"; do for i in "${impls[@]}"; do for ((r = 1; r <= rounds; r++)); do
	echo "${f%%.*}.${f#*.}.$i.$r.csv"; done; done; done))

if [ $failed -gt 0 ]; then
	echo "# $failed run(s) failed; their medians are over fewer rounds" >&2
	exit 1
fi
exit 0
