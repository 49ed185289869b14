#!/bin/sh
# SPDX-License-Identifier: MIT
# leaks.sh BIPLOAD PROGRAM NP SANITIZE WHAT - after MPI_Finalize:
#   leaks   an AddressSanitizer build runs "finalize use" under
#           LeakSanitizer with use_globals=0, so that memory only the
#           library's statics still point to counts as left behind; it must
#           find nothing of MPI's (skipped in other builds)
#   reinit  MPI_Init after MPI_Finalize is refused: the default handler names
#           the call and stops the job
set -u
bipload=$1 prog=$2 np=$3 sanitize=$4 what=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
	echo "leaks.sh: $what on $np processes: $1" >&2
	echo "--- stderr ---" >&2
	cat "$dir/err" >&2
	exit 1
}
case "$what" in
leaks)
	case "$sanitize" in
	*address*) ;;
	*) echo "leaks.sh: not an AddressSanitizer build (b_sanitize=$sanitize): skipped"; exit 77 ;;
	esac
	# Not MPI's: the C++ runtime's exception pool, stdio's buffers, and
	# the layouts of the predefined pair datatypes (MPI_DOUBLE_INT...),
	# which the library builds when it is loaded, before MPI_Init, and
	# which live as long as it.
	cat >"$dir/supp" <<-'END'
	leak:libstdc++
	leak:_IO_file_doallocate
	leak:datatype_init
	END
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1" \
	LSAN_OPTIONS="use_globals=0:suppressions=$dir/supp:print_suppressions=0" \
		"$bipload" -q -sz "$np" --timeout 60 "$prog" use >/dev/null 2>"$dir/err" ||
		fail "the job failed"
	grep -q "LeakSanitizer" "$dir/err" && fail "LeakSanitizer found memory left behind"
	echo "leaks.sh: $np processes: nothing left behind after MPI_Finalize"
	;;
reinit)
	"$bipload" -q -sz "$np" --timeout 60 "$prog" reinit >/dev/null 2>"$dir/err" &&
		fail "bipload succeeded"
	grep -q "FAILED" "$dir/err" && fail "MPI_Init returned after MPI_Finalize"
	grep -q "^mpi: host .*, pid [0-9]*, rank [0-9]*: MPI_Init: MPI_ERR_OTHER: MPI cannot start again after MPI_Finalize" \
		"$dir/err" || fail "no message naming the call and the reason"
	echo "leaks.sh: MPI_Init after MPI_Finalize refused on $np processes"
	;;
*)
	echo "leaks.sh: unknown check $what" >&2
	exit 2
	;;
esac
