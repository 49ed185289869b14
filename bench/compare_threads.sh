#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# compare_threads.sh - what threads cost and give: the MPI shim against
# Open MPI and MPICH with the same program (mpi_threads.c), and BIP's own
# ping-pong in its waiting modes, on 2 processes of this host.  The
# implementations run interleaved for R rounds; four tables give the
# medians over the rounds and ratios to BIP:
#
#   1. thread cost: 8-byte ping-pong latency with MPI_THREAD_SINGLE, with
#      MPI_THREAD_MULTIPLE asked, and with MULTIPLE and one idle thread;
#   2. message rate: window 64 of 8 bytes, 1 and 2 threads per process;
#   3. wake-up: 8-byte latency of bip_pingpong and of the shim with
#      BIP_WAIT=spin, block, block with BIP_SPIN=0 (every wait sleeps) and
#      yield;
#   4. overlap of a 1 MiB MPI_Iallreduce and a 4 MiB MPI_Isend with 10 ms
#      of computation, the shim with and without BIP_PROGRESS_THREAD=1,
#      MPICH with and without MPIR_CVAR_ASYNC_PROGRESS=1, and Open MPI.
#
# usage: compare_threads.sh --build DIR [-r ROUNDS] [-b BATCHES] [--timeout SEC]
#                           [--only "latency rate wake overlap"]
#                           [--shim-env VAR=VALUE]... [--keep]
#
#   --build DIR          BIP build directory (DIR/scripts/bipload,
#                        DIR/bench/mpi_threads_shim, DIR/bench/bip_pingpong)
#   -r, --rounds R       rounds (default 5)
#   -b, --batches B      timed batches of every run (default 7)
#   --timeout SEC        limit of one run (default 120)
#   --only LIST          the tables to measure (default all four)
#   --shim-env V=X       extra environment of every BIP run (repeatable)
#   --keep               keep the temporary directory (raw CSV of every run)

set -u -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"

build=
rounds=5
batches=7
timeout_s=120
only="latency rate wake overlap"
keep=0
shim_env=()

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
	-b | --batches) [ $# -ge 2 ] || usage; batches=$2; shift 2 ;;
	--batches=*) batches=${1#*=}; shift ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	--only) [ $# -ge 2 ] || usage; only=$2; shift 2 ;;
	--only=*) only=${1#*=}; shift ;;
	--shim-env) [ $# -ge 2 ] || usage; shim_env+=("$2"); shift 2 ;;
	--shim-env=*) shim_env+=("${1#*=}"); shift ;;
	--keep) keep=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done

[ -n "$build" ] || { echo "$prog: --build DIR is required" >&2; usage; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || bench_die "ROUNDS must be a positive number"
[[ $batches =~ ^[1-9][0-9]*$ ]] || bench_die "BATCHES must be a positive number"
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || bench_die "the timeout must be a positive number of seconds"
for t in $only; do
	case $t in
	latency | rate | wake | overlap) ;;
	*) bench_die "--only: '$t' is none of latency, rate, wake, overlap" ;;
	esac
done
[ -n "${only// /}" ] || bench_die "--only needs at least one of latency, rate, wake, overlap"
for e in "${shim_env[@]}"; do
	[[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || bench_die "'$e' is not VAR=VALUE"
done

dir=$(cd "$build" 2>/dev/null && pwd) || bench_die "no build directory '$build'"
build=$dir
bipload=$build/scripts/bipload
shim_exe=$build/bench/mpi_threads_shim
bip_pp=$build/bench/bip_pingpong
for f in "$bipload" "$shim_exe" "$bip_pp"; do
	[ -x "$f" ] || bench_die "$f not found (ninja -C $build)"
done
bench_need_peers
bench_tmpdir "$keep"
bench_build_peers "$here/mpi_threads.c" mpi_threads

wants() { [[ " $only " == *" $1 "* ]]; }

# The runs of a round, in order: "JOB IMPL PROGRAM ARGS...".  A job's
# implementations follow each other, so that its columns are measured
# close together.  Shim+PT and MPICH+AP are the same programs with the
# libraries' progress threads asked for; W:MODE are BIP_WAIT settings.
b="-b $batches --csv"
runs=()
if wants latency; then
	for lvl in single multiple idle; do
		case $lvl in
		idle) a="latency -t multiple -x 1 $b" ;;
		*) a="latency -t $lvl $b" ;;
		esac
		for impl in Shim OpenMPI MPICH; do
			runs+=("lat-$lvl $impl mpi_threads $a")
		done
	done
fi
if wants rate; then
	for t in 1 2; do
		for impl in Shim OpenMPI MPICH; do
			runs+=("rate-$t $impl mpi_threads rate -T $t $b")
		done
	done
fi
if wants wake; then
	for w in spin block block0 yield; do
		runs+=("wake-$w BIP bip_pingpong -s 8 -S 8 $b")
		runs+=("wake-$w Shim mpi_threads latency -t single $b")
	done
fi
if wants overlap; then
	for impl in Shim Shim+PT OpenMPI MPICH MPICH+AP; do
		runs+=("overlap $impl mpi_threads overlap $b")
	done
fi

# The environment of a BIP run of JOB in IMPL, one VAR=VALUE a line:
# --shim-env, then the progress thread and the wake-up settings, which
# env(1) applies last, so that they win.
bip_env() {
	local job=$1 impl=$2
	[ ${#shim_env[@]} = 0 ] || printf '%s\n' "${shim_env[@]}"
	case $job in
	wake-spin) echo BIP_WAIT=spin ;;
	wake-block) echo BIP_WAIT=block ;;
	wake-block0) printf '%s\n' BIP_WAIT=block BIP_SPIN=0 ;;
	wake-yield) echo BIP_WAIT=yield ;;
	esac
	[ "$impl" != Shim+PT ] || echo BIP_PROGRESS_THREAD=1
}

# run JOB IMPL PROGRAM ARGS...
run() {
	local job=$1 impl=$2 exe=$3
	shift 3
	case $impl in
	BIP | Shim | Shim+PT)
		local e
		mapfile -t e < <(bip_env "$job" "$impl")
		[ "$impl" = BIP ] && exe=$bip_pp || exe=$shim_exe
		env "${e[@]}" timeout "$timeout_s" "$bipload" -sz 2 "$exe" "$@" ;;
	# Open MPI binds each rank to a core by default: not with threads.
	OpenMPI) bench_run_openmpi "$timeout_s" 2 --bind-to none "$tmp/$exe.openmpi" "$@" ;;
	MPICH) bench_run_mpich "$timeout_s" 2 "$tmp/$exe.mpich" "$@" ;;
	MPICH+AP) MPIR_CVAR_ASYNC_PROGRESS=1 bench_run_mpich "$timeout_s" 2 "$tmp/$exe.mpich" "$@" ;;
	esac
}

bench_header
echo "# load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# BIP from $build, started by bipload; extra environment: ${shim_env[*]:-(none)}"
echo "# Open MPI: --mca btl self,vader --bind-to none; MPICH: mpiexec defaults"
echo "# 2 processes; $rounds rounds, interleaved; every run: $batches batches, their median"

# Result files: JOB.IMPL.ROUND.csv; a run refused because the library
# does not provide the thread level gets JOB.IMPL.ROUND.refused instead.
failed=0
for ((r = 1; r <= rounds; r++)); do
	for j in "${runs[@]}"; do
		set -- $j
		job=$1 impl=$2
		out=$tmp/$job.$impl.$r.csv
		run "$@" >"$out" 2>"$out.err"
		rc=$?
		if [ $rc = 1 ] && grep -q 'needs MPI_THREAD_MULTIPLE' "$out.err"; then
			grep -m1 'needs MPI_THREAD_MULTIPLE' "$out.err" >"${out%.csv}.refused"
			: >"$out"
		elif [ $rc != 0 ] || ! grep -Eq '^(latency|rate|overlap|[0-9]+),' "$out"; then
			echo "# round $r: $impl, $job failed (exit $rc):" >&2
			sed 's/^/#   /' "$out.err" | head -20 >&2
			: >"$out"
			failed=$((failed + 1))
		fi
	done
	echo "# round $r of $rounds done" >&2
done
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

# The refusals, once each (JOB.IMPL).
for f in "$tmp"/*.refused; do
	[ -e "$f" ] || continue
	n=${f##*/}
	echo "${n%.*.refused}"
done | sort -u | while read -r n; do
	echo "# ${n#*.}, ${n%%.*}: refused: $(sed 's/^[^:]*: //' "$(ls "$tmp/$n".*.refused | head -1)")"
done

# One awk program reads every result file and prints the tables; a file
# is JOB.IMPL.ROUND.csv, its data lines are those after its header.
cd "$tmp" || exit 1
shopt -s nullglob
files=(*.csv)
awk -F, -v rounds="$rounds" -v only="$only" "$bench_awk_median"'
FNR == 1 {
	split(FILENAME, f, ".")
	job = f[1]; impl = f[2]; r = f[3]
	next
}
function add(key, v) { val[key] = val[key] " " v; per[key, r] = v }
$1 == "latency" { add(job SUBSEP impl, $6); prov[job, impl] = $3 }
$1 == "rate" { add(job SUBSEP impl, $5) }
$1 ~ /^[0-9]+$/ { add(job SUBSEP impl, $2) }   # bip_pingpong: bytes,latency_us,...
$1 == "overlap" {
	add(job SUBSEP impl SUBSEP $2 SUBSEP "compute", $4)
	add(job SUBSEP impl SUBSEP $2 SUBSEP "pure", $5)
	add(job SUBSEP impl SUBSEP $2 SUBSEP "total", $6)
	add(job SUBSEP impl SUBSEP $2 SUBSEP "overlap", $7)
}
function provided(impl) { return (("lat-multiple", impl) in prov) ? prov["lat-multiple", impl] : "-" }
function med(key) { return (key in val) ? median(val[key]) : -1 }
function cell(v, fmt) { return v < 0 ? sprintf("%11s", "-") : sprintf(fmt, v) }
# The median over the rounds of a/b, where both ran in the same round.
function ratio(a, b,    s, i) {
	s = ""
	for (i = 1; i <= rounds; i++)
		if (((a, i) in per) && ((b, i) in per) && per[b, i] > 0)
			s = s " " per[a, i] / per[b, i]
	return median(s)
}
# best: the lower (latency) or the higher (rate) of Open MPI and MPICH.
function best(job, lower,    a, b) {
	a = med(job SUBSEP "OpenMPI"); b = med(job SUBSEP "MPICH")
	if (a < 0 || b < 0)
		return a < 0 ? b : a
	return lower ? (a < b ? a : b) : (a > b ? a : b)
}
function row3(label, job, lower, fmt, scale,    s, o, m, bb) {
	s = med(job SUBSEP "Shim"); o = med(job SUBSEP "OpenMPI"); m = med(job SUBSEP "MPICH")
	bb = best(job, lower)
	printf "%-26s %s %s %s %s\n", label,
	       cell(s < 0 ? s : s / scale, fmt), cell(o < 0 ? o : o / scale, fmt),
	       cell(m < 0 ? m : m / scale, fmt), cell(s > 0 && bb > 0 ? s / bb : -1, "%11.2f")
}
function ratio_row(label, a, b,    i, im, line) {
	line = sprintf("%-26s", label)
	split("Shim OpenMPI MPICH", im, " ")
	for (i = 1; i <= 3; i++)
		line = line " " cell(ratio(a SUBSEP im[i], b SUBSEP im[i]), "%11.2f")
	print line
}
function latency_table() {
	printf "\n# 1. thread cost: 8-byte ping-pong latency, us (median over %d rounds)\n", rounds
	printf "# Shim/best: the shim over the lower of Open MPI and MPICH (below 1: the shim is faster)\n"
	printf "# provided when multiple is asked: Shim %s, Open MPI %s, MPICH %s\n",
	       provided("Shim"), provided("OpenMPI"), provided("MPICH")
	printf "%-26s %11s %11s %11s %11s\n", "MPI_Init_thread asked", "Shim", "OpenMPI", "MPICH", "Shim/best"
	row3("single", "lat-single", 1, "%11.3f", 1)
	row3("multiple", "lat-multiple", 1, "%11.3f", 1)
	row3("multiple, 1 idle thread", "lat-idle", 1, "%11.3f", 1)
	printf "# per round, then the median (goal for the shim: multiple/single at most 1.10)\n"
	ratio_row("multiple/single", "lat-multiple", "lat-single")
	ratio_row("multiple+idle/single", "lat-idle", "lat-single")
}
function rate_table() {
	printf "\n# 2. message rate: 8-byte messages, window 64, pairs of threads, 2 processes;\n"
	printf "#    millions of messages per second summed over the threads (median over %d rounds)\n", rounds
	printf "# Shim/best: the shim over the higher of Open MPI and MPICH (above 1: the shim is faster)\n"
	printf "%-26s %11s %11s %11s %11s\n", "threads per process", "Shim", "OpenMPI", "MPICH", "Shim/best"
	row3("1", "rate-1", 0, "%11.3f", 1e6)
	row3("2", "rate-2", 0, "%11.3f", 1e6)
	ratio_row("2 threads / 1", "rate-2", "rate-1")
}
function wake_table(    w, name, i, pp, sh, pps, shs) {
	printf "\n# 3. wake-up: 8-byte ping-pong latency, us, by BIP_WAIT (median over %d rounds)\n", rounds
	printf "#    bip_pingpong -s 8 -S 8, and the shim (mpi_threads latency -t single)\n"
	printf "%-26s %11s %11s %11s %11s\n", "BIP_WAIT", "bip_pp", "/spin", "Shim", "/spin"
	split("spin block block0 yield", w, " ")
	split("spin|block|block, BIP_SPIN=0|yield", name, "|")
	for (i = 1; i <= 4; i++) {
		pp = med("wake-" w[i] SUBSEP "BIP"); sh = med("wake-" w[i] SUBSEP "Shim")
		printf "%-26s %s %s %s %s\n", name[i], cell(pp, "%11.3f"),
		       cell(ratio("wake-" w[i] SUBSEP "BIP", "wake-spin" SUBSEP "BIP"), "%11.2f"),
		       cell(sh, "%11.3f"),
		       cell(ratio("wake-" w[i] SUBSEP "Shim", "wake-spin" SUBSEP "Shim"), "%11.2f")
	}
}
function overlap_table(    op, im, i, k, key, t) {
	printf "\n# 4. overlap with 10 ms of computation: overlap = max(0, 100 (1 - (total - compute) / pure))\n"
	printf "#    times in us, the slowest rank, median over %d rounds; total/Shim: this total over\n", rounds
	printf "#    the one of the shim without progress thread (below 1: faster than it);\n"
	printf "#    Shim+PT: BIP_PROGRESS_THREAD=1; MPICH+AP: MPIR_CVAR_ASYNC_PROGRESS=1\n"
	printf "%-11s %-9s %11s %11s %11s %11s %11s\n", "operation", "impl", "pure", "compute",
	       "total", "overlap_%", "total/Shim"
	split("iallreduce isend", op, " ")
	split("Shim Shim+PT OpenMPI MPICH MPICH+AP", im, " ")
	for (k = 1; k <= 2; k++)
		for (i = 1; i <= 5; i++) {
			key = "overlap" SUBSEP im[i] SUBSEP op[k]
			t = ratio(key SUBSEP "total", "overlap" SUBSEP "Shim" SUBSEP op[k] SUBSEP "total")
			printf "%-11s %-9s %s %s %s %s %s\n", op[k], im[i],
			       cell(med(key SUBSEP "pure"), "%11.0f"), cell(med(key SUBSEP "compute"), "%11.0f"),
			       cell(med(key SUBSEP "total"), "%11.0f"), cell(med(key SUBSEP "overlap"), "%11.1f"),
			       cell(t, "%11.2f")
		}
}
END {
	if (only ~ /latency/) latency_table()
	if (only ~ /rate/) rate_table()
	if (only ~ /wake/) wake_table()
	if (only ~ /overlap/) overlap_table()
}' "${files[@]}" /dev/null

if [ $failed -gt 0 ]; then
	echo "# $failed run(s) failed; their medians are over fewer rounds" >&2
	exit 1
fi
exit 0
