/* SPDX-License-Identifier: MIT */
/*
 * lanai.h - what the lanai driver shares with lanai-sim and bipload.
 */
#ifndef BIP_LANAI_H
#define BIP_LANAI_H

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "conf.h"

/* "/bip-<uid>-<jobid>-lanai": the board segment of a job on this host
 * (under the job's prefix, so that bipload's clean-up removes it too).
 * Returns 0 or a negative errno. */
static inline int bip_lanai_segment_name(char *buf, size_t len, const char *jobid)
{
	char prefix[80];
	int rc = bip_shm_prefix(prefix, sizeof(prefix), (unsigned)getuid(), jobid);

	if (rc < 0)
		return rc;
	if ((size_t)snprintf(buf, len, "/%slanai", prefix) >= len)
		return -ENAMETOOLONG;
	return 0;
}

#endif /* BIP_LANAI_H */
