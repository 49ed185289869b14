#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# netns_pingpong.sh - ping-pong latency and bandwidth of BIP over ofi/tcp
# between two test hosts made of network namespaces, beside libfabric's own
# fi_pingpong (tcp provider, RDM endpoints, tagged messages) with the same
# sizes, interleaved round by round.
#
# Prints per size the median over the rounds of each one's one-way latency
# and the ratio BIP/fi_pingpong, the ping-pong bandwidth of each (size over
# one-way latency) and BIP's streaming bandwidth.  The floor (bench/floor:
# a cache line between two processors, memcpy, on this host) runs in every
# round too, and every figure is also given as a ratio to it.
# Needs root (network namespaces), the ofi driver and fi_pingpong
# (libfabric-bin); exits 77 with the reason otherwise.
#
# usage: netns_pingpong.sh --build DIR [-r ROUNDS] [-s MIN] [-S MAX] [-i ITERS]
#                          [--nice N] [--plot FILE.png] [--timeout SEC]
#
#   --build DIR      BIP build directory (DIR/scripts/bipload,
#                    DIR/bench/bip_pingpong)
#   -r, --rounds R   rounds (default 5)
#   -s MIN, -S MAX   sizes: the powers of two from MIN to MAX (default 4 .. 1 MiB)
#   -i ITERS         round trips per size up to 64 KiB, fewer above (default 1000)
#   --nice N         run both under nice -n N (e.g. -10 on a loaded machine)
#   --plot FILE.png  also draw latency and bandwidth against the size
#                    (log-log, the floor dashed) with gnuplot
#   --timeout SEC    limit of one run (default 120)

set -u -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_common.sh"
build=
rounds=5
min=4
max=$((1 << 20))
iters=1000
timeout_s=120
nice_n=0
plot=

usage() {
	sed -n '/^# usage:/,/^# *--timeout SEC/s/^# \{0,1\}//p' "$0"
	exit "${1:-2}"
}

die() {
	echo "$prog: $*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
	-r | --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
	-s) [ $# -ge 2 ] || usage; min=$2; shift 2 ;;
	-S) [ $# -ge 2 ] || usage; max=$2; shift 2 ;;
	-i) [ $# -ge 2 ] || usage; iters=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	--nice) [ $# -ge 2 ] || usage; nice_n=$2; shift 2 ;;
	--plot) [ $# -ge 2 ] || usage; plot=$2; shift 2 ;;
	--plot=*) plot=${1#*=}; shift ;;
	-h | --help) usage 0 ;;
	*) echo "$prog: unknown option '$1'" >&2; usage ;;
	esac
done
[ -n "$build" ] || { echo "$prog: --build DIR is required" >&2; usage; }
for v in "$rounds" "$min" "$max" "$iters" "$timeout_s"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "'$v' is not a positive number"
done
[[ $nice_n =~ ^-?[0-9]+$ ]] || die "--nice '$nice_n' is not a number"
[ -z "$plot" ] || bench_need_gnuplot "$plot"
build=$(cd "$build" 2>/dev/null && pwd) || die "no build directory '$build'"
bipload=$build/scripts/bipload
bipconf=$build/scripts/bipconf
bipinfo=$build/scripts/bipinfo
bip_exe=$build/bench/bip_pingpong
[ -x "$bip_exe" ] || die "$bip_exe not found (ninja -C $build bench/bip_pingpong)"
bench_need_floor "$build"

. "$here/../tests/netns/hosts.sh"
command -v fi_pingpong >/dev/null || ns_skip "no fi_pingpong (package libfabric-bin)"
line=$("$bipinfo" --parsable | grep '^driver\.ofi=')
case "$line" in
"") ns_skip "the ofi driver is not compiled in (bipinfo --parsable has no driver.ofi)" ;;
*=unavailable*) ns_skip "the ofi driver cannot run here: ${line#*=unavailable: }" ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bip-netns.XXXXXX") || die "mktemp failed"
ns_setup 2
trap 'ns_cleanup; rm -rf "$tmp"' EXIT
read -r h0 h1 <<<"$ns_hosts"
"$bipconf" -f "$tmp/conf" "$h0" "$h1" >/dev/null || die "bipconf failed"

# The same sizes and counts for both: bip_pingpong's rule, fewer round trips
# above 64 KiB.
sizes=()
for ((s = 4; s <= max; s *= 2)); do
	[ "$s" -ge "$min" ] && sizes+=("$s")
done
[ ${#sizes[@]} -gt 0 ] || die "no power of two between $min and $max"
floor_min=${sizes[0]}
floor_max=$max

run_bip() {
	BIP_NIC=ofi BIP_OFI_PROVIDER=tcp timeout "$timeout_s" nice -n "$nice_n" \
		"$bipload" -f "$tmp/conf" --rsh "ip netns exec" "$bip_exe" --csv \
		-s "${sizes[0]}" -S "$max" -i "$iters"
}

# fi_pingpong: the server on the first host, the client on the second once
# the server listens.  One-way latency: its usec/xfer (a transfer is one way).
fi_port=47592
run_fi_size() {
	local size=$1 n=$2 k=0 spid out
	nice -n "$nice_n" ip netns exec "$h0" timeout "$timeout_s" fi_pingpong -p tcp -e rdm -m tagged \
		-I "$n" -S "$size" -B "$fi_port" >"$tmp/fi_server.out" 2>&1 &
	spid=$!
	until ip netns exec "$h0" ss -ltnH "sport = :$fi_port" | grep -q .; do
		k=$((k + 1))
		[ "$k" -lt 200 ] || { kill "$spid"; return 1; }
		kill -0 "$spid" 2>/dev/null || return 1
		sleep 0.05
	done
	out=$(nice -n "$nice_n" ip netns exec "$h1" timeout "$timeout_s" fi_pingpong -p tcp -e rdm -m tagged \
		-I "$n" -S "$size" -P "$fi_port" "${ns_net}.1" 2>&1) || { wait "$spid"; return 1; }
	wait "$spid" || return 1
	# its sizes read "1k", "64k", "1m": take the row under the header
	awk -v s="$size" '$1 != "bytes" && NF >= 8 && $7 + 0 > 0 { lat = $7 }
		END { if (lat) printf "%d,%s,%.1f\n", s, lat, s / lat; else exit 1 }' <<<"$out"
}

run_fi() {
	local s n
	echo "bytes,latency_us,bandwidth_MBps"
	for s in "${sizes[@]}"; do
		n=$iters
		[ "$s" -gt 65536 ] && n=$(( iters * 65536 / s > 10 ? iters * 65536 / s : 10 ))
		run_fi_size "$s" "$n" || return 1
	done
}

echo "# CPU: $(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo); $(nproc) cores online; Linux $(uname -r)"
echo "# two network namespaces joined by veth pairs and a bridge; libfabric $(fi_info --version 2>/dev/null | awk '/libfabric:/ { print $2 }'), provider tcp"
echo "# BIP: BIP_NIC=ofi BIP_OFI_PROVIDER=tcp bipload --rsh 'ip netns exec' bip_pingpong -i $iters"
echo "# fi_pingpong -p tcp -e rdm -m tagged -I $iters (fewer above 64 KiB); $rounds rounds, interleaved"
echo "# load average at the start: $(cut -d" " -f1-3 /proc/loadavg); both run under nice -n $nice_n"

# Bytes the first host sent on its eth0: the traffic really crosses the
# virtual network (the shm provider would not).
eth0_tx() {
	ip netns exec "$h0" cat /sys/class/net/eth0/statistics/tx_bytes
}

failed=0
for ((r = 1; r <= rounds; r++)); do
	for impl in BIP FI FLOOR; do
		out=$tmp/$impl.$r.csv
		tx=$(eth0_tx)
		case $impl in
		BIP) run_bip >"$out" 2>"$tmp/$impl.$r.err" ;;
		FI) run_fi >"$out" 2>"$tmp/$impl.$r.err" ;;
		FLOOR) bench_run_floor "$timeout_s" "$out" 2>"$tmp/$impl.$r.err" ;;
		esac
		rc=$?
		[ "$impl" = FLOOR ] ||
			echo "# round $r: $impl: $(( ($(eth0_tx) - tx) / 1000 )) kB sent on $h0's eth0" >&2
		if [ $rc != 0 ] || ! grep -q '^[0-9]' "$out"; then
			echo "# round $r: $impl failed (exit $rc):" >&2
			sed 's/^/#   /' "$tmp/$impl.$r.err" | head -20 >&2
			: >"$out"
			failed=$((failed + 1))
		fi
		# bipload's own lines name the job: its shared memory goes at the end.
		[ "$impl" = BIP ] && ns_note_job "$tmp/$impl.$r.err"
	done
	echo "# round $r of $rounds done" >&2
done

(cd "$tmp" && awk -F, -v rounds="$rounds" -v latdat="$tmp/plot.lat" -v bwdat="$tmp/plot.bw" '
function median(s,    a, n, i, j, t) {
	n = split(s, a, " ")
	if (n == 0)
		return -1
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function least(s,    a, n, i, m) {
	n = split(s, a, " ")
	m = -1
	for (i = 1; i <= n; i++)
		if (m < 0 || a[i] + 0 < m)
			m = a[i] + 0
	return m
}
function fmt(v, w, p) { return v < 0 ? sprintf("%" w "s", "-") : sprintf("%" w "." p "f", v) }
function ratio(a, b) { return a > 0 && b > 0 ? sprintf(" %10.2f", a / b) : sprintf(" %10s", "-") }
function dat(v) { return v < 0 ? " -" : " " v }
FNR == 1 { split(FILENAME, f, "."); impl = f[1] }
FNR == 1 && impl == "FLOOR" && /^# half_rtt_us [0-9]/ { split($0, hh, " "); halves = halves " " hh[3] }
FNR == 1 { next }
/^[0-9]/ {
	if (impl != "FLOOR" && !($1 in seen)) { seen[$1] = 1; sizes[++nsizes] = $1 }
	if ($2 != "-")
		lat[impl, $1] = lat[impl, $1] " " $2
	bw[impl, $1] = bw[impl, $1] " " $3
}
END {
	for (i = 2; i <= nsizes; i++)
		for (j = i; j > 1 && sizes[j - 1] + 0 > sizes[j] + 0; j--) {
			t = sizes[j]; sizes[j] = sizes[j - 1]; sizes[j - 1] = t
		}
	printf "\n# medians over %d rounds; latency one-way in us; bandwidth in MB/s (10^6 bytes/s)\n", rounds
	printf "# pp = ping-pong (size / one-way latency); stream = BIP with 16 messages in flight\n"
	printf "# best = the ratio of the lowest latencies of the rounds (less sensitive to other load)\n"
	h = median(halves)
	printf "# floor: half round trip of a cache line between two processors of this host: %s;\n", h < 0 ? "not measured" : sprintf("%.3f us", h)
	printf "# floor_us = that + one memcpy of the size; memcpy from buffers larger than the last-level cache, in MB/s\n"
	printf "%10s %10s %10s %9s %9s %10s %10s %10s", "bytes", "BIP_us", "fi_us", "BIP/fi", "best", "BIP_pp", "fi_pp", "BIP_stream"
	printf " %10s %10s %10s %10s %10s %10s %10s\n", "floor_us", "BIP/floor", "fi/floor", "memcpy", "BIPpp/mc", "fipp/mc", "stream/mc"
	print "bytes BIP fi_pingpong floor" > latdat
	print "bytes BIP_pp fi_pp BIP_stream memcpy" > bwdat
	worst = 0
	for (k = 1; k <= nsizes; k++) {
		z = sizes[k]
		lb = median(lat["BIP", z]); lf = median(lat["FI", z])
		r = lb > 0 && lf > 0 ? lb / lf : -1
		mb = least(lat["BIP", z]); mf = least(lat["FI", z])
		rb = mb > 0 && mf > 0 ? mb / mf : -1
		if (r > worst) { worst = r; worst_at = z }
		pb = lb > 0 ? z / lb : -1; pf = lf > 0 ? z / lf : -1; sb = median(bw["BIP", z])
		printf "%10d %s %s %s %s %s %s %s", z, fmt(lb, 10, 2), fmt(lf, 10, 2), fmt(r, 9, 3),
			fmt(rb, 9, 3), fmt(pb, 10, 1), fmt(pf, 10, 1), fmt(sb, 10, 1)
		fl = median(lat["FLOOR", z]); fb = median(bw["FLOOR", z])
		printf " %s%s%s %s%s%s%s\n", fmt(fl, 10, 3), ratio(lb, fl), ratio(lf, fl),
			fmt(fb, 10, 1), ratio(pb, fb), ratio(pf, fb), ratio(sb, fb)
		print z dat(lb) dat(lf) dat(fl) > latdat
		print z dat(pb) dat(pf) dat(sb) dat(fb) > bwdat
	}
	if (worst > 0)
		printf "\n# largest ratio BIP/fi_pingpong: %.3f (%+.1f%% latency, at %d bytes)\n",
			worst, (worst - 1) * 100, worst_at
}' BIP.*.csv FI.*.csv FLOOR.*.csv)
bench_floor_note "$tmp"/FLOOR.*.csv
[ -z "$plot" ] || bench_plot "$plot" "BIP over ofi/tcp and fi_pingpong between two network-namespace hosts; the floor dashed" \
	"$tmp/plot.lat" "$tmp/plot.bw"
[ "$failed" = 0 ] || { echo "# $failed runs failed" >&2; exit 1; }
