/* SPDX-License-Identifier: MIT */
/*
 * names.c - the name service (MPI-3.1 10.4.4): MPI_Publish_name,
 * MPI_Lookup_name, MPI_Unpublish_name.
 *
 * Names live in a directory private to the user: BIP_NAMES_DIR, else
 * $HOME/.bip/names, made (mode 0700) when missing.  It must be a directory
 * (not a symbolic link) owned by this user, with no permission for group
 * or others: otherwise another user could read the port names (the
 * capability that lets a process connect) or plant one; the calls refuse
 * it and say why.  It serves the processes of one job always, and the
 * jobs of one user across hosts when $HOME is shared (but a port connects
 * only processes of one job: mpi_shim(7)).
 *
 * One file per service name, named by the name's bytes in hex (so any
 * characters work, and no name reaches outside the directory; names of
 * at most 120 bytes), holding the port name and a newline, mode 0600.
 * Publishing writes a temporary file (O_CREAT | O_EXCL | O_NOFOLLOW) and
 * links it to the name: the link fails if the name exists, so two
 * publishers cannot both win, and a reader never sees half a file.
 * What a file holds is read as untrusted: a regular file of this user, at
 * most MPI_MAX_PORT_NAME bytes, printable characters, else refused.
 * Unpublishing reads the file, compares it with the port name given and
 * removes it (two processes unpublishing one name at once: one of them
 * fails).
 *
 * Errors: publish of a name that exists, unpublish of one that does not
 * or that another port published, a directory refused: MPI_ERR_SERVICE;
 * lookup of a name that does not exist (or a directory refused, or a file
 * refused): MPI_ERR_NAME.  Each with a message naming the directory or the
 * file and the fault.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"
#include "dpm.h"

#define NAME_MAX_BYTES 120

/* The directory, opened: its fd, or -1 with why filled. */
static int names_dir(char *path, size_t plen, char *why, size_t wlen)
{
	const char *env = getenv("BIP_NAMES_DIR"), *home;
	struct stat st;
	int fd;

	if (env && *env) {
		snprintf(path, plen, "%s", env);
	} else {
		home = getenv("HOME");
		if (!home || !*home) {
			snprintf(why, wlen, "neither BIP_NAMES_DIR nor HOME is set: no place for "
				 "the names");
			return -1;
		}
		if (snprintf(path, plen, "%s/.bip", home) >= (int)plen) {
			snprintf(why, wlen, "HOME is too long");
			return -1;
		}
		(void)mkdir(path, 0700);
		snprintf(path, plen, "%s/.bip/names", home);
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		snprintf(why, wlen, "the names directory %s cannot be made: %s", path,
			 strerror(errno));
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, wlen, "the names directory %s cannot be opened: %s%s", path,
			 strerror(errno),
			 errno == ELOOP || errno == ENOTDIR ? " (it must be a directory, not a "
							      "symbolic link)" : "");
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, wlen, "the names directory %s is not a directory", path);
		goto refused;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, wlen, "the names directory %s belongs to user %u, not to this "
			 "user (%u)", path, (unsigned)st.st_uid, (unsigned)geteuid());
		goto refused;
	}
	if (st.st_mode & 077) {
		snprintf(why, wlen, "the names directory %s is open to its group or others "
			 "(mode %03o): it must be private (chmod 700)", path,
			 (unsigned)(st.st_mode & 0777));
		goto refused;
	}
	return fd;

refused:
	close(fd);
	return -1;
}

/* The file name of a service name (hex), or -1 with why filled. */
static int file_of(const char *service, char *file, size_t flen, char *why, size_t wlen)
{
	size_t n, i;

	if (!service || !*service) {
		snprintf(why, wlen, "the service name is %s", service ? "empty" : "NULL");
		return -1;
	}
	n = strnlen(service, NAME_MAX_BYTES + 1);
	if (n > NAME_MAX_BYTES || 2 * n + 1 > flen) {
		snprintf(why, wlen, "the service name is longer than %d bytes", NAME_MAX_BYTES);
		return -1;
	}
	for (i = 0; i < n; i++)
		snprintf(file + 2 * i, 3, "%02x", (unsigned char)service[i]);
	file[2 * n] = '\0';
	return 0;
}

/*
 * Read the port name that file holds into out (MPI_MAX_PORT_NAME bytes):
 * 0, -ENOENT when there is no such file, or -EINVAL with why filled.
 */
static int read_port(int dirfd, const char *dir, const char *file, const char *service,
		     char *out, char *why, size_t wlen)
{
	char buf[MPI_MAX_PORT_NAME + 1];
	struct stat st;
	ssize_t got;
	size_t n = 0, i;
	int fd;

	fd = openat(dirfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		snprintf(why, wlen, "the entry of \"%.60s\" in %s cannot be opened: %s", service,
			 dir, strerror(errno));
		return -EINVAL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_size > MPI_MAX_PORT_NAME) {
		snprintf(why, wlen, "the entry of \"%.60s\" in %s is not a file of this user of "
			 "at most %d bytes", service, dir, MPI_MAX_PORT_NAME);
		close(fd);
		return -EINVAL;
	}
	while (n < sizeof(buf)) {
		got = read(fd, buf + n, sizeof(buf) - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (n && buf[n - 1] == '\n')
		n--;
	for (i = 0; i < n; i++)
		if (buf[i] < 0x21 || buf[i] > 0x7e)
			break;
	if (n == 0 || n >= MPI_MAX_PORT_NAME || i < n) {
		snprintf(why, wlen, "the entry of \"%.60s\" in %s does not hold a port name",
			 service, dir);
		return -EINVAL;
	}
	memcpy(out, buf, n);
	out[n] = '\0';
	return 0;
}

static int check_port_name(const char *port_name, char *why, size_t wlen)
{
	size_t n, i;

	if (!port_name) {
		snprintf(why, wlen, "the port name is NULL");
		return -1;
	}
	n = strnlen(port_name, MPI_MAX_PORT_NAME);
	for (i = 0; i < n; i++)
		if (port_name[i] < 0x21 || port_name[i] > 0x7e)
			break;
	if (n == 0 || n == MPI_MAX_PORT_NAME || i < n) {
		snprintf(why, wlen, "the port name is not 1 to %d printable characters",
			 MPI_MAX_PORT_NAME - 1);
		return -1;
	}
	return 0;
}

int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Publish_name";
	char dir[PATH_MAX], file[2 * NAME_MAX_BYTES + 1], tmp[64], why[PATH_MAX + 200];
	uint64_t nonce = 0;
	size_t len;
	int rc, dfd, fd, err;

	if ((rc = mpi_shim_check_init(call)) ||
	    (rc = mpi_shim_info_check(MPI_COMM_NULL, info, call)))
		return rc;
	if (file_of(service_name, file, sizeof(file), why, sizeof(why)) ||
	    check_port_name(port_name, why, sizeof(why)))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "%s", why);
	if ((dfd = names_dir(dir, sizeof(dir), why, sizeof(why))) < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_SERVICE, call, "%s", why);
	(void)mpi_shim_dpm_random(&nonce, sizeof(nonce));
	snprintf(tmp, sizeof(tmp), ".publish-%d-%ld-%016llx", mpi_shim.world_rank,
		 (long)getpid(), (unsigned long long)nonce);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = errno;
		close(dfd);
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_SERVICE, call,
				    "a file cannot be made in the names directory %s: %s", dir,
				    strerror(err));
	}
	len = strlen(port_name);
	rc = write(fd, port_name, len) == (ssize_t)len && write(fd, "\n", 1) == 1 ? 0 : -1;
	err = errno;
	if (close(fd) < 0 && !rc) {
		rc = -1;
		err = errno;
	}
	if (!rc && linkat(dfd, tmp, dfd, file, 0) < 0) {
		rc = -1;
		err = errno;
	}
	(void)unlinkat(dfd, tmp, 0);
	close(dfd);
	if (rc && err == EEXIST)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_SERVICE, call,
				    "the service name \"%.60s\" is already published (in %s)",
				    service_name, dir);
	if (rc)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_SERVICE, call,
				    "writing the entry of \"%.60s\" in %s failed: %s", service_name,
				    dir, strerror(err));
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Publish_name);

int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Lookup_name";
	char dir[PATH_MAX], file[2 * NAME_MAX_BYTES + 1], why[PATH_MAX + 200];
	char found[MPI_MAX_PORT_NAME];
	int rc, dfd;

	if ((rc = mpi_shim_check_init(call)) ||
	    (rc = mpi_shim_info_check(MPI_COMM_NULL, info, call)))
		return rc;
	if (!port_name)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "port_name is NULL");
	if (file_of(service_name, file, sizeof(file), why, sizeof(why)))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NAME, call, "%s", why);
	if ((dfd = names_dir(dir, sizeof(dir), why, sizeof(why))) < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NAME, call, "%s", why);
	rc = read_port(dfd, dir, file, service_name, found, why, sizeof(why));
	close(dfd);
	if (rc == -ENOENT)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NAME, call,
				    "the service name \"%.60s\" is not published (in %s)",
				    service_name, dir);
	if (rc)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_NAME, call, "%s", why);
	strcpy(port_name, found);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Lookup_name);

int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
	MPI_SHIM_ENTER();
	static const char call[] = "MPI_Unpublish_name";
	char dir[PATH_MAX], file[2 * NAME_MAX_BYTES + 1], why[PATH_MAX + 200];
	char found[MPI_MAX_PORT_NAME];
	int rc, dfd, err;

	if ((rc = mpi_shim_check_init(call)) ||
	    (rc = mpi_shim_info_check(MPI_COMM_NULL, info, call)))
		return rc;
	if (file_of(service_name, file, sizeof(file), why, sizeof(why)) ||
	    check_port_name(port_name, why, sizeof(why)))
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_ARG, call, "%s", why);
	if ((dfd = names_dir(dir, sizeof(dir), why, sizeof(why))) < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_SERVICE, call, "%s", why);
	rc = read_port(dfd, dir, file, service_name, found, why, sizeof(why));
	if (rc == -ENOENT) {
		close(dfd);
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_SERVICE, call,
				    "the service name \"%.60s\" is not published (in %s)",
				    service_name, dir);
	}
	if (rc) {
		close(dfd);
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_SERVICE, call, "%s", why);
	}
	if (strcmp(found, port_name)) {
		close(dfd);
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_SERVICE, call,
				    "the service name \"%.60s\" was published with another port "
				    "name", service_name);
	}
	rc = unlinkat(dfd, file, 0);
	err = errno;
	close(dfd);
	if (rc < 0)
		return mpi_shim_err(MPI_COMM_NULL, MPI_ERR_SERVICE, call,
				    "removing the entry of \"%.60s\" from %s failed: %s",
				    service_name, dir, strerror(err));
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_Unpublish_name);
