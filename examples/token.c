/* SPDX-License-Identifier: MIT */
/* The quick start example of the BIP manual (section 2.3). */
#include <stdio.h>
#include "bip.h"

int main(int argc, char *argv[])
{
	int token;

	bip_init();
	if (bip_mynode == 0) {
		token = 333;
		printf("token start on 0\n");
		bip_send(1, &token, 1);
		bip_recv(&token, 1);
		printf("token arrived\n");
	} else {
		bip_recv(&token, 1);
		printf("token %d received on %d\n", token, bip_mynode);
		bip_send((bip_mynode + 1) % bip_numnodes, &token, 1);
	}
	return 0;
}
