/* SPDX-License-Identifier: MIT */
/*
 * fwd.h - forwarding between clusters through the relays (fwd.c).
 */
#ifndef BIP_FWD_H
#define BIP_FWD_H

#include <stddef.h>
#include <stdint.h>

#include "nic.h"

struct bip_conf;

/* The forwarding driver: a datagram driver (rel.h) serving the nodes this
 * process reaches only through relays. */
extern const struct bip_nic_ops bip_fwd_ops;

/* Before the drivers open, in a job with relays: this node's routes, and
 * the core's tag BIP_TAG_FWD taken.  0, or a negative errno with err set. */
int bip_fwd_setup(int mynode, const struct bip_conf *conf, char *err, size_t errlen);

/* 1 if some route through the relays reaches node. */
int bip_fwd_reaches(int node);

/* Receive and send on what the relays hold (from bip_progress). */
int bip_fwd_progress(void);

/* A long message posted with BIP_FWD_SEND (state.h) has completed:
 * bip_core_send_done hands it to the layer's send_done, which calls this. */
void bip_fwd_send_done(uint64_t cookie, int status);

/* 1 while this relay holds packets to forward (bip_relay_run). */
int bip_fwd_holding(void);
/* The packets this relay dropped. */
unsigned long long bip_fwd_dropped(void);

/* The drivers are about to close, the forwarding one first: from now on
 * its poll polls the others, which bring its packets (its reliability
 * layer waits for its last acknowledgements inside its close). */
void bip_fwd_closing(void);
/* The reliability layer's instance over this driver (init.c, at open). */
void bip_fwd_upper(struct bip_nic *upper);

/* Release everything (after the drivers have closed). */
void bip_fwd_close(void);

/* bipgw(1): start as a relay node of the job and forward until SIGTERM or
 * SIGINT.  Returns the exit status (relay.c, above the core: it runs
 * bip_init and bip_progress as a program does). */
int bip_relay_run(void);

#endif /* BIP_FWD_H */
