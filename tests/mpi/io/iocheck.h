/* SPDX-License-Identifier: MIT */
/*
 * iocheck.h - what the parallel I/O tests share: checks that count
 * failures (every rank reports its own, the job's total decides), error
 * classes by name, a scratch directory per run, and the byte patterns the
 * files are filled with.
 *
 * The scratch directory is made by rank 0 under $IO_TEST_DIR (the build
 * directory, set by meson.build: across test hosts it is the directory
 * they share), else $TMPDIR, else the C library's P_tmpdir, and removed
 * with what it holds at the end.
 */
#ifndef IO_CHECK_H
#define IO_CHECK_H

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

static int rank, size, failures;
static char io_dir[PATH_MAX];
static const char *io_prog = "io";

#define CHECK(cond, ...)                                                                     \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "rank %d: FAILED at %s:%d: %s: ", rank, __FILE__,    \
				__LINE__, #cond);                                            \
			fprintf(stderr, __VA_ARGS__);                                        \
			fputc('\n', stderr);                                                 \
			if (++failures > 20)                                                 \
				MPI_Abort(MPI_COMM_WORLD, 1);                                \
		}                                                                            \
	} while (0)

/* A call that must succeed (its error string is shown if not). */
#define OK(call)                                                                             \
	do {                                                                                 \
		int ok_rc_ = (call);                                                         \
		CHECK(ok_rc_ == MPI_SUCCESS, "%s", io_errstr(ok_rc_));                       \
	} while (0)

/* A call that must fail with an error of class cls. */
#define EXPECT(cls, call)                                                                    \
	do {                                                                                 \
		int ex_rc_ = (call), ex_cls_ = MPI_SUCCESS;                                  \
		if (ex_rc_ != MPI_SUCCESS)                                                   \
			MPI_Error_class(ex_rc_, &ex_cls_);                                   \
		CHECK(ex_cls_ == (cls), "class %s, want %s", io_class_name(ex_cls_),         \
		      io_class_name(cls));                                                   \
	} while (0)

static const char *io_class_name(int cls)
{
	static char other[32];

	switch (cls) {
#define IO_NAME(c)                                                                           \
	case c:                                                                              \
		return #c
		IO_NAME(MPI_SUCCESS);
		IO_NAME(MPI_ERR_ARG);
		IO_NAME(MPI_ERR_TYPE);
		IO_NAME(MPI_ERR_COUNT);
		IO_NAME(MPI_ERR_COMM);
		IO_NAME(MPI_ERR_INFO);
		IO_NAME(MPI_ERR_REQUEST);
		IO_NAME(MPI_ERR_OTHER);
		IO_NAME(MPI_ERR_INTERN);
		IO_NAME(MPI_ERR_FILE);
		IO_NAME(MPI_ERR_NOT_SAME);
		IO_NAME(MPI_ERR_AMODE);
		IO_NAME(MPI_ERR_UNSUPPORTED_DATAREP);
		IO_NAME(MPI_ERR_UNSUPPORTED_OPERATION);
		IO_NAME(MPI_ERR_NO_SUCH_FILE);
		IO_NAME(MPI_ERR_FILE_EXISTS);
		IO_NAME(MPI_ERR_BAD_FILE);
		IO_NAME(MPI_ERR_ACCESS);
		IO_NAME(MPI_ERR_NO_SPACE);
		IO_NAME(MPI_ERR_QUOTA);
		IO_NAME(MPI_ERR_READ_ONLY);
		IO_NAME(MPI_ERR_FILE_IN_USE);
		IO_NAME(MPI_ERR_DUP_DATAREP);
		IO_NAME(MPI_ERR_CONVERSION);
		IO_NAME(MPI_ERR_IO);
#undef IO_NAME
	}
	snprintf(other, sizeof(other), "class %d", cls);
	return other;
}

static const char *io_errstr(int rc)
{
	static char msg[MPI_MAX_ERROR_STRING + 64];
	char s[MPI_MAX_ERROR_STRING];
	int len = 0, cls = -1;

	s[0] = 0;
	MPI_Error_class(rc, &cls);
	MPI_Error_string(rc, s, &len);
	snprintf(msg, sizeof(msg), "error %d, %s: %s", rc, io_class_name(cls), s);
	return msg;
}

/* The path of name in the scratch directory (four calls in a row may be
 * used at once). */
static const char *io_path(const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static int next;
	char *p = buf[next++ & 3];

	/* a name too long for PATH_MAX is cut, and the test's open fails */
	if (snprintf(p, PATH_MAX + 64, "%s/%s", io_dir, name) >= PATH_MAX + 64)
		p[PATH_MAX + 63] = 0;
	return p;
}

static inline void io_rmdir(void)
{
	DIR *d = opendir(io_dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		chmod(io_path(e->d_name), 0600);
		unlink(io_path(e->d_name));
	}
	closedir(d);
	rmdir(io_dir);
}

/* MPI_Init, the ranks, the scratch directory (made by rank 0, its name
 * broadcast). */
static void io_init(int *argc, char ***argv, const char *prog)
{
	int ok = 1;

	io_prog = prog;
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rank == 0) {
		const char *base = getenv("IO_TEST_DIR");

		if (!base || !*base)
			base = getenv("TMPDIR");
		if (!base || !*base)
			base = P_tmpdir;
		snprintf(io_dir, sizeof(io_dir), "%s/%s.XXXXXX", base, prog);
		if (!mkdtemp(io_dir)) {
			fprintf(stderr, "%s: cannot make a directory under %s: %s\n", prog, base,
				strerror(errno));
			ok = 0;
		}
	}
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!ok) {
		MPI_Finalize();
		exit(1);
	}
	MPI_Bcast(io_dir, sizeof(io_dir), MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* The end: the job's failures added up, the directory removed.  Returns
 * the exit status. */
static int io_finish(const char *test)
{
	int total = 0;

	MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		io_rmdir();
	MPI_Finalize();
	if (rank == 0) {
		if (total)
			fprintf(stderr, "%s %s: %d failures\n", io_prog, test, total);
		else
			printf("%s %s: %d processes: passed\n", io_prog, test, size);
	}
	return total ? 1 : 0;
}

/* Every rank: skip the test (exit 77), with the reason. */
static inline void io_skip(const char *why)
{
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		io_rmdir();
		printf("%s: skipped: %s\n", io_prog, why);
	}
	MPI_Finalize();
	exit(77);
}

/* The byte that writer w puts at file offset off. */
static inline unsigned char io_byte(int w, int64_t off)
{
	uint64_t x = (uint64_t)off * 0x9e3779b97f4a7c15ull + (uint64_t)(w + 1) * 0x2545f491ull;

	return (unsigned char)(x >> 56);
}

static inline void io_fill(unsigned char *buf, size_t n, int w, int64_t off)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = io_byte(w, off + (int64_t)i);
}

/* The index of the first byte of buf that is not writer w's at off, or -1. */
static inline long io_diff(const unsigned char *buf, size_t n, int w, int64_t off)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (buf[i] != io_byte(w, off + (int64_t)i))
			return (long)i;
	return -1;
}

/* Checks that buf holds writer w's bytes for file offset off. */
#define CHECK_BYTES(buf, n, w, off, what)                                                    \
	do {                                                                                 \
		long d_ = io_diff((const unsigned char *)(buf), (n), (w), (off));            \
		CHECK(d_ < 0, "%s: byte %ld (file offset %lld) is %d, want %d (writer %d)",  \
		      (what), d_, (long long)(off) + d_,                                     \
		      d_ < 0 ? 0 : ((const unsigned char *)(buf))[d_],                       \
		      d_ < 0 ? 0 : io_byte((w), (off) + d_), (w));                           \
	} while (0)

/* 1 if path exists. */
static inline int io_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Runs the test named by argv[1] from a table. */
struct io_test {
	const char *name;
	void (*fn)(void);
};

static inline int io_main(int argc, char **argv, const char *prog, const struct io_test *tests,
		   size_t n)
{
	size_t i;

	io_init(&argc, &argv, prog);
	if (argc < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: %s TEST\n", prog);
		io_rmdir();
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(argv[1], tests[i].name))
			break;
	if (i == n) {
		if (rank == 0) {
			fprintf(stderr, "%s: no test %s\n", prog, argv[1]);
			io_rmdir();
		}
		MPI_Finalize();
		return 2;
	}
	tests[i].fn();
	return io_finish(argv[1]);
}

#endif /* IO_CHECK_H */
