#!/bin/sh
# SPDX-License-Identifier: MIT
# Run one libFuzzer target for SECONDS over a scratch copy of its seed
# corpus (the repository is never written), and fail on any crash, leak or
# undefined behaviour, printing the input that caused it.
# Usage: run.sh TARGET CORPUS SECONDS
set -u
target=$1
corpus=$2
seconds=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
[ -d "$corpus" ] && cp "$corpus"/* "$work/corpus/" 2>/dev/null
"$target" -max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 \
	-artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1
rc=$?
grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ +DONE' "$work/log"
echo "new inputs found: $(ls "$work/corpus" | wc -l) in the corpus (from $(ls "$corpus" 2>/dev/null | wc -l) seeds)"
if [ "$rc" -ne 0 ]; then
	grep -A25 -E "^==[0-9]+==ERROR|runtime error" "$work/log" | head -40
	for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -e "$f" ] || continue
		echo "input $(basename "$f") (add it to the corpus once fixed):"
		od -An -tx1 "$f" | head -20
	done
	echo "FAIL: $(basename "$target") found a bug"
	exit 1
fi
echo "PASS: no crash in ${seconds} s"
