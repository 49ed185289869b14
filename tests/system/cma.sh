#!/bin/sh
# SPDX-License-Identifier: MIT
# The shm driver's single copy (process_vm_readv, BIP_SHM_CMA_MIN) and its
# fallback, through bipload:
#  - every word of long messages around the sizes where the path changes
#    (BIP_SHM_CMA_MIN, the pipe's chunk, the prepush limit, the pipe) and
#    of 64 MiB (single copy, pipelined, refused), one at a time and all at
#    once received late (cma.c), with several values of BIP_SHM_CMA_MIN;
#  - process_vm_readv refused at its first use, and refused from the
#    start: the pipelined copy takes over and nothing is lost; single copy
#    on one node only;
#  - the single copy needs no help from the sender: a 64 MiB receive
#    completes while its sender computes without calling the library
#    (overlap.c; tests/system/progress.sh has the control, where on the
#    pipelined path nothing moves).  The time limit is only where a
#    failing run gives up;
#  - a BIP_SHM_CMA_MIN that is not a size is named and ignored.
# Usage: cma.sh BIPLOAD CMA OVERLAP
set -u
bipload=$1
cma=$2
overlap=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
run() { # WHAT MODE|MODE:big ENV...   (big: 64 MiB too)
	what=$1 mode=${2%:big} big=
	[ "$2" = "$mode" ] || big=big
	shift 2
	env BIP_NIC=shm "$@" "$bipload" -q -sz 2 --timeout 120 "$cma" "$mode" $big >"$out" 2>&1 ||
		fail "$what: the job failed"
	if grep -q "cannot refuse process_vm_readv here" "$out"; then
		echo "$what: skipped: $(grep -m1 'cannot refuse' "$out")"
		return
	fi
	for node in 0 1; do
		grep -q "cma: node $node: [0-9]* messages checked, every word" "$out" ||
			fail "$what: node $node did not check its messages"
	done
	echo "$what: $(grep 'node 1:' "$out")"
}
run "BIP_SHM_CMA_MIN=1" sizes:big BIP_SHM_CMA_MIN=1
for min in 65536 100000; do
	run "BIP_SHM_CMA_MIN=$min" sizes BIP_SHM_CMA_MIN=$min
done
run "default" sizes
run "BIP_SHM_CMA=0" sizes:big BIP_SHM_CMA=0 BIP_SHM_CMA_MIN=1
run "refused at first use" refuse:big BIP_SHM_CMA_MIN=1
run "refused from the start" refuse-init BIP_SHM_CMA_MIN=1
run "refused at first use, from 64 KiB" refuse BIP_SHM_CMA_MIN=65536
# The two nodes set differently: one sender prepushes what its receiver
# reads by single copy, the other leaves to the pipe what it did not push.
cat >"$dir/node1off" <<'EOS'
#!/bin/sh
[ "$BIP_NODE" = 1 ] && export BIP_SHM_CMA=0
exec "$@"
EOS
chmod +x "$dir/node1off"
BIP_NIC=shm BIP_SHM_CMA_MIN=1 "$bipload" -q -sz 2 --timeout 120 "$dir/node1off" "$cma" sizes \
	>"$out" 2>&1 || fail "single copy off on node 1 only: the job failed"
for node in 0 1; do
	grep -q "cma: node $node: [0-9]* messages checked, every word" "$out" ||
		fail "single copy off on node 1 only: node $node did not check its messages"
done
echo "single copy off on node 1 only: $(grep 'node 1:' "$out")"

# The receiver finishes alone while the sender computes.
BIP_NIC=shm BIP_SHM_CMA_MIN=65536 "$bipload" -q -sz 2 --timeout 150 "$overlap" bip \
	"$dir/flag" 16777216 60 >"$out" 2>&1 || fail "overlap: the job failed"
grep -q "moved while computing; test after: complete" "$out" ||
	fail "overlap: the single copy did not move while the sender computed"
echo "overlap: $(grep 'test after' "$out")"

# Misuse: named, ignored, and the job still right.
run "BIP_SHM_CMA_MIN=12q" sizes BIP_SHM_CMA_MIN=12q
grep -q "bip: BIP_SHM_CMA_MIN=12q is not a size; ignored" "$out" ||
	fail "BIP_SHM_CMA_MIN=12q not named"
exit 0
