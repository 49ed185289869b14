/* SPDX-License-Identifier: MIT */
/*
 * segment.h - opening shared memory that another process may have made.
 *
 * A segment's name in /dev/shm can be listed, guessed and created first by
 * any user of the machine.  So a segment is opened only through here: never
 * through a symbolic link (O_NOFOLLOW), and only when it is a regular file
 * of this effective user with mode 0600, as the job's own processes create
 * them.  Anything else is refused with a message that names the file and its
 * real owner.  What lies inside is still checked by its reader, field by
 * field, against the mapping: the owner check keeps other users out, not
 * bugs or corruption.
 */
#ifndef BIP_SEGMENT_H
#define BIP_SEGMENT_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Open shm name (with its leading '/') with flags (O_RDWR, plus O_CREAT |
 * O_EXCL to create it with mode 0600).  Returns the descriptor, with its
 * stat in *st when st is not NULL, or a negative errno: -ENOENT when it
 * does not exist yet (no message), else a message in err naming the file and
 * why: -EEXIST (creating: it exists; says whose), -ELOOP (a symbolic link),
 * -EPERM (another owner, or not mode 0600, or not a regular file).
 */
int bip_segment_open(const char *name, int flags, struct stat *st, char *err, size_t errlen);

/*
 * The segment a live process holds open as its descriptor pidfd, whose
 * name it has already removed (a node that joined a running job reaches
 * its peers so, bip_grow(3)): /proc/PID/fd/FD, which the kernel opens only
 * for this user's processes, with the same checks of owner, type and mode
 * as bip_segment_open.  The descriptor, or a negative errno with err.
 */
int bip_segment_reopen(pid_t pid, int pidfd, struct stat *st, char *err, size_t errlen);
/* "user NAME (uid N)", or "uid N" when the user has no name. */
void bip_segment_owner(unsigned uid, char *buf, size_t len);

#endif /* BIP_SEGMENT_H */
