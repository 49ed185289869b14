#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# compare_rma.sh - one-sided communication (put, get, accumulate, the
# atomics) between 2 processes of this host, the MPI shim beside Open MPI
# and MPICH: bench/mpi_rma.c built three ways and, when given the
# directories where they were built with each implementation, the
# one-sided programs of the OSU micro-benchmarks.  Everything runs
# interleaved for R rounds; one table gives, per row, the median over the
# rounds of each implementation and the shim relative to the better of the
# two others.
#
# usage: compare_rma.sh --build DIR [-r ROUNDS] [-w FLAVOUR] [-s SYNC]
#                       [--rma-opts "OPTIONS"] [--no-rma]
#                       [--osu-bip DIR] [--osu-ompi DIR] [--osu-mpich DIR]
#                       [--osu-opts "OPTIONS"] [--ompi-mca NAME=VALUE]...
#                       [--shim-env VAR=VALUE]... [--timeout SEC]
#                       [--plot FILE.png] [--keep]
#
#   --build DIR        BIP build directory (DIR/scripts/bipload, and
#                      DIR/scripts/bipcc-uninstalled to build with the shim)
#   -r, --rounds R     rounds (default 5)
#   -w FLAVOUR         the window: create, allocate (default) or dynamic
#   -s SYNC            OSU's names: flush (default; one shared lock held,
#                      MPI_Win_flush after each epoch), lock (MPI_Win_lock
#                      and MPI_Win_unlock around each epoch), fence or pscw;
#                      mpi_rma runs with -y lock, lock-each, fence or pscw
#   --rma-opts OPTS    more options of mpi_rma (default "-S 1048576 -b 5")
#   --no-rma           the OSU programs only
#   --osu-bip DIR      where the OSU micro-benchmarks were built with the
#                      shim's mpicc.bip: DIR/c/mpi/one-sided (6.x),
#                      DIR/mpi/one-sided (5.x), DIR/libexec/osu-micro-
#                      benchmarks/mpi/one-sided (installed) or DIR itself
#   --osu-ompi DIR     the same, built with Open MPI's mpicc
#   --osu-mpich DIR    the same, built with MPICH's mpicc
#   --osu-opts OPTS    options of every OSU program (default "-m 8:1048576")
#   --ompi-mca N=V     an MCA parameter of the Open MPI runs (repeatable),
#                      e.g. osc=^rdma
#   --shim-env V=X     extra environment of the shim's runs (repeatable)
#   --timeout SEC      limit of one run (default 120)
#   --plot FILE.png    also draw mpi_rma's put and get latency and
#                      bandwidth against the size (log-log) with gnuplot
#   --keep             keep the temporary directory (every run's output)

set -u -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"

build=
rounds=5
flavour=allocate
sync=flush
rma_opts="-S 1048576 -b 5"
rma=1
osu_opts="-m 8:1048576"
osu_dir_Shim=
osu_dir_OpenMPI=
osu_dir_MPICH=
ompi_mca=()
shim_env=()
timeout_s=120
plot=
keep=0

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
	-w) [ $# -ge 2 ] || usage; flavour=$2; shift 2 ;;
	-s) [ $# -ge 2 ] || usage; sync=$2; shift 2 ;;
	--rma-opts) [ $# -ge 2 ] || usage; rma_opts=$2; shift 2 ;;
	--no-rma) rma=0; shift ;;
	--osu-bip) [ $# -ge 2 ] || usage; osu_dir_Shim=$2; shift 2 ;;
	--osu-ompi) [ $# -ge 2 ] || usage; osu_dir_OpenMPI=$2; shift 2 ;;
	--osu-mpich) [ $# -ge 2 ] || usage; osu_dir_MPICH=$2; shift 2 ;;
	--osu-opts) [ $# -ge 2 ] || usage; osu_opts=$2; shift 2 ;;
	--ompi-mca) [ $# -ge 2 ] || usage; ompi_mca+=("$2"); shift 2 ;;
	--shim-env) [ $# -ge 2 ] || usage; shim_env+=("$2"); shift 2 ;;
	--shim-env=*) shim_env+=("${1#*=}"); shift ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	--plot) [ $# -ge 2 ] || usage; plot=$2; shift 2 ;;
	--plot=*) plot=${1#*=}; shift ;;
	--keep) keep=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done

[ -n "$build" ] || { echo "$prog: --build DIR is required" >&2; usage; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || bench_die "ROUNDS must be a positive number"
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || bench_die "--timeout wants seconds"
case $flavour in
create | allocate | dynamic) ;;
*) bench_die "-w '$flavour': create, allocate or dynamic" ;;
esac
# mpi_rma's synchronisation for OSU's name.
case $sync in
flush) rma_sync=lock ;;
lock) rma_sync=lock-each ;;
fence | pscw) rma_sync=$sync ;;
*) bench_die "-s '$sync': flush, lock, fence or pscw" ;;
esac
for e in "${shim_env[@]}"; do
	[[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || bench_die "'$e' is not VAR=VALUE"
done
ompi_args=()
for e in "${ompi_mca[@]}"; do
	[[ $e =~ ^[A-Za-z0-9_]+=. ]] || bench_die "--ompi-mca '$e' is not NAME=VALUE"
	ompi_args+=(--mca "${e%%=*}" "${e#*=}")
done
if [ -n "$plot" ]; then
	[ "$rma" = 1 ] || bench_die "--plot draws mpi_rma: not with --no-rma"
	bench_need_gnuplot "$plot"
fi

build_arg=$build
build=$(cd "$build" 2>/dev/null && pwd) || bench_die "no build directory '$build'"
bipload=$build/scripts/bipload
bipcc=$build/scripts/bipcc-uninstalled
[ -x "$bipload" ] || bench_die "$bipload not found (ninja -C $build)"
[ -f "$bipcc" ] || bench_die "$bipcc not found (ninja -C $build)"
bench_need_peers
bench_tmpdir "$keep"

impls=(Shim OpenMPI MPICH)
# The shim's libraries of this build, also for OSU programs linked with
# another build's wrapper (their run path is a DT_RUNPATH, which
# LD_LIBRARY_PATH overrides).
shim_libs=$build/lib/bip:$build/lib/mpi_shim
read -r -a rma_args <<<"$rma_opts"
read -r -a osu_args <<<"$osu_opts"

# The OSU programs, in the order of the table.
osu_progs=(osu_put_latency osu_get_latency osu_put_bw osu_get_bw osu_put_bibw
	osu_acc_latency osu_fop_latency osu_cas_latency osu_get_acc_latency)

# osu_find DIR PROGRAM: the program's path under an OSU build directory.
osu_find() {
	local d
	for d in "$1/c/mpi/one-sided" "$1/mpi/one-sided" \
		"$1/libexec/osu-micro-benchmarks/mpi/one-sided" "$1"; do
		[ -x "$d/$2" ] && { echo "$d/$2"; return 0; }
	done
	return 1
}

# The synchronisation each OSU program runs with: osu_put_bibw takes only
# the active-target ones (fence, pscw), so it runs with pscw under flush
# and lock; the others take all four.
osu_sync() {
	if [ "$1" = osu_put_bibw ] && [ "$sync" != fence ] && [ "$sync" != pscw ]; then
		echo pscw
	else
		echo "$sync"
	fi
}

osu_notes=()
osu_any=0
for impl in "${impls[@]}"; do
	v=osu_dir_$impl
	dir=${!v}
	if [ -z "$dir" ]; then
		osu_notes+=("no OSU build given for $impl: its OSU rows are '-'")
		continue
	fi
	[ -d "$dir" ] || bench_die "no OSU build directory '$dir'"
	for p in "${osu_progs[@]}"; do
		if exe=$(osu_find "$dir" "$p"); then
			declare "osu_exe_${impl}_$p=$exe"
			osu_any=1
		else
			osu_notes+=("$p not found under $dir: not run for $impl")
		fi
	done
done
[ "$osu_any" = 1 ] || osu_notes=("OSU micro-benchmarks: not run (no --osu-bip, --osu-ompi or --osu-mpich)")

jobs=()
if [ "$rma" = 1 ]; then
	sh "$bipcc" -O2 -o "$tmp/mpi_rma.Shim" "$here/mpi_rma.c" \
		-L"$build/lib/mpi_shim" -Wl,-rpath,"$build/lib/mpi_shim" -lmpi ||
		bench_die "build of mpi_rma.c with the shim (bipcc -lmpi) failed"
	bench_build_peers "$here/mpi_rma.c" mpi_rma
	mv "$tmp/mpi_rma.openmpi" "$tmp/mpi_rma.OpenMPI"
	mv "$tmp/mpi_rma.mpich" "$tmp/mpi_rma.MPICH"
	jobs+=(mpi_rma)
fi
[ "$osu_any" = 1 ] && jobs+=("${osu_progs[@]}")
[ ${#jobs[@]} -gt 0 ] || bench_die "nothing to run (--no-rma and no OSU build)"

# run IMPL PROGRAM ARGS...: one run on 2 processes.
run() {
	local impl=$1
	shift
	case $impl in
	Shim) env "${shim_env[@]}" LD_LIBRARY_PATH="$shim_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		timeout "$timeout_s" "$bipload" -sz 2 "$@" ;;
	OpenMPI) bench_run_openmpi "$timeout_s" 2 "${ompi_args[@]}" "$@" ;;
	MPICH) bench_run_mpich "$timeout_s" 2 "$@" ;;
	esac
}

# run_job JOB IMPL OUT: mpi_rma (CSV) or an OSU program (its table).
run_job() {
	local job=$1 impl=$2 out=$3 v
	if [ "$job" = mpi_rma ]; then
		run "$impl" "$tmp/mpi_rma.$impl" --csv -w "$flavour" -y "$rma_sync" "${rma_args[@]}"
	else
		v=osu_exe_${impl}_$job
		run "$impl" "${!v}" -w "$flavour" -s "$(osu_sync "$job")" "${osu_args[@]}"
	fi >"$out" 2>"$out.err"
}

bench_header
echo "# load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# the shim from $build_arg, started by bipload; environment: ${shim_env[*]:-(none)}"
echo "# Open MPI: mpirun --mca btl self,vader${ompi_args[*]:+ ${ompi_args[*]}}; MPICH: mpiexec"
echo "# window $flavour, synchronisation $sync (mpi_rma -y $rma_sync); $rounds rounds, interleaved"
[ "$rma" = 1 ] && echo "# mpi_rma $rma_opts"
if [ "$osu_any" = 1 ]; then
	echo "# OSU one-sided programs: $osu_opts; osu_put_bibw with -s $(osu_sync osu_put_bibw)" \
		"(it takes fence or pscw only); OSU programs of the shim run on this build's libraries"
fi
for n in "${osu_notes[@]}"; do
	echo "# $n"
done

# Data lines: mpi_rma's CSV rows, the OSU tables' rows.
data_re='^([a-z_]+,[0-9]+,[0-9.]+|[0-9]+[[:space:]]+[0-9.]+)[[:space:]]*$'
failed=0
for ((r = 1; r <= rounds; r++)); do
	for job in "${jobs[@]}"; do
		for impl in "${impls[@]}"; do
			out=$tmp/$job.$impl.$r
			if [ "$job" != mpi_rma ]; then
				v=osu_exe_${impl}_$job
				[ -n "${!v:-}" ] || { : >"$out"; continue; }
			fi
			run_job "$job" "$impl" "$out"
			rc=$?
			rows=$(grep -Ec "$data_re" "$out")
			if [ $rc != 0 ] || [ "$rows" = 0 ]; then
				why="exit $rc"
				[ $rc = 124 ] && why="timed out after $timeout_s s"
				echo "# round $r: $impl, $job failed ($why); the $rows rows it printed are kept:" >&2
				grep -Ev "$data_re" "$out" | cat - "$out.err" | grep -v '^#' |
					sed 's/^/#   /' | head -20 >&2
				failed=$((failed + 1))
			fi
		done
	done
	echo "# round $r of $rounds done" >&2
done

osu_version=$(cat "$tmp"/osu_*.*.[0-9]* 2>/dev/null | sed -n 's/^# OSU MPI.* \(v[0-9][0-9.]*\)$/\1/p' | head -1)
[ -z "$osu_version" ] || echo "# OSU micro-benchmarks $osu_version"

# One row per (benchmark, measure, bytes); medians over the rounds.
(cd "$tmp" && awk -v impls="${impls[*]}" -v jobs="${jobs[*]}" -v rounds="$rounds" \
	-v bibw_sync="$(osu_sync osu_put_bibw)" -v sync="$sync" \
	-v latdat="$tmp/plot.lat" -v bwdat="$tmp/plot.bw" "$bench_awk_median"'
BEGIN {
	nj = split(jobs, jl, " ")
	for (i = 1; i <= nj; i++)
		jobidx[jl[i]] = i
	nm = split("put_lat get_lat acc_lat put_bw get_bw fop_lat cas_lat latency bandwidth", ml, " ")
	for (i = 1; i <= nm; i++)
		measidx[ml[i]] = i
}
FNR == 1 { split(FILENAME, f, "."); job = f[1]; impl = f[2] }
function add(bench, meas, z, v, lower,    key) {
	key = sprintf("%-20s %-9s %9d %-5s", bench, meas, z, lower ? "us" : "MB/s")
	if (!(key in seen)) {
		seen[key] = 1; keys[++nkeys] = key; low[key] = lower
		order[key] = (jobidx[job] * 16 + measidx[meas]) * 2147483648 + z
		meas_of[key] = meas; bytes_of[key] = z; job_of[key] = job
	}
	val[impl, key] = val[impl, key] " " v
}
job == "mpi_rma" && /^[a-z_]+,[0-9]+,[0-9.]+ *$/ {
	split($0, c, ",")
	add("mpi_rma", c[1], c[2], c[3], c[1] ~ /_lat$/)
}
job != "mpi_rma" && /^[0-9]+[ \t]+[0-9.]+[ \t]*$/ {
	bw = job ~ /_bw$|_bibw$/
	name = job
	if (job == "osu_put_bibw" && bibw_sync != sync)
		name = job "(" bibw_sync ")"
	add(name, bw ? "bandwidth" : "latency", $1, $2, !bw)
}
function cell(v) { return v < 0 ? sprintf(" %10s", "-") : sprintf(" %10.3f", v) }
END {
	ni = split(impls, im, " ")
	# Rows sorted by program, measure, size.
	for (i = 2; i <= nkeys; i++)
		for (j = i; j > 1 && order[keys[j - 1]] > order[keys[j]]; j--) {
			t = keys[j]; keys[j] = keys[j - 1]; keys[j - 1] = t
		}
	printf "\n# median over %d rounds; Shim/best: the shim over the better of Open MPI and MPICH\n", rounds
	printf "# (us: below 1, the shim is faster; MB/s: above 1, the shim is faster)\n"
	hdr = sprintf("%-20s %-9s %9s %-5s", "benchmark", "measure", "bytes", "unit")
	for (i = 1; i <= ni; i++)
		hdr = hdr sprintf(" %10s", im[i])
	print hdr sprintf(" %10s", "Shim/best")
	for (k = 1; k <= nkeys; k++) {
		key = keys[k]
		line = key
		for (i = 1; i <= ni; i++) {
			m[im[i]] = median(val[im[i], key])
			line = line cell(m[im[i]])
		}
		a = m["OpenMPI"]; b = m["MPICH"]
		if (low[key])
			best = a < 0 ? b : b < 0 ? a : (a < b ? a : b)
		else
			best = a > b ? a : b
		line = line (best > 0 && m["Shim"] >= 0 ? sprintf(" %10.2f", m["Shim"] / best) : sprintf(" %10s", "-"))
		print line
		# The plot: mpi_rma put and get, one column per implementation and operation.
		ms = meas_of[key]
		if (job_of[key] == "mpi_rma" && ms ~ /^(put|get)_(lat|bw)$/) {
			z = bytes_of[key]
			panel = ms ~ /_lat$/ ? "lat" : "bw"
			if (!((panel, z) in sizeseen)) {
				sizeseen[panel, z] = 1
				sizes[panel, ++nsz[panel]] = z
			}
			for (i = 1; i <= ni; i++)
				pv[panel, z, im[i] "-" substr(ms, 1, 3)] = m[im[i]]
		}
	}
	for (p = 1; p <= 2; p++) {
		panel = p == 1 ? "lat" : "bw"
		file = p == 1 ? latdat : bwdat
		printf "bytes" > file
		for (i = 1; i <= ni; i++)
			printf " %s-put %s-get", im[i], im[i] > file
		print " floor" > file
		for (s = 1; s <= nsz[panel]; s++) {
			z = sizes[panel, s]
			printf "%d", z > file
			for (i = 1; i <= ni; i++)
				for (o = 1; o <= 2; o++) {
					v = pv[panel, z, im[i] "-" (o == 1 ? "put" : "get")]
					printf " %s", ((v == "" || v < 0) ? "-" : v) > file
				}
			print " -" > file
		}
	}
}' $(for j in "${jobs[@]}"; do for i in "${impls[@]}"; do for ((r = 1; r <= rounds; r++)); do
	echo "$j.$i.$r"; done; done; done))
[ -z "$plot" ] || bench_plot "$plot" "MPI one-sided, put and get ($flavour window, $sync): the MPI shim (over BIP), Open MPI and MPICH, 2 processes of one host" \
	"$tmp/plot.lat" "$tmp/plot.bw" "latency of one operation and its completion (us)"

if [ $failed -gt 0 ]; then
	echo "# $failed run(s) failed; their medians are over fewer rounds" >&2
	exit 1
fi
exit 0
