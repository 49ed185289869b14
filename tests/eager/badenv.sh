#!/bin/sh
# SPDX-License-Identifier: MIT
# Bad values of the ofi driver's eager variables: bip_init fails with a
# message naming the variable and what it takes, and the job ends (no
# hang, no program run).  Usage: badenv.sh BIPINFO BIPLOAD EAGER
set -u
bipinfo=$1
bipload=$2
prog=$3
line=$("$bipinfo" --parsable | grep '^driver\.ofi=')
case "$line" in
"") echo "SKIP: driver ofi is not compiled in"; exit 77 ;;
*=unavailable*) echo "SKIP: driver ofi cannot run here: ${line#*=unavailable: }"; exit 77 ;;
esac
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() {
	cat "$out"
	echo "FAIL: $*"
	exit 1
}
# variable, value, what the message says it takes
while read -r var val what; do
	env "$var=$val" "$bipload" -sz 2 --timeout 60 "$prog" sizes </dev/null >"$out" 2>&1
	rc=$?
	[ "$rc" -ne 0 ] || fail "$var=$val: bipload exited 0"
	[ "$rc" -ne 124 ] || fail "$var=$val: the job hung until bipload's time-out"
	grep -q "^bip: .*bip_init: ofi: $var=$val is not $what\$" "$out" ||
		fail "$var=$val: no message saying what is wrong"
	! grep -q "FAILED" "$out" || fail "$var=$val: the program ran"
	echo "ok: $var=$val"
done <<'LIST'
BIP_OFI_EAGER abc a number of bytes from 0 to 1048576
BIP_OFI_EAGER -1 a number of bytes from 0 to 1048576
BIP_OFI_EAGER 1048577 a number of bytes from 0 to 1048576
BIP_OFI_EAGER 16k a number of bytes from 0 to 1048576
BIP_OFI_EAGER 99999999999999999999999 a number of bytes from 0 to 1048576
BIP_OFI_EAGER_BUFS 0 a number of buffers from 1 to 1024
BIP_OFI_EAGER_BUFS 1025 a number of buffers from 1 to 1024
BIP_OFI_EAGER_BUFS x a number of buffers from 1 to 1024
LIST
