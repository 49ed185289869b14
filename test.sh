#!/bin/sh
# SPDX-License-Identifier: MIT
# Run the whole test suite: unit, command, conformance and bad-input tests,
# once in a normal build and once under AddressSanitizer and
# UndefinedBehaviorSanitizer (a representative subset of the drivers and
# of the jobs across hosts; tests/meson.build says which), then each
# libFuzzer target for 30 s.  Installs the build dependencies first when
# they are missing.  Ends with a line "N passed, N failed, N skipped".
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
	build-fuzz/meson-logs/testlog.json
exit $status
