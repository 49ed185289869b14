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
#
# usage: compare.sh --build DIR [-r ROUNDS] [--bip-env VAR=VALUE]...
#                   [--bip2-env VAR=VALUE]... [--keep] [-- BENCH_OPTIONS]
#
#   --build DIR        BIP build directory (DIR/scripts/bipload,
#                      DIR/bench/bip_pingpong)
#   -r, --rounds R     rounds (default 5)
#   --bip-env V=X      extra environment of the BIP runs (repeatable)
#   --bip2-env V=X     adds a second BIP configuration, "BIP2", run with
#                      this environment (repeatable), to compare two settings
#   --timeout SEC      limit of one run (default 120)
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
have_bip2=0
bench_opts=()

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
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
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

build=$(cd "$build" 2>/dev/null && pwd) || bench_die "no build directory '$build'"
bipload=$build/scripts/bipload
bip_exe=$build/bench/bip_pingpong
[ -x "$bip_exe" ] || bench_die "$bip_exe not found (ninja -C $build bench/bip_pingpong)"
[ -f "$here/mpi_pingpong.c" ] || bench_die "mpi_pingpong.c not found next to $prog"
bench_need_peers
bench_tmpdir "$keep"
bench_build_peers "$here/mpi_pingpong.c" mpi_pingpong

# Start the BIP pair: with bipload if it is there, by hand otherwise.
run_bip() {
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
echo "# BIP from $build ($([ -x "$bipload" ] && echo bipload || echo "started by hand"))"
echo "# BIP env: ${bip_env[*]:-(none)}"
[ "$have_bip2" = 1 ] && echo "# BIP2 env: ${bip2_env[*]}"
echo "# benchmark options: --csv ${bench_opts[*]}; $rounds rounds, interleaved"

failed=0
for ((r = 1; r <= rounds; r++)); do
	for impl in "${impls[@]}"; do
		out=$tmp/$impl.$r.csv
		case $impl in
		BIP) run_bip "${bip_env[@]}" >"$out" 2>"$tmp/$impl.$r.err" ;;
		BIP2) run_bip "${bip2_env[@]}" >"$out" 2>"$tmp/$impl.$r.err" ;;
		OpenMPI) run_openmpi >"$out" 2>"$tmp/$impl.$r.err" ;;
		MPICH) run_mpich >"$out" 2>"$tmp/$impl.$r.err" ;;
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
(cd "$tmp" && awk -F, -v impls="${impls[*]}" -v rounds="$rounds" "$bench_awk_median"'
FNR == 1 { split(FILENAME, f, "."); impl = f[1]; next }
/^[0-9]/ {
	if (!($1 in seen)) { seen[$1] = 1; sizes[++nsizes] = $1 }
	lat[impl, $1] = lat[impl, $1] " " $2
	bw[impl, $1] = bw[impl, $1] " " $3
}
function fmt(v, w, p) { return v < 0 ? sprintf("%" w "s", "-") : sprintf("%" w "." p "f", v) }
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
	printf "\n# latency_us: one-way, median over %d rounds; %s/best < 1: BIP lower\n", rounds, "BIP"
	hdr = sprintf("%10s", "bytes")
	for (i = 1; i <= ni; i++)
		hdr = hdr sprintf(" %9s", im[i])
	for (i = 1; i <= nb; i++)
		hdr = hdr sprintf(" %10s", bips[i] "/best")
	print hdr
	for (s = 1; s <= nsizes; s++) {
		z = sizes[s]
		line = sprintf("%10d", z)
		for (i = 1; i <= ni; i++) {
			m[im[i]] = median(lat[im[i], z])
			line = line " " fmt(m[im[i]], 9, 3)
		}
		best = m["OpenMPI"]
		if (best < 0 || (m["MPICH"] >= 0 && m["MPICH"] < best))
			best = m["MPICH"]
		for (i = 1; i <= nb; i++)
			line = line " " (best > 0 && m[bips[i]] >= 0 ? sprintf("%10.2f", m[bips[i]] / best) : sprintf("%10s", "-"))
		print line
	}
	printf "\n# bandwidth_MBps: window streaming, median over %d rounds; BIP/best > 1: BIP higher\n", rounds
	print hdr
	for (s = 1; s <= nsizes; s++) {
		z = sizes[s]
		line = sprintf("%10d", z)
		for (i = 1; i <= ni; i++) {
			m[im[i]] = median(bw[im[i], z])
			line = line " " fmt(m[im[i]], 9, 1)
		}
		best = m["OpenMPI"] > m["MPICH"] ? m["OpenMPI"] : m["MPICH"]
		for (i = 1; i <= nb; i++)
			line = line " " (best > 0 && m[bips[i]] >= 0 ? sprintf("%10.2f", m[bips[i]] / best) : sprintf("%10s", "-"))
		print line
	}
}' $(for i in "${impls[@]}"; do for ((r = 1; r <= rounds; r++)); do echo "$i.$r.csv"; done; done))

if [ $failed -gt 0 ]; then
	echo "# $failed run(s) failed; their medians are over fewer rounds" >&2
	exit 1
fi
exit 0
