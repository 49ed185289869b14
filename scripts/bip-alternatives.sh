#!/bin/sh
# SPDX-License-Identifier: MIT
# bip-alternatives - offer mpicc.bip as the plain mpicc through Debian's
# alternatives system (mpicc.bip(1), ALTERNATIVES).
#   bip-alternatives install | remove [--root DIR] [--bindir DIR]
# install adds mpicc.bip (with mpicxx.bip and mpifort.bip as its
# followers) to the "mpi" link group, and mpirun.bip (with mpiexec.bip) to
# the "mpirun" group, at a low priority: in automatic mode
# another MPI that is installed keeps the plain names; an administrator
# picks BIP with update-alternatives --config mpi.  A plain mpicc that the
# alternatives system does not manage is never replaced.  remove takes
# BIP out of the group.  --root is update-alternatives' (a tree to work
# in); --bindir names where the wrappers are installed (default: beside
# this script).  Run at install time by meson install -Dalternatives=true.
set -u

me=bip-alternatives
priority=5
die() {
	echo "$me: $*" >&2
	exit 1
}
usage() {
	echo "usage: $me install | remove [--root DIR] [--bindir DIR]" >&2
	exit 2
}

[ "$#" -ge 1 ] || usage
action=$1
shift
root=""
bindir=$(dirname "$(readlink -f -- "$0")")
while [ "$#" -gt 0 ]; do
	case "$1" in
	--root)
		[ "$#" -ge 2 ] || usage
		root=$(readlink -f -- "$2") || die "--root $2: no such directory"
		shift 2 ;;
	--bindir)
		[ "$#" -ge 2 ] || usage
		bindir=$2
		shift 2 ;;
	*) usage ;;
	esac
done
case "$action" in
install | remove) ;;
*) usage ;;
esac
# Under --root, the wrappers' own place names the file inside the tree.
if [ -n "$root" ]; then
	case "$bindir" in
	"$root"/*) bindir=${bindir#"$root"} ;;
	esac
fi
# A staged install (meson install --destdir) is not the machine's: the
# packager registers at the target instead.
if [ -n "${DESTDIR:-}" ] && [ -n "${MESON_INSTALL_PREFIX:-}" ]; then
	echo "$me: DESTDIR is set: not registering; run $me install on the target machine"
	exit 0
fi
command -v update-alternatives >/dev/null 2>&1 ||
	die "update-alternatives was not found (the alternatives system is Debian's, in dpkg)"
ua() {
	if [ -n "$root" ]; then
		update-alternatives --root "$root" "$@"
	else
		update-alternatives "$@"
	fi
}

if [ "$action" = remove ]; then
	ua --remove mpi "$bindir/mpicc.bip" || exit
	ua --remove mpirun "$bindir/mpirun.bip"
	exit
fi
[ -x "$root$bindir/mpicc.bip" ] || die "$root$bindir/mpicc.bip is not installed"
# Links that are files of their own belong to someone else.
for l in mpicc mpicxx mpic++ mpifort mpif90 mpif77 mpirun mpiexec; do
	if [ -e "$root/usr/bin/$l" ] && [ ! -L "$root/usr/bin/$l" ]; then
		die "$root/usr/bin/$l is not managed by the alternatives system: not replaced"
	fi
done
set -- --install /usr/bin/mpicc mpi "$bindir/mpicc.bip" "$priority"
if [ -x "$root$bindir/mpicxx.bip" ]; then
	set -- "$@" --slave /usr/bin/mpicxx mpicxx "$bindir/mpicxx.bip" \
		--slave /usr/bin/mpic++ mpic++ "$bindir/mpicxx.bip"
fi
if [ -x "$root$bindir/mpifort.bip" ]; then
	for l in mpifort mpif90 mpif77; do
		set -- "$@" --slave "/usr/bin/$l" "$l" "$bindir/mpifort.bip"
	done
fi
ua "$@" || exit
ua --install /usr/bin/mpirun mpirun "$bindir/mpirun.bip" "$priority" \
	--slave /usr/bin/mpiexec mpiexec "$bindir/mpiexec.bip"
