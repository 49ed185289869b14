# SPDX-License-Identifier: MIT
#
# bench_common.sh - what the comparison scripts (compare.sh, compare_mpi.sh,
# and for the floor and the plots lanai_vs_shm.sh and netns_pingpong.sh)
# share: errors, the peer MPI libraries (building with them, starting
# them), the temporary directory, the header that describes the machine,
# the awk median, the floor (bench/floor.c) run as one more column of a
# round, and the plots (--plot FILE.png, drawn by gnuplot).  Sourced, not
# run; the caller sets $prog first.

bench_die() {
	echo "$prog: $*" >&2
	exit 1
}

# The commands of Open MPI and MPICH that the comparisons use.
bench_need_peers() {
	local t
	for t in mpicc.openmpi mpicc.mpich mpirun.openmpi mpiexec.mpich; do
		command -v "$t" >/dev/null || bench_die "$t not found"
	done
}

# The table of compare_spawn.sh and compare_jobs.sh: its header, then
# bench_peer_row LABEL DIR KEY for each row: the medians of DIR/bip.KEY,
# DIR/ompi.KEY and DIR/mpich.KEY (a value per line; "failed" where there is
# none) and the best peer's over the shim's (times: above 1, the shim is
# faster).
bench_peer_header() {
	printf "%-14s %12s %12s %12s %10s\n" "test" "shim (BIP)" "Open MPI" "MPICH" "best/shim"
}
bench_peer_row() {
	local line best= shim= impl f m ratio=-
	line=$(printf "%-14s" "$1")
	for impl in bip ompi mpich; do
		f=$2/$impl.$3
		if [ -s "$f" ]; then
			m=$(sort -g "$f" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
			line="$line $(printf "%12s" "$m")"
			[ "$impl" = bip ] && shim=$m
			if [ "$impl" != bip ] && { [ -z "$best" ] || awk "BEGIN { exit !($m < $best) }"; }; then
				best=$m
			fi
		else
			line="$line $(printf "%12s" failed)"
		fi
	done
	[ -n "$best" ] && [ -n "$shim" ] && ratio=$(awk "BEGIN { printf \"%.0f\", $best / $shim }")
	echo "$line $(printf "%10s" "$ratio")"
}

# A temporary directory in $tmp, removed at exit unless KEEP is 1.
bench_tmpdir() {
	local keep=$1
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/bip-compare.XXXXXX") || bench_die "mktemp failed"
	if [ "$keep" = 1 ]; then
		trap 'echo "# raw results kept in $tmp" >&2' EXIT
	else
		trap 'rm -rf "$tmp"' EXIT
	fi
}

# bench_build_peers SOURCE NAME: $tmp/NAME.openmpi and $tmp/NAME.mpich.
bench_build_peers() {
	local src=$1 name=$2 dir
	dir=$(dirname "$src")
	mpicc.openmpi -O2 -I"$dir" -o "$tmp/$name.openmpi" "$src" ||
		bench_die "build of $src with mpicc.openmpi failed"
	mpicc.mpich -O2 -I"$dir" -o "$tmp/$name.mpich" "$src" ||
		bench_die "build of $src with mpicc.mpich failed"
}

# bench_build_three BUILD SOURCE: SOURCE built with the shim (BUILD's
# uninstalled wrapper, or mpicc.bip from PATH when BUILD is empty), Open MPI
# and MPICH, as $tmp/bip, $tmp/ompi and $tmp/mpich; $bipload is BUILD's
# bipload, or the one in PATH.
bench_build_three() {
	local cc_bip
	if [ -n "$1" ]; then
		cc_bip="sh $1/scripts/mpicc.bip-uninstalled" bipload=$1/scripts/bipload
	else
		cc_bip=mpicc.bip bipload=bipload
	fi
	$cc_bip -O2 -o "$tmp/bip" "$2" || bench_die "cannot build with the shim"
	mpicc.openmpi -O2 -o "$tmp/ompi" "$2" || bench_die "cannot build with Open MPI"
	mpicc.mpich -O2 -o "$tmp/mpich" "$2" || bench_die "cannot build with MPICH"
}

# bench_run_openmpi TIMEOUT NP PROGRAM ARGS...: shared memory only, more
# processes than cores allowed, allowed as root.
bench_run_openmpi() {
	local t=$1 np=$2
	shift 2
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		timeout "$t" mpirun.openmpi --oversubscribe --mca btl self,vader -n "$np" "$@"
}

# bench_run_mpich TIMEOUT NP PROGRAM ARGS...
bench_run_mpich() {
	local t=$1 np=$2
	shift 2
	timeout "$t" mpiexec.mpich -n "$np" "$@"
}

# The machine and the peer versions, as comment lines.
bench_header() {
	local cpu
	cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
	[ -n "$cpu" ] || cpu=$(uname -m)
	echo "# CPU: $cpu; $(nproc) cores online; Linux $(uname -r)"
	echo "# Open MPI $(mpirun.openmpi --version 2>/dev/null | awk 'NR == 1 { print $NF }')," \
		"MPICH $(mpiexec.mpich --version 2>/dev/null | awk '/^ *Version:/ { print $2; exit }')"
}

# An awk function, median(s): the median of the space-separated numbers in
# s, -1 if there are none.  Prepend it to an awk program.
bench_awk_median='
function median(s,    a, n, i, j, t) {
	n = split(s, a, " ")
	if (n == 0)
		return -1
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}'

# The floor of build DIR, in $floor_exe.
bench_need_floor() {
	floor_exe=$1/bench/floor
	[ -x "$floor_exe" ] || bench_die "$floor_exe not found (ninja -C $1 bench/floor)"
}

# bench_floor_sizes BENCH_OPTIONS...: floor_min and floor_max from the -s
# and -S of the ping-pong programs' options (their defaults otherwise), so
# that the floor has the sizes of the table.
bench_floor_sizes() {
	floor_min=4
	floor_max=4194304
	while [ $# -gt 0 ]; do
		case $1 in
		-s) [ $# -ge 2 ] && floor_min=$2; shift ;;
		-S) [ $# -ge 2 ] && floor_max=$2; shift ;;
		esac
		shift
	done
}

# bench_run_floor TIMEOUT OUT: one run of the floor from floor_min to
# floor_max, written to OUT in the ping-pong programs' CSV
# (bytes,latency_us,bandwidth_MBps; the latency "-" when the round trip
# cannot be measured) after a comment line with the half round trip; the
# floor's own lines go to OUT.raw, its errors to stderr.  Status 1 if it
# failed.
bench_run_floor() {
	local t=$1 out=$2
	timeout "$t" "$floor_exe" --parsable -s "$floor_min" -S "$floor_max" \
		>"$out.raw" || return 1
	awk '$1 == "half_rtt_us" { print "# half_rtt_us " $2 }
	     $1 == "size" && NF == 4 && $4 > 0 { printf "%d,%s,%.1f\n", $2, $3, $4 * 1000 }' \
		"$out.raw" >"$out"
}

# bench_floor_note FILE...: tells on stderr, once, why the floor's round
# trip could not be measured, if it could not in some of the runs.
bench_floor_note() {
	local why
	why=$(awk '$1 == "half_rtt_us" && $2 == "-" { $1 = $2 = ""; sub(/^ +/, ""); print; exit }' \
		"${@/%/.raw}" 2>/dev/null)
	[ -z "$why" ] || echo "# floor: the round trip could not be measured in some rounds: $why" >&2
}

# bench_need_gnuplot PNG: checked before any run, so that --plot fails at
# once rather than after the benchmark.
bench_need_gnuplot() {
	local dir
	command -v gnuplot >/dev/null || bench_die "--plot needs gnuplot: dev/deps.sh --bench installs it"
	case $1 in
	*.png) ;;
	*) bench_die "--plot '$1': the file name must end in .png" ;;
	esac
	dir=$(dirname -- "$1")
	[ -d "$dir" ] && [ -w "$dir" ] || bench_die "--plot '$1': cannot write in directory '$dir'"
}

# bench_plot PNG TITLE LATENCY_DATA BANDWIDTH_DATA [LATENCY_LABEL]: two
# panels, latency and bandwidth against the size, log-log, one line per
# column; LATENCY_LABEL names the first panel's axis (default: one-way
# latency).  Each data
# file has a header line (bytes, then one name per column) and one line per
# size, "-" where a value is missing; its last column is the floor, drawn
# dashed (and left out if it has no value).
bench_plot() {
	local png=$1 title=$2 lat=$3 bw=$4 ylat=${5:-one-way latency (us)} term=png
	gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo && term=pngcairo
	bench_plot_cmds "$term" "$png" "$title" "$lat" "$bw" "$ylat" >"$lat.gp"
	if ! gnuplot "$lat.gp" 2>"$lat.gp.err" || ! [ -s "$png" ]; then
		sed 's/^/#   /' "$lat.gp.err" >&2
		bench_die "gnuplot could not draw $png"
	fi
	echo "# plot written to $png" >&2
}

# The plot command of one panel: "plot" and its elements.
bench_plot_panel() {
	local data=$1 n i has_floor sep=""
	n=$(awk 'NR == 1 { print NF; exit }' "$data")
	has_floor=$(awk -v c="$n" 'NR > 1 && $c != "-" && $c + 0 > 0 { print 1; exit }' "$data")
	printf 'plot'
	for ((i = 2; i < n; i++)); do
		printf '%s "%s" using 1:%d with linespoints pt 7 ps 0.6 lw 1.2 title columnheader(%d)' \
			"$sep" "$data" "$i" "$i"
		sep=,
	done
	[ -z "$has_floor" ] ||
		printf '%s "%s" using 1:%d with lines dt 2 lw 2 lc "black" title columnheader(%d)' \
			"$sep" "$data" "$n" "$n"
	printf '\n'
}

bench_plot_cmds() {
	local term=$1 png=$2 title=$3 lat=$4 bw=$5 ylat=$6
	cat <<GPEND
set terminal $term size 860,360 noenhanced font ",10"
set output "$png"
set datafile missing "-"
set multiplot layout 1,2 title "$title"
set logscale xy
set grid lt 1 lc "gray85" lw 1
set key top left
set xlabel "message size (bytes)"
set xtics ("4" 4, "64" 64, "1K" 1024, "16K" 16384, "256K" 262144, "4M" 4194304, "64M" 67108864)
set ylabel "$ylat"
$(bench_plot_panel "$lat")
set ylabel "bandwidth (MB/s)"
set format y "%g"
$(bench_plot_panel "$bw")
unset multiplot
GPEND
}

# The clusters' benchmarks (clusters.sh, netns_clusters.sh): per size, the
# medians of the ping-pong over the link that joins the clusters and
# through the gateways (bip_pingpong --csv files DIR/link.*.csv and
# DIR/gateway.*.csv), with the extra latency and the ratios, which are the
# issue's goal; with a third name REF, the medians of DIR/REF.*.csv too (a
# faster path between the same two nodes, for reference).
# bench_gateway_table DIR [REF]
bench_gateway_table() {
	local ref=${2:-}
	awk -F, -v ref="$ref" "$bench_awk_median"'
	FNR == 1 { way = FILENAME; sub(/.*\//, "", way); sub(/\..*/, "", way); next }
	/^#/ { next }
	{
		if (!($1 in seen)) { seen[$1] = 1; sizes[++ns] = $1 }
		if ($2 != "-") v[way "lat" $1] = v[way "lat" $1] " " $2
		v[way "bw" $1] = v[way "bw" $1] " " $3
	}
	END {
		printf "%12s %10s %10s %10s %7s %11s %11s %8s", "bytes", "link_us", "gateway_us",
			"extra_us", "ratio", "link_MBps", "gateway_MBps", "bw_ratio"
		if (ref != "")
			printf " %10s %11s", ref "_us", ref "_MBps"
		printf "\n"
		for (i = 1; i <= ns; i++) {
			s = sizes[i]
			dl = median(v["linklat" s]); gl = median(v["gatewaylat" s])
			db = median(v["linkbw" s]); gb = median(v["gatewaybw" s])
			printf "%12d %10.3f %10.3f %10.3f %7.2f %11.1f %11.1f %8.2f", s, dl, gl,
				gl - dl, (dl > 0 ? gl / dl : 0), db, gb, (db > 0 ? gb / db : 0)
			if (ref != "")
				printf " %10.3f %11.1f", median(v[ref "lat" s]), median(v[ref "bw" s])
			printf "\n"
		}
	}' "$1"/link.*.csv "$1"/gateway.*.csv ${ref:+"$1"/$ref.*.csv}
}

# One row of the Allreduce through the clusters' leaders against flat:
# bench_topo_row RANKS FILE... (mpi_coll --csv files named *ar.topo.* and
# *ar.flat.*).
bench_topo_row() {
	local np=$1
	shift
	awk -F, -v np="$np" "$bench_awk_median"'
	FNR == 1 { how = FILENAME; sub(/.*\/ar\./, "", how); sub(/\..*/, "", how) }
	/^#/ || $1 != "allreduce" { next }
	{ v[how] = v[how] " " $4 }
	END {
		t = median(v["topo"]); f = median(v["flat"])
		printf "%6d %12.3f %12.3f %10.2f\n", np, t, f, (f > 0 ? t / f : 0)
	}' "$@"
}
