#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the libFuzzer targets (clang, ASan and UBSan) in build-fuzz and run
# each for SECONDS (default 30) over a scratch copy of its seed corpus;
# fails on any crash.  test.sh runs it with 30 s a target; longer runs are
# for hunting, e.g. dev/fuzz.sh 3600 shm oob.
# Usage: dev/fuzz.sh [SECONDS] [TARGET...]   (targets: tests/fuzz/fuzz_*.c)
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-30}
[ $# -gt 0 ] && shift
targets=${*:-$(ls tests/fuzz/fuzz_*.c | sed 's|.*/fuzz_||; s|\.c$||')}
if [ ! -d build-fuzz ]; then
	CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dbuildtype=debug >/dev/null
fi
status=0
for t in $targets; do
	ninja -C build-fuzz "tests/fuzz/fuzz_$t" >/dev/null
	echo "== fuzz_$t, $seconds s"
	sh tests/fuzz/run.sh "build-fuzz/tests/fuzz/fuzz_$t" "tests/fuzz/corpus/$t" "$seconds" ||
		status=1
done
exit $status
