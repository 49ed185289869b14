# SPDX-License-Identifier: MIT
# Sourced by the ofi tests: ofi_need BIPINFO PROVIDER [CAPS] exits 77
# (skipped, with the reason) unless the ofi driver can run here and
# libfabric has PROVIDER as an FI_EP_RDM provider, with CAPS (fi_info's -c
# syntax, such as "FI_RMA|FI_ATOMIC") when given.  Without fi_info, the
# provider is not checked.
ofi_need() {
	_line=$("$1" --parsable | grep '^driver\.ofi=')
	case "$_line" in
	"" | *=unavailable*)
		echo "SKIP: the ofi driver cannot run here: ${_line#*=}"
		exit 77
		;;
	esac
	command -v fi_info >/dev/null 2>&1 || return 0
	if [ -n "${3:-}" ]; then
		fi_info -p "$2" -t FI_EP_RDM -c "$3" >/dev/null 2>&1 && return 0
		echo "SKIP: no libfabric provider $2 with $(echo "$3" | sed 's/|/ and /g') here"
	else
		fi_info -p "$2" -t FI_EP_RDM >/dev/null 2>&1 && return 0
		echo "SKIP: no libfabric provider $2 here"
	fi
	exit 77
}
