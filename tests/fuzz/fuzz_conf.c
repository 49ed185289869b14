/* SPDX-License-Identifier: MIT */
/* Fuzz target: the configuration parser (bipconf(5)), on any bytes. */
#include <stdint.h>
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
	if (bip_conf_parse_string(text, "fuzz", &conf, err, sizeof(err)) == 0)
		bip_conf_free(conf);
	free(text);
	return 0;
}
