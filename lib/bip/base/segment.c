/* SPDX-License-Identifier: MIT */
/*
 * segment.c - opening shared memory that another process may have made
 * (segment.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "segment.h"

#define SHM_DIR "/dev/shm"

void bip_segment_owner(unsigned uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (getpwuid_r((uid_t)uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, len, "user %s (uid %u)", res->pw_name, uid);
	else
		snprintf(buf, len, "uid %u", uid);
}

/* Why the file at path, which exists, cannot be ours: a message in err. */
static int explain(const char *path, const struct stat *st, char *err, size_t errlen)
{
	char owner[160];

	if (!S_ISLNK(st->st_mode) && st->st_uid == geteuid() && S_ISREG(st->st_mode) &&
	    (st->st_mode & 07777) == 0600)
		return 0; /* ours: no name to look up (the user database stays closed) */
	bip_segment_owner((unsigned)st->st_uid, owner, sizeof(owner));
	if (S_ISLNK(st->st_mode)) {
		snprintf(err, errlen, "%s is a symbolic link of %s, not a segment of this job: "
			 "refusing it", path, owner);
		return -ELOOP;
	}
	if (st->st_uid != geteuid()) {
		snprintf(err, errlen, "%s belongs to %s, not to this user (uid %u): another user "
			 "created it, perhaps to disturb this job; refusing it", path, owner,
			 (unsigned)geteuid());
		return -EPERM;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "%s is not a regular file: refusing it", path);
		return -EPERM;
	}
	if ((st->st_mode & 07777) != 0600) {
		snprintf(err, errlen, "%s has mode %04o, not 0600 as this job makes its "
			 "segments: refusing it", path, (unsigned)(st->st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* fd, open on path: kept if it is ours (explain), else closed. */
static int adopt(int fd, const char *path, struct stat *st, char *err, size_t errlen)
{
	struct stat sb;
	int rc;

	if (fstat(fd, &sb) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot stat %s: %s", path, strerror(-rc));
		close(fd);
		return rc;
	}
	rc = explain(path, &sb, err, errlen);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	if (st)
		*st = sb;
	return fd;
}

int bip_segment_open(const char *name, int flags, struct stat *st, char *err, size_t errlen)
{
	char path[sizeof(SHM_DIR) + 256];
	struct stat lsb;
	int fd, rc;

	snprintf(path, sizeof(path), SHM_DIR "%s", name);
	fd = shm_open(name, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ENOENT)
			return rc;
		if (lstat(path, &lsb) == 0 && explain(path, &lsb, err, errlen) < 0)
			return rc == -EEXIST ? -EEXIST : -EPERM;
		if (rc == -EEXIST)
			snprintf(err, errlen, "%s already exists: another job of this user with the "
				 "same id (BIP_JOBID) is running, or one was killed before it "
				 "started; remove it if no job uses it", path);
		else
			snprintf(err, errlen, "cannot open %s: %s", path, strerror(-rc));
		return rc;
	}
	return adopt(fd, path, st, err, errlen);
}

int bip_segment_reopen(pid_t pid, int pidfd, struct stat *st, char *err, size_t errlen)
{
	char path[64];
	int fd, rc;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, pidfd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(-rc));
		return rc;
	}
	return adopt(fd, path, st, err, errlen);
}
