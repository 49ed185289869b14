/* SPDX-License-Identifier: MIT */
/* Fuzz target: the routing database parser (biproute(1), bipconf(5)). */
#include <stdint.h>
#include <stdio.h>

#include "bipdatabase.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bip_database *db = NULL;
	char err[512];
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	if (bip_database_read(f, "fuzz", &db, err, sizeof(err)) == 0) {
		struct bip_route r;

		FILE *out;

		bip_database_has(db, "a");
		bip_database_route(db, "a", "b", &r);
		bip_database_route_rail(db, "b", "a", 1, &r);
		bip_database_all_direct(db);
		out = fopen("/dev/null", "w");
		if (out) {
			bip_database_write(out, db);
			fclose(out);
		}
		bip_database_free(db);
	}
	fclose(f);
	return 0;
}
