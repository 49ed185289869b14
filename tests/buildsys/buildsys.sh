#!/bin/sh
# SPDX-License-Identifier: MIT
# Tests of the MPI wrappers (mpicc.bip(1)), mpiexec.bip, bip-alternatives
# and the build-system discovery, against an install of the build tree into
# a temporary directory: the installed commands must work from there.
# Usage: buildsys.sh CHECK BUILDDIR SOURCEDIR
#   wrappers-c, wrappers-cxx, wrappers-fortran
#              every query flag of mpicc.bip, mpicxx.bip, mpifort.bip against
#              the command the wrapper runs (a fake compiler that logs its
#              arguments), compile-only flags, -lmpi, -v, BIPCC_*, the errors,
#              and a program built with the real compiler and run
#   mpiexec    the installed mpiexec.bip and mpirun.bip: a run, errors, the
#              exit status
#   cmake-mpi  CMake's FindMPI with -DMPI_C_COMPILER=mpicc.bip and
#              -DMPIEXEC_EXECUTABLE=/path/to/mpiexec.bip, then with
#              -DMPI_EXECUTABLE_SUFFIX=.bip alone
#   cmake-mpi-cxx, cmake-mpi-fortran  the same with C++ or Fortran too
#   cmake-bip  find_package(BIP): BIP::mpi and BIP::bip
#   meson-mpi  Meson's dependency('mpi') with MPICC=mpicc.bip
#   autotools  ./configure CC=mpicc.bip (autoconf)
#   pkgconfig  pkg-config --cflags --libs mpi_shim and bip
#   alternatives  bip-alternatives in a tree of its own (--root)
# A check whose tool is missing exits 77 (skipped) and says which.
set -u
check=$1
build=$2
src=$3
here="$src/tests/buildsys"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out="$tmp/out"
fail() {
	[ -f "$out" ] && cat "$out"
	echo "FAIL: $*"
	exit 1
}
skip() {
	echo "SKIP: $*"
	exit 77
}
need() {
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || skip "$t is not installed"
	done
}
# The programs must find the libraries through their run paths alone.
unset LD_LIBRARY_PATH
unset BIPCC_CC BIPCC_CXX BIPCC_FC MPICC MPICXX MPIFC CC CFLAGS LDFLAGS
BIPCC_CC="cc ${BIP_TEST_CFLAGS:-}"
export BIPCC_CC

# Install the build tree into $tmp/inst; $bin, $prefix are its directories.
install_tree() {
	need meson
	meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/inst" >"$out" 2>&1 ||
		fail "meson install into a temporary directory failed"
	wrapper=$(find "$tmp/inst" -path '*/bin/mpicc.bip')
	[ -n "$wrapper" ] || fail "mpicc.bip is not installed"
	bin=$(dirname "$wrapper")
	prefix=$(dirname "$bin")
}
# A copy of a project with hello.c, to build out of the source tree.
project() {
	cp -r "$here/$1" "$tmp/proj" && cp "$here/hello.c" "$tmp/proj/" ||
		fail "cannot copy the project $1"
}
# hello on 2 ranks through bipload: both lines, nothing else wrong.
run_hello() {
	"$build/scripts/bipload" -q -sz 2 --timeout 60 "$@" >"$out" 2>&1 || fail "$* did not run"
	grep -q "^hello from 0 of 2$" "$out" && grep -q "^hello from 1 of 2$" "$out" ||
		fail "$*: not the lines of 2 ranks"
}
# The program links the shim (not another MPI).
uses_shim() {
	readelf -d "$1" >"$out" 2>&1 || fail "readelf $1"
	grep -q 'NEEDED.*libmpi_shim\.so' "$out" || fail "$1 does not link libmpi_shim"
	grep -Eq 'NEEDED.*lib(mpi|mpich)\.so' "$out" && fail "$1 links another MPI"
	return 0
}

# The words a wrapper prints for a query, or runs (logged by a fake
# compiler, one argument per line), on one line.
log="$tmp/argv"
fake="$tmp/fakecc"
printf '#!/bin/sh\nprintf "%%s\\n" "$0" "$@" >"%s"\n' "$log" >"$fake"
chmod +x "$fake"
ran() {
	rm -f "$log"
	"$w" "$@" >/dev/null 2>"$out" || fail "$name $*: status $?"
	[ -f "$log" ] || fail "$name $*: the compiler did not run"
	tr '\n' ' ' <"$log" | sed 's/ $//'
}
same() {
	[ "$1" = "$2" ] || fail "$name: $3:
  printed: $1
  ran:     $2"
}
check_wrapper() {
	w=$1
	name=$(basename "$w")
	export BIPCC_CC="$fake" BIPCC_CXX="$fake" BIPCC_FC="$fake"
	# The whole command, compiling and linking.
	full=$(ran hello.c -o hello)
	for q in -show --showme -showme -link-info -link_info -show-link-info; do
		same "$("$w" "$q" hello.c -o hello)" "$full" "$q"
	done
	# Compile only: no library flags, whichever flag says so.
	for c in -c -S -E -M -MM -fsyntax-only; do
		got=$(ran "$c" hello.c)
		case " $got " in
		*" -l"* | *" -L"* | *" -Wl,"*) fail "$name $c: link flags when only compiling: $got" ;;
		esac
		same "$("$w" -show "$c" hello.c)" "$got" "-show $c"
	done
	for q in -compile-info -compile_info -show-compile-info; do
		same "$("$w" "$q" -c hello.c)" "$(ran -c hello.c)" "$q -c"
	done
	# Open MPI's parts put together make the command.
	cmd=$("$w" --showme:command)
	comp=$("$w" --showme:compile)
	lnk=$("$w" -showme:link)
	same "$cmd $comp -c hello.c" "$(ran -c hello.c)" "--showme:command + --showme:compile"
	same "$cmd $comp hello.o -o hello $lnk" "$(ran hello.o -o hello)" "--showme:link"
	[ "$cmd" = "$fake" ] || fail "$name --showme:command: $cmd, not $fake"
	# The directories and libraries are the words of those flags.
	inc=$("$w" --showme:incdirs)
	same "$(for d in $inc; do printf -- '-I%s ' "$d"; done | sed 's/ $//')" "$comp" "--showme:incdirs"
	for d in $inc; do
		[ -f "$d/mpi.h" ] || [ -f "$d/mpif.h" ] || fail "$name: $d holds no MPI header"
	done
	libdirs=$("$w" --showme:libdirs)
	libs=$("$w" --showme:libs)
	want=$(for d in $libdirs; do printf -- '-L%s ' "$d"; done
		for d in $libdirs; do printf -- '-Wl,-rpath,%s ' "$d"; done
		for l in $libs; do printf -- '-l%s ' "$l"; done)
	same "${want% }" "$lnk" "--showme:libdirs and --showme:libs"
	for l in $libs; do
		found=0
		for d in $libdirs; do [ -e "$d/lib$l.so" ] && found=1; done
		[ "$found" -eq 1 ] || fail "$name: lib$l.so is in none of $libdirs"
	done
	case " $libs " in *" mpi_shim "*) ;; *) fail "$name --showme:libs: no mpi_shim: $libs" ;; esac
	# -lmpi is the shim already; other arguments pass unchanged, one word each.
	same "$(ran hello.o -lmpi -o hello)" "$(ran hello.o -o hello)" "-lmpi"
	ran -c "a b.c" -DX="1 2" "-DY='q'" >/dev/null
	grep -qx "a b.c" "$log" && grep -qx -- "-DX=1 2" "$log" && grep -qx -- "-DY='q'" "$log" ||
		fail "$name: arguments split or changed"
	# Versions: Open MPI's line and MPICH's -v, which runs the compiler too.
	"$w" --showme:version >"$out" || fail "$name --showme:version"
	grep -Eq "^$name: BIP MPI shim [0-9]+\.[0-9]+\.[0-9]+ \(Language: [A-Za-z+]+\)$" "$out" ||
		fail "$name --showme:version"
	rm -f "$log"
	"$w" -v >"$out" 2>&1 || fail "$name -v"
	[ "$(head -1 "$out")" = "$("$w" --showme:version)" ] || fail "$name -v: no version line"
	same "$(tr '\n' ' ' <"$log" | sed 's/ $//')" "$cmd $comp -v" "-v alone"
	same "$(ran -v hello.c -o hello)" "$cmd $comp -v hello.c -o hello $lnk" "-v with files"
	# A compiler with flags of its own.
	BIPCC_CC="$fake -m64" BIPCC_CXX="$fake -m64" BIPCC_FC="$fake -m64" \
		"$w" -show -c x.c >"$out"
	grep -q "^$fake -m64 -I" "$out" || fail "$name: the compiler's own flags lost"
	# Bad input.
	"$w" --showme:foo >"$out" 2>&1 && fail "$name --showme:foo accepted"
	grep -q "$name: unknown query flag --showme:foo" "$out" || fail "$name: no message for --showme:foo"
	"$w" -show --showme:link >"$out" 2>&1 && fail "$name: two query flags accepted"
	grep -q "give one query flag" "$out" || fail "$name: no message for two query flags"
	BIPCC_CC=/no/such/cc BIPCC_CXX=/no/such/cc BIPCC_FC=/no/such/cc "$w" -c x.c >"$out" 2>&1
	rc=$?
	[ "$rc" -ne 0 ] || fail "$name: a missing compiler succeeded"
	grep -q "$name: the .* compiler \"/no/such/cc\" was not found" "$out" ||
		fail "$name: the missing compiler not named"
	unset BIPCC_CXX BIPCC_FC
	BIPCC_CC="cc ${BIP_TEST_CFLAGS:-}"
}

case "$check" in
wrappers-c)
	install_tree
	check_wrapper "$bin/mpicc.bip"
	# The build tree's copy too (not executable there: run from a copy).
	mkdir "$tmp/u"
	cp "$build/scripts/mpicc.bip-uninstalled" "$tmp/u/mpicc.bip"
	chmod +x "$tmp/u/mpicc.bip"
	check_wrapper "$tmp/u/mpicc.bip"
	# The real compiler, from the installed place.
	(cd "$tmp" && "$bin/mpicc.bip" -c "$here/hello.c" -o hello.o && "$bin/mpicc.bip" hello.o -o hello) ||
		fail "mpicc.bip could not build hello.c"
	uses_shim "$tmp/hello"
	run_hello "$tmp/hello"
	;;
wrappers-cxx)
	install_tree
	[ -f "$bin/mpicxx.bip" ] || skip "no C++ compiler at build time: mpicxx.bip is not installed"
	check_wrapper "$bin/mpicxx.bip"
	cp "$here/hello.c" "$tmp/hello.cc"
	BIPCC_CXX="c++ ${BIP_TEST_CFLAGS:-}" "$bin/mpicxx.bip" "$tmp/hello.cc" -o "$tmp/hellocc" ||
		fail "mpicxx.bip could not build hello.cc"
	uses_shim "$tmp/hellocc"
	run_hello "$tmp/hellocc"
	;;
wrappers-fortran)
	install_tree
	[ -f "$bin/mpifort.bip" ] || skip "no gfortran at build time: mpifort.bip is not installed"
	check_wrapper "$bin/mpifort.bip"
	(cd "$tmp" && BIPCC_FC="gfortran ${BIP_TEST_CFLAGS:-}" "$bin/mpifort.bip" \
		"$src/examples/ring.f90" -o ringf) || fail "mpifort.bip could not build ring.f90"
	"$build/scripts/bipload" -q -sz 2 --timeout 60 "$tmp/ringf" >"$out" 2>&1 ||
		fail "the Fortran ring did not run"
	;;
mpiexec)
	install_tree
	mpiexec="$bin/mpiexec.bip"
	(cd "$tmp" && "$bin/mpicc.bip" "$here/hello.c" -o hello) || fail "mpicc.bip"
	for n in "-n 2" "-np 2" "-n 2 --"; do
		# shellcheck disable=SC2086
		"$mpiexec" $n "$tmp/hello" >"$out" 2>&1 || fail "mpiexec.bip $n"
		[ "$(grep -c '^hello from [01] of 2$' "$out")" -eq 2 ] || fail "mpiexec.bip $n: not 2 ranks"
		grep -q "^bipload:" "$out" && fail "mpiexec.bip $n: bipload's information line"
	done
	"$mpiexec" -n 3 "$build/tests/tools/helper" exit 7 >"$out" 2>&1
	rc=$?
	[ "$rc" -eq 7 ] || fail "mpiexec.bip: exit status $rc, expected 7"
	# The installed mpirun.bip is the same front end; its options are
	# tested in the tools suite (launch.sh).
	"$bin/mpirun.bip" -np 2 --tag-output "$tmp/hello" >"$out" 2>&1 || fail "mpirun.bip"
	[ "$(grep -c '^\[[01]\] hello from [01] of 2$' "$out")" -eq 2 ] || fail "mpirun.bip: not 2 tagged ranks"
	for bad in "--mca btl self" "-genvall"; do
		# shellcheck disable=SC2086
		"$mpiexec" $bad -n 2 "$tmp/hello" >"$out" 2>&1
		rc=$?
		[ "$rc" -eq 2 ] || fail "mpiexec.bip $bad: status $rc, expected 2"
		grep -q "mpiexec.bip: option ${bad%% *} is not supported" "$out" ||
			fail "mpiexec.bip $bad: option not named"
	done
	for bad in "-n" "-n 0" "-n x" "-n 2"; do
		# shellcheck disable=SC2086
		"$mpiexec" $bad >"$out" 2>&1 && fail "mpiexec.bip $bad accepted"
		grep -q "usage: mpiexec.bip" "$out" || fail "mpiexec.bip $bad: no usage"
	done
	;;
cmake-mpi | cmake-mpi-cxx | cmake-mpi-fortran)
	need cmake make
	install_tree
	project cmake-mpi
	# The wrappers by name, as users write them (the install's bin in
	# PATH); the other checks add C++ or Fortran, where their wrappers are
	# installed.
	PATH="$bin:$PATH"
	set -- -DMPI_C_COMPILER=mpicc.bip
	langs=C
	tests=hello2
	if [ "$check" = cmake-mpi-cxx ]; then
		[ -f "$bin/mpicxx.bip" ] || skip "no C++ compiler at build time: mpicxx.bip is not installed"
		set -- "$@" -DWITH_CXX=ON -DMPI_CXX_COMPILER=mpicxx.bip \
			-DCMAKE_CXX_FLAGS="${BIP_TEST_CFLAGS:-}"
		langs="$langs CXX"
		tests="$tests hellocxx2"
	fi
	if [ "$check" = cmake-mpi-fortran ]; then
		[ -f "$bin/mpifort.bip" ] || skip "no gfortran at build time: mpifort.bip is not installed"
		cp "$src/examples/ring.f90" "$tmp/proj/"
		set -- "$@" -DWITH_Fortran=ON -DMPI_Fortran_COMPILER=mpifort.bip \
			-DCMAKE_Fortran_FLAGS="${BIP_TEST_CFLAGS:-}"
		langs="$langs Fortran"
		tests="$tests ring2"
	fi
	# MPIEXEC_EXECUTABLE is a path: ctest runs it as given.
	cmake -S "$tmp/proj" -B "$tmp/b" "$@" -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.bip)" \
		-DCMAKE_C_FLAGS="${BIP_TEST_CFLAGS:-}" >"$out" 2>&1 ||
		fail "cmake with -DMPI_C_COMPILER=mpicc.bip failed"
	for l in $langs; do
		grep -q "Found MPI_$l: $prefix/.*/libmpi_shim.*\.so (found version \"3.1\")" "$out" ||
			fail "FindMPI: no MPI_$l of version 3.1 from the install"
	done
	grep -q "Found MPI: TRUE (found version \"3.1\") found components: $langs" "$out" ||
		fail "FindMPI: not every component"
	grep -q "MPI_C_VERSION=3.1" "$out" || fail "FindMPI: MPI_C_VERSION"
	case "$langs" in
	*Fortran) grep -q "MPI_Fortran_HAVE_F90_MODULE=TRUE" "$out" || fail "FindMPI: no mpi module" ;;
	esac
	cmake --build "$tmp/b" >"$out" 2>&1 || fail "cmake --build"
	uses_shim "$tmp/b/hello"
	run_hello "$tmp/b/hello"
	(cd "$tmp/b" && ctest --output-on-failure) >"$out" 2>&1 || fail "ctest through mpiexec.bip"
	for t in $tests; do
		grep -q " $t .*Passed" "$out" || fail "ctest: $t did not pass"
	done
	[ "$check" = cmake-mpi ] || exit 0
	# FindMPI's own suffix, with the wrappers in PATH: both by name.
	cmake -S "$tmp/proj" -B "$tmp/s" -DMPI_EXECUTABLE_SUFFIX=.bip \
		-DCMAKE_C_FLAGS="${BIP_TEST_CFLAGS:-}" >"$out" 2>&1 ||
		fail "cmake with -DMPI_EXECUTABLE_SUFFIX=.bip failed"
	grep -q "Found MPI_C: $prefix/.*/libmpi_shim.*\.so (found version \"3.1\")" "$out" ||
		fail "MPI_EXECUTABLE_SUFFIX: not the shim"
	grep -q "MPIEXEC_EXECUTABLE=$bin/mpiexec.bip$" "$out" ||
		fail "MPI_EXECUTABLE_SUFFIX: not mpiexec.bip"
	cmake --build "$tmp/s" >"$out" 2>&1 || fail "cmake --build (suffix)"
	(cd "$tmp/s" && ctest --output-on-failure) >"$out" 2>&1 || fail "ctest (suffix)"
	;;
cmake-bip)
	need cmake make
	install_tree
	project cmake-bip
	cp "$src/examples/token.c" "$tmp/proj/"
	cmake -S "$tmp/proj" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$prefix" \
		-DCMAKE_C_FLAGS="${BIP_TEST_CFLAGS:-}" >"$out" 2>&1 || fail "cmake with find_package(BIP) failed"
	grep -q "BIP_VERSION=[0-9]" "$out" || fail "find_package(BIP): no version"
	cmake --build "$tmp/b" >"$out" 2>&1 || fail "cmake --build"
	uses_shim "$tmp/b/hello"
	run_hello "$tmp/b/hello"
	"$build/scripts/bipload" -q -sz 3 --timeout 60 "$tmp/b/token" >"$out" 2>&1 || fail "token"
	grep -q "^token arrived$" "$out" || fail "token: no token"
	# The installed tree moved elsewhere: the package follows its files.
	mv "$tmp/inst" "$tmp/moved"
	rm -rf "$tmp/b"
	moved=$tmp/moved${prefix#"$tmp/inst"}
	cmake -S "$tmp/proj" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$moved" >"$out" 2>&1 ||
		fail "find_package(BIP) after moving the install"
	grep -q "BIP_DIR:PATH=$moved/" "$tmp/b/CMakeCache.txt" || fail "BIP_DIR is not in the moved tree"
	# A version too new is refused.
	sed -i 's/find_package(BIP 0.92 REQUIRED)/find_package(BIP 99 REQUIRED)/' "$tmp/proj/CMakeLists.txt"
	rm -rf "$tmp/b"
	cmake -S "$tmp/proj" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$moved" >"$out" 2>&1 &&
		fail "find_package(BIP 99) accepted"
	grep -q "version: [0-9.]*" "$out" || fail "find_package(BIP 99): no version named"
	;;
meson-mpi)
	need meson ninja
	install_tree
	project meson-mpi
	version=$("$bin/mpicc.bip" --showme:version | sed 's/.* shim \([^ ]*\) .*/\1/')
	# MPICC=mpicc.bip, where no other mpicc is in PATH (Meson takes the
	# newest of $MPICC and mpicc).
	if ! command -v mpicc >/dev/null 2>&1; then
		MPICC="$bin/mpicc.bip" PKG_CONFIG_PATH="" PKG_CONFIG_LIBDIR="$tmp/none" \
			meson setup "$tmp/b0" "$tmp/proj" >"$out" 2>&1 || fail "meson setup with MPICC=mpicc.bip"
		grep -q "Run-time dependency MPI for c found: YES $version$" "$out" ||
			fail "dependency('mpi') did not find \$MPICC"
	fi
	# Only the install's pkg-config files: another MPI's ompi-c.pc would
	# come first in Meson's search.  A native file naming mpicc.bip as
	# mpicc (the way of mpicc.bip(1)): Meson then asks no other mpicc.
	printf "[binaries]\nmpicc = '%s'\n" "$bin/mpicc.bip" >"$tmp/bip.ini"
	PKG_CONFIG_PATH="" PKG_CONFIG_LIBDIR="$tmp/none" \
		meson setup --native-file "$tmp/bip.ini" "$tmp/b" "$tmp/proj" \
		-Dc_args="${BIP_TEST_CFLAGS:-}" -Dc_link_args="${BIP_TEST_CFLAGS:-}" >"$out" 2>&1 ||
		fail "meson setup with mpicc = mpicc.bip in a native file"
	grep -q "Run-time dependency MPI for c found: YES $version$" "$out" ||
		fail "dependency('mpi') did not find mpicc.bip"
	ninja -C "$tmp/b" >"$out" 2>&1 || fail "ninja"
	uses_shim "$tmp/b/hello"
	run_hello "$tmp/b/hello"
	;;
autotools)
	need autoconf make
	install_tree
	project autotools
	(cd "$tmp/proj" && autoconf) >"$out" 2>&1 || fail "autoconf"
	(cd "$tmp/proj" && ./configure CC="$bin/mpicc.bip" CFLAGS="-O2 ${BIP_TEST_CFLAGS:-}") \
		>"$out" 2>&1 || fail "./configure CC=mpicc.bip"
	grep -q "checking for library containing MPI_Init... none required" "$out" ||
		fail "configure: MPI_Init needs a library"
	make -C "$tmp/proj" >"$out" 2>&1 || fail "make"
	uses_shim "$tmp/proj/hello"
	run_hello "$tmp/proj/hello"
	;;
pkgconfig)
	need pkg-config
	install_tree
	pc=$(dirname "$(find "$tmp/inst" -name mpi_shim.pc)")
	[ -f "$pc/bip.pc" ] || fail "bip.pc is not installed beside mpi_shim.pc"
	# The files name the prefix they were made for: the staged install is
	# a sysroot, as for cross-compiling.
	pkgc() {
		PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_PATH="" PKG_CONFIG_SYSROOT_DIR="$tmp/inst" pkg-config "$@"
	}
	flags=$(pkgc --cflags --libs mpi_shim) || fail "pkg-config mpi_shim"
	for want in "-I$prefix/include" "-lmpi_shim" "-lbip"; do
		case " $flags " in *" $want "*) ;; *) fail "pkg-config mpi_shim: no $want in $flags" ;; esac
	done
	bflags=$(pkgc --cflags --libs bip) || fail "pkg-config bip"
	case " $bflags " in *" -lbip "*) ;; *) fail "pkg-config bip: no -lbip in $bflags" ;; esac
	libdir=$(printf '%s\n' $flags | sed -n 's/^-L//p' | head -1)
	[ -e "$libdir/libmpi_shim.so" ] || fail "pkg-config mpi_shim: no libmpi_shim.so in -L$libdir"
	# shellcheck disable=SC2086
	cc ${BIP_TEST_CFLAGS:-} "$here/hello.c" -o "$tmp/hello" $flags -Wl,-rpath,"$libdir" ||
		fail "cc with pkg-config's flags"
	uses_shim "$tmp/hello"
	run_hello "$tmp/hello"
	;;
alternatives)
	need update-alternatives
	install_tree
	alt="$bin/bip-alternatives"
	[ -x "$alt" ] || fail "bip-alternatives is not installed"
	root="$tmp/inst"
	p=${bin#"$root"}
	mkdir -p "$root/usr/bin" "$root/etc/alternatives" "$root/var/lib/dpkg/alternatives"
	# Another MPI already in the group, at Debian's priority: it stays.
	printf '#!/bin/sh\necho other\n' >"$root/usr/bin/mpicc.other"
	chmod +x "$root/usr/bin/mpicc.other"
	update-alternatives --root "$root" --install /usr/bin/mpicc mpi /usr/bin/mpicc.other 50 \
		>"$out" 2>&1 || fail "update-alternatives for the other MPI"
	"$alt" install --root "$root" >"$out" 2>&1 || fail "bip-alternatives install"
	[ "$(readlink "$root/etc/alternatives/mpi")" = /usr/bin/mpicc.other ] ||
		fail "the other MPI's mpicc was replaced"
	update-alternatives --root "$root" --query mpi >"$out" 2>&1 || fail "--query mpi"
	grep -q "^Alternative: $p/mpicc.bip$" "$out" || fail "mpicc.bip not in the group"
	if [ -f "$bin/mpifort.bip" ]; then
		grep -q "^ mpif90 $p/mpifort.bip$" "$out" || fail "mpif90 does not follow"
	fi
	update-alternatives --root "$root" --query mpirun >"$out" 2>&1 || fail "--query mpirun"
	grep -q "^Alternative: $p/mpirun.bip$" "$out" || fail "mpirun.bip not in the group"
	grep -q "^ mpiexec $p/mpiexec.bip$" "$out" || fail "mpiexec does not follow mpirun"
	update-alternatives --root "$root" --set mpi "$p/mpicc.bip" >"$out" 2>&1 || fail "--set mpi"
	[ "$(readlink "$root/etc/alternatives/mpi")" = "$p/mpicc.bip" ] || fail "--set mpi: no link"
	update-alternatives --root "$root" --set mpirun "$p/mpirun.bip" >"$out" 2>&1 ||
		fail "--set mpirun"
	[ "$(readlink "$root/etc/alternatives/mpiexec")" = "$p/mpiexec.bip" ] ||
		fail "mpiexec does not follow mpirun"
	if [ -f "$bin/mpicxx.bip" ]; then
		[ "$(readlink "$root/etc/alternatives/mpicxx")" = "$p/mpicxx.bip" ] || fail "mpicxx does not follow"
	fi
	# Through a link, the wrapper still finds its tree (the links in the
	# tree are absolute: they lead out of it).
	ln -s "$bin/mpicc.bip" "$tmp/mpicc"
	"$tmp/mpicc" --showme:incdirs >"$out" 2>&1 || fail "mpicc through a link"
	[ -f "$(cat "$out")/mpi.h" ] || fail "mpicc through the link: no mpi.h in $(cat "$out")"
	"$alt" remove --root "$root" >"$out" 2>&1 || fail "bip-alternatives remove"
	[ "$(readlink "$root/etc/alternatives/mpi")" = /usr/bin/mpicc.other ] ||
		fail "remove did not give mpicc back to the other MPI"
	update-alternatives --root "$root" --query mpirun >/dev/null 2>&1 &&
		fail "remove left the mpirun group"
	# A plain mpicc that is a file of its own is left alone.
	update-alternatives --root "$root" --remove-all mpi >/dev/null 2>&1
	printf '#!/bin/sh\n' >"$root/usr/bin/mpicc"
	"$alt" install --root "$root" >"$out" 2>&1 && fail "a plain mpicc file was replaced"
	grep -q "usr/bin/mpicc is not managed by the alternatives system: not replaced" "$out" ||
		fail "no message for a plain mpicc"
	[ ! -L "$root/usr/bin/mpicc" ] || fail "the plain mpicc became a link"
	"$alt" bogus >"$out" 2>&1 && fail "an unknown action accepted"
	grep -q "usage: bip-alternatives" "$out" || fail "no usage"
	;;
*)
	echo "unknown check $check"
	exit 2
	;;
esac
echo "PASS"
