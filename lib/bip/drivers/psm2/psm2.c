/* SPDX-License-Identifier: MIT */
/*
 * psm2.c - the psm2 driver: Omni-Path through libpsm2.
 *
 * Built when libpsm2 is present.  It runs only where an Omni-Path adapter
 * is: the hfi1 kernel driver shows it as /dev/hfi1_<unit>.  Without one,
 * available() says so and bip_init refuses BIP_NIC=psm2 with that reason.
 *
 * The message path over psm2's MQ interface is not written yet: with an
 * adapter present, open still fails and says so (use the ofi driver, whose
 * psm2 provider drives the same hardware).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <psm2.h>

#include "nic.h"

static int bip_psm2_device_present(void)
{
	DIR *d = opendir("/dev");
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d)))
		found = !strncmp(e->d_name, "hfi1_", 5);
	closedir(d);
	return found;
}

static int bip_psm2_available(char *why, size_t len)
{
	if (!bip_psm2_device_present()) {
		snprintf(why, len, "no Omni-Path device (no /dev/hfi1_*)");
		return 0;
	}
	snprintf(why, len, "libpsm2 %d.%d, Omni-Path device present; message path not "
		 "implemented (use BIP_NIC=ofi with BIP_OFI_PROVIDER=psm2)",
		 PSM2_VERNO_MAJOR, PSM2_VERNO_MINOR);
	return 0;
}

static int bip_psm2_open(const struct bip_nic_job *job, struct bip_nic **nic_p)
{
	(void)nic_p;
	bip_psm2_available(job->err, job->errlen);
	return -ENOSYS;
}

static int bip_psm2_nosys(void)
{
	return -ENOSYS;
}

static int bip_psm2_post_short(struct bip_nic *nic, int dst, uint32_t tag, const void *buf,
			   size_t len)
{
	(void)nic, (void)dst, (void)tag, (void)buf, (void)len;
	return bip_psm2_nosys();
}

static int bip_psm2_post_long(struct bip_nic *nic, int dst, uint32_t tag, const void *buf,
			  size_t len, uint64_t cookie)
{
	(void)nic, (void)dst, (void)tag, (void)buf, (void)len, (void)cookie;
	return bip_psm2_nosys();
}

static int bip_psm2_post_long_recv(struct bip_nic *nic, uint64_t handle, void *buf, size_t len,
			       uint64_t cookie)
{
	(void)nic, (void)handle, (void)buf, (void)len, (void)cookie;
	return bip_psm2_nosys();
}

static int bip_psm2_poll(struct bip_nic *nic)
{
	(void)nic;
	return bip_psm2_nosys();
}

static int bip_psm2_alive(struct bip_nic *nic, int node)
{
	(void)nic, (void)node;
	return 0;
}

static void bip_psm2_close(struct bip_nic *nic)
{
	(void)nic;
}

const struct bip_nic_ops bip_psm2_ops = {
	.name = "psm2",
	.available = bip_psm2_available,
	.open = bip_psm2_open,
	.post_short = bip_psm2_post_short,
	.post_long = bip_psm2_post_long,
	.post_long_recv = bip_psm2_post_long_recv,
	.poll = bip_psm2_poll,
	.alive = bip_psm2_alive,
	.close = bip_psm2_close,
};
