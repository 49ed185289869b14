#!/bin/sh
# SPDX-License-Identifier: MIT
# Run the whole test suite: unit, command, conformance and bad-input tests,
# once in a normal build and once under AddressSanitizer and
# UndefinedBehaviorSanitizer.  Installs the build dependencies first when
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
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_suite build-sanitize -Db_sanitize=address,undefined -Db_lundef=false \
		-Dbuildtype=debug

python3 dev/count-tests.py build-test/meson-logs/testlog.json \
	build-sanitize/meson-logs/testlog.json
exit $status
