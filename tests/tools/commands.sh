#!/bin/sh
# SPDX-License-Identifier: MIT
# Tests of bipconf, biproute, bipcc and bipload through their command lines.
# Usage: commands.sh CHECK BUILDDIR SOURCEDIR
set -u
check=$1
build=$2
src=$3
bipload="$build/scripts/bipload"
bipconf="$build/scripts/bipconf"
biproute="$build/scripts/biproute"
bipcc="sh $build/scripts/bipcc-uninstalled"
helper="$build/tests/tools/helper"

HOME=$(mktemp -d)
export HOME
unset BIPCONF BIP_OPTS BIP_NODE BIP_JOBID BIP_HOST BIP_RSH
out="$HOME/out"
trap 'rm -rf "$HOME"' EXIT
fail() {
	[ -f "$out" ] && cat "$out"
	echo "FAIL: $*"
	exit 1
}
host=$(uname -n)

case "$check" in
bipconf)
	"$bipconf" a b a || fail "bipconf"
	# Every route direct: said once, and no route lines (bipconf(5)).
	printf '3\nroutes direct\na 0\nb 0\na 0\n' >"$HOME/want"
	cmp "$HOME/.bip/bipconf" "$HOME/want" || fail "unexpected ~/.bip/bipconf"
	# The manual's form of the same file still runs a job.
	printf '2\n%s 0\n256\n256\n%s 0\n256\n256\n' "$host" "$host" >"$HOME/manual"
	"$bipload" -q -f "$HOME/manual" "$helper" env >"$out" 2>&1 || fail "the manual's format"
	grep -q "^node 1 opts n2q conf $HOME/manual$" "$out" || fail "the manual's format: no node 1"
	"$bipconf" -f "$HOME/two" x y || fail "bipconf -f"
	[ "$(head -1 "$HOME/two")" = 2 ] || fail "bipconf -f wrote no file"
	# Links planted where a careless writer would write first (FILE.new)
	# or at FILE itself are not followed: FILE becomes a file of its own.
	echo "keep me" >"$HOME/target"
	ln -s "$HOME/target" "$HOME/three.new"
	ln -s "$HOME/target" "$HOME/three"
	"$bipconf" -f "$HOME/three" x y z || fail "bipconf -f over a link"
	[ "$(cat "$HOME/target")" = "keep me" ] || fail "bipconf wrote through a link"
	[ ! -L "$HOME/three" ] && [ "$(head -1 "$HOME/three")" = 3 ] || fail "FILE not replaced"
	[ "$(stat -c %a "$HOME/three")" = 600 ] || fail "the configuration is not mode 0600"
	"$bipconf" 2>"$out" && fail "bipconf with no host succeeded"
	grep -q usage "$out" || fail "no usage message"
	;;
biproute)
	# Without a topology: hosts of an IP network, every route 256.
	# The database holds the hosts, and no route line: a pair it does not
	# give is direct.
	"$biproute" localhost 127.0.0.2 "$host" localhost || fail "biproute"
	grep -q '^route ' "$HOME/.bip/bipdatabase" && fail "route lines for an IP network"
	grep -q '^# no topology: .* every route is 256$' "$HOME/.bip/bipdatabase" || fail "no comment"
	[ "$(grep -c '^host localhost$' "$HOME/.bip/bipdatabase")" -eq 1 ] || fail "host twice"
	[ "$(grep -c '^host ' "$HOME/.bip/bipdatabase")" -eq 3 ] || fail "not 3 hosts"
	"$bipconf" 127.0.0.2 localhost || fail "bipconf with a database"
	printf '2\nroutes direct\n127.0.0.2 0\nlocalhost 0\n' >"$HOME/want"
	cmp "$HOME/want" "$HOME/.bip/bipconf" || fail "bipconf with a database: unexpected file"
	# A database of every pair's 256, as biproute wrote it before, reads the same.
	printf 'host a\nhost b\nroute a b 256\nroute b a 256\n' >"$HOME/.bip/bipdatabase"
	"$bipconf" b a || fail "bipconf with routes of 256"
	printf '2\nroutes direct\nb 0\na 0\n' >"$HOME/want"
	cmp "$HOME/want" "$HOME/.bip/bipconf" || fail "bipconf with routes of 256: unexpected file"
	"$biproute" localhost 127.0.0.2 "$host" || fail "biproute again"
	"$bipconf" localhost zz 2>"$out" && fail "a host missing from the database was accepted"
	grep -q "host zz is not in .*bipdatabase: run biproute" "$out" || fail "missing host not named"
	"$biproute" localhost no-such-host.invalid 127.0.0.2 2>"$out" &&
		fail "a host that does not resolve was accepted"
	grep -q "host no-such-host.invalid does not resolve" "$out" || fail "unresolved host not named"
	grep -q "127.0.0.2 does not" "$out" && fail "a resolving host was blamed"
	grep -q '^host 127.0.0.2$' "$HOME/.bip/bipdatabase" || fail "a failed biproute replaced the database"
	"$biproute" -t 2>"$out" && fail "-t without a file accepted"
	grep -q usage "$out" || fail "no usage message"
	echo "bogus line" >>"$HOME/.bip/bipdatabase"
	"$bipconf" localhost 127.0.0.2 2>"$out" && fail "a malformed database was accepted"
	grep -q "bipdatabase:[0-9]*: unknown keyword \"bogus\"" "$out" || fail "no file:line"
	;;
topology)
	# Two switches, four hosts: the route from each to each, through bipconf.
	[ "$host" = localhost ] && host=this-host
	cat >"$HOME/net" <<-EOF
	# two switches cabled by their ports 7 and 0
	switch sw0 8
	switch sw1 16
	link sw0 7 sw1 0
	link localhost sw0 1
	link 127.0.0.2 sw0 2
	link 127.0.0.3 sw1 3
	link $host sw1 4
	EOF
	"$biproute" -t "$HOME/net" localhost 127.0.0.2 127.0.0.3 "$host" 2>"$out" || fail "biproute -t"
	grep -q "^# topology: .*/net$" "$HOME/.bip/bipdatabase" || fail "topology not recorded"
	grep -q "^route 127.0.0.3 localhost 0 1$" "$HOME/.bip/bipdatabase" || fail "no route of 2 hops"
	"$bipconf" 127.0.0.3 localhost "$host" 127.0.0.2 localhost || fail "bipconf"
	printf '%s\n' 5 \
		"127.0.0.3 0" 256 "0 1" 4 "0 2" "0 1" \
		"localhost 0" "7 3" 256 "7 4" 2 256 \
		"$host 0" 3 "0 1" 256 "0 2" "0 1" \
		"127.0.0.2 0" "7 3" 1 "7 4" 256 1 \
		"localhost 0" "7 3" 256 "7 4" 2 256 >"$HOME/want"
	diff "$HOME/want" "$HOME/.bip/bipconf" >"$out" || fail "unexpected routes in ~/.bip/bipconf"
	"$build/scripts/bipinfo" --parsable >"$out" || fail "bipinfo with routes"
	grep -q '^conf.routes=through switches on 1 rail, 5 x 5 routes stored$' "$out" ||
		fail "bipinfo: the routes through switches"
	"$bipconf" localhost 127.0.0.2 2>"$out" || fail "bipconf of two hosts"
	[ -s "$out" ] && fail "bipconf warned with a fresh database"
	touch -d "1 hour" "$HOME/net"
	"$bipconf" localhost 127.0.0.2 2>"$out" || fail "a changed topology is only a warning"
	grep -q "warning: the topology .*/net changed after .*bipdatabase was written: run biproute" \
		"$out" || fail "no warning for a topology newer than the database"
	# The same network as the default topology file.
	mv "$HOME/net" "$HOME/.bip/biptopology"
	rm "$HOME/.bip/bipdatabase"
	"$biproute" 127.0.0.2 "$host" || fail "biproute with the default topology"
	grep -q "^route 127.0.0.2 $host 7 4$" "$HOME/.bip/bipdatabase" || fail "default topology unused"
	BIP_TOPOLOGY="$HOME/.bip/biptopology" "$biproute" localhost 127.0.0.3 "$host" ||
		fail "biproute with \$BIP_TOPOLOGY"
	grep -q "^route localhost 127.0.0.3 7 3$" "$HOME/.bip/bipdatabase" || fail "\$BIP_TOPOLOGY unused"
	# A route the database lacks is not made up.
	grep -v '^route localhost 127.0.0.3 ' "$HOME/.bip/bipdatabase" >"$HOME/db" &&
		mv "$HOME/db" "$HOME/.bip/bipdatabase"
	"$bipconf" 127.0.0.3 "$host" 2>"$out" || fail "other routes were lost"
	"$bipconf" localhost 127.0.0.3 2>"$out" && fail "a missing route was accepted"
	grep -q "no route from localhost to 127.0.0.3: run biproute" "$out" || fail "missing route not named"
	;;
rails)
	# Two parallel networks: each host's board 0 on switch a, board 1 on
	# switch b.  biproute finds a route per rail, bipconf writes both.
	cat >"$HOME/net" <<-EOF
	switch a 8
	switch b 8
	link 127.0.0.1 a 0
	link 127.0.0.2 a 1
	link 127.0.0.3 a 2
	link 127.0.0.1/1 b 5
	link 127.0.0.2/1 b 6
	link 127.0.0.3/1 b 7
	EOF
	"$biproute" -t "$HOME/net" 127.0.0.1 127.0.0.2 127.0.0.3 2>"$out" || fail "biproute -t"
	grep -q "^route 127.0.0.1 127.0.0.3 2 / 7$" "$HOME/.bip/bipdatabase" ||
		fail "no route per rail in the database"
	"$bipconf" 127.0.0.2 127.0.0.3 2>"$out" || fail "bipconf"
	printf '%s\n' 2 "127.0.0.2 0" "256 / 256" "2 / 7" "127.0.0.3 0" "1 / 6" "256 / 256" \
		>"$HOME/want"
	diff "$HOME/want" "$HOME/.bip/bipconf" >"$out" || fail "unexpected routes in ~/.bip/bipconf"
	# A host without a board on rail 1.
	sed '/127.0.0.3\/1/d' "$HOME/net" >"$HOME/net2"
	"$biproute" -t "$HOME/net2" 127.0.0.1 127.0.0.3 2>"$out" && fail "a host without rail 1 accepted"
	grep -q "has 2 rails, and host 127.0.0.1 or 127.0.0.3 has no board 1" "$out" ||
		fail "the missing board was not named"
	# A board out of range.
	printf 'switch a 8\nlink h/9 a 0\n' >"$HOME/net3"
	"$biproute" -t "$HOME/net3" h 2>"$out" && fail "board 9 accepted"
	grep -q "net3:2: \"h/9\": expected HOST or HOST/UNIT, a board 0 to 3" "$out" ||
		fail "no clear error for board 9"
	;;
routeerrors)
	cat >"$HOME/net" <<-EOF
	switch s0 8
	switch s1 8
	switch s2 8
	switch s3 8
	switch s4 8
	link s0 1 s1 0
	link s1 1 s2 0
	link s2 1 s3 0
	link s3 1 s4 0
	link first s0 2
	link fourth s3 2
	link fifth s4 2
	EOF
	"$biproute" -t "$HOME/net" first fourth || fail "four switches apart"
	grep -q "^route first fourth 1 1 1 2$" "$HOME/.bip/bipdatabase" || fail "route of 4 hops"
	cp "$HOME/.bip/bipdatabase" "$HOME/before"
	"$biproute" -t "$HOME/net" first nowhere fifth other 2>"$out" && fail "unknown hosts accepted"
	grep -q "host nowhere is not in the topology $HOME/net$" "$out" || fail "unknown host not named"
	grep -q "host other is not in the topology" "$out" || fail "second unknown host not named"
	grep -q "hosts of the topology are: first fourth fifth$" "$out" || fail "hosts not listed"
	"$biproute" -t "$HOME/net" first fifth 2>"$out" && fail "five switches apart accepted"
	grep -q "no route from first to fifth crossing at most 4 switches" "$out" ||
		fail "unroutable pair not named"
	grep -q "no route from fifth to first" "$out" || fail "unroutable pair not named both ways"
	cmp "$HOME/before" "$HOME/.bip/bipdatabase" || fail "a failed biproute replaced the database"
	printf 'switch s0 8\n\n# comment\nlink a s0 8\n' >"$HOME/bad"
	"$biproute" -t "$HOME/bad" a 2>"$out" && fail "malformed topology accepted"
	grep -q "$HOME/bad:4: port \"8\" of switch s0: the ports are 0 to 7" "$out" || fail "no file:line"
	BIP_TOPOLOGY="$HOME/missing" "$biproute" first 2>"$out" && fail "missing \$BIP_TOPOLOGY accepted"
	grep -q "$HOME/missing: No such file" "$out" || fail "missing topology not named"
	"$biproute" -t "$HOME/missing" first 2>"$out" && fail "missing -t file accepted"
	grep -q "$HOME/missing" "$out" || fail "missing topology not named"
	printf 'link a sw 0\n' >"$HOME/.bip/biptopology"
	"$biproute" localhost 2>"$out" && fail "malformed default topology ignored"
	grep -q "biptopology:1: unknown switch \"sw\"" "$out" || fail "default topology not named"
	;;
bipcc)
	$bipcc -show "$src/examples/token.c" -o "$HOME/t" >"$out" || fail "bipcc -show"
	grep -q -- "-I$src/include" "$out" || fail "no include directory"
	grep -q -- "-lbip" "$out" || fail "no -lbip"
	$bipcc -show -c x.c >"$out"
	grep -q -- "-lbip" "$out" && fail "-lbip when only compiling"
	$bipcc -show x.o -lmpi >"$out"
	grep -q -- "-lmpi_shim -lbip" "$out" || fail "-lmpi not translated"
	# Configure scripts run as CC=bipcc: bipcc must not call itself.
	CC="$build/scripts/bipcc-uninstalled" timeout 20 $bipcc -show -c x.c >"$out" 2>&1 || fail "CC=bipcc: status $?"
	grep -q -- "^cc " "$out" || fail "CC=bipcc does not compile with cc: $(cat "$out")"
	# In a sanitizer build the program needs the sanitizer too.
	BIPCC_CC="cc ${BIP_TEST_CFLAGS:-}" $bipcc "$src/examples/token.c" -o "$HOME/token" ||
		fail "bipcc could not build token.c"
	"$bipload" -q -sz 3 --tag-output "$HOME/token" >"$out" 2>&1 || fail "token did not run"
	# The lines of the manual; the order between nodes depends on scheduling.
	printf '[0] token start on 0\n[0] token arrived\n[1] token 333 received on 1\n[2] token 333 received on 2\n' \
		>"$HOME/want"
	sort "$out" >"$HOME/got"
	sort "$HOME/want" | cmp - "$HOME/got" || fail "token printed something else than the manual shows"
	[ "$(grep '^\[0\]' "$out" | head -1)" = "[0] token start on 0" ] || fail "node 0's lines out of order"
	;;
env)
	"$bipload" -q -sz 3 "$helper" env >"$out" 2>&1 || fail "bipload"
	for i in 0 1 2; do
		grep -q "^node $i opts n3q conf -$" "$out" || fail "node $i environment"
	done
	"$bipconf" -f "$HOME/c" "$host" "$host" localhost
	"$bipload" -q -f "$HOME/c" -sz 2 "$helper" env >"$out" 2>&1 || fail "bipload -f"
	grep -q "^node 1 opts n2q conf $HOME/c$" "$out" || fail "BIPCONF not passed"
	grep -q "^node 2" "$out" && fail "-sz 2 ran node 2"
	# -x sets a variable for local processes too; BIP_HOST is the node's host.
	"$bipload" -q -f "$HOME/c" -x "BIPTEST_X1=a b" "$helper" where >"$out" 2>&1 || fail "bipload -x"
	grep -q "^node 2 .* BIP_HOST=\[localhost\] .* BIPTEST_X1=\[a b\]" "$out" || fail "-x or BIP_HOST"
	grep -q "^node 0 .* BIP_HOST=\[$host\] " "$out" || fail "BIP_HOST of node 0"
	;;
secret)
	# Each job gets a random job id and secret; the secret reaches local
	# processes in their environment and remote ones through their host's
	# proxy, which gets it on the remote shell's stdin, never on a command
	# line.  The remote shell here logs its arguments and runs the command
	# on this machine.
	printf '#!/bin/sh\nprintf "%%s\\n" "$*" >>"%s/rsh-args"\nshift\nexec "$@"\n' "$HOME" \
		>"$HOME/remote"
	chmod +x "$HOME/remote"
	"$bipconf" -f "$HOME/c" "$host" remote.invalid
	unset BIP_SECRET
	for run in 1 2; do
		"$bipload" -f "$HOME/c" --rsh "$HOME/remote" "$helper" where >"$out" 2>&1 ||
			fail "a job with a remote node"
		s0=$(sed -n 's/^node 0 .*BIP_SECRET=\[\([0-9a-f]*\)\].*/\1/p' "$out")
		s1=$(sed -n 's/^node 1 .*BIP_SECRET=\[\([0-9a-f]*\)\].*/\1/p' "$out")
		[ "${#s0}" -eq 64 ] || fail "node 0's secret is not 64 hex digits: '$s0'"
		[ "$s0" = "$s1" ] || fail "the remote node got another secret: '$s1'"
		grep -q "$s0" "$HOME/rsh-args" && fail "the secret is on the remote shell's command line"
		job=$(sed -n 's/^bipload: 2 nodes, job \([0-9a-f]*\)$/\1/p' "$out")
		[ "${#job}" -eq 32 ] || fail "the job id is not 128 bits in hex: '$job'"
		eval "secret$run=$s0 job$run=$job"
	done
	[ "$secret1" != "$secret2" ] || fail "two jobs got the same secret"
	[ "$job1" != "$job2" ] || fail "two jobs got the same job id"
	# The user's own secret is kept (several launchers may share a job).
	mine=0123456789abcdef0123456789abcdef
	BIP_SECRET=$mine "$bipload" -q -f "$HOME/c" --rsh "$HOME/remote" "$helper" where >"$out" 2>&1 ||
		fail "a job with the user's secret"
	[ "$(grep -c "BIP_SECRET=\[$mine\]" "$out")" -eq 2 ] || fail "the user's secret was not kept"
	;;
output)
	"$bipload" -q -sz 4 --tag-output "$helper" lines >"$out" 2>&1 || fail "bipload"
	[ "$(wc -l <"$out")" -eq 800 ] || fail "expected 800 lines"
	bad=$(grep -cvE '^\[([0-3])\] node \1 line [0-9]+ 0+[0-9]* end$' "$out")
	[ "$bad" -eq 0 ] || fail "$bad lines mixed or cut"
	echo "hello" | "$bipload" -q -sz 2 "$helper" stdin >"$out" 2>&1
	grep -q "^node 0 read hello$" "$out" || fail "stdin did not reach node 0"
	;;
failure)
	"$bipload" -q -sz 3 "$helper" exit 7 >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 7 ] || fail "exit status $rc, expected 7"
	grep -q "node 1 (host .*, pid [0-9]*) exited with status 7" "$out" || fail "node 1 not named"
	grep -q "stopped nodes 0 2" "$out" || fail "others not stopped"
	"$bipload" -q -sz 3 "$helper" signal 6 >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 134 ] || fail "exit status $rc, expected 134"
	grep -q "node 2 (host .*) killed by signal SIGABRT" "$out" || fail "signal not named"
	"$bipload" -q -sz 2 --timeout 1 "$helper" sleep >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 124 ] || fail "exit status $rc after --timeout, expected 124"
	;;
errors)
	"$bipload" -sz 2 ./no-such-program >"$out" 2>&1 && fail "missing program accepted"
	grep -q "no-such-program" "$out" || fail "missing program not named"
	"$bipload" "$helper" env >"$out" 2>&1 && fail "no configuration and no -sz accepted"
	grep -q "no configuration" "$out" || fail "no message about the configuration"
	printf '2\na 0\n256\n' >"$HOME/bad"
	"$bipload" -f "$HOME/bad" "$helper" env >"$out" 2>&1 && fail "bad configuration accepted"
	grep -q "$HOME/bad:3:" "$out" || fail "no file:line"
	"$bipconf" -f "$HOME/c" "$host"
	"$bipload" -f "$HOME/c" -sz 2 "$helper" env >"$out" 2>&1 && fail "-sz beyond the file"
	grep -q "only 1 nodes" "$out" || fail "no message about -sz"
	# A remote shell that cannot start the process: the host and the command.
	"$bipconf" -f "$HOME/c" "$host" remote.invalid
	"$bipload" --rsh false -f "$HOME/c" "$helper" sleep >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 1 ] || fail "exit status $rc with a failing remote shell, expected 1"
	grep -qxF "bipload: host remote.invalid (node 1): the remote shell could not start the proxy (exit status 1); the command was: false remote.invalid $build/scripts/bipload-proxy" "$out" ||
		fail "failing remote shell not reported"
	grep -q "stopped nodes 0" "$out" || fail "node 0 not stopped"
	BIP_RSH="/no/such/remote-shell -x" "$bipload" -f "$HOME/c" "$helper" sleep >"$out" 2>&1 &&
		fail "a missing remote shell was accepted"
	grep -q "cannot run the remote shell /no/such/remote-shell: No such file" "$out" || fail "missing rsh not named"
	grep -qF "the command was: /no/such/remote-shell -x remote.invalid $build/scripts/bipload-proxy" "$out" ||
		fail "BIP_RSH not used"
	"$bipload" -x 'A B=1' -sz 1 "$helper" env >"$out" 2>&1 && fail "bad -x accepted"
	grep -q -- "-x A B=1: expected VAR or VAR=value" "$out" || fail "bad -x not named"
	(unset BIPTEST_UNSET; "$bipload" -x BIPTEST_UNSET -sz 1 "$helper" env) >"$out" 2>&1 &&
		fail "-x of an unset variable accepted"
	grep -q -- "-x BIPTEST_UNSET: BIPTEST_UNSET is not set here" "$out" || fail "unset -x not named"
	;;
startup)
	# The library's own start-up errors, for programs started by hand.
	token="$build/examples/token"
	expect() {
		what=$1
		shift
		env "$@" "$token" >"$out" 2>&1 && fail "$what: the program ran"
		grep -q "bip: bip_init: .*$what" "$out" || fail "no message \"$what\""
	}
	"$bipconf" -f "$HOME/twice" "$host" "$host"
	expect "holds 2 nodes of the configuration" BIPCONF="$HOME/twice"
	expect "BIP_NODE=5: expected a node number in 0 .. 1" BIPCONF="$HOME/twice" BIP_NODE=5
	expect "BIP_OPTS=x3: unknown option 'x'" BIP_OPTS=x3
	expect "BIP_OPTS asks for 3 nodes but the configuration has 2" BIPCONF="$HOME/twice" BIP_OPTS=n3
	expect "BIP_NIC=bogus: no such driver" BIP_NIC=bogus
	expect "BIP_JOBID=a-b: expected 1 to 32 letters and digits" BIP_JOBID=a-b
	expect "BIP_WAIT=fast: expected spin, yield, block or auto" BIP_WAIT=fast BIP_OPTS=n2 BIP_NODE=0
	expect "BIP_INIT_TIMEOUT=0: expected a positive number" BIP_INIT_TIMEOUT=0 BIP_OPTS=n2 BIP_NODE=0
	"$bipconf" -f "$HOME/other" other.invalid
	expect "this host is not in the configuration" BIPCONF="$HOME/other"
	printf '1\nx\n' >"$HOME/bad"
	expect "$HOME/bad:2: expected \"hostname unit\"" BIPCONF="$HOME/bad"
	# Start-up back ends (bip_slurm(7)): a wrong choice, a PMI back end
	# forced without its launcher, srun without a PMI.
	expect "BIP_BOOTSTRAP=foo: expected bipload, pmix or pmi2" BIP_BOOTSTRAP=foo
	for b in pmix pmi2; do
		if "$build/scripts/bipinfo" --parsable | grep -q "^bootstrap\.$b=available"; then
			expect "BIP_BOOTSTRAP=$b: this process was not started by a $b launcher" \
				BIP_BOOTSTRAP=$b
		else
			expect "BIP_BOOTSTRAP=$b: .*$b" BIP_BOOTSTRAP=$b
		fi
	done
	# A launcher's variables without its server.
	if "$build/scripts/bipinfo" --parsable | grep -q "^bootstrap\.pmix=available"; then
		expect "pmix: PMIx_Init: .*is the PMIx server of the launcher running" PMIX_RANK=0
	fi
	if "$build/scripts/bipinfo" --parsable | grep -q "^bootstrap\.pmi2=available"; then
		expect "pmi2: PMI2_Init failed (error [0-9]*; PMI_FD=99)" PMI_FD=99 PMI_RANK=0
		expect "pmi2: PMI_RANK is set but PMI_FD is not" PMI_RANK=1 PMI_SIZE=2
	fi
	expect "srun started this process as one of 4 tasks without a PMI" SLURM_STEP_ID=0 \
		SLURM_STEP_NUM_TASKS=4
	BIP_BOOTSTRAP=bipload "$bipload" -q -sz 2 "$token" >"$out" 2>&1 ||
		fail "BIP_BOOTSTRAP=bipload under bipload"
	grep -q "token arrived" "$out" || fail "BIP_BOOTSTRAP=bipload: no token"
	# bipload inside a Slurm allocation it cannot read: says why.
	SLURM_JOB_ID=5 SLURM_JOB_NODELIST= "$bipload" -sz 2 "$token" >"$out" 2>&1 &&
		fail "bipload without the allocation's nodes ran"
	grep -q "SLURM_JOB_ID=5 is set but SLURM_JOB_NODELIST is not" "$out" ||
		fail "no message for a missing node list"
	SLURM_JOB_ID=5 SLURM_JOB_NODELIST="n[1-2]" PATH=/nonexistent "$bipload" -sz 2 "$token" \
		>"$out" 2>&1 && fail "bipload without scontrol ran"
	grep -q "is Slurm's scontrol in PATH" "$out" || fail "no message for a missing scontrol"
	# Another job's shared memory under the same name: refused, and left alone.
	clash="/dev/shm/bip-$(id -u)-clash$$-0"
	(umask 077 && : >"$clash")
	expect "$clash already exists: another job of this user" BIP_JOBID=clash$$ BIP_OPTS=n2 BIP_NODE=0
	# Not made as the job makes its segments: named as such.
	chmod 644 "$clash"
	expect "$clash has mode 0644, not 0600" BIP_JOBID=clash$$ BIP_OPTS=n2 BIP_NODE=0
	[ -e "$clash" ] || fail "the other job's shared memory was removed"
	rm -f "$clash"
	;;
bipinfo)
	bipinfo="$build/scripts/bipinfo"
	"$bipinfo" --parsable >"$out" || fail "bipinfo"
	grep -q '^version=0.92$' "$out" || fail "no version"
	grep -q '^driver.shm=available$' "$out" || fail "shm not available"
	grep -q '^default.BIP_INIT_TIMEOUT=10 + 2 per node$' "$out" || fail "no default"
	grep -q '^conf.nodes=1$' "$out" || fail "default configuration"
	grep -q '^conf.routes=all direct (256) on 1 rail, none stored$' "$out" || fail "conf.routes"
	grep -q '^bootstrap.bipload=available$' "$out" || fail "no bipload back end"
	grep -q '^bootstrap=bipload$' "$out" || fail "bipload not chosen by hand"
	BIP_BOOTSTRAP=bogus "$bipinfo" --parsable >"$out" || fail "bipinfo BIP_BOOTSTRAP=bogus"
	grep -q '^bootstrap=none: BIP_BOOTSTRAP=bogus: expected bipload, pmix or pmi2$' "$out" ||
		fail "a wrong BIP_BOOTSTRAP not shown"
	BIP_OPTS=n3 BIP_WAIT=yield "$bipinfo" --parsable >"$out" || fail "bipinfo n3"
	grep -q '^env.BIP_WAIT=yield$' "$out" || fail "current value not shown"
	grep -q '^conf.node.2=.* (this host)$' "$out" || fail "3 local nodes"
	"$bipconf" -f "$HOME/c" "$host" far.invalid
	BIPCONF="$HOME/c" "$bipinfo" --parsable >"$out" || fail "bipinfo with a file"
	grep -q "^conf.file=$HOME/c$" "$out" || fail "file not shown"
	grep -q '^conf.node.1=far.invalid unit 0$' "$out" || fail "remote node"
	# BIP_HOST names this process's host: alone when the kernel does not
	# know it as this machine, with this machine's other names otherwise.
	BIP_HOST=far.invalid BIPCONF="$HOME/c" "$bipinfo" --parsable >"$out" || fail "BIP_HOST"
	grep -q '^conf.node.1=far.invalid unit 0 (this host)$' "$out" || fail "BIP_HOST not this host"
	grep -q "^conf.node.0=$host unit 0$" "$out" || fail "the kernel's name still local"
	"$bipconf" -f "$HOME/c3" "$host" localhost far.invalid
	BIP_HOST=localhost BIPCONF="$HOME/c3" "$bipinfo" --parsable >"$out" || fail "BIP_HOST=localhost"
	grep -q "^conf.node.0=$host unit 0 (this host)$" "$out" || fail "$host not local"
	grep -q '^conf.node.1=localhost unit 0 (this host)$' "$out" || fail "localhost not local"
	grep -q '^conf.node.2=far.invalid unit 0$' "$out" || fail "far.invalid local"
	printf '1\nx\n' >"$HOME/bad"
	BIPCONF="$HOME/bad" "$bipinfo" --parsable >"$out" && fail "bad file accepted"
	grep -q "^conf.error=$HOME/bad:2:" "$out" || fail "no file:line"
	"$bipinfo" >"$out" || fail "bipinfo for people"
	grep -q "BIP_SHM_CMA_MIN" "$out" || fail "variables missing"
	"$bipinfo" --bogus 2>"$out" && fail "unknown option accepted"
	grep -q usage "$out" || fail "no usage"
	;;
mpit)
	# bipinfo --mpit: the MPI shim's tools interface, asked as a tool would.
	bipinfo="$build/scripts/bipinfo"
	env -u BIP_WAIT "$bipinfo" --mpit --parsable >"$out" || fail "bipinfo --mpit"
	grep -q '^cvar\.BIP_WAIT=type MPI_CHAR; scope local; verbosity user_basic; category bip_wait; value ; waiting: ' "$out" ||
		fail "BIP_WAIT"
	grep -q '^cvar\.BIP_NIC=type MPI_CHAR; scope readonly; .*; category bip_drivers; ' "$out" ||
		fail "BIP_NIC"
	grep -q '^cvar\.BIP_CONNECT_TIMEOUT=.*; category mpi_shim; ' "$out" || fail "the shim's own"
	grep -q '^pvar\.bip_bytes_sent=class counter; type MPI_UNSIGNED_LONG_LONG; .*; category p2p; flags atomic; ' "$out" ||
		fail "bip_bytes_sent"
	grep -q '^pvar\.mpi_shim_unexpected=class level; .*; flags readonly continuous; ' "$out" ||
		fail "the unexpected queue"
	grep -q '^pvar\.mpi_shim_unexpected_hwm=class highwatermark; ' "$out" || fail "its mark"
	grep -q '^pvar\.mpi_shim_wait_time=class timer; type MPI_DOUBLE; ' "$out" || fail "the timer"
	grep -q '^pvar\.bip_path0_retired=class counter; .*; category paths; ' "$out" || fail "paths"
	grep -q '^category\.reliability=[1-9][0-9]* cvars; [1-9][0-9]* pvars; 1 categories; ' "$out" ||
		fail "the reliability category"
	# As many lines as variables, each in a category.
	for kind in cvar pvar; do
		n=$(sed -n "s/^mpit\.${kind}s=//p" "$out")
		[ "$n" -gt 0 ] && [ "$(grep -c "^$kind\." "$out")" -eq "$n" ] || fail "$kind count $n"
		grep "^$kind\." "$out" | grep -q 'category (none)' && fail "a $kind in no category"
	done
	# Every variable bipinfo lists (but a family, <r>) is a control variable.
	"$bipinfo" --parsable | sed -n 's/^default\.\([^=<]*\)=.*/\1/p' >"$HOME/names"
	[ -s "$HOME/names" ] || fail "no variables in bipinfo --parsable"
	while read -r v; do
		grep -q "^cvar\.$v=" "$out" || fail "$v is no control variable"
	done <"$HOME/names"
	# Values now; the secret never.
	BIP_WAIT=yield BIP_SECRET=00112233445566778899aabbccddeeff "$bipinfo" --mpit --parsable \
		>"$out" || fail "bipinfo --mpit with values"
	grep -q '^cvar\.BIP_WAIT=.*; value yield; ' "$out" || fail "the value of BIP_WAIT"
	grep -q 00112233445566778899aabbccddeeff "$out" && fail "the secret is shown"
	"$bipinfo" --mpit >"$out" || fail "bipinfo --mpit for people"
	grep -q '^Performance variables (MPI_T): [1-9]' "$out" || fail "no performance variables"
	grep -q '^  BIP_WAIT  *MPI_CHAR, scope local, user_basic, category bip_wait; ' "$out" ||
		fail "BIP_WAIT for people"
	"$bipinfo" --mpit --job 2>"$out" && fail "--mpit --job accepted"
	grep -q usage "$out" || fail "no usage"
	;;
clusters)
	# Two clusters of three hosts, one gateway pair, and a third cluster
	# behind the second (bipconf(5), "Clusters"): bipconf writes the nodes,
	# the statements follow them; biproute -c and bipinfo show the ways.
	bipinfo="$build/scripts/bipinfo"
	"$bipconf" -f "$HOME/c" a1.invalid a2.invalid a3.invalid b1.invalid b2.invalid \
		b3.invalid c1.invalid || fail "bipconf"
	cat >>"$HOME/c" <<-EOF
		cluster A ofi a1.invalid a2.invalid a3.invalid
		cluster B lanai b1.invalid b2.invalid b3.invalid
		cluster C shm c1.invalid
		gateway A:a1.invalid B:b1.invalid ofi
		gateway B:b3.invalid C:c1.invalid psm2
	EOF
	"$biproute" -c "$HOME/c" >"$out" || fail "biproute -c"
	[ "$(wc -l <"$out")" -eq 42 ] || fail "biproute -c: not 7 x 6 lines"
	grep -qx '1 a2.invalid -> 2 a3.invalid: inside cluster A (ofi)' "$out" ||
		fail "a way inside a cluster"
	grep -qx '2 a3.invalid -> 4 b2.invalid: A:a1.invalid -> B:b1.invalid (ofi)' "$out" ||
		fail "a way through one gateway"
	grep -qx '6 c1.invalid -> 0 a1.invalid: C:c1.invalid -> B:b3.invalid (psm2), B:b1.invalid -> A:a1.invalid (ofi)' \
		"$out" || fail "a way through two gateways"
	BIPCONF="$HOME/c" "$bipinfo" --parsable >"$out" || fail "bipinfo with clusters"
	grep -qx 'conf.clusters=3' "$out" || fail "bipinfo: cluster count"
	grep -qx 'conf.cluster.B=driver lanai, hosts b1.invalid b2.invalid b3.invalid' "$out" ||
		fail "bipinfo: cluster B"
	grep -qx 'conf.gateway.1=B:b3.invalid - C:c1.invalid over psm2' "$out" ||
		fail "bipinfo: gateway"
	grep -qx 'conf.route.A.C=A:a1.invalid -> B:b1.invalid (ofi), B:b3.invalid -> C:c1.invalid (psm2)' \
		"$out" || fail "bipinfo: route A to C"
	grep -qx 'conf.relays=none yet: bipload starts one on each gateway host (bipgw)' "$out" ||
		fail "bipinfo: relays of a user's file"
	# Only the first 3 nodes: cluster A alone is left; B and C, without a
	# node, are not the job's.
	BIP_OPTS=n3 BIPCONF="$HOME/c" "$bipinfo" --parsable >"$out" || fail "bipinfo n3"
	grep -qx 'conf.clusters=1' "$out" || fail "bipinfo n3: cluster count"
	grep -q '^conf.cluster.B=' "$out" && fail "bipinfo n3: cluster B shown, without a node"
	# A file without clusters, and misuse.
	"$bipconf" -f "$HOME/plain" a1.invalid b1.invalid || fail "bipconf plain"
	"$biproute" -c "$HOME/plain" >"$out" || fail "biproute -c without clusters"
	grep -q "names no cluster: its 2 nodes are on one network" "$out" || fail "one network"
	BIPCONF="$HOME/plain" "$bipinfo" --parsable >"$out" || fail "bipinfo plain"
	grep -qx 'conf.clusters=none: one network' "$out" || fail "bipinfo: no cluster"
	echo "gateway A:a1.invalid C:c1.invalid lanai" >>"$HOME/c"
	sed -i 's/^cluster C shm c1.invalid$/cluster C shm c1.invalid a1.invalid/' "$HOME/c"
	"$biproute" -c "$HOME/c" 2>"$out" && fail "a host in two clusters accepted"
	grep -q "^biproute: $HOME/c:[0-9]*: host a1.invalid is in cluster A already (line [0-9]*)$" \
		"$out" || fail "a host in two clusters not named"
	"$biproute" -c "$HOME/c" a1.invalid 2>"$out" && fail "-c with hosts accepted"
	grep -q "^biproute: -c takes no topology and no host$" "$out" || fail "-c misuse not named"
	"$biproute" -c "$HOME/none" 2>"$out" && fail "a missing file accepted"
	grep -q "^biproute: .*none" "$out" || fail "a missing file not named"
	;;
*)
	echo "unknown check $check"
	exit 2
	;;
esac
echo "PASS"
