/* SPDX-License-Identifier: MIT */
/*
 * pvar.c - performance variables (MPI-3.1 14.3.7): MPI_T_pvar_get_num,
 * _get_info, _get_index; sessions (MPI_T_pvar_session_create, _free);
 * handles (MPI_T_pvar_handle_alloc, _free, _start, _stop, _read, _write,
 * _reset, _readreset).
 *
 * The variables, none bound to an object (MPI_T_BIND_NO_OBJECT):
 *
 *   p2p          BIP's message counters (bip_get_counters(3)): short and
 *                long messages sent and received, bytes sent and received,
 *                calls that failed.  BIP counts them for the process, every
 *                driver together: it has no split by driver, so neither
 *                have these.
 *   flow         sends that waited for room at the receiver (send_stalls).
 *   reliability  the reliability layer's counters: retransmits, of which
 *                fast, timeouts, duplicates, early, corrupt, NACKs sent and
 *                received, acknowledgements sent alone, rebinds (packets
 *                moved off a path that was retired), failbacks.
 *   paths        for each of the first BIP_COUNTER_PATHS paths (rails):
 *                packets sent, retransmits, timeouts, duplicates, corrupt,
 *                retirements, restorations (struct bip_path_counters).
 *   bip_wait     waiters' sleeps and the wake-ups that ended them.
 *   mpi_shim     the unexpected queue of point-to-point (pt2pt/p2p.c): its
 *                length now (LEVEL) and its high-water mark
 *                (HIGHWATERMARK); the time spent in the shim's waiting
 *                steps (TIMER); the state of MPI in the process (STATE,
 *                the enumeration mpi_state).
 *
 * Relays: BIP forwards the messages between clusters through relay
 * processes (lib/bip/paths/fwd.c) but has no public counter of what they
 * forward, so there is no variable of it, and no "relays" category.
 *
 * Classes and what a handle holds.  COUNTER and TIMER (counts, seconds)
 * are neither read-only nor continuous, and atomic: a handle starts
 * stopped and counts only while started, from a base (the source's value
 * at its start) into acc (what it counted in its earlier started spans,
 * or what was written into it); reading gives acc plus the change since
 * the start; reset sets it to 0 (base taken again).  Every handle has its
 * own base and acc, so handles and sessions never disturb each other.
 * Read and reset use one sample of the source, so readreset loses no
 * event between them: it is atomic.  Writing sets the handle's value.
 *
 * The high-water mark of the unexpected queue: p2p keeps one mark, the
 * most messages queued since its last restart (an increment and a
 * compare per queued arrival), and the restart sets it to the length now.
 * A started handle's value is the greater of its acc and that mark.  When
 * a handle starts, is reset or written, the mark is restarted, having
 * first been folded into the acc of every other started handle of the
 * variable (all sessions): each then holds the most seen over all its
 * started spans, and the mark covers what comes next.  A handle's value
 * starts at the length at its start or reset (14.3.7: a high-water mark
 * starts from the variable's current value).
 *
 * LEVEL and STATE are read-only and continuous: they read the value now;
 * start, stop, write, reset and readreset fail (MPI_T_ERR_PVAR_NO_STARTSTOP,
 * MPI_T_ERR_PVAR_NO_WRITE).
 *
 * The timer: the engine times its waiting steps only while some handle of
 * mpi_shim_wait_time is started (mpi_shim_wait_timed, engine.h), so the
 * time is counted whenever a handle could see it, and a program without
 * a started timer pays one load per waiting step and nothing on its fast
 * path.  Seconds, MPI_DOUBLE.
 *
 * MPI_T_PVAR_ALL_HANDLES: start and stop act on every handle of the
 * session that is not continuous, reset on every one that is not
 * read-only (14.3.7); read, write and readreset refuse it
 * (MPI_T_ERR_INVALID_HANDLE).  Starting a started handle, or stopping a
 * stopped one, does nothing.
 *
 * Sessions and handles are malloc'ed and listed: a session on the list of
 * sessions, a handle on its session's list.  They are looked for there
 * before use, so a wrong or freed one is refused (MPI_T_ERR_INVALID_SESSION,
 * MPI_T_ERR_INVALID_HANDLE).  Freeing a session frees its handles; the
 * last MPI_T_finalize frees every session.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpit.h"
#include "engine.h"
#include "p2p.h"

enum pvar_source {
	SRC_COUNTER,     /* a field of struct bip_counters */
	SRC_UNEXP_LEVEL, /* the unexpected queue's length */
	SRC_UNEXP_HWM,   /* its high-water mark */
	SRC_WAIT_TIME,   /* nanoseconds in waiting steps */
	SRC_STATE,       /* enum mpi_shim_t_state */
};

struct pvar {
	const char *name;
	const char *desc;
	int cls;
	int verbosity;
	enum mpi_shim_t_cat cat;
	enum pvar_source src;
	size_t off; /* SRC_COUNTER: the field's offset */
};

#define COUNTER(field) SRC_COUNTER, offsetof(struct bip_counters, field)

static const struct pvar scalars[] = {
	{ "bip_short_sent", "short messages handed to the NIC (every driver)",
	  MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_BASIC, MPI_SHIM_T_CAT_P2P,
	  COUNTER(short_sent) },
	{ "bip_long_sent", "long messages completed, sender side (every driver)",
	  MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_BASIC, MPI_SHIM_T_CAT_P2P,
	  COUNTER(long_sent) },
	{ "bip_short_received", "short messages delivered (every driver)",
	  MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_BASIC, MPI_SHIM_T_CAT_P2P,
	  COUNTER(short_received) },
	{ "bip_long_received", "long messages delivered (every driver)",
	  MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_BASIC, MPI_SHIM_T_CAT_P2P,
	  COUNTER(long_received) },
	{ "bip_bytes_sent", "bytes sent, headers of the MPI layer included (every driver)",
	  MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_BASIC, MPI_SHIM_T_CAT_P2P,
	  COUNTER(bytes_sent) },
	{ "bip_bytes_received", "bytes received, headers of the MPI layer included (every driver)",
	  MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_USER_BASIC, MPI_SHIM_T_CAT_P2P,
	  COUNTER(bytes_received) },
	{ "bip_errors", "BIP calls that failed", MPI_T_PVAR_CLASS_COUNTER,
	  MPI_T_VERBOSITY_USER_DETAIL, MPI_SHIM_T_CAT_P2P, COUNTER(errors) },
	{ "bip_send_stalls", "sends that had to wait for room at the receiver",
	  MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_BASIC, MPI_SHIM_T_CAT_FLOW,
	  COUNTER(send_stalls) },
	{ "bip_retransmits", "packets sent again (after a timeout, a NACK or a gap)",
	  MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_BASIC, MPI_SHIM_T_CAT_RELIABILITY,
	  COUNTER(retransmits) },
	{ "bip_fast_retransmits", "retransmits because later packets arrived",
	  MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_DETAIL, MPI_SHIM_T_CAT_RELIABILITY,
	  COUNTER(fast_retransmits) },
	{ "bip_timeouts", "retransmission timer expiries", MPI_T_PVAR_CLASS_COUNTER,
	  MPI_T_VERBOSITY_TUNER_BASIC, MPI_SHIM_T_CAT_RELIABILITY, COUNTER(timeouts) },
	{ "bip_duplicates", "packets received again and dropped", MPI_T_PVAR_CLASS_COUNTER,
	  MPI_T_VERBOSITY_TUNER_DETAIL, MPI_SHIM_T_CAT_RELIABILITY, COUNTER(duplicates) },
	{ "bip_early", "messages that came before their turn and waited",
	  MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_DETAIL, MPI_SHIM_T_CAT_RELIABILITY,
	  COUNTER(early) },
	{ "bip_corrupt", "packets received with a bad CRC32C, dropped", MPI_T_PVAR_CLASS_COUNTER,
	  MPI_T_VERBOSITY_TUNER_BASIC, MPI_SHIM_T_CAT_RELIABILITY, COUNTER(corrupt) },
	{ "bip_nacks_sent", "packets asked for again (their data was corrupt)",
	  MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_DETAIL, MPI_SHIM_T_CAT_RELIABILITY,
	  COUNTER(nacks_sent) },
	{ "bip_nacks_received", "NACKs received", MPI_T_PVAR_CLASS_COUNTER,
	  MPI_T_VERBOSITY_TUNER_DETAIL, MPI_SHIM_T_CAT_RELIABILITY, COUNTER(nacks_received) },
	{ "bip_acks_sent", "acknowledgements sent on their own", MPI_T_PVAR_CLASS_COUNTER,
	  MPI_T_VERBOSITY_TUNER_DETAIL, MPI_SHIM_T_CAT_RELIABILITY, COUNTER(acks_sent) },
	{ "bip_rebinds", "packets moved from a path that failed to another",
	  MPI_T_PVAR_CLASS_COUNTER, MPI_T_VERBOSITY_TUNER_BASIC, MPI_SHIM_T_CAT_RELIABILITY,
	  COUNTER(rebinds) },
	{ "bip_failbacks", "paths used again after they failed", MPI_T_PVAR_CLASS_COUNTER,
	  MPI_T_VERBOSITY_TUNER_BASIC, MPI_SHIM_T_CAT_RELIABILITY, COUNTER(failbacks) },
	{ "bip_sleeps", "times a waiter slept on its NIC", MPI_T_PVAR_CLASS_COUNTER,
	  MPI_T_VERBOSITY_TUNER_BASIC, MPI_SHIM_T_CAT_WAIT, COUNTER(sleeps) },
	{ "bip_wakeups", "sleeps ended by a peer before their time-out", MPI_T_PVAR_CLASS_COUNTER,
	  MPI_T_VERBOSITY_TUNER_DETAIL, MPI_SHIM_T_CAT_WAIT, COUNTER(wakeups) },
	{ "mpi_shim_unexpected", "messages in the unexpected queue now (arrived before "
	  "their receive)", MPI_T_PVAR_CLASS_LEVEL, MPI_T_VERBOSITY_USER_BASIC,
	  MPI_SHIM_T_CAT_SHIM, SRC_UNEXP_LEVEL, 0 },
	{ "mpi_shim_unexpected_hwm", "most messages in the unexpected queue at once",
	  MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_VERBOSITY_USER_BASIC, MPI_SHIM_T_CAT_SHIM,
	  SRC_UNEXP_HWM, 0 },
	{ "mpi_shim_wait_time", "seconds spent in the waiting steps of MPI calls (timed while "
	  "a handle is started)", MPI_T_PVAR_CLASS_TIMER, MPI_T_VERBOSITY_USER_BASIC,
	  MPI_SHIM_T_CAT_SHIM, SRC_WAIT_TIME, 0 },
	{ "mpi_shim_state", "the state of MPI in this process (enumeration mpi_state)",
	  MPI_T_PVAR_CLASS_STATE, MPI_T_VERBOSITY_USER_DETAIL, MPI_SHIM_T_CAT_SHIM, SRC_STATE,
	  0 },
};

#define NSCALARS ((int)(sizeof(scalars) / sizeof(scalars[0])))

/* The counters of each path: named bip_path<p>_<what>. */
static const struct {
	const char *what;
	const char *desc;
	size_t off;
} path_fields[] = {
	{ "sent", "packets sent on path %d, first or again",
	  offsetof(struct bip_path_counters, sent) },
	{ "retransmits", "packets sent again on path %d",
	  offsetof(struct bip_path_counters, retransmits) },
	{ "timeouts", "retransmission timeouts on path %d",
	  offsetof(struct bip_path_counters, timeouts) },
	{ "duplicates", "duplicate packets received on path %d",
	  offsetof(struct bip_path_counters, duplicates) },
	{ "corrupt", "corrupt packets received on path %d",
	  offsetof(struct bip_path_counters, corrupt) },
	{ "retired", "times path %d was taken out of use",
	  offsetof(struct bip_path_counters, retired) },
	{ "restored", "times path %d was used again",
	  offsetof(struct bip_path_counters, restored) },
};

#define NFIELDS ((int)(sizeof(path_fields) / sizeof(path_fields[0])))
#define NPVARS (NSCALARS + BIP_COUNTER_PATHS * NFIELDS)

struct mpi_shim_t_pvar_handle {
	struct mpi_shim_t_pvar_handle *next; /* in its session */
	int index;
	int started;
	uint64_t base; /* COUNTER, TIMER: the source at the start */
	uint64_t acc;  /* the value counted before the start, or written; the mark */
};

struct mpi_shim_t_pvar_session {
	struct mpi_shim_t_pvar_session *next;
	struct mpi_shim_t_pvar_handle *handles;
};

/* MPI_T_PVAR_ALL_HANDLES: only its address is used. */
struct mpi_shim_t_pvar_handle mpi_shim_t_pvar_all_handles;

static struct mpi_shim_t_pvar_session *sessions;

/* The path variables' names and descriptions, made on first use. */
static struct {
	int made;
	char name[BIP_COUNTER_PATHS * NFIELDS][32];
	char desc[BIP_COUNTER_PATHS * NFIELDS][64];
} paths;

/* Variable i, as a struct pvar (the path ones filled in *tmp). */
static const struct pvar *pvar_get(int i, struct pvar *tmp)
{
	int p, f;

	if (i < NSCALARS)
		return &scalars[i];
	i -= NSCALARS;
	p = i / NFIELDS;
	f = i % NFIELDS;
	if (!paths.made) {
		int j;

		for (j = 0; j < BIP_COUNTER_PATHS * NFIELDS; j++) {
			snprintf(paths.name[j], sizeof(paths.name[j]), "bip_path%d_%s",
				 j / NFIELDS, path_fields[j % NFIELDS].what);
			snprintf(paths.desc[j], sizeof(paths.desc[j]),
				 path_fields[j % NFIELDS].desc, j / NFIELDS);
		}
		paths.made = 1;
	}
	*tmp = (struct pvar){
		.name = paths.name[i],
		.desc = paths.desc[i],
		.cls = MPI_T_PVAR_CLASS_COUNTER,
		.verbosity = MPI_T_VERBOSITY_TUNER_DETAIL,
		.cat = MPI_SHIM_T_CAT_PATHS,
		.src = SRC_COUNTER,
		.off = offsetof(struct bip_counters, path) +
		       (size_t)p * sizeof(struct bip_path_counters) + path_fields[f].off,
	};
	return tmp;
}

int mpi_shim_t_pvar_count(void)
{
	return NPVARS;
}

enum mpi_shim_t_cat mpi_shim_t_pvar_category(int i)
{
	struct pvar tmp;

	return pvar_get(i, &tmp)->cat;
}

static int is_continuous(const struct pvar *v)
{
	return v->cls == MPI_T_PVAR_CLASS_LEVEL || v->cls == MPI_T_PVAR_CLASS_STATE;
}

/* Read-only: the continuous ones; the others may be written and reset. */
static int is_readonly(const struct pvar *v)
{
	return is_continuous(v);
}

static MPI_Datatype pvar_type(const struct pvar *v)
{
	switch (v->src) {
	case SRC_WAIT_TIME:
		return MPI_DOUBLE;
	case SRC_STATE:
		return MPI_INT;
	default:
		return MPI_UNSIGNED_LONG_LONG;
	}
}

static int mpi_state(void)
{
	if (mpi_shim.finalized)
		return MPI_SHIM_T_STATE_FINALIZED;
	return mpi_shim.initialized ? MPI_SHIM_T_STATE_INITIALIZED : MPI_SHIM_T_STATE_UNINITIALIZED;
}

/* The source of v now (not for SRC_UNEXP_HWM: see hwm_value). */
static uint64_t sample(const struct pvar *v)
{
	struct bip_counters c;

	switch (v->src) {
	case SRC_COUNTER:
		bip_get_counters(&c);
		return *(const uint64_t *)((const char *)&c + v->off);
	case SRC_UNEXP_LEVEL:
	case SRC_UNEXP_HWM:
		return (uint64_t)mpi_shim_unexp_level();
	case SRC_WAIT_TIME:
		return __atomic_load_n(&mpi_shim_wait_ns, __ATOMIC_RELAXED);
	case SRC_STATE:
		return (uint64_t)mpi_state();
	}
	return 0;
}

/* --- the high-water mark --- */

static int is_hwm(const struct mpi_shim_t_pvar_handle *h)
{
	return h->index < NSCALARS && scalars[h->index].src == SRC_UNEXP_HWM;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Fold the queue's mark into every started handle of the high-water mark,
 * then restart the mark at the length now. */
static void hwm_restart(void)
{
	struct mpi_shim_t_pvar_session *s;
	struct mpi_shim_t_pvar_handle *h;
	uint64_t mark = (uint64_t)mpi_shim_unexp_hwm();

	for (s = sessions; s; s = s->next)
		for (h = s->handles; h; h = h->next)
			if (is_hwm(h) && h->started)
				h->acc = max_u64(h->acc, mark);
	mpi_shim_unexp_hwm_restart();
}

/* --- a handle's operations (the handle valid) --- */

static uint64_t handle_value(const struct mpi_shim_t_pvar_handle *h, const struct pvar *v,
			     uint64_t now)
{
	if (is_continuous(v))
		return now;
	if (v->src == SRC_UNEXP_HWM)
		return h->started ? max_u64(h->acc, (uint64_t)mpi_shim_unexp_hwm()) : h->acc;
	return h->acc + (h->started ? now - h->base : 0);
}

static void store(const struct pvar *v, uint64_t value, void *buf)
{
	if (v->src == SRC_WAIT_TIME)
		*(double *)buf = (double)value * 1e-9;
	else if (v->src == SRC_STATE)
		*(int *)buf = (int)value;
	else
		*(unsigned long long *)buf = value;
}

static void handle_start(struct mpi_shim_t_pvar_handle *h, const struct pvar *v)
{
	if (h->started)
		return;
	if (v->src == SRC_UNEXP_HWM) {
		hwm_restart();
		h->acc = (uint64_t)mpi_shim_unexp_level();
	} else {
		h->base = sample(v);
	}
	if (v->src == SRC_WAIT_TIME)
		__atomic_store_n(&mpi_shim_wait_timed, mpi_shim_wait_timed + 1, __ATOMIC_RELAXED);
	h->started = 1;
}

static void handle_stop(struct mpi_shim_t_pvar_handle *h, const struct pvar *v)
{
	if (!h->started)
		return;
	h->acc = handle_value(h, v, sample(v));
	if (v->src == SRC_WAIT_TIME)
		__atomic_store_n(&mpi_shim_wait_timed, mpi_shim_wait_timed - 1, __ATOMIC_RELAXED);
	h->started = 0;
}

/* Set the handle's value to value (0 for a reset), now being the source. */
static void handle_set(struct mpi_shim_t_pvar_handle *h, const struct pvar *v, uint64_t value,
		       uint64_t now)
{
	if (v->src == SRC_UNEXP_HWM)
		hwm_restart();
	h->acc = value;
	h->base = now;
}

static void handle_reset(struct mpi_shim_t_pvar_handle *h, const struct pvar *v, uint64_t now)
{
	handle_set(h, v, v->src == SRC_UNEXP_HWM ? (uint64_t)mpi_shim_unexp_level() : 0, now);
}

/* --- lookups --- */

static int session_valid(MPI_T_pvar_session session)
{
	struct mpi_shim_t_pvar_session *s;

	for (s = sessions; s; s = s->next)
		if (s == session)
			return 1;
	return 0;
}

static int handle_in(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
	struct mpi_shim_t_pvar_handle *h;

	for (h = session->handles; h; h = h->next)
		if (h == handle)
			return 1;
	return 0;
}

/* The checks of the calls on one handle; MPI_T_PVAR_ALL_HANDLES passes
 * if all_ok. */
static int check_handle(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int all_ok)
{
	if (!session_valid(session))
		return MPI_T_ERR_INVALID_SESSION;
	if (handle == MPI_T_PVAR_ALL_HANDLES)
		return all_ok ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
	if (!handle_in(session, handle))
		return MPI_T_ERR_INVALID_HANDLE;
	return MPI_SUCCESS;
}

static void handle_release(struct mpi_shim_t_pvar_handle *h)
{
	struct pvar tmp;

	handle_stop(h, pvar_get(h->index, &tmp));
	free(h);
}

static void session_release(struct mpi_shim_t_pvar_session *s)
{
	while (s->handles) {
		struct mpi_shim_t_pvar_handle *h = s->handles;

		s->handles = h->next;
		handle_release(h);
	}
	free(s);
}

void mpi_shim_t_pvar_teardown(void)
{
	while (sessions) {
		struct mpi_shim_t_pvar_session *s = sessions;

		sessions = s->next;
		session_release(s);
	}
}

/* --- the calls --- */

int PMPI_T_pvar_get_num(int *num_pvar)
{
	MPI_SHIM_ENTER();

	MPI_SHIM_T_CHECK();
	if (!num_pvar)
		return MPI_T_ERR_INVALID;
	*num_pvar = NPVARS;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_pvar_get_num);

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
			 int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
			 int *desc_len, int *bind, int *readonly, int *continuous, int *atomic)
{
	MPI_SHIM_ENTER();
	struct pvar tmp;
	const struct pvar *v;

	MPI_SHIM_T_CHECK();
	if (pvar_index < 0 || pvar_index >= NPVARS)
		return MPI_T_ERR_INVALID_INDEX;
	v = pvar_get(pvar_index, &tmp);
	mpi_shim_t_string(v->name, name, name_len);
	if (verbosity)
		*verbosity = v->verbosity;
	if (var_class)
		*var_class = v->cls;
	if (datatype)
		*datatype = pvar_type(v);
	if (enumtype)
		*enumtype = v->src == SRC_STATE ? &mpi_shim_t_enum_state : MPI_T_ENUM_NULL;
	mpi_shim_t_string(v->desc, desc, desc_len);
	if (bind)
		*bind = MPI_T_BIND_NO_OBJECT;
	if (readonly)
		*readonly = is_readonly(v);
	if (continuous)
		*continuous = is_continuous(v);
	if (atomic)
		*atomic = !is_readonly(v);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_pvar_get_info);

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
	MPI_SHIM_ENTER();
	struct pvar tmp;
	const struct pvar *v;
	int i;

	MPI_SHIM_T_CHECK();
	if (!name || !pvar_index)
		return MPI_T_ERR_INVALID;
	for (i = 0; i < NPVARS; i++) {
		v = pvar_get(i, &tmp);
		if (v->cls == var_class && !strcmp(v->name, name)) {
			*pvar_index = i;
			return MPI_SUCCESS;
		}
	}
	return MPI_T_ERR_INVALID_NAME;
}
MPI_SHIM_ALIAS(MPI_T_pvar_get_index);

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_t_pvar_session *s;

	MPI_SHIM_T_CHECK();
	if (!session)
		return MPI_T_ERR_INVALID;
	s = calloc(1, sizeof(*s));
	if (!s)
		return MPI_T_ERR_MEMORY;
	s->next = sessions;
	sessions = s;
	*session = s;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_pvar_session_create);

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_t_pvar_session **p;

	MPI_SHIM_T_CHECK();
	if (!session)
		return MPI_T_ERR_INVALID;
	for (p = &sessions; *p; p = &(*p)->next)
		if (*p == *session) {
			*p = (*session)->next;
			session_release(*session);
			*session = MPI_T_PVAR_SESSION_NULL;
			return MPI_SUCCESS;
		}
	return MPI_T_ERR_INVALID_SESSION;
}
MPI_SHIM_ALIAS(MPI_T_pvar_session_free);

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
			     MPI_T_pvar_handle *handle, int *count)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_t_pvar_handle *h;
	struct pvar tmp;
	const struct pvar *v;

	(void)obj_handle;
	MPI_SHIM_T_CHECK();
	if (!session_valid(session))
		return MPI_T_ERR_INVALID_SESSION;
	if (pvar_index < 0 || pvar_index >= NPVARS)
		return MPI_T_ERR_INVALID_INDEX;
	if (!handle || !count)
		return MPI_T_ERR_INVALID;
	h = calloc(1, sizeof(*h));
	if (!h)
		return MPI_T_ERR_MEMORY;
	v = pvar_get(pvar_index, &tmp);
	h->index = pvar_index;
	if (v->src == SRC_UNEXP_HWM)
		h->acc = (uint64_t)mpi_shim_unexp_level();
	h->started = is_continuous(v);
	h->next = session->handles;
	session->handles = h;
	*handle = h;
	*count = 1;
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_pvar_handle_alloc);

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_t_pvar_handle **p;

	MPI_SHIM_T_CHECK();
	if (!session_valid(session))
		return MPI_T_ERR_INVALID_SESSION;
	if (!handle)
		return MPI_T_ERR_INVALID;
	for (p = &session->handles; *p; p = &(*p)->next)
		if (*p == *handle) {
			*p = (*handle)->next;
			handle_release(*handle);
			*handle = MPI_T_PVAR_HANDLE_NULL;
			return MPI_SUCCESS;
		}
	return MPI_T_ERR_INVALID_HANDLE;
}
MPI_SHIM_ALIAS(MPI_T_pvar_handle_free);

/* Start (start 1) or stop one handle, or every handle of the session that
 * is not continuous (MPI_T_PVAR_ALL_HANDLES). */
static int start_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int start)
{
	struct mpi_shim_t_pvar_handle *h;
	struct pvar tmp;
	const struct pvar *v;
	int rc;

	rc = check_handle(session, handle, 1);
	if (rc != MPI_SUCCESS)
		return rc;
	if (handle != MPI_T_PVAR_ALL_HANDLES) {
		v = pvar_get(handle->index, &tmp);
		if (is_continuous(v))
			return MPI_T_ERR_PVAR_NO_STARTSTOP;
		(start ? handle_start : handle_stop)(handle, v);
		return MPI_SUCCESS;
	}
	for (h = session->handles; h; h = h->next) {
		v = pvar_get(h->index, &tmp);
		if (!is_continuous(v))
			(start ? handle_start : handle_stop)(h, v);
	}
	return MPI_SUCCESS;
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
	MPI_SHIM_ENTER();
	MPI_SHIM_T_CHECK();
	return start_stop(session, handle, 1);
}
MPI_SHIM_ALIAS(MPI_T_pvar_start);

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
	MPI_SHIM_ENTER();
	MPI_SHIM_T_CHECK();
	return start_stop(session, handle, 0);
}
MPI_SHIM_ALIAS(MPI_T_pvar_stop);

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
	MPI_SHIM_ENTER();
	struct pvar tmp;
	const struct pvar *v;
	int rc;

	MPI_SHIM_T_CHECK();
	rc = check_handle(session, handle, 0);
	if (rc != MPI_SUCCESS)
		return rc;
	if (!buf)
		return MPI_T_ERR_INVALID;
	v = pvar_get(handle->index, &tmp);
	store(v, handle_value(handle, v, sample(v)), buf);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_pvar_read);

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
	MPI_SHIM_ENTER();
	struct pvar tmp;
	const struct pvar *v;
	uint64_t value;
	double secs;
	int rc;

	MPI_SHIM_T_CHECK();
	rc = check_handle(session, handle, 0);
	if (rc != MPI_SUCCESS)
		return rc;
	v = pvar_get(handle->index, &tmp);
	if (is_readonly(v))
		return MPI_T_ERR_PVAR_NO_WRITE;
	if (!buf)
		return MPI_T_ERR_INVALID;
	if (v->src == SRC_WAIT_TIME) {
		secs = *(const double *)buf;
		if (!(secs >= 0 && secs < 1.8e10))
			return MPI_T_ERR_INVALID;
		value = (uint64_t)(secs * 1e9);
	} else {
		value = *(const unsigned long long *)buf;
	}
	handle_set(handle, v, value, sample(v));
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_pvar_write);

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
	MPI_SHIM_ENTER();
	struct mpi_shim_t_pvar_handle *h;
	struct pvar tmp;
	const struct pvar *v;
	int rc;

	MPI_SHIM_T_CHECK();
	rc = check_handle(session, handle, 1);
	if (rc != MPI_SUCCESS)
		return rc;
	if (handle != MPI_T_PVAR_ALL_HANDLES) {
		v = pvar_get(handle->index, &tmp);
		if (is_readonly(v))
			return MPI_T_ERR_PVAR_NO_WRITE;
		handle_reset(handle, v, sample(v));
		return MPI_SUCCESS;
	}
	for (h = session->handles; h; h = h->next) {
		v = pvar_get(h->index, &tmp);
		if (!is_readonly(v))
			handle_reset(h, v, sample(v));
	}
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_pvar_reset);

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
	MPI_SHIM_ENTER();
	struct pvar tmp;
	const struct pvar *v;
	uint64_t now;
	int rc;

	MPI_SHIM_T_CHECK();
	rc = check_handle(session, handle, 0);
	if (rc != MPI_SUCCESS)
		return rc;
	v = pvar_get(handle->index, &tmp);
	if (is_readonly(v))
		return MPI_T_ERR_PVAR_NO_WRITE;
	if (!buf)
		return MPI_T_ERR_INVALID;
	/* One sample for both: no event falls between the read and the reset. */
	now = sample(v);
	store(v, handle_value(handle, v, now), buf);
	handle_reset(handle, v, now);
	return MPI_SUCCESS;
}
MPI_SHIM_ALIAS(MPI_T_pvar_readreset);
