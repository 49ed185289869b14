#!/bin/sh
# SPDX-License-Identifier: MIT
# Run the whole test suite: unit, command, conformance and bad-input tests,
# once in a normal build and once under AddressSanitizer and
# UndefinedBehaviorSanitizer (a representative subset of the drivers and
# of the jobs across hosts; tests/meson.build says which), the thread tests
# under ThreadSanitizer, then each libFuzzer target for 30 s.  Installs the
# build dependencies first when they are missing.  Ends with a line
# "N passed, N failed, N skipped".
set -eu
cd "$(dirname "$0")"

sh dev/deps.sh

status=0
run_suite() {
	dir=$1
	shift
	if [ ! -d "$dir" ]; then
		meson setup "$dir" "$@" >/dev/null || { status=1; return 0; }
	fi
	ninja -C "$dir" || { status=1; return 0; }
	meson test -C "$dir" --num-processes 2 --print-errorlogs --no-rebuild || status=1
}

run_suite build-test
# Byte counts past 2^31: a few GiB each, once, in the normal build.
meson test -C build-test --setup bigmem --suite bigmem --num-processes 1 --print-errorlogs \
	--no-rebuild || status=1
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_suite build-sanitize -Db_sanitize=address,undefined -Db_lundef=false \
		-Dbuildtype=debug

# The thread tests (suite threads, tests/threads/README) once more under
# ThreadSanitizer, building only what they run: the libraries, bipload,
# bipinfo, lanai-sim and the tests' programs (and sleepwait, for the
# sleep-threads tests).  Any report fails its test (exit code 66);
# tests/threads/tsan.supp suppresses only reports proven benign.  Where
# address randomisation leaves ThreadSanitizer no room for its shadow
# memory (it then stops at once, "unexpected memory mapping"), the tests
# run with randomisation off (setarch -R).  -Wno-tsan: the
# drivers' fences order memory shared with other processes, which
# ThreadSanitizer does not see anyway, and it warns that it cannot model them.
tsan_targets="scripts/bipload scripts/bipinfo nic_firmware_sim/lanai-sim tests/system/sleepwait
	$(ls tests/threads/*.c | sed 's|\.c$||')"
if [ ! -d build-tsan ]; then
	meson setup build-tsan -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug \
		-Dc_args=-Wno-tsan >/dev/null || status=1
fi
if [ -d build-tsan ]; then
	if ninja -C build-tsan $tsan_targets; then
		tsan_run=""
		if ! build-tsan/scripts/bipinfo --parsable >/dev/null 2>&1 &&
			setarch "$(uname -m)" -R build-tsan/scripts/bipinfo --parsable >/dev/null 2>&1; then
			tsan_run="setarch $(uname -m) -R"
		fi
		TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$PWD/tests/threads/tsan.supp" \
			$tsan_run meson test -C build-tsan --suite threads --num-processes 2 \
			--print-errorlogs --no-rebuild || status=1
	else
		status=1
	fi
fi

# The libFuzzer targets, 30 s each (a clang build of its own; dev/fuzz.sh
# runs them longer).
if [ ! -d build-fuzz ]; then
	CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dbuildtype=debug >/dev/null || status=1
fi
if [ -d build-fuzz ]; then
	ninja -C build-fuzz $(ls tests/fuzz/fuzz_*.c | sed 's|\.c$||') || status=1
	meson test -C build-fuzz --suite fuzz --print-errorlogs --no-rebuild || status=1
fi

python3 dev/count-tests.py build-test/meson-logs/testlog.json \
	build-test/meson-logs/testlog-bigmem.json build-sanitize/meson-logs/testlog.json \
	build-tsan/meson-logs/testlog.json build-fuzz/meson-logs/testlog.json
exit $status
