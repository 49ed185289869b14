# SPDX-License-Identifier: MIT
# Sourced by the tests that pause a job and look at it (forward.sh,
# tests/netns/clusters.sh): they define fail MESSAGE first.

# wait_line FILE LINE PID [TENTHS]: until FILE has LINE (a whole line),
# while PID runs, for at most TENTHS tenths of a second (600).
wait_line() {
	_k=0
	until grep -qx "$2" "$1" 2>/dev/null; do
		_k=$((_k + 1))
		[ "$_k" -lt "${4:-600}" ] || fail "no line \"$2\" within $((${4:-600} / 10)) s"
		kill -0 "$3" 2>/dev/null || fail "the job ended before \"$2\""
		sleep 0.1
	done
}

# idle_ticks PID:NODE...: each one's processor time over 2 s, a line per
# process ("node N: T ticks of 2 s at HZ"), and in $idle_busy the nodes
# that used 5 % of a processor or more in that window and in a second one
# of 2 s right after it: a process that naps, yields or spins while idle
# is busy in both, while one finishing what came before the pause (on a
# machine loaded by other tests, that can take longer than the second the
# callers leave it) is not.
idle_ticks() {
	idle_window "$@"
	[ -n "$idle_busy" ] || return 0
	_again=""
	for _pn in "$@"; do
		case "$idle_busy " in
		*" ${_pn#*:} "*) _again="$_again $_pn" ;;
		esac
	done
	echo "again, for the nodes busy in that window:"
	idle_window $_again
	[ -n "$idle_busy" ] || return 0
	for _pn in $_again; do
		case "$idle_busy " in
		*" ${_pn#*:} "*) idle_why "${_pn%:*}" "${_pn#*:}" ;;
		esac
	done
}

# idle_why PID NODE: what a process busy while idle does, for the failure's
# report: three backtraces of its threads a tenth of a second apart, and
# the system calls it made over half a second (where gdb and strace are).
# IDLE_GDB: one more gdb command to run there (by hand, when looking).
idle_why() {
	if command -v gdb >/dev/null 2>&1; then
		for _k in 1 2 3; do
			echo "node $2, backtrace $_k:"
			timeout 20 gdb -batch -p "$1" -ex "thread apply all bt 12" ${IDLE_GDB:+-ex "$IDLE_GDB"} 2>/dev/null | grep -E '^(#|Thread|\$)' | sed 's/^/    /'
			sleep 0.1
		done
	fi
	if command -v strace >/dev/null 2>&1; then
		echo "node $2, system calls over 0.5 s:"
		timeout -s INT 0.5 strace -c -f -p "$1" 2>&1 | sed 's/^/    /'
	fi
}

# idle_window PID:NODE...: one window of idle_ticks.
idle_window() {
	_hz=$(getconf CLK_TCK)
	_before=""
	for _pn in "$@"; do
		_before="$_before $(awk '{ print $14 + $15 }' "/proc/${_pn%:*}/stat" 2>/dev/null || echo 0)"
	done
	sleep 2
	idle_busy=""
	for _pn in "$@"; do
		set -- $_before
		_b=$1
		shift
		_before="$*"
		_used=$(($(awk '{ print $14 + $15 }' "/proc/${_pn%:*}/stat" 2>/dev/null || echo 0) - _b))
		echo "node ${_pn#*:}: $_used ticks of $((2 * _hz))"
		[ $((_used * 100)) -lt $((5 * 2 * _hz)) ] || idle_busy="$idle_busy ${_pn#*:}"
	done
}
