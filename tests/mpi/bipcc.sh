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
# The installed bipcc too: the program finds the shim, and the shim finds
# libbip, wherever the tree is installed.
if command -v meson >/dev/null 2>&1 &&
	DESTDIR="$dir/inst" meson install -C "$build" --no-rebuild --quiet >/dev/null 2>&1; then
	ibipcc=$(find "$dir/inst" -path '*/bin/bipcc' | head -1)
	[ -n "$ibipcc" ] || fail "no bipcc installed"
	# profile.c calls no BIP function: libbip is the shim's dependency only.
	BIPCC_CC="cc ${BIP_TEST_CFLAGS:-}" sh "$ibipcc" "$src/tests/mpi/profile.c" \
		-o "$dir/profile-inst" -lmpi || fail "the installed bipcc could not build an MPI program"
	env -u LD_LIBRARY_PATH "$build/scripts/bipload" -q -sz 2 --timeout 60 "$dir/profile-inst" ||
		fail "the program built by the installed bipcc did not run"
else
	echo "bipcc.sh: meson install into a temporary directory failed: installed bipcc not checked"
fi
echo "bipcc.sh: MPI programs in C and C++ built with bipcc -lmpi and run"
