#!/bin/sh
# SPDX-License-Identifier: MIT
# Programs started apart that connect (attach.c): a server job, then
# commands that join it with bipload --attach:
#  - a client by the job id bipload printed, one by the published name;
#    each connects, talks, disconnects, and its output comes to its own
#    bipload;
#  - a client that crashes, a program that does not exist, a command
#    stopped by a signal: each fails alone, with its own message and exit
#    status, and the server's job goes on;
#  - a job that is not there, a target that is none, an attach directory
#    open to others: refused with a message.
# attach.sh BIPLOAD PROGRAM NP SCRATCH
set -u
bipload=$1 prog=$2 np=$3 scratch=$4
mkdir -p "$scratch" || exit 1
top=$(mktemp -d "$scratch/attach.XXXXXX") || exit 1
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$top"' EXIT
BIP_NAMES_DIR=$top/names
BIP_ATTACH_DIR=$top/run
mkdir -m 700 "$BIP_ATTACH_DIR" || exit 1
export BIP_NAMES_DIR BIP_ATTACH_DIR
fail=0
bad() {
	echo "attach: $*"
	fail=1
}
# wait_for FILE TEXT: until FILE holds TEXT (30 s at most).
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -lt 300 ] || return 1
		sleep 0.1
	done
}

"$bipload" -sz "$np" --timeout 120 "$prog" server 2 > "$top/server.out" 2> "$top/server.err" &
server=$!
if ! wait_for "$top/server.out" "port published"; then
	bad "the server did not publish its port"
	cat "$top/server.out" "$top/server.err"
	exit 1
fi
job=$(sed -n 's/^bipload: .* job \([0-9a-f]*\)$/\1/p' "$top/server.err" | head -n 1)
[ -n "$job" ] || bad "no job id in the server's output"

# A client by the job id: its output is its own.
"$bipload" --attach "$job" -sz "$np" "$prog" client > "$top/c1.out" 2> "$top/c1.err"
rc=$?
[ "$rc" -eq 0 ] || bad "client 1 exited with $rc"
grep -q "^client $np: ok$" "$top/c1.out" || bad "client 1's output is not at its bipload"
grep -q "joined job $job" "$top/c1.err" || bad "client 1 did not say which nodes joined"
grep -q "client" "$top/server.out" && bad "client 1's output went to the server's bipload"
[ "$fail" -eq 0 ] || cat "$top/c1.out" "$top/c1.err"

# A crash is the attached command's: its status, and the job goes on.
"$bipload" --attach "$job" -sz 1 "$prog" crash > "$top/crash.out" 2>&1
rc=$?
[ "$rc" -eq 134 ] || bad "the crashing client exited with $rc, want 134 (SIGABRT)"
grep -q "killed by signal SIGABRT" "$top/crash.out" || bad "no word of the crash"
kill -0 "$server" 2>/dev/null || bad "the crash ended the server's job"

# A program that does not exist: said, status 127, nothing left.
"$bipload" --attach "$job" -sz 2 "$top/no-such-program" > "$top/missing.out" 2>&1
rc=$?
[ "$rc" -eq 127 ] || bad "a missing program: exit $rc, want 127"
grep -q "cannot run" "$top/missing.out" || bad "a missing program: no message"

# A signal to the attached bipload stops its processes only.
"$bipload" --attach "$job" -q -sz 1 "$prog" sleep > "$top/sleep.out" 2>&1 &
sleeper=$!
if wait_for "$top/sleep.out" sleeping; then
	kill -TERM "$sleeper"
	wait "$sleeper"
	rc=$?
	[ "$rc" -eq 143 ] || bad "the stopped command exited with $rc, want 143"
else
	bad "the sleeping command did not start"
	kill "$sleeper"
fi
kill -0 "$server" 2>/dev/null || bad "the stopped command ended the server's job"

# Untrusted input at the job's socket: a record without descriptors is
# dropped, a malformed request is answered as such, and the job goes on.
if command -v python3 >/dev/null; then
	python3 - "$BIP_ATTACH_DIR/bip-job.$job" > "$top/garbage.out" 2>&1 <<'PY'
import array, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
s.send(b"grow\x001\x00")
print("no fds:", "closed" if s.recv(100) == b"" else "answered")
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
fds = array.array("i", [0, 1, 2])
s.sendmsg([b"grow\x00many\x00"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
print("malformed:", s.recv(200).split(b"\x00")[4].decode())
PY
	grep -q "^no fds: closed$" "$top/garbage.out" || bad "a record without descriptors was not dropped"
	grep -q "^malformed: a malformed request$" "$top/garbage.out" ||
		bad "a malformed request was not answered as such"
	kill -0 "$server" 2>/dev/null || bad "garbage at the socket ended the server's job"
fi

# A client by the published name.
"$bipload" --attach name:attach-svc -q -sz "$np" "$prog" client > "$top/c2.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || bad "client 2 (by name) exited with $rc"
grep -q "^client $np: ok$" "$top/c2.out" || bad "client 2's output is not at its bipload"

wait "$server"
rc=$?
server=
[ "$rc" -eq 0 ] || bad "the server's job exited with $rc"
grep -q "server: served 2" "$top/server.out" || bad "the server did not serve 2 clients"
[ -e "$BIP_ATTACH_DIR/bip-job.$job" ] && bad "the job's socket was left behind"

# Refused: a job that has ended, no job at all, a directory open to others.
"$bipload" --attach "$job" -sz 1 "$prog" client > "$top/gone.out" 2>&1 &&
	bad "attaching to an ended job worked"
grep -q "is not running on this host" "$top/gone.out" || bad "an ended job: no message"
"$bipload" --attach not-a-job -sz 1 "$prog" client > "$top/none.out" 2>&1 &&
	bad "attaching to \"not-a-job\" worked"
grep -q "expected a job id" "$top/none.out" || bad "no job: no message"
chmod 755 "$BIP_ATTACH_DIR"
"$bipload" --attach "$job" -sz 1 "$prog" client > "$top/open.out" 2>&1 &&
	bad "attaching through a directory open to others worked"
grep -q "has mode 0755" "$top/open.out" || bad "a directory open to others: no message"

if [ "$fail" -ne 0 ]; then
	for f in "$top"/*.out "$top"/*.err; do
		echo "--- $(basename "$f")"
		cat "$f"
	done
fi
exit "$fail"
