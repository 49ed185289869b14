#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# plot_io.sh - the table of compare_io.sh as bars, with gnuplot: one panel
# per file system, one group of bars per (pattern, operation, transfer
# size), one bar per implementation and fio, MiB/s on a log scale.  Reads
# a table as compare_io.sh prints it (or bench/results/io.txt), so a plot
# can be drawn again from a results file without running anything.
#
# usage: plot_io.sh TABLE.txt FILE.png

set -u -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"

[ $# = 2 ] || { sed -n 's/^# usage: /usage: /p' "$0" >&2; exit 2; }
table=$1
png=$2
[ -r "$table" ] || bench_die "cannot read '$table'"
bench_need_gnuplot "$png"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bip-plot-io.XXXXXX") || bench_die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# One data file per file system: a quoted label, then the MiB/s columns
# (the columns between "xfer" and the ratios), "-" where missing.
awk -v dir="$tmp" '
/^#/ || NF == 0 { next }
$1 == "fs" && $4 == "xfer" {
	ncol = 0
	for (i = 5; i <= NF; i++)
		if ($i !~ /\//)
			name[++ncol] = $i
	next
}
ncol > 0 && NF >= 4 + ncol {
	if (!($1 in seen)) {
		seen[$1] = 1
		fss[++nfs] = $1
		printf "label" > (dir "/" $1)
		for (i = 1; i <= ncol; i++)
			printf " %s", name[i] > (dir "/" $1)
		printf "\n" > (dir "/" $1)
	}
	printf "\"%s %s %s\"", $2, $3, $4 > (dir "/" $1)
	for (i = 1; i <= ncol; i++)
		printf " %s", $(4 + i) > (dir "/" $1)
	printf "\n" > (dir "/" $1)
}
END {
	for (i = 1; i <= nfs; i++)
		print fss[i] > (dir "/list")
	print ncol + 1 > (dir "/ncol")
}' "$table"
[ -s "$tmp/list" ] || bench_die "no table rows in '$table'"
nfs=$(wc -l <"$tmp/list")
last=$(cat "$tmp/ncol")

term=png
gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo && term=pngcairo
{
	cat <<GPEND
set terminal $term size $((560 * nfs + 120)),440 noenhanced font ",9"
set output "$png"
set datafile missing "-"
set multiplot layout 1,$nfs title "MPI-IO with IOR, $(sed -n 's/^# MiB\/s of \([0-9][0-9]*\) processes.*/\1 processes of one host/p' "$table" | head -1): the MPI shim (over BIP), Open MPI (ompio, romio), MPICH (romio), and fio"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set yrange [10:*]
set grid ytics lt 1 lc "gray85"
set key top left font ",8"
set xtics rotate by 30 right font ",8"
set ylabel "MiB/s"
GPEND
	while read -r fs; do
		echo "set title \"$fs\""
		echo "plot for [c=2:$last] \"$tmp/$fs\" using c:xtic(1) title columnheader(c)"
	done <"$tmp/list"
	echo "unset multiplot"
} >"$tmp/plot.gp"
if ! gnuplot "$tmp/plot.gp" 2>"$tmp/plot.err" || ! [ -s "$png" ]; then
	sed 's/^/#   /' "$tmp/plot.err" >&2
	bench_die "gnuplot could not draw $png"
fi
