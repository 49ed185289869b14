/* SPDX-License-Identifier: MIT */
/*
 * nic.c - what nic.h offers the drivers besides their contract.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "nic.h"
#include "pm.h"
#include "state.h"

int bip_nic_same_host(const struct bip_conf *conf, int a, int b)
{
	const char *ha = conf->nodes[a].host, *hb = conf->nodes[b].host;

	return a == b || !strcmp(ha, hb) || (bip_host_is_local(ha) && bip_host_is_local(hb));
}

/*
 * A node that joined the job may run on another host than the one its
 * entry of the configuration names (every joined node's entry names where
 * nodes join by default, boot_bipload.c): its host is asked of bipload the
 * first time it matters, and kept.  Nothing is kept for a node that has
 * not joined yet (bipload says so, and it is asked again later).
 */
void bip_nic_learn_host(int node)
{
	static pthread_mutex_t learning = PTHREAD_MUTEX_INITIALIZER;
	struct bip_conf *conf = bip_state.conf;
	char host[BIP_CONF_HOSTLEN], err[256];

	if (!conf || node < conf->n - conf->grown || node >= conf->n || node == bip_state.mynode ||
	    !bip_pm_present())
		return;
	/* Learnt already: no lock (a relay asks at every packet for such a
	 * node, fwd.c). */
	if (bip_nic_host_known(node))
		return;
	pthread_mutex_lock(&learning);
	if (!bip_state.host_learnt)
		__atomic_store_n(&bip_state.host_learnt, calloc((size_t)conf->n, 1),
				 __ATOMIC_RELEASE);
	if (bip_state.host_learnt && !bip_state.host_learnt[node] &&
	    bip_pm_host(node, host, sizeof(host), err, sizeof(err)) == 0) {
		bip_conf_set_host(conf, node, host);
		__atomic_store_n(&bip_state.host_learnt[node], 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&learning);
}

int bip_nic_host_known(int node)
{
	const unsigned char *learnt = __atomic_load_n(&bip_state.host_learnt, __ATOMIC_ACQUIRE);

	return learnt && __atomic_load_n(&learnt[node], __ATOMIC_ACQUIRE);
}
