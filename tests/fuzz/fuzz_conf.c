/* SPDX-License-Identifier: MIT */
/* Fuzz target: the configuration parser (bipconf(5)), on any bytes; with
 * clusters, also the ways between them, the relays bipload adds (a small
 * file's), and the file written back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

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
		FILE *f;

		for (a = 0; a < conf->nclusters && a < 16; a++)
			for (b = 0; b < conf->nclusters && b < 16; b++)
				bip_conf_cluster_chain(conf, a, b, buf, sizeof(buf));
		if (conf->n <= 64 && conf->ngateways <= 64 && bip_conf_add_relays(conf) >= 0 &&
		    conf->ngateways)
			(void)bip_conf_relay_of(conf, conf->gateways[0].host[1]);
		f = fopen("/dev/null", "w");
		if (f) {
			bip_conf_write(f, conf);
			fclose(f);
		}
		bip_conf_free(conf);
	}
	free(text);
	return 0;
}
