/* SPDX-License-Identifier: MIT */
/*
 * netproto.c - the start-up and teardown side of the network drivers'
 * protocol (netproto.h): each peer's books, and what tells a driver that a
 * peer shares its kernel, so that the peer's process id means something
 * here (the drivers then watch that process to see a peer gone).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drivers/netproto.h"

int bip_netproto_peer_init(struct bip_netproto_peer *p, uint32_t ncredits)
{
	void **held = calloc(ncredits, sizeof(*held));

	if (!held)
		return -ENOMEM;
	p->held = held;
	p->credits = ncredits;
	return 0;
}

void bip_netproto_peer_fini(struct bip_netproto_peer *p)
{
	free(p->held);
	p->held = NULL;
}

void bip_netproto_kernel_id(char *boot_id, size_t len, uint64_t *pidns_p)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, boot_id, len - 1) : -1;
	struct stat st;

	if (fd >= 0)
		close(fd);
	boot_id[n > 0 ? n : 0] = '\0';
	/* Containers share a boot id: pids compare only within one pid namespace. */
	*pidns_p = stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}
