#!/bin/sh
# SPDX-License-Identifier: MIT
# Set everything up on a fresh Debian 12 machine and run the manual's token
# example on 3 nodes of this host, with no configuration.
#   - installs the build dependencies (sudo when not root),
#   - builds BIP with Meson into ./build and installs it (prefix /usr/local,
#     or $PREFIX),
#   - compiles examples/token.c with bipcc and runs it with bipload -sz 3.
set -eu
cd "$(dirname "$0")"
prefix="${PREFIX:-/usr/local}"

sh dev/deps.sh
[ -d build ] || meson setup build --prefix "$prefix" >/dev/null
ninja -C build
if [ -w "$prefix" ] || [ "$(id -u)" -eq 0 ]; then
	meson install -C build --quiet
else
	sudo meson install -C build --quiet
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prefix/bin/bipcc" examples/token.c -o "$tmp/token"
"$prefix/bin/bipload" -sz 3 "$tmp/token"
