/* SPDX-License-Identifier: MIT */
/*
 * bip.h - BIP, the Basic Interface for Parallelism (API of BIP 0.92).
 *
 * Every call of the BIP 0.92 user manual, with its names, signatures and
 * semantics, plus a few modern additions at the end (bip_finalize, the last
 * error string, counters).  Lengths are counted in 4-byte words.
 */
#ifndef BIP_H
#define BIP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BIP_VERSION_MAJOR 0
#define BIP_VERSION_MINOR 92

/* Number of receive queues (tags 0 .. NTAGS-1) on every node. */
#define NTAGS 200

/*
 * Messages of at most BIPSMALLSIZE words (256 bytes) are "short": they are
 * buffered in the receiver's queue for their tag.  Longer messages are "long":
 * they go straight from the sender's buffer into the receiver's buffer.
 */
#define BIPSMALLSIZE 64

/* Default size of each tag's queue: BIP_DEFAULT_NBUFS messages of
 * BIP_DEFAULT_BUFSIZE words (each with BIP_MSG_HEAD words of head). */
#define BIP_DEFAULT_NBUFS 32
#define BIP_DEFAULT_BUFSIZE BIPSMALLSIZE
#define BIP_MSG_HEAD 4

/* Logical number of this process and number of processes; valid after bip_init. */
extern int bip_mynode, bip_numnodes;

/* 3.1 Basic primitives */
void bip_init(void);
int bip_tisend(int dst, int tag, int *buf, int length);
void bip_swait(int id);
int bip_stest(int id);
int bip_tirecv(int tag, int *buf, int maxlength);
int bip_rwait(int id);
int bip_rwaitx(int id, int *node);
int bip_rtest(int id);
int bip_rtestx(int id, int *node);
int bip_tprobe(int tag);
int bip_tnrecv(int tag, int *buf, int maxlength);
int bip_tnrecvx(int tag, int *buf, int maxlength, int *node);
int *bip_tgetmsg(int tag, int *length, int *node);
int *bip_tngetmsg(int tag, int *length, int *node);
void bip_tfreemsg(int tag);
int bip_taginit(int tag, int nbufs, int size);

/* 3.2 Blocking calls */
int bip_trecv(int tag, int *buf, int maxlength);
int bip_trecvx(int tag, int *buf, int maxlength, int *node);
int bip_tsend(int dst, int tag, int *buf, int length);

/* 3.3 Untagged calls: the same on tag 0 */
int bip_isend(int dst, int *buf, int length);
int bip_irecv(int *buf, int maxlength);
int bip_nrecv(int *buf, int maxlength);
int bip_nrecvx(int *buf, int maxlength, int *node);
int *bip_getmsg(int *length, int *node);
int *bip_ngetmsg(int *length, int *node);
void bip_freemsg(void);
int bip_probe(void);
int bip_recv(int *buf, int maxlength);
int bip_recvx(int *buf, int maxlength, int *node);
int bip_send(int dst, int *buf, int length);

/* Modern additions */

/* Waits for this process's sends to complete and releases everything
 * bip_init took.  Also run at exit.  Returns 0, or -1 if BIP was not
 * initialised. */
int bip_finalize(void);

/* The message of the last failed BIP call in this thread ("" if none). */
const char *bip_error_string(void);

/* Counters of this process since bip_init. */
struct bip_counters {
	uint64_t short_sent;     /* short messages handed to the NIC */
	uint64_t long_sent;      /* long messages completed (sender side) */
	uint64_t short_received; /* short messages delivered to the application */
	uint64_t long_received;  /* long messages delivered to the application */
	uint64_t bytes_sent;
	uint64_t bytes_received;
	uint64_t send_stalls;    /* sends that had to wait for room at the receiver */
	uint64_t errors;         /* calls that failed */
};
void bip_get_counters(struct bip_counters *counters);

/*
 * Byte-length forms, for layers built on BIP (such as MPI): the same as
 * bip_tisend, bip_tirecv, bip_rwaitx and bip_rtestx, with lengths in bytes
 * (any number, up to 4 GiB - 1) and tags from 0 to NTAGS + BIP_RESERVED_TAGS
 * - 1; the BIP_RESERVED_TAGS tags above NTAGS are for such a layer, which a
 * program using the word calls cannot disturb.  Messages of at most
 * BIPSMALLSIZE * 4 bytes are short.  The wait and test calls return the
 * length in bytes, or -1.
 */
#define BIP_RESERVED_TAGS 8
int bip_tisend_bytes(int dst, int tag, const void *buf, size_t len);
int bip_tirecv_bytes(int tag, void *buf, size_t maxlen);
long bip_rwait_bytes(int id, int *node);
long bip_rtest_bytes(int id, int *node);

#ifdef __cplusplus
}
#endif

#endif /* BIP_H */
