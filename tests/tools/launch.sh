#!/bin/sh
# SPDX-License-Identifier: MIT
# Tests of bipload's job options and of mpiexec.bip / mpirun.bip, through
# their command lines.
# Usage: launch.sh CHECK BUILDDIR
#   hosts     --host and --hostfile (both families' formats), placement by
#             slot, --ppn, --oversubscribe, max_slots, and their errors; the
#             other hosts reached through a remote shell that logs its host
#             and runs the command here
#   mpmd      several commands (a : b): each node's program, arguments,
#             BIP_APPNUM and -env; MPI_APPNUM in one MPI_COMM_WORLD
#   outfiles  --output-filename DIR[:nocopy]: each node's two files
#   bind      --bind-to core|none against /proc/self/status, and
#             --report-bindings and bipinfo --job
#   mpiexec   each option of mpiexec.bip as the bipload command it becomes
#             (a bipload beside it that logs its arguments), the errors
#   mpirun    mpirun.bip and mpiexec.bip running jobs: exit status, MPMD,
#             host file, time-out
#   proxy     bipload and the proxies of other hosts: a proxy that speaks
#             the protocol by hand (fakeproxy.py) well, then badly (each
#             broken frame named, the job stopped, nothing left: among them
#             a process channel's record or a new process in a job that
#             gives none); a remote login that talks before the proxy; a
#             proxy that cannot enter the working directory
set -u
check=$1
build=$2
bipload="$build/scripts/bipload"
helper="$build/tests/tools/helper"
mpmd="$build/tests/tools/mpmd"
fake="$(cd "$(dirname "$0")" && pwd)/fakeproxy.py"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out="$tmp/out"
unset BIPCONF BIP_OPTS BIP_NODE BIP_JOBID BIP_HOST BIP_RSH BIP_BIND BIP_REPORT_BINDINGS \
	MPIEXEC_TIMEOUT SLURM_JOB_ID
fail() {
	[ -f "$out" ] && cat "$out"
	echo "FAIL: $*"
	exit 1
}
# The remote shell: logs the host, runs the command here.
printf '#!/bin/sh\nprintf "%%s\\n" "$1" >>"%s/hosts-log"\nshift\nexec "$@"\n' "$tmp" \
	>"$tmp/remote"
chmod +x "$tmp/remote"
# "node N host H" for each node of helper where's lines, in node order.
placement() {
	sed -n 's/^node \([0-9]*\) .* BIP_HOST=\[\([^]]*\)\].*/node \1 host \2/p' "$out" | sort -n -k2
}
# expect_error WORDS... -- MESSAGE: bipload WORDS fails, saying MESSAGE.
expect_error() {
	for w in "$@"; do
		shift
		[ "$w" = -- ] && break
		set -- "$@" "$w"
	done
	msg=$1
	shift
	"$bipload" "$@" >"$out" 2>&1 && fail "accepted: bipload $*"
	grep -qF -- "$msg" "$out" || fail "bipload $*: no message '$msg'"
}

cd "$tmp" || exit 1
case "$check" in
hosts)
	# Open MPI's and MPICH's lines, comments, a host named twice.
	cat >"$tmp/hf" <<-'EOF'
	# two families' formats
	localhost slots=2
	remote-a:2   # MPICH
	remote-b slots=1 max_slots=2

	remote-a
	EOF
	"$bipload" -q --rsh "$tmp/remote" --hostfile "$tmp/hf" "$helper" where >"$out" 2>&1 ||
		fail "a host file"
	placement >"$tmp/got"
	printf 'node 0 host localhost\nnode 1 host localhost\nnode 2 host remote-a\nnode 3 host remote-a\nnode 4 host remote-a\nnode 5 host remote-b\n' >"$tmp/want"
	cmp -s "$tmp/got" "$tmp/want" || { cat "$tmp/got"; fail "not one node per slot, by slot"; }
	grep -q "BIP_OPTS=\[n6q\]" "$out" || fail "not 6 nodes"
	# One remote shell per host (a proxy starts its host's processes).
	[ "$(sort "$tmp/hosts-log" | tr '\n' ' ')" = "remote-a remote-b " ] ||
		fail "not one remote shell for each of remote-a and remote-b: $(cat "$tmp/hosts-log")"
	ls -a "$tmp" | grep -q '^\.bipload-' && fail "the job's configuration file was left"
	# -sz within the slots; beyond them only with --oversubscribe, then one
	# per host in turn, never past max_slots.
	"$bipload" -q --rsh "$tmp/remote" --hostfile "$tmp/hf" -sz 3 "$helper" where >"$out" 2>&1 ||
		fail "-sz 3 with a host file"
	[ "$(placement | tr '\n' ' ')" = "node 0 host localhost node 1 host localhost node 2 host remote-a " ] ||
		fail "-sz 3: wrong placement"
	expect_error -q --rsh "$tmp/remote" --hostfile "$tmp/hf" -sz 7 "$helper" where -- \
		"7 nodes, but the hosts have 6 slots: give fewer, more slots, or --oversubscribe"
	"$bipload" -q --rsh "$tmp/remote" --hostfile "$tmp/hf" -sz 9 --oversubscribe "$helper" where \
		>"$out" 2>&1 || fail "--oversubscribe"
	[ "$(placement | sed -n '7,9p' | tr '\n' ' ')" = "node 6 host localhost node 7 host remote-a node 8 host remote-b " ] ||
		fail "--oversubscribe: not one per host in turn"
	printf 'remote-a max_slots=1\nremote-b slots=1 max_slots=2\n' >"$tmp/hmax"
	expect_error -q --rsh "$tmp/remote" --hostfile "$tmp/hmax" -sz 4 --oversubscribe "$helper" \
		where -- "4 nodes: more than the hosts' max_slots"
	# --host: a word per host, :N slots, a host named again adds slots;
	# --ppn N per host whatever the slots.
	"$bipload" -q --rsh "$tmp/remote" --host remote-x:2,localhost --host remote-x "$helper" where \
		>"$out" 2>&1 || fail "--host"
	[ "$(placement | tr '\n' ' ')" = "node 0 host remote-x node 1 host remote-x node 2 host remote-x node 3 host localhost " ] ||
		fail "--host: wrong placement"
	"$bipload" -q --rsh "$tmp/remote" --host remote-x:3,localhost:3 --ppn 1 "$helper" where \
		>"$out" 2>&1 || fail "--ppn 1"
	[ "$(placement | tr '\n' ' ')" = "node 0 host remote-x node 1 host localhost " ] ||
		fail "--ppn 1: wrong placement"
	# Every host this one: no file, the configuration of -sz alone.
	"$bipload" -q --host localhost:2,"$(uname -n)" "$helper" where >"$out" 2>&1 ||
		fail "--host of this host only"
	[ "$(grep -c "BIP_OPTS=\[n3q\] BIPCONF=\[-\]" "$out")" -eq 3 ] ||
		fail "this host only: not 3 nodes without a file"
	# Errors: each names what is wrong.
	printf 'a slots=x\n' >"$tmp/bad1"
	expect_error --hostfile "$tmp/bad1" "$helper" env -- "$tmp/bad1:1: slots=x: expected a number"
	printf '# c\nhost cores=4\n' >"$tmp/bad2"
	expect_error --hostfile "$tmp/bad2" "$helper" env -- \
		"$tmp/bad2:2: cores=4: expected slots=N or max_slots=N"
	printf 'a slots=3 max_slots=2\n' >"$tmp/bad3"
	expect_error --hostfile "$tmp/bad3" "$helper" env -- "slots=3 is more than max_slots=2"
	printf 'a:2 slots=1\n' >"$tmp/bad4"
	expect_error --hostfile "$tmp/bad4" "$helper" env -- "nothing may follow HOST:N"
	printf '# nothing\n\n' >"$tmp/bad5"
	expect_error --hostfile "$tmp/bad5" "$helper" env -- "no host in it"
	expect_error --hostfile "$tmp/none" "$helper" env -- "--hostfile $tmp/none: No such file"
	expect_error --host 'a;b' "$helper" env -- "a;b: not a host name"
	expect_error --host a,,b "$helper" env -- "an empty host name"
	expect_error --host a:0 "$helper" env -- "a:0: expected HOST or HOST:N"
	expect_error --host -a "$helper" env -- "-a: not a host name"
	expect_error -f "$tmp/hf" --host a "$helper" env -- "give the nodes one way"
	expect_error -sz 2 --ppn 2 "$helper" env -- "--ppn: only with --host or --hostfile"
	expect_error -sz 2 --oversubscribe "$helper" env -- \
		"--oversubscribe: only with --host or --hostfile"
	expect_error --hostfile "$tmp/hf" --hostfile "$tmp/hf" "$helper" env -- "--hostfile given twice"
	;;
mpmd)
	"$bipload" -q -sz 1 -env BIPTEST_ENV=first "$helper" where a : -sz 2 "$helper" where b c \
		>"$out" 2>&1 || fail "bipload a : b"
	grep -q "^node 0 .*BIP_OPTS=\[n3q\].* BIP_APPNUM=\[0\] BIPTEST_ENV=\[first\] arg=\[a\]$" "$out" ||
		fail "node 0: not the first command"
	for n in 1 2; do
		grep -q "^node $n .* BIP_APPNUM=\[1\] BIPTEST_ENV=\[-\] arg=\[b\] arg=\[c\]$" "$out" ||
			fail "node $n: not the second command"
	done
	# The same across a remote shell.
	"$bipload" -q --rsh "$tmp/remote" --host localhost,remote-m -sz 1 "$helper" where a : -sz 1 \
		-env BIPTEST_ENV=second "$helper" where b >"$out" 2>&1 || fail "MPMD across hosts"
	grep -q "^node 1 .* BIP_HOST=\[remote-m\].* BIP_APPNUM=\[1\] BIPTEST_ENV=\[second\] arg=\[b\]$" \
		"$out" || fail "the remote node's command"
	# MPI: one world, MPI_APPNUM per command.
	"$bipload" -q -sz 2 "$mpmd" x : -sz 1 "$mpmd" y : -sz 1 "$mpmd" z >"$out" 2>&1 ||
		fail "an MPMD MPI job"
	for l in "rank 0 of 4 appnum 0 arg x sum right" "rank 1 of 4 appnum 0 arg x sum right" \
		"rank 2 of 4 appnum 1 arg y sum right" "rank 3 of 4 appnum 2 arg z sum right"; do
		grep -qx "$l" "$out" || fail "no line '$l'"
	done
	"$bipload" -q -sz 2 "$mpmd" >"$out" 2>&1 || fail "one command"
	[ "$(grep -c "of 2 appnum 0 arg - sum right" "$out")" -eq 2 ] || fail "one command: appnum"
	# Errors.
	expect_error -sz 1 "$helper" env : "$helper" env -- \
		"command 2 ($helper): give -sz N for each command of an MPMD job"
	expect_error -sz 1 "$helper" env : -- "no program to run after ':'"
	expect_error -sz 1 "$helper" env : -sz 1 -- "no program to run after ':'"
	expect_error : "$helper" -- "no program before ':'"
	expect_error -sz 1 -env 'A B=1' "$helper" env -- "-env A B=1: expected VAR=value"
	expect_error -sz 1 -env A "$helper" env -- "-env A: expected VAR=value"
	;;
outfiles)
	"$bipload" -q -sz 3 --tag-output --output-filename "$tmp/o/p" "$helper" lines >"$out" 2>&1 ||
		fail "--output-filename"
	[ "$(grep -c . "$out")" -eq 600 ] || fail "not every line copied to the terminal"
	for n in 0 1 2; do
		f="$tmp/o/p/node.$n.out"
		[ -f "$f" ] && [ -f "$tmp/o/p/node.$n.err" ] || fail "node $n's files are missing"
		[ "$(grep -c . "$f")" -eq 200 ] || fail "node $n: not 200 lines in its file"
		bad=$(grep -cvE "^node $n line [0-9]+ 0+[0-9]* end$" "$f")
		[ "$bad" -eq 0 ] || fail "node $n: $bad lines not its own, cut or tagged"
	done
	"$bipload" -q -sz 2 --output-filename "$tmp/o:nocopy" "$helper" exit 7 >"$out" 2>&1
	[ $? -eq 7 ] || fail "--output-filename: the exit status is lost"
	grep -q "^node" "$out" && fail ":nocopy copied output to the terminal"
	grep -q "node 1 (host .*) exited with status 7" "$out" || fail "bipload's own messages lost"
	"$bipload" -q -sz 2 --output-filename "$tmp/o:NOCOPY" "$helper" where >"$out" 2>&1 ||
		fail ":NOCOPY"
	grep -q "^node 1 " "$tmp/o/node.1.out" || fail "the files of a second job"
	[ ! -s "$out" ] || fail ":NOCOPY wrote to the terminal"
	: >"$tmp/file"
	expect_error -sz 1 --output-filename "$tmp/file" "$helper" env -- "not a directory"
	expect_error -sz 1 --output-filename ":nocopy" "$helper" env -- "expected a directory"
	;;
bind)
	# The CPUs the job may use, as a list of numbers.
	"$bipload" -q -sz 1 "$helper" cpus >"$out" 2>&1 || fail "helper cpus"
	all=$(sed -n 's/^node 0 cpus //p' "$out")
	cpus=$(echo "$all" | tr ',' '\n' | awk -F- '{ e = $2 == "" ? $1 : $2; for (c = $1; c <= e; c++) print c }')
	m=$(echo "$cpus" | grep -c .)
	[ "$m" -ge 1 ] || fail "cannot read the CPUs ($all)"
	"$bipload" -q -sz 3 --bind-to core "$helper" cpus >"$out" 2>&1 || fail "--bind-to core"
	for k in 0 1 2; do
		want=$(echo "$cpus" | sed -n "$((k % m + 1))p")
		grep -qx "node $k cpus $want" "$out" || fail "node $k: not bound to CPU $want"
	done
	"$bipload" -q -sz 2 --bind-to none "$helper" cpus >"$out" 2>&1 || fail "--bind-to none"
	[ "$(grep -c "cpus $all$" "$out")" -eq 2 ] || fail "--bind-to none changed the CPUs"
	BIP_BIND=core "$bipload" -q -sz 2 "$helper" cpus >"$out" 2>&1 || fail "BIP_BIND=core"
	grep -qx "node 1 cpus $(echo "$cpus" | sed -n "$((1 % m + 1))p")" "$out" ||
		fail "BIP_BIND=core was not followed"
	# A BIP program binds itself too (across a remote shell, where bipload
	# cannot), and reports where it runs.
	"$bipload" -q --rsh "$tmp/remote" --host localhost,remote-c:2 --bind-to core \
		--report-bindings "$build/scripts/bipinfo" --job >"$out" 2>&1 || fail "--report-bindings"
	for k in 0 1 2; do
		grep -q "^bip: node $k of 3: host [a-z0-9.-]*, pid [0-9]*, driver .*, cpus [0-9]*$" \
			"$out" || fail "node $k: no report line"
		grep -q "^node $k of 3: host .* driver .*, cpus [0-9]*$" "$out" ||
			fail "node $k: no bipinfo --job line"
	done
	want=$(echo "$cpus" | sed -n "$((1 % m + 1))p")
	grep -q "^node 2 of 3: host remote-c, .*, cpus $want$" "$out" ||
		fail "the remote node 2 (its host's second) is not on CPU $want"
	"$bipload" -q -sz 2 "$build/scripts/bipinfo" --job >"$out" 2>&1 || fail "bipinfo --job"
	grep -q "^bip: node" "$out" && fail "a report without --report-bindings"
	[ "$(grep -c "cpus $all$" "$out")" -eq 2 ] || fail "bound without --bind-to"
	# Errors.
	expect_error -sz 1 --bind-to socket "$helper" env -- "--bind-to socket: expected core or none"
	BIP_BIND=bad "$bipload" -q -sz 1 "$helper" env >"$out" 2>&1 && fail "BIP_BIND=bad accepted"
	grep -q "BIP_BIND=bad: expected core or none" "$out" || fail "BIP_BIND=bad not named"
	BIP_BIND=bad BIP_NODE=0 BIP_OPTS=n1 "$build/scripts/bipinfo" --job >"$out" 2>&1 &&
		fail "the library took BIP_BIND=bad"
	grep -q "BIP_BIND=bad: expected core or none" "$out" || fail "the library's message"
	"$build/scripts/bipinfo" --job >"$out" 2>&1 && fail "bipinfo --job outside a job"
	grep -q "not started by a launcher" "$out" || fail "bipinfo --job: no reason"
	;;
mpiexec)
	# mpiexec.bip beside a bipload that logs its arguments, one per line.
	mkdir "$tmp/bin"
	cp "$build/scripts/mpiexec.bip" "$tmp/bin/mpiexec.bip"
	printf '#!/bin/sh\nfor a in "$@"; do printf "[%%s]" "$a"; done\necho\npwd\n' >"$tmp/bin/bipload"
	chmod +x "$tmp/bin/bipload"
	mx="$tmp/bin/mpiexec.bip"
	check_tr() {
		want=$1
		shift
		"$mx" "$@" >"$out" 2>&1 || fail "mpiexec.bip $*: status $?"
		[ "$(head -n 1 "$out")" = "$want" ] || fail "mpiexec.bip $*: gave $(head -n 1 "$out"), expected $want"
	}
	check_tr "[-q][-np][4][prog][a]" -n 4 prog a
	check_tr "[-q][-np][4][prog]" -np 4 prog
	check_tr "[-q][-np][4][prog]" -c 4 prog
	check_tr "[-q][--host][a,b:2][-np][2][prog]" --host a,b:2 -np 2 prog
	check_tr "[-q][--host][a][--host][b][prog]" -host a -H b prog
	check_tr "[-q][--host][a:2][prog]" -hosts a:2 prog
	for o in --hostfile -hostfile --machinefile -machinefile -f; do
		check_tr "[-q][--hostfile][hf][prog]" $o hf prog
	done
	for o in -ppn --ppn -npernode --npernode -N; do
		check_tr "[-q][--ppn][2][prog]" $o 2 prog
	done
	check_tr "[-q][--ppn][3][prog]" --map-by ppr:3:node prog
	check_tr "[-q][prog]" --map-by slot prog
	check_tr "[-q][-x][A][-x][B=1 2][prog]" -x A -x "B=1 2" prog
	check_tr "[-q][-x][A=x y][prog]" -genv A "x y" prog
	check_tr "[-q][-x][A][-x][B][prog]" -genvlist A,B prog
	check_tr "[-q][-np][1][-env][A=1][a][:][-np][2][-env][A=2][b][c]" -n 1 -env A 1 a : -n 2 -env A 2 b c
	check_tr "[-q][--oversubscribe][prog]" --oversubscribe prog
	for o in --tag-output -tag-output -l -prepend-rank; do
		check_tr "[-q][--tag-output][prog]" $o prog
	done
	check_tr "[-q][--timeout][30][prog]" --timeout 30 prog
	env MPIEXEC_TIMEOUT=20 "$mx" prog >"$out" 2>&1 || fail "MPIEXEC_TIMEOUT"
	[ "$(head -n 1 "$out")" = "[-q][--timeout][20][prog]" ] || fail "MPIEXEC_TIMEOUT not used"
	env MPIEXEC_TIMEOUT=20 "$mx" -timeout 5 prog >"$out" 2>&1 || fail "-timeout"
	[ "$(head -n 1 "$out")" = "[-q][--timeout][5][prog]" ] || fail "-timeout does not win"
	check_tr "[-q][--output-filename][d:nocopy][prog]" --output-filename d:nocopy prog
	check_tr "[-q][--bind-to][core][--report-bindings][prog]" -bind-to core --report-bindings prog
	check_tr "[-q][--bind-to][none][prog]" --bind-to none prog
	check_tr "[-q][prog]" --allow-run-as-root prog
	check_tr "[-q][--][-prog][-n][1]" -- -prog -n 1
	check_tr "[-q][prog][-x][:][-np][1][b]" prog -x : -n 1 b
	mkdir "$tmp/wd"
	"$mx" -wdir "$tmp/wd" prog >"$out" 2>&1 || fail "-wdir"
	[ "$(sed -n 2p "$out")" = "$tmp/wd" ] || fail "-wdir: bipload did not run there"
	"$mx" --version >"$out" 2>&1 || fail "--version"
	grep -q "^mpiexec.bip (BIP) [0-9]" "$out" || fail "--version: no version line"
	# Errors: status 2, the option named, bipload never run.
	bad() {
		msg=$1
		shift
		"$mx" "$@" >"$out" 2>&1
		rc=$?
		[ "$rc" -eq 2 ] || fail "mpiexec.bip $*: status $rc, expected 2"
		grep -qF -- "$msg" "$out" || fail "mpiexec.bip $*: no message '$msg'"
		grep -q "^\[" "$out" && fail "mpiexec.bip $*: bipload was run"
		grep -q "usage: mpiexec.bip" "$out" || fail "mpiexec.bip $*: no usage"
	}
	bad "option --mca is not supported" --mca btl self prog
	bad "option -genvall is not supported" -genvall prog
	bad "option --display-map is not supported" --display-map -n 2 prog
	bad "--map-by node: only ppr:N:node, slot and core are supported" --map-by node prog
	bad "--bind-to socket: only core and none are supported" --bind-to socket prog
	bad "-n 0: expected a positive number" -n 0 prog
	bad "-n x: expected a positive number" -n x prog
	bad "-ppn -1: expected a positive number" -ppn -1 prog
	bad "-n needs a value" -n
	bad "-genv needs a variable and a value" -genv A
	bad "-x 1A: expected a variable name" -x 1A prog
	bad "-genvlist B-C: expected a variable name" -genvlist A,B-C prog
	bad "no program to run" -n 2
	bad "no program to run after ':'" -n 1 a :
	bad "no program before ':'" : a
	bad "no program after --" -n 1 --
	cp "$build/scripts/mpiexec.bip" "$tmp/mpiexec.bip"
	"$tmp/mpiexec.bip" -n 1 prog >"$out" 2>&1
	[ $? -eq 2 ] && grep -q "bipload is not installed beside" "$out" || fail "no bipload beside it"
	;;
mpirun)
	for mx in "$build/scripts/mpiexec.bip" "$build/scripts/mpirun.bip"; do
		"$mx" -n 3 "$helper" exit 7 >"$out" 2>&1
		rc=$?
		[ "$rc" -eq 7 ] || fail "$mx: exit status $rc, expected 7"
		"$mx" -n 1 "$mpmd" a : -n 2 -genv BIPTEST_ENV x "$mpmd" b >"$out" 2>&1 ||
			fail "$mx: MPMD"
		grep -qx "rank 2 of 3 appnum 1 arg b sum right" "$out" || fail "$mx: MPMD ranks"
		grep -q "^bipload:" "$out" && fail "$mx: bipload's information line"
	done
	mx="$build/scripts/mpiexec.bip"
	printf 'localhost slots=2\nremote-r slots=2\n' >"$tmp/hf"
	BIP_RSH="$tmp/remote" "$mx" -machinefile "$tmp/hf" -l "$mpmd" >"$out" 2>&1 ||
		fail "mpiexec.bip with a host file"
	[ "$(grep -c "^\[[0-3]\] rank [0-3] of 4 appnum 0 arg - sum right$" "$out")" -eq 4 ] ||
		fail "host file: not 4 tagged ranks"
	[ "$(grep -c "rank [0-3] of 4" "$out")" -eq 4 ] && [ "$(grep -c remote-r "$tmp/hosts-log")" -eq 1 ] ||
		fail "host file: not one remote shell for remote-r's 2 ranks"
	"$mx" -n 2 --timeout 1 "$helper" sleep >"$out" 2>&1
	[ $? -eq 124 ] || fail "--timeout: status $?, expected 124"
	MPIEXEC_TIMEOUT=1 "$mx" -n 2 "$helper" sleep >"$out" 2>&1
	[ $? -eq 124 ] || fail "MPIEXEC_TIMEOUT: status $?, expected 124"
	;;
proxy)
	# A proxy that speaks the protocol well: its nodes' output and ends.
	BIPLOAD_PROXY=$fake BIPTEST_PROXY_MODE=good timeout 60 "$bipload" -q --rsh "$tmp/remote" \
		--host localhost,remote-p:2 "$helper" where >"$out" 2>&1 || fail "a good fake proxy"
	grep -q "^hello from 1$" "$out" && grep -q "^hello from 2$" "$out" &&
		grep -q "^node 0 .*BIP_HOST=\[localhost\]" "$out" || fail "the fake proxy's nodes"
	BIPLOAD_PROXY=$fake BIPTEST_PROXY_MODE=exit3 timeout 60 "$bipload" -q --rsh "$tmp/remote" \
		--host localhost,remote-p:2 "$helper" sleep >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 3 ] || fail "a remote exit status 3 gave $rc"
	grep -q "^bipload: node 1 (host remote-p, pid 4001 there) exited with status 3$" "$out" ||
		fail "the remote exit status not reported"
	# Broken frames: named, the proxy cut off, the job stopped.  The
	# process-channel record and the new process's start (pmrec, grew)
	# come in a job that cannot grow: over several hosts, BIP_NIC names
	# a driver other than ofi.
	for mode in nohello othernode twice long pmrec grew garbage; do
		BIPLOAD_PROXY=$fake BIPTEST_PROXY_MODE=$mode BIP_NIC=udp timeout 60 "$bipload" -q \
			--rsh "$tmp/remote" --host localhost,remote-p:2 "$helper" sleep >"$out" 2>&1
		rc=$?
		[ "$rc" -eq 255 ] || fail "a proxy sending $mode: exit status $rc, expected 255"
		grep -q "^bipload: host remote-p: the proxy sent a broken frame (type [0-9]*, node [0-9]*, [0-9]* bytes: .*): its processes are lost$" "$out" ||
			fail "a proxy sending $mode: no broken frame named"
		grep -q "^bipload: host remote-p (nodes\? [0-9 ]*\(, pids\? [0-9 ]* there\)\?): the proxy (pid [0-9]* there) was cut off (a broken frame) before the process\(es\)\? did: stopped$" "$out" ||
			grep -q "^bipload: node [12] (host remote-p" "$out" ||
			fail "a proxy sending $mode: its nodes not reported"
		grep -q "^bipload: stopped nodes 0" "$out" || fail "a proxy sending $mode: node 0 not stopped"
		pgrep -f "^python3 $fake" >/dev/null && fail "a proxy sending $mode was left running"
	done
	case "$(grep "broken frame" "$out")" in
	*garbage* | *"unknown type"* | *"too long"* | *"out of place"* | *"no open stream"*) ;;
	*) fail "random bytes not refused as they should: $(grep "broken frame" "$out")" ;;
	esac
	# A login that talks before the proxy: its words are the remote
	# shell's own output, the job runs.
	printf '#!/bin/sh\necho "Welcome to $1"\nprintf "no newline here"\nshift\nexec "$@"\n' >"$tmp/chatty"
	chmod +x "$tmp/chatty"
	"$bipload" -q --rsh "$tmp/chatty" --host localhost,remote-c "$helper" where >"$out" 2>&1 ||
		fail "a remote shell that talks"
	grep -q "^Welcome to remote-c$" "$out" && grep -q "^no newline here$" "$out" ||
		fail "the remote login's words not forwarded"
	grep -q "^node 1 .*BIP_HOST=\[remote-c\]" "$out" || fail "the job behind a talking login"
	# The working directory is not there on the remote host.
	mkdir "$tmp/gone"
	printf '#!/bin/sh\nrm -rf "%s/gone"\nshift\nexec "$@"\n' "$tmp" >"$tmp/nodir"
	chmod +x "$tmp/nodir"
	(cd "$tmp/gone" && "$bipload" -q --rsh "$tmp/nodir" --host localhost,remote-d "$helper" sleep) \
		>"$out" 2>&1
	rc=$?
	[ "$rc" -eq 126 ] || fail "no working directory on the remote host: exit status $rc, expected 126"
	grep -q "^bipload: host remote-d: cannot go to $tmp/gone: No such file or directory$" "$out" ||
		fail "the missing directory not named"
	grep -q "^bipload: host remote-d (node 1): the proxy (pid [0-9]* there) ended (exit status 126) before it started it$" "$out" ||
		fail "the proxy's end not reported"
	;;
*)
	echo "unknown check $check"
	exit 1
	;;
esac
exit 0
