#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The page of bipload --monitor as a C string: embed.py index.html monitor_page.h
# (a meson custom_target of scripts/meson.build).
import sys

src, dst = sys.argv[1], sys.argv[2]
with open(src, encoding="utf-8") as f:
    text = f.read()
out = ["/* Made by scripts/monitor/embed.py from scripts/monitor/index.html. */",
       "static const char bipload_monitor_html[] ="]
for line in text.splitlines(True):
    parts = []
    for b in line.encode("utf-8"):
        c = chr(b)
        if c == "\\" or c == '"':
            parts.append("\\" + c)
        elif c == "?":
            parts.append("\\?")  # no trigraphs
        elif 0x20 <= b < 0x7f:
            parts.append(c)
        else:
            parts.append("\\%03o" % b)
    out.append('\t"' + "".join(parts) + '"')
out[-1] += ";"
with open(dst, "w", encoding="utf-8") as f:
    f.write("\n".join(out) + "\n")
