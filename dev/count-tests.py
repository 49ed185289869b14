#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Count the results of meson test logs and print 'N passed, N failed, N skipped'.

Each test that failed is named first, with the last lines of its output,
so that the end of a long run says what went wrong without its full log.
"""
import json
import os
import sys

TAIL = 25

passed = failed = skipped = 0
failures = []
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except OSError as e:
        print(f"{path}: {e}", file=sys.stderr)
        failed += 1
        failures.append((path, "no log", ""))
        continue
    build = os.path.basename(os.path.dirname(os.path.dirname(path)))
    for line in lines:
        entry = json.loads(line)
        result = entry.get("result")
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
            failures.append((f"{build}: {entry.get('name')}", result,
                             entry.get("stdout") or ""))

for name, result, out in failures:
    print(f"--- {result}: {name}")
    for text in out.rstrip("\n").split("\n")[-TAIL:]:
        print(f"    {text}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
