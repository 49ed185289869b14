#!/bin/sh
# SPDX-License-Identifier: MIT
# bipf90.sh BUILDDIR SOURCEDIR - Fortran MPI programs (mpi module and
# mpif.h) compile with "bipf90 prog.f90 -o prog -lmpi" and run with bipload,
# with the bipf90 of the build tree and with the installed one.
set -u
build=$1 src=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
	echo "bipf90.sh: $*" >&2
	exit 1
}
bipf90="sh $build/scripts/bipf90-uninstalled"
# A sanitizer build's libraries need the programs built with the sanitizer.
export BIPF90_FC="gfortran ${BIP_TEST_CFLAGS:-}"
$bipf90 -show "$src/tests/mpi/f_p2p.f90" -lmpi >"$dir/cmd" || fail "bipf90 -show"
grep -q -- "-lmpi_shim_fortran -lmpi_shim -lbip" "$dir/cmd" ||
	fail "-lmpi not translated: $(cat "$dir/cmd")"
(cd "$dir" && $bipf90 "$src/tests/mpi/f_p2p.f90" -o "$dir/p2p" -lmpi) ||
	fail "bipf90 could not build a program using the mpi module"
"$build/scripts/bipload" -q -sz 2 --timeout 60 "$dir/p2p" || fail "the mpi module program failed"
# Separate compilation and link, fixed form with mpif.h.
(cd "$dir" && $bipf90 -c "$src/tests/mpi/f_fixed.f" -o "$dir/fixed.o" && $bipf90 "$dir/fixed.o" \
	-o "$dir/fixed" -lmpi) || fail "bipf90 -c then link failed"
"$build/scripts/bipload" -q -sz 3 --timeout 60 "$dir/fixed" || fail "the mpif.h program failed"
# The installed bipf90 finds mpif.h, mpi.mod and the libraries wherever the
# tree is installed.
DESTDIR="$dir/inst" meson install -C "$build" --no-rebuild --quiet >/dev/null 2>&1 ||
	fail "meson install into a temporary directory failed"
ibipf90=$(find "$dir/inst" -path '*/bin/bipf90' | head -1)
[ -n "$ibipf90" ] || fail "no bipf90 installed"
inc=$(dirname "$(find "$dir/inst" -name mpif.h | head -1)")
[ -f "$inc/mpi.mod" ] || fail "mpi.mod is not installed next to mpif.h"
(cd "$dir" && sh "$ibipf90" "$src/tests/mpi/f_comm.f90" -o "$dir/comm-inst" -lmpi) ||
	fail "the installed bipf90 could not build a program"
env -u LD_LIBRARY_PATH "$build/scripts/bipload" -q -sz 2 --timeout 60 "$dir/comm-inst" ||
	fail "the program built by the installed bipf90 did not run"
echo "bipf90.sh: Fortran MPI programs built with bipf90 -lmpi and run"
