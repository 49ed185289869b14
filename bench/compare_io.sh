#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# compare_io.sh - MPI-IO (MPI-3.1 chapter 13) throughput of NP processes of
# this host: IOR's MPIIO back end built with the MPI shim (BIP), with Open
# MPI (run once with each of its io components, ompio and romio) and with
# MPICH (romio), and fio moving the same bytes in the same layout with
# plain system calls, as the file system's own limit.  Each runs on a
# tmpfs directory and on a disk file system.  Patterns: one shared file
# written and read with collective calls (IOR -a MPIIO -c, each process a
# contiguous block of the file) and one file per process (IOR -F,
# independent calls); writes end with a sync of the file (IOR -e, fio
# end_fsync), so a write's time includes getting the data to the device.
# Every implementation and fio run once per round, in an order that
# rotates from round to round; one table gives, per row, the median over
# the rounds in MiB/s of each, the shim over the best of the three peers
# and the shim over fio.
#
# IOR is not part of this repository: build it once per MPI from its
# source (https://github.com/hpc/ior), each in its own directory, e.g.
#     (cd ior && ./bootstrap)
#     mkdir ior-ompi && cd ior-ompi && ../ior/configure CC=mpicc.openmpi && make
#     mkdir ior-mpich && cd ior-mpich && ../ior/configure CC=mpicc.mpich && make
#     mkdir ior-bip && cd ior-bip && ../ior/configure CC=mpicc.bip && make
# (with an uninstalled BIP, CC="sh BUILD/scripts/mpicc.bip-uninstalled");
# the program is src/ior of each directory.  fio is Debian's package.
#
# On one host the page cache is shared by every process: IOR's -C (read
# back what another process wrote) is passed, but with all processes on
# one host IOR shifts by a whole host's processes, so each reads its own
# block, and on the disk file system reads come from the page cache that
# the write left, for IOR and fio alike.  --cold drops the files' cached
# pages between the write and the read instead (IOR then runs twice per
# measure, once to write and keep the file(s), once to read them).
#
# usage: compare_io.sh [--ior-bip IOR] [--ior-ompi IOR] [--ior-mpich IOR]
#                      [--build DIR] [-r ROUNDS] [-n NP] [-b BLOCK]
#                      [-t "XFER..."] [-p "PATTERN..."] [--tmpfs DIR]
#                      [--disk DIR] [--cold] [--no-fio]
#                      [--shim-env VAR=VALUE]... [--timeout SEC]
#                      [--plot FILE.png] [--keep]
#
#   --ior-bip IOR      IOR built with the shim's mpicc.bip (or $IOR_BIP);
#                      without it the shim's column is "-"
#   --ior-ompi IOR     IOR built with mpicc.openmpi (or $IOR_OMPI)
#   --ior-mpich IOR    IOR built with mpicc.mpich (or $IOR_MPICH)
#   --build DIR        BIP build directory whose scripts/bipload starts the
#                      shim's runs, on that build's libraries; without it,
#                      bipload from PATH (an installed BIP)
#   -r, --rounds R     rounds (default 5)
#   -n NP              processes (default 4)
#   -b BLOCK           bytes each process writes and reads, IOR's -b
#                      (default 64m)
#   -t "XFER..."       transfer sizes, IOR's -t and fio's bs (default
#                      "1m 16m")
#   -p "PATTERN..."    shared (one file, collective) and fpp (a file per
#                      process, independent) (default "shared fpp")
#   --tmpfs DIR        the tmpfs directory (default /dev/shm)
#   --disk DIR         a directory on a disk file system (default
#                      $TMPDIR, else /var/tmp); its type is named in the table
#   --cold             read with the files' pages dropped from the page
#                      cache (see above); default: as IOR does, read right
#                      after the write
#   --no-fio           no fio column
#   --shim-env V=X     extra environment of the shim's runs (repeatable)
#   --timeout SEC      limit of one run (default 300)
#   --plot FILE.png    also draw the table with bench/plot_io.sh (gnuplot)
#   --keep             keep the temporary directory (every run's output)

set -u -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"

ior_BIP=${IOR_BIP:-}
ior_OMPI=${IOR_OMPI:-}
ior_MPICH=${IOR_MPICH:-}
build=
rounds=5
np=4
block=64m
xfers="1m 16m"
patterns="shared fpp"
tmpfs_dir=/dev/shm
disk_dir=${TMPDIR:-/var/tmp}
cold=0
fio=1
shim_env=()
timeout_s=300
plot=
keep=0

usage() {
	sed -n '/^# usage:/,/^# *--keep/s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--ior-bip) [ $# -ge 2 ] || usage; ior_BIP=$2; shift 2 ;;
	--ior-ompi) [ $# -ge 2 ] || usage; ior_OMPI=$2; shift 2 ;;
	--ior-mpich) [ $# -ge 2 ] || usage; ior_MPICH=$2; shift 2 ;;
	--build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
	--build=*) build=${1#*=}; shift ;;
	-r | --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
	--rounds=*) rounds=${1#*=}; shift ;;
	-n) [ $# -ge 2 ] || usage; np=$2; shift 2 ;;
	-b) [ $# -ge 2 ] || usage; block=$2; shift 2 ;;
	-t) [ $# -ge 2 ] || usage; xfers=$2; shift 2 ;;
	-p) [ $# -ge 2 ] || usage; patterns=$2; shift 2 ;;
	--tmpfs) [ $# -ge 2 ] || usage; tmpfs_dir=$2; shift 2 ;;
	--disk) [ $# -ge 2 ] || usage; disk_dir=$2; shift 2 ;;
	--cold) cold=1; shift ;;
	--no-fio) fio=0; shift ;;
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

[[ $rounds =~ ^[1-9][0-9]*$ ]] || bench_die "ROUNDS must be a positive number"
[[ $np =~ ^[1-9][0-9]*$ ]] || bench_die "-n wants a number of processes"
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || bench_die "--timeout wants seconds"

# bytes SIZE: IOR's and fio's sizes (a number, k, m or g) in bytes.
bytes() {
	local n=${1%[kKmMgG]} u=${1: -1}
	[[ $n =~ ^[1-9][0-9]*$ ]] || return 1
	case $u in
	k | K) echo $((n << 10)) ;;
	m | M) echo $((n << 20)) ;;
	g | G) echo $((n << 30)) ;;
	*) echo "$1" ;;
	esac
}
block_b=$(bytes "$block") || bench_die "-b '$block' is not a size (e.g. 64m)"
for x in $xfers; do
	xb=$(bytes "$x") || bench_die "-t '$x' is not a size (e.g. 1m)"
	[ $((block_b % xb)) = 0 ] || bench_die "-b $block is not a multiple of -t $x"
done
[ -n "$xfers" ] || bench_die "-t: no transfer size"
for p in $patterns; do
	case $p in
	shared | fpp) ;;
	*) bench_die "-p '$p': shared or fpp" ;;
	esac
done
[ -n "$patterns" ] || bench_die "-p: no pattern"
for e in "${shim_env[@]}"; do
	[[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || bench_die "'$e' is not VAR=VALUE"
done
[ -z "$plot" ] || bench_need_gnuplot "$plot"
[ "$fio" = 0 ] || command -v fio >/dev/null || bench_die "fio not found (Debian package fio), or --no-fio"
bench_need_peers
command -v ompi_info >/dev/null || bench_die "ompi_info not found (Open MPI's io components)"

# Open MPI's io components: ompio and the romio of this version (romio321...).
romio_comp=$(ompi_info 2>/dev/null | awk '$1 == "MCA" && $2 == "io:" && $3 ~ /^romio/ { print $3; exit }')
ompio_comp=$(ompi_info 2>/dev/null | awk '$1 == "MCA" && $2 == "io:" && $3 == "ompio" { print $3; exit }')

# The columns: the shim, Open MPI with each io component, MPICH.
impls=(BIP OMPI-ompio OMPI-romio MPICH)
notes=()
declare -A exe
exe[BIP]=$ior_BIP
exe[OMPI-ompio]=$ior_OMPI
exe[OMPI-romio]=$ior_OMPI
exe[MPICH]=$ior_MPICH
[ -n "$ompio_comp" ] || { exe[OMPI-ompio]=; notes+=("Open MPI has no io component ompio: its column is '-'"); }
[ -n "$romio_comp" ] || { exe[OMPI-romio]=; notes+=("Open MPI has no io component romio*: its column is '-'"); }
for i in "${impls[@]}"; do
	e=${exe[$i]}
	if [ -z "$e" ]; then
		case $i in
		BIP) notes+=("no IOR built with the shim (--ior-bip): the BIP column is '-'") ;;
		OMPI-*) [ -n "$ior_OMPI" ] || notes+=("no IOR built with Open MPI (--ior-ompi): its columns are '-'") ;;
		MPICH) notes+=("no IOR built with MPICH (--ior-mpich): its column is '-'") ;;
		esac
		continue
	fi
	[ -x "$e" ] || bench_die "$i: IOR '$e' is not an executable"
	exe[$i]=$(cd "$(dirname "$e")" && pwd)/$(basename "$e")
done
# notes of Open MPI's two columns once.
mapfile -t notes < <(printf '%s\n' "${notes[@]}" | awk 'NF && !seen[$0]++')

if [ -n "${exe[BIP]}" ]; then
	if [ -n "$build" ]; then
		build=$(cd "$build" 2>/dev/null && pwd) || bench_die "no build directory '$build'"
		bipload=$build/scripts/bipload
		[ -x "$bipload" ] || bench_die "$bipload not found (ninja -C $build)"
		shim_libs=$build/lib/bip:$build/lib/mpi_shim
	else
		bipload=$(command -v bipload) || bench_die "bipload not found: --build DIR, or BIP installed in PATH"
		shim_libs=
	fi
fi

# fstype DIR: the file system type of DIR.
fstype() {
	local t
	t=$(findmnt -n -o FSTYPE -T "$1" 2>/dev/null | head -1)
	[ -n "$t" ] || t=$(stat -f -c %T "$1")
	echo "$t"
}
{ [ -d "$tmpfs_dir" ] && [ -w "$tmpfs_dir" ]; } || bench_die "--tmpfs '$tmpfs_dir': no writable directory"
{ [ -d "$disk_dir" ] && [ -w "$disk_dir" ]; } || bench_die "--disk '$disk_dir': no writable directory"
tmpfs_type=$(fstype "$tmpfs_dir")
disk_type=$(fstype "$disk_dir")
[ "$tmpfs_type" = tmpfs ] || notes+=("--tmpfs $tmpfs_dir is $tmpfs_type, not tmpfs")
case $disk_type in
tmpfs | ramfs | overlay) notes+=("--disk $disk_dir is $disk_type, not a disk file system") ;;
esac

bench_tmpdir "$keep"
# The run directories, removed at exit with the temporary one.
run_tmpfs=$(mktemp -d "$tmpfs_dir/bip-io.XXXXXX") || bench_die "mktemp in $tmpfs_dir failed"
run_disk=$(mktemp -d "$disk_dir/bip-io.XXXXXX") || bench_die "mktemp in $disk_dir failed"
if [ "$keep" = 1 ]; then
	trap 'rm -rf "$run_tmpfs" "$run_disk"; echo "# raw results kept in $tmp" >&2' EXIT
else
	trap 'rm -rf "$tmp" "$run_tmpfs" "$run_disk"' EXIT
fi
# The file systems: a short name for the table, the run directory.
fs_names=(tmpfs "$disk_type")
fs_dirs=("$run_tmpfs" "$run_disk")
[ "$disk_type" != tmpfs ] || fs_names[1]=disk-tmpfs

# run_mpi IMPL PROGRAM ARGS...: NP processes of IMPL.
run_mpi() {
	local impl=$1
	shift
	case $impl in
	BIP) env "${shim_env[@]}" ${shim_libs:+LD_LIBRARY_PATH="$shim_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"} \
		timeout "$timeout_s" "$bipload" -sz "$np" "$@" ;;
	OMPI-ompio) bench_run_openmpi "$timeout_s" "$np" --mca io "$ompio_comp" "$@" ;;
	OMPI-romio) bench_run_openmpi "$timeout_s" "$np" --mca io "$romio_comp" "$@" ;;
	MPICH) bench_run_mpich "$timeout_s" "$np" "$@" ;;
	esac
}

# drop_cache DIR: the cached pages of the files in DIR, with --cold on a
# disk file system.
drop_cache() {
	local f
	[ "$cold" = 1 ] || return 0
	for f in "$1"/*; do
		[ -f "$f" ] && dd if="$f" iflag=nocache count=0 status=none
	done
	return 0
}

# run_ior IMPL DIR PATTERN XFER OUT: IOR's write and read, their CSV
# lines ("write,MiB/s,..." and "read,MiB/s,...") in OUT.
run_ior() {
	local impl=$1 dir=$2 pat=$3 x=$4 out=$5 rc
	local args=(-a MPIIO -t "$x" -b "$block" -i 1 -o "$dir/ior.dat" -O summaryFormat=CSV)
	case $pat in
	shared) args+=(-c) ;;
	fpp) args+=(-F) ;;
	esac
	if [ "$cold" = 1 ]; then
		run_mpi "$impl" "${exe[$impl]}" "${args[@]}" -w -e -k >"$out.w" 2>"$out.err"
		rc=$?
		if [ $rc = 0 ]; then
			drop_cache "$dir"
			run_mpi "$impl" "${exe[$impl]}" "${args[@]}" -r -C >"$out.r" 2>>"$out.err"
			rc=$?
		fi
		cat "$out.w" "$out.r" >"$out" 2>/dev/null
	else
		run_mpi "$impl" "${exe[$impl]}" "${args[@]}" -w -r -C -e >"$out" 2>"$out.err"
		rc=$?
	fi
	rm -rf "${dir:?}"/*
	return $rc
}

# run_fio DIR PATTERN XFER OUT: NP jobs, each its BLOCK bytes in XFER
# writes (then reads) at its block of one file, or in its own file; the
# lines "write,MiB/s" and "read,MiB/s" in OUT.
run_fio() {
	local dir=$1 pat=$2 x=$3 out=$4 rc op bw
	local args=(--name=io --directory="$dir" --bs="$x" --size="$block" --numjobs="$np"
		--ioengine=psync --fallocate=none --group_reporting
		--output-format=terse --terse-version=3)
	[ "$pat" = shared ] && args+=(--filename=ior.dat --offset_increment="$block")
	: >"$out"
	for op in write read; do
		if [ $op = write ]; then
			timeout "$timeout_s" fio "${args[@]}" --rw=write --end_fsync=1 >"$out.$op" 2>>"$out.err"
		else
			drop_cache "$dir"
			timeout "$timeout_s" fio "${args[@]}" --rw=read --invalidate="$cold" >"$out.$op" 2>>"$out.err"
		fi
		rc=$?
		[ $rc = 0 ] || break
		# terse version 3: field 7 the read bandwidth, 48 the write's, KiB/s.
		bw=$(awk -F';' -v op=$op '$1 == 3 { print (op == "read" ? $7 : $48) / 1024; exit }' "$out.$op")
		[ -n "$bw" ] && echo "$op,$bw" >>"$out"
	done
	rm -rf "${dir:?}"/*
	return $rc
}

start=$(date +%s)
bench_header
echo "# fio $(fio --version 2>/dev/null | sed 's/^fio-//'); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $np processes; each writes then reads $block bytes in transfers of ${xfers// /, };" \
	"$rounds rounds, the order rotating from round to round"
echo "# tmpfs: $tmpfs_type; disk: $disk_type ($(findmnt -n -o SOURCE -T "$disk_dir" 2>/dev/null | head -1))"
echo "# shared: IOR -a MPIIO -c (one file, a contiguous block per process, collective calls);" \
	"fpp: IOR -a MPIIO -F (a file per process, independent calls); IOR -e -C -i 1"
echo "# fio: $np jobs, psync, the same bytes and transfer size, at each job's block of one file" \
	"(shared) or in its own file (fpp); write with end_fsync=1, fallocate=none"
if [ "$cold" = 1 ]; then
	echo "# reads cold: the files' pages dropped from the page cache after the write (dd iflag=nocache)"
else
	echo "# reads warm: right after the write, from the page cache that the write left (one host)"
fi
echo "# Open MPI: mpirun --mca btl self,vader --mca io ${ompio_comp:-?} or ${romio_comp:-?}; MPICH: mpiexec"
[ -z "${exe[BIP]}" ] || echo "# the shim: bipload -sz $np${build:+, the libraries of the build}; environment: ${shim_env[*]:-(none)}"
for n in "${notes[@]}"; do
	echo "# $n"
done

# The columns of a round, fio last.
cols=()
for i in "${impls[@]}"; do
	[ -n "${exe[$i]}" ] && cols+=("$i")
done
[ "$fio" = 1 ] && cols+=(fio)
[ ${#cols[@]} -gt 0 ] || bench_die "nothing to run: no IOR given and --no-fio"
ncols=${#cols[@]}

failed=0
for ((r = 1; r <= rounds; r++)); do
	for ((f = 0; f < ${#fs_names[@]}; f++)); do
		for pat in $patterns; do
			for x in $xfers; do
				for ((c = 0; c < ncols; c++)); do
					col=${cols[$(((c + r - 1) % ncols))]}
					out=$tmp/${fs_names[$f]}.$pat.$(bytes "$x").$col.$r
					if [ "$col" = fio ]; then
						run_fio "${fs_dirs[$f]}" "$pat" "$x" "$out"
					else
						run_ior "$col" "${fs_dirs[$f]}" "$pat" "$x" "$out"
					fi
					rc=$?
					rows=$(grep -Ec '^(write|read),[0-9.]+' "$out")
					if [ $rc != 0 ] || [ "$rows" != 2 ]; then
						why="exit $rc"
						[ $rc = 124 ] && why="timed out after $timeout_s s"
						echo "# round $r: $col, ${fs_names[$f]} $pat $x failed ($why); the $rows rows it printed are kept:" >&2
						grep -Ev '^(write|read),' "$out" | cat - "$out.err" | grep -v '^ *$' |
							sed 's/^/#   /' | head -20 >&2
						failed=$((failed + 1))
					fi
				done
			done
		done
	done
	echo "# round $r of $rounds done ($(($(date +%s) - start)) s)" >&2
done

echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - start)) s in all"

# One row per (file system, pattern, operation, transfer size), from
# every run's output (named fs.pattern.bytes.column.round).
outs=()
for f in "$tmp"/*.[0-9]*; do
	[[ $f =~ \.[0-9]+$ ]] && outs+=("${f##*/}")
done
(cd "$tmp" && awk -v impls="${impls[*]}" -v fsn="${fs_names[*]}" -v pats="$patterns" \
	-v rounds="$rounds" -v np="$np" "$bench_awk_median"'
BEGIN {
	FS = ","
	n = split(fsn, l, " "); for (i = 1; i <= n; i++) fsidx[l[i]] = i
	n = split(pats, l, " "); for (i = 1; i <= n; i++) patidx[l[i]] = i
}
FNR == 1 {
	# fs.pattern.bytes.column.round
	split(FILENAME, f, ".")
	fs = f[1]; pat = f[2]; z = f[3]; col = f[4]
}
($1 == "write" || $1 == "read") && $2 ~ /^[0-9.]+$/ {
	key = fs SUBSEP pat SUBSEP $1 SUBSEP z
	if (!(key in seen)) {
		seen[key] = 1; keys[++nkeys] = key
		order[key] = ((fsidx[fs] * 8 + patidx[pat]) * 2 + ($1 == "read")) * 1e12 + z
	}
	val[col, key] = val[col, key] " " $2
}
function cell(v) { return v < 0 ? sprintf(" %11s", "-") : sprintf(" %11.1f", v) }
function ratio(a, b) { return a > 0 && b > 0 ? sprintf(" %8.2f", a / b) : sprintf(" %8s", "-") }
function size(z) {
	return z % 1073741824 == 0 ? z / 1073741824 "GiB" : z % 1048576 == 0 ? z / 1048576 "MiB" : \
		z % 1024 == 0 ? z / 1024 "KiB" : z "B"
}
END {
	ni = split(impls, im, " ")
	for (i = 2; i <= nkeys; i++)
		for (j = i; j > 1 && order[keys[j - 1]] > order[keys[j]]; j--) {
			t = keys[j]; keys[j] = keys[j - 1]; keys[j - 1] = t
		}
	printf "\n# MiB/s of %d processes, median over %d rounds; BIP/best: the shim over the best", np, rounds
	printf " of the three peers; BIP/fio: the shim over fio\n"
	hdr = sprintf("%-10s %-7s %-5s %6s", "fs", "pattern", "op", "xfer")
	for (i = 1; i <= ni; i++)
		hdr = hdr sprintf(" %11s", im[i])
	print hdr sprintf(" %11s %8s %8s", "fio", "BIP/best", "BIP/fio")
	for (k = 1; k <= nkeys; k++) {
		split(keys[k], p, SUBSEP)
		line = sprintf("%-10s %-7s %-5s %6s", p[1], p[2], p[3], size(p[4]))
		best = -1
		for (i = 1; i <= ni; i++) {
			m[im[i]] = median(val[im[i], keys[k]])
			line = line cell(m[im[i]])
			if (i > 1 && m[im[i]] > best)
				best = m[im[i]]
		}
		mf = median(val["fio", keys[k]])
		print line cell(mf) ratio(m["BIP"], best) ratio(m["BIP"], mf)
	}
}' "${outs[@]}") | tee "$tmp/table"

if [ -n "$plot" ]; then
	"$here/plot_io.sh" "$tmp/table" "$plot" || bench_die "plot_io.sh could not draw $plot"
	echo "# plot written to $plot" >&2
fi

if [ $failed -gt 0 ]; then
	echo "# $failed run(s) failed; their medians are over fewer rounds" >&2
	exit 1
fi
exit 0
