/* SPDX-License-Identifier: MIT */
/*
 * nic.c - what nic.h offers the drivers besides their contract.
 */
#include <string.h>

#include "conf.h"
#include "nic.h"

int bip_nic_same_host(const struct bip_conf *conf, int a, int b)
{
	const char *ha = conf->nodes[a].host, *hb = conf->nodes[b].host;

	return a == b || !strcmp(ha, hb) || (bip_host_is_local(ha) && bip_host_is_local(hb));
}
