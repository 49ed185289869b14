/* SPDX-License-Identifier: MIT */
/* Fuzz target: the configuration parser (bipconf(5)), on any bytes; with
 * clusters, also the ways between them, the relays bipload adds (a small
 * file's), and the file written back, which must read again as the same
 * nodes, rails and routes (the "routes direct" form when every route is
 * 256, the manual's otherwise). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

/* conf written and read back: the same configuration, else abort. */
static void round_trip(const struct bip_conf *conf)
{
	struct bip_conf *back = NULL;
	char *text = NULL, err[512];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int i, j, k, h;

	if (!f)
		return;
	if (bip_conf_write(f, conf) != 0) {
		fclose(f);
		free(text);
		return;
	}
	fclose(f);
	if (bip_conf_parse_string(text, "written", &back, err, sizeof(err)) != 0) {
		fprintf(stderr, "written back, does not read again: %s\n%s", err, text);
		abort();
	}
	if (back->n != conf->n || back->nrails != conf->nrails ||
	    back->nclusters != conf->nclusters || back->nrelays != conf->nrelays ||
	    (back->routes == NULL) != bip_conf_all_direct(conf))
		abort();
	for (i = 0; i < conf->n; i++) {
		if (strcmp(back->nodes[i].host, conf->nodes[i].host) ||
		    back->nodes[i].unit != conf->nodes[i].unit)
			abort();
		for (j = 0; j < conf->n; j++)
			for (k = 0; k < conf->nrails; k++) {
				const struct bip_route *a = bip_conf_route(conf, k, i, j);
				const struct bip_route *b = bip_conf_route(back, k, i, j);

				if (a->nhops != b->nhops)
					abort();
				for (h = 0; h < a->nhops; h++)
					if (a->hop[h] != b->hop[h])
						abort();
			}
	}
	bip_conf_free(back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[512];
	struct bip_conf *conf = NULL;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (bip_conf_parse_string(text, "fuzz", &conf, err, sizeof(err)) == 0) {
		char buf[1024];
		int a, b;

		for (a = 0; a < conf->nclusters && a < 16; a++)
			for (b = 0; b < conf->nclusters && b < 16; b++)
				bip_conf_cluster_chain(conf, a, b, buf, sizeof(buf));
		for (a = 0; a < conf->nclusters && a < 16; a++)
			bip_conf_cluster_hosts(conf, a, buf, sizeof(buf));
		if (conf->n <= 64) {
			round_trip(conf);
			if (conf->ngateways <= 64 && bip_conf_add_relays(conf) >= 0 &&
			    conf->ngateways)
				(void)bip_conf_relay_of(conf, conf->gateways[0].host[1]);
			round_trip(conf);
			if (conf->n > 1 && bip_conf_truncate(conf, conf->n - 1) == 0)
				round_trip(conf);
		}
		bip_conf_free(conf);
	}
	free(text);
	return 0;
}
