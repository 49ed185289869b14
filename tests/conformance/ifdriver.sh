#!/bin/sh
# SPDX-License-Identifier: MIT
# Run a test only where the driver it forces (BIP_NIC) can run: otherwise
# print why and exit 77, which Meson reports as skipped, never as passed.
# Usage: ifdriver.sh BIPINFO COMMAND [ARG...]
set -u
bipinfo=$1
shift
if [ -n "${BIP_NIC:-}" ]; then
	line=$("$bipinfo" --parsable | grep "^driver\.$BIP_NIC=")
	case "$line" in
	"")
		echo "SKIP: driver $BIP_NIC is not compiled in (see bipinfo)"
		exit 77
		;;
	*=unavailable*)
		echo "SKIP: driver $BIP_NIC cannot run here: ${line#*=unavailable: }"
		exit 77
		;;
	esac
fi
exec "$@"
