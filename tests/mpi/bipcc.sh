#!/bin/sh
# SPDX-License-Identifier: MIT
# bipcc.sh BUILDDIR SOURCEDIR - an MPI program compiles unmodified with
# "bipcc prog.c -o prog -lmpi" and runs with bipload.
set -u
build=$1 src=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
	echo "bipcc.sh: $*" >&2
	exit 1
}
bipcc="sh $build/scripts/bipcc-uninstalled"
$bipcc -show "$src/tests/mpi/p2p.c" -lmpi >"$dir/cmd" || fail "bipcc -show"
grep -q -- "-lmpi_shim -lbip" "$dir/cmd" || fail "-lmpi not translated: $(cat "$dir/cmd")"
BIPCC_CC="cc ${BIP_TEST_CFLAGS:-}" $bipcc "$src/tests/mpi/p2p.c" -o "$dir/p2p" -lmpi ||
	fail "bipcc could not build an MPI program"
for t in ring mix; do
	"$build/scripts/bipload" -q -sz 2 --timeout 60 "$dir/p2p" "$t" || fail "$t did not run"
done
# C++ programs include mpi.h too.
printf '#include <mpi.h>\nint main(int c, char **v) { int r; MPI_Init(&c, &v);\n MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Finalize(); return r < 0; }\n' >"$dir/x.cc"
if command -v c++ >/dev/null 2>&1; then
	BIPCC_CC="c++ ${BIP_TEST_CFLAGS:-}" $bipcc "$dir/x.cc" -o "$dir/x" -lmpi ||
		fail "bipcc could not build a C++ MPI program"
	"$build/scripts/bipload" -q -sz 2 --timeout 60 "$dir/x" || fail "the C++ program failed"
fi
echo "bipcc.sh: MPI programs in C and C++ built with bipcc -lmpi and run"
