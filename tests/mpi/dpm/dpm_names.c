/* SPDX-License-Identifier: MIT */
/*
 * The name service (MPI-3.1 10.4.4): dpm_names TEST, under bipload, in a
 * fresh directory that rank 0 makes under $DPM_TEST_DIR (else $TMPDIR,
 * else /tmp) and hands to the others as BIP_NAMES_DIR; removed at the end.
 *
 *   basic    publish, lookup (from every rank), unpublish; duplicates,
 *            missing names, another port's name; names of any characters;
 *            the directory made 0700 when missing, the files 0600
 *   perms    a directory open to others, a symbolic link, a file that is
 *            not a port name, one too long: refused
 *   connect  the first half of the job publishes its port, the second
 *            looks it up and connects (2 or more processes)
 *   twojobs-server, twojobs-client, twojobs-fatal  (twojobs.sh) two jobs
 *            started apart: the server publishes a port, the client looks
 *            it up and its connect fails with MPI_ERR_PORT (under
 *            MPI_ERRORS_RETURN), or ends the job with a message naming the
 *            other job (twojobs-fatal)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../mpicheck.h"

static int rank, size;
static char dir[PATH_MAX];

#define EXPECT(cls, call)                                                                    \
	do {                                                                                 \
		int ex_rc_ = (call), ex_cls_ = MPI_SUCCESS;                                  \
		if (ex_rc_ != MPI_SUCCESS)                                                   \
			MPI_Error_class(ex_rc_, &ex_cls_);                                   \
		CHECK(ex_cls_ == (cls), "class %d, want %d", ex_cls_, (cls));                \
	} while (0)

/* Rank 0 makes a fresh directory (not yet the names directory: that is a
 * child of it, made by the library) and every rank points BIP_NAMES_DIR at
 * the child. */
static void make_dir(void)
{
	const char *base = getenv("DPM_TEST_DIR");
	char names[PATH_MAX + 16];

	if (!base || !*base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	if (rank == 0) {
		snprintf(dir, sizeof(dir), "%s/dpm_names.XXXXXX", base);
		CHECK(mkdtemp(dir) != NULL, "mkdtemp %s: %s", dir, strerror(errno));
	}
	OK(MPI_Bcast(dir, sizeof(dir), MPI_CHAR, 0, MPI_COMM_WORLD));
	snprintf(names, sizeof(names), "%s/names", dir);
	setenv("BIP_NAMES_DIR", names, 1);
}

static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char p[PATH_MAX * 2];
	struct stat st;

	if (!d) {
		unlink(path);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		if (!lstat(p, &st) && S_ISDIR(st.st_mode)) {
			chmod(p, 0700);
			remove_tree(p);
		} else {
			unlink(p);
		}
	}
	closedir(d);
	rmdir(path);
}

static void done_dir(void)
{
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		remove_tree(dir);
}

static void test_basic(void)
{
	char port[MPI_MAX_PORT_NAME], got[MPI_MAX_PORT_NAME], other[MPI_MAX_PORT_NAME];
	char path[PATH_MAX + 64];
	struct stat st;
	static const char *const odd[] = {
		"a/b", "..", ".", "../../etc/passwd", "with space", "\xc3\xa9t\xc3\xa9",
		"-rf", "name\nline",
	};
	int i;

	make_dir();
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	if (rank == 0) {
		OK(MPI_Open_port(MPI_INFO_NULL, port));
		OK(MPI_Publish_name("ocean", MPI_INFO_NULL, port));
		/* The directory was made private, the file too. */
		CHECK(!stat(getenv("BIP_NAMES_DIR"), &st) && (st.st_mode & 0777) == 0700,
		      "directory mode %o", (unsigned)(st.st_mode & 0777));
		snprintf(path, sizeof(path), "%s/%s", getenv("BIP_NAMES_DIR"), "6f6365616e");
		CHECK(!stat(path, &st) && (st.st_mode & 0777) == 0600, "file mode %o",
		      (unsigned)(st.st_mode & 0777));
		EXPECT(MPI_ERR_SERVICE, MPI_Publish_name("ocean", MPI_INFO_NULL, port));
		EXPECT(MPI_ERR_SERVICE, MPI_Publish_name("ocean", MPI_INFO_NULL, "bip:x:0:y"));
	}
	OK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
	memset(got, 0, sizeof(got));
	OK(MPI_Lookup_name("ocean", MPI_INFO_NULL, got));
	CHECK(!strcmp(got, port), "lookup gave \"%s\", want \"%s\"", got, port);
	EXPECT(MPI_ERR_NAME, MPI_Lookup_name("sea", MPI_INFO_NULL, got));
	EXPECT(MPI_ERR_NAME, MPI_Lookup_name("", MPI_INFO_NULL, got));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == size - 1) {
		/* Another port's name does not unpublish it. */
		strcpy(other, port);
		other[strlen(other) - 1] = other[strlen(other) - 1] == 'a' ? 'b' : 'a';
		EXPECT(MPI_ERR_SERVICE, MPI_Unpublish_name("ocean", MPI_INFO_NULL, other));
		OK(MPI_Lookup_name("ocean", MPI_INFO_NULL, got));
		CHECK(!strcmp(got, port), "lookup gave \"%s\"", got);
		OK(MPI_Unpublish_name("ocean", MPI_INFO_NULL, port));
		EXPECT(MPI_ERR_SERVICE, MPI_Unpublish_name("ocean", MPI_INFO_NULL, port));
		EXPECT(MPI_ERR_SERVICE, MPI_Unpublish_name("never", MPI_INFO_NULL, port));
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
	EXPECT(MPI_ERR_NAME, MPI_Lookup_name("ocean", MPI_INFO_NULL, got));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	/* Any characters, each rank its own names. */
	for (i = 0; i < (int)(sizeof(odd) / sizeof(odd[0])); i++) {
		char name[64], value[64];

		snprintf(name, sizeof(name), "%s%d", odd[i], rank);
		snprintf(value, sizeof(value), "bip:value:%d:%d", rank, i);
		OK(MPI_Publish_name(name, MPI_INFO_NULL, value));
		OK(MPI_Lookup_name(name, MPI_INFO_NULL, got));
		CHECK(!strcmp(got, value), "\"%s\" gave \"%s\"", name, got);
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
	for (i = 0; i < (int)(sizeof(odd) / sizeof(odd[0])); i++) {
		char name[64], value[64];

		snprintf(name, sizeof(name), "%s%d", odd[i], (rank + 1) % size);
		snprintf(value, sizeof(value), "bip:value:%d:%d", (rank + 1) % size, i);
		OK(MPI_Lookup_name(name, MPI_INFO_NULL, got));
		CHECK(!strcmp(got, value), "\"%s\" gave \"%s\"", name, got);
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
	for (i = 0; i < (int)(sizeof(odd) / sizeof(odd[0])); i++) {
		char name[64], value[64];

		snprintf(name, sizeof(name), "%s%d", odd[i], rank);
		snprintf(value, sizeof(value), "bip:value:%d:%d", rank, i);
		OK(MPI_Unpublish_name(name, MPI_INFO_NULL, value));
	}
	/* Nothing was written outside the directory. */
	if (rank == 0) {
		snprintf(path, sizeof(path), "%s/a", dir);
		CHECK(access(path, F_OK) != 0, "a file was made outside the names directory");
		OK(MPI_Close_port(port));
	}
	/* Arguments. */
	{
		char longname[200];

		memset(longname, 'n', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		EXPECT(MPI_ERR_ARG, MPI_Publish_name(longname, MPI_INFO_NULL, "bip:a:0:b"));
		EXPECT(MPI_ERR_ARG, MPI_Publish_name("x", MPI_INFO_NULL, ""));
		EXPECT(MPI_ERR_ARG, MPI_Publish_name("x", MPI_INFO_NULL, "has space"));
		EXPECT(MPI_ERR_ARG, MPI_Publish_name(NULL, MPI_INFO_NULL, "bip:a:0:b"));
	}
	done_dir();
}

static void put_file(const char *name_hex, const char *content, size_t len)
{
	char path[PATH_MAX + 300];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", getenv("BIP_NAMES_DIR"), name_hex);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0, "open %s", path);
	CHECK(write(fd, content, len) == (ssize_t)len, "write");
	close(fd);
}

static void test_perms(void)
{
	char got[MPI_MAX_PORT_NAME], big[MPI_MAX_PORT_NAME * 2], link_path[PATH_MAX + 16];
	const char *names;

	make_dir();
	names = getenv("BIP_NAMES_DIR");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	if (rank == 0) {
		OK(MPI_Publish_name("first", MPI_INFO_NULL, "bip:a:0:b"));
		/* Open to others: refused by every call. */
		CHECK(!chmod(names, 0755), "chmod");
		EXPECT(MPI_ERR_SERVICE, MPI_Publish_name("second", MPI_INFO_NULL, "bip:a:0:b"));
		EXPECT(MPI_ERR_NAME, MPI_Lookup_name("first", MPI_INFO_NULL, got));
		EXPECT(MPI_ERR_SERVICE, MPI_Unpublish_name("first", MPI_INFO_NULL, "bip:a:0:b"));
		CHECK(!chmod(names, 0770), "chmod");
		EXPECT(MPI_ERR_NAME, MPI_Lookup_name("first", MPI_INFO_NULL, got));
		CHECK(!chmod(names, 0700), "chmod");
		OK(MPI_Lookup_name("first", MPI_INFO_NULL, got));
		CHECK(!strcmp(got, "bip:a:0:b"), "lookup gave \"%s\"", got);

		/* Files that do not hold a port name. */
		put_file("6a756e6b", "bip:\x01\x02zz\n", 9);          /* "junk" */
		EXPECT(MPI_ERR_NAME, MPI_Lookup_name("junk", MPI_INFO_NULL, got));
		memset(big, 'b', sizeof(big));
		put_file("626967", big, sizeof(big));                  /* "big" */
		EXPECT(MPI_ERR_NAME, MPI_Lookup_name("big", MPI_INFO_NULL, got));
		put_file("656d707479", "", 0);                         /* "empty" */
		EXPECT(MPI_ERR_NAME, MPI_Lookup_name("empty", MPI_INFO_NULL, got));
		/* A symbolic link in place of an entry is not followed. */
		snprintf(link_path, sizeof(link_path), "%s/6c6e6b", names); /* "lnk" */
		CHECK(!symlink("/etc/hostname", link_path), "symlink");
		EXPECT(MPI_ERR_NAME, MPI_Lookup_name("lnk", MPI_INFO_NULL, got));

		/* The directory itself a symbolic link: refused. */
		snprintf(link_path, sizeof(link_path), "%s/alias", dir);
		CHECK(!symlink(names, link_path), "symlink");
		setenv("BIP_NAMES_DIR", link_path, 1);
		EXPECT(MPI_ERR_NAME, MPI_Lookup_name("first", MPI_INFO_NULL, got));
		EXPECT(MPI_ERR_SERVICE, MPI_Publish_name("third", MPI_INFO_NULL, "bip:a:0:b"));
		/* A plain file in its place: refused. */
		snprintf(link_path, sizeof(link_path), "%s/plain", dir);
		CHECK(close(open(link_path, O_WRONLY | O_CREAT, 0600)) == 0, "create");
		setenv("BIP_NAMES_DIR", link_path, 1);
		EXPECT(MPI_ERR_SERVICE, MPI_Publish_name("third", MPI_INFO_NULL, "bip:a:0:b"));
		/* Neither variable: refused, not a guess. */
		unsetenv("BIP_NAMES_DIR");
		{
			char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

			unsetenv("HOME");
			EXPECT(MPI_ERR_NAME, MPI_Lookup_name("first", MPI_INFO_NULL, got));
			if (home)
				setenv("HOME", home, 1);
			free(home);
		}
	}
	done_dir();
}

static void test_connect(void)
{
	int lo = size / 2, first = rank < lo, v = -1, rsize;
	char port[MPI_MAX_PORT_NAME] = "", got[MPI_MAX_PORT_NAME];
	MPI_Comm half, ic;

	CHECK(size >= 2, "needs 2 processes");
	make_dir();
	OK(MPI_Comm_split(MPI_COMM_WORLD, first, rank, &half));
	if (rank == 0) {
		OK(MPI_Open_port(MPI_INFO_NULL, port));
		OK(MPI_Publish_name("dpm-connect", MPI_INFO_NULL, port));
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (first) {
		OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &ic));
	} else {
		if (rank == lo)
			OK(MPI_Lookup_name("dpm-connect", MPI_INFO_NULL, got));
		OK(MPI_Comm_connect(rank == lo ? got : NULL, MPI_INFO_NULL, 0, half, &ic));
	}
	OK(MPI_Comm_remote_size(ic, &rsize));
	CHECK(rsize == (first ? size - lo : lo), "remote size %d", rsize);
	if (first) {
		v = 31337;
		OK(MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic));
	} else {
		OK(MPI_Bcast(&v, 1, MPI_INT, 0, ic));
		CHECK(v == 31337, "bcast gave %d", v);
	}
	OK(MPI_Comm_disconnect(&ic));
	if (rank == 0) {
		OK(MPI_Unpublish_name("dpm-connect", MPI_INFO_NULL, port));
		OK(MPI_Close_port(port));
	}
	OK(MPI_Comm_free(&half));
	done_dir();
}

/* twojobs.sh: BIP_NAMES_DIR is the script's; the server waits for the
 * client's mark file there before it ends. */
static void sleep_a_little(void)
{
	struct timespec ts = { 0, 20000000 };

	nanosleep(&ts, NULL);
}

static void test_twojobs(int server)
{
	char port[MPI_MAX_PORT_NAME], got[MPI_MAX_PORT_NAME], mark[PATH_MAX + 16];
	char msg[MPI_MAX_ERROR_STRING];
	MPI_Comm ic = MPI_COMM_NULL;
	int i, rc, len, cls;

	snprintf(mark, sizeof(mark), "%s/../client-done", getenv("BIP_NAMES_DIR"));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	if (server > 0) {
		if (rank == 0) {
			OK(MPI_Open_port(MPI_INFO_NULL, port));
			OK(MPI_Publish_name("twojobs", MPI_INFO_NULL, port));
			/* Until the client is done (bipload's time-out bounds it). */
			while (access(mark, F_OK) != 0) {
				OK(MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &i,
					      MPI_STATUS_IGNORE));
				sleep_a_little();
			}
			OK(MPI_Unpublish_name("twojobs", MPI_INFO_NULL, port));
			OK(MPI_Close_port(port));
		}
		OK(MPI_Barrier(MPI_COMM_WORLD));
		return;
	}
	if (server < 0) {
		/* Under MPI_ERRORS_ARE_FATAL: the job ends, with the message. */
		OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
		OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
	}
	if (rank == 0) {
		/* The server publishes when it gets there. */
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		while ((rc = MPI_Lookup_name("twojobs", MPI_INFO_NULL, got)) != MPI_SUCCESS) {
			MPI_Error_class(rc, &cls);
			CHECK(cls == MPI_ERR_NAME, "lookup failed with class %d", cls);
			sleep_a_little();
		}
		CHECK(!strncmp(got, "bip:", 4), "looked up \"%s\"", got);
		if (server < 0)
			OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	}
	rc = MPI_Comm_connect(rank == 0 ? got : NULL, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
	CHECK(server == 0, "the connect returned under MPI_ERRORS_ARE_FATAL");
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_PORT, "connect to another job's port: class %d", cls);
	CHECK(ic == MPI_COMM_NULL, "a communicator came out of the failed connect");
	MPI_Error_string(rc, msg, &len);
	CHECK(len > 0, "no error string");
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		int fd = open(mark, O_WRONLY | O_CREAT, 0600);

		CHECK(fd >= 0, "cannot make %s", mark);
		close(fd);
	}
}

int main(int argc, char **argv)
{
	const char *t = argc > 1 ? argv[1] : "";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	check_rank = rank;
	if (!strcmp(t, "basic"))
		test_basic();
	else if (!strcmp(t, "perms"))
		test_perms();
	else if (!strcmp(t, "connect"))
		test_connect();
	else if (!strcmp(t, "twojobs-server"))
		test_twojobs(1);
	else if (!strcmp(t, "twojobs-client"))
		test_twojobs(0);
	else if (!strcmp(t, "twojobs-fatal"))
		test_twojobs(-1);
	else
		CHECK(0, "unknown test \"%s\"", t);
	MPI_Finalize();
	return 0;
}
