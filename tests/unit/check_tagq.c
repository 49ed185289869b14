/* SPDX-License-Identifier: MIT */
/* Unit tests of the per-tag circular queue (lib/bip/core/tagq.c). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "tagq.h"

static uint32_t entry_size(uint32_t len)
{
	return BIP_TAGQ_HEAD + ((len + 3) & ~3u);
}

static void push_word(struct bip_tagq *q, int src, uint32_t v, uint32_t words)
{
	uint32_t buf[64];
	uint32_t i;

	for (i = 0; i < words; i++)
		buf[i] = v + i;
	ck_assert_int_eq(bip_tagq_push(q, BIP_TAGQ_SHORT, src, buf, words * 4, words * 4), 0);
}

START_TEST(test_init_rejects_bad_sizes)
{
	struct bip_tagq q;

	ck_assert_int_eq(bip_tagq_init(&q, 8), -EINVAL);
	ck_assert_int_eq(bip_tagq_init(&q, 18), -EINVAL);
	ck_assert_int_eq(bip_tagq_init(&q, 64), 0);
	ck_assert_ptr_null(bip_tagq_peek(&q));
	bip_tagq_free(&q);
}
END_TEST

START_TEST(test_fifo_order_and_contents)
{
	struct bip_tagq q;
	uint32_t i;

	ck_assert_int_eq(bip_tagq_init(&q, 10 * entry_size(8)), 0);
	for (i = 0; i < 10; i++)
		push_word(&q, (int)i, i * 100, 2);
	for (i = 0; i < 10; i++) {
		struct bip_tagq_entry *e = bip_tagq_peek(&q);
		uint32_t *p;

		ck_assert_ptr_nonnull(e);
		ck_assert_int_eq(e->kind, BIP_TAGQ_SHORT);
		ck_assert_int_eq(e->src, (int)i);
		ck_assert_uint_eq(e->len, 8);
		p = bip_tagq_payload(e);
		ck_assert_uint_eq(p[0], i * 100);
		ck_assert_uint_eq(p[1], i * 100 + 1);
		bip_tagq_pop(&q);
	}
	ck_assert_ptr_null(bip_tagq_peek(&q));
	bip_tagq_free(&q);
}
END_TEST

/* nbufs messages of size words fit exactly; one more does not (manual 3.1, bip_taginit). */
START_TEST(test_capacity_as_taginit_says)
{
	struct bip_tagq q;
	uint32_t nbufs = 5, size = 3, i;

	ck_assert_int_eq(bip_tagq_init(&q, nbufs * (size + 4) * 4), 0);
	for (i = 0; i < nbufs; i++)
		push_word(&q, 1, i, size);
	ck_assert_int_eq(bip_tagq_push(&q, BIP_TAGQ_SHORT, 1, &i, 4, 4), -EAGAIN);
	/* Smaller messages: more of them (7 of 1 word fit in the same 140 bytes). */
	for (i = 0; i < nbufs; i++)
		bip_tagq_pop(&q);
	for (i = 0; i < 7; i++)
		push_word(&q, 1, 77, 1);
	ck_assert_int_eq(bip_tagq_push(&q, BIP_TAGQ_SHORT, 1, &i, 4, 4), -EAGAIN);
	bip_tagq_free(&q);
}
END_TEST

/* Messages of mixed sizes wrap around many times and stay intact. */
START_TEST(test_wrap_keeps_messages_whole)
{
	struct bip_tagq q;
	uint32_t next_push = 0, next_pop = 0, round;

	ck_assert_int_eq(bip_tagq_init(&q, 412), 0);
	for (round = 0; round < 5000; round++) {
		uint32_t words = (round * 7) % 13;
		uint32_t buf[16], i;

		for (i = 0; i < words; i++)
			buf[i] = next_push * 1000 + i;
		if (bip_tagq_push(&q, BIP_TAGQ_SHORT, (int)words, buf, words * 4, words * 4) == 0) {
			next_push++;
			continue;
		}
		/* Full: drain a couple, checking each. */
		for (i = 0; i < 2 && bip_tagq_peek(&q); i++) {
			struct bip_tagq_entry *e = bip_tagq_peek(&q);
			uint32_t *p = bip_tagq_payload(e), j;

			ck_assert_uint_eq(e->len, (uint32_t)e->src * 4);
			for (j = 0; j < (uint32_t)e->src; j++)
				ck_assert_uint_eq(p[j], next_pop * 1000 + j);
			ck_assert_uint_eq(((uintptr_t)p) % 4, 0);
			ck_assert((uint8_t *)p + e->len <= q.buf + q.cap);
			bip_tagq_pop(&q);
			next_pop++;
		}
	}
	ck_assert_uint_gt(next_pop, 1000);
	bip_tagq_free(&q);
}
END_TEST

/* getmsg holds messages; freemsg releases them oldest first, and only then is
 * their space reused. */
START_TEST(test_hold_and_release)
{
	struct bip_tagq q;
	struct bip_tagq_entry *e;
	uint32_t *held[3];
	int i;

	ck_assert_int_eq(bip_tagq_init(&q, 3 * entry_size(4)), 0);
	for (i = 0; i < 3; i++)
		push_word(&q, i, (uint32_t)i + 10, 1);
	for (i = 0; i < 3; i++) {
		e = bip_tagq_peek(&q);
		held[i] = bip_tagq_payload(e);
		bip_tagq_hold(&q);
	}
	ck_assert_uint_eq(q.nheld, 3);
	ck_assert_ptr_null(bip_tagq_peek(&q));
	/* Held messages still take their space. */
	ck_assert_int_eq(bip_tagq_push(&q, BIP_TAGQ_SHORT, 0, &i, 4, 4), -EAGAIN);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(*held[i], (uint32_t)i + 10);
	bip_tagq_release(&q);
	push_word(&q, 9, 99, 1);
	/* The remaining held messages are untouched by the new one. */
	ck_assert_uint_eq(*held[1], 11);
	ck_assert_uint_eq(*held[2], 12);
	bip_tagq_release(&q);
	bip_tagq_release(&q);
	e = bip_tagq_peek(&q);
	ck_assert_int_eq(e->src, 9);
	bip_tagq_free(&q);
}
END_TEST

START_TEST(test_long_entries_carry_handles)
{
	struct bip_tagq q;
	uint64_t h = 0x0123456789abcdefull, got;
	struct bip_tagq_entry *e;

	ck_assert_int_eq(bip_tagq_init(&q, 256), 0);
	ck_assert_int_eq(bip_tagq_push(&q, BIP_TAGQ_LONG, 3, &h, 1 << 20, sizeof(h)), 0);
	e = bip_tagq_peek(&q);
	ck_assert_int_eq(e->kind, BIP_TAGQ_LONG);
	ck_assert_uint_eq(e->len, 1 << 20);
	memcpy(&got, bip_tagq_payload(e), sizeof(got));
	ck_assert(got == h);
	bip_tagq_free(&q);
}
END_TEST

/* The queue never moves its tail back to 0: once it is empty, the largest
 * entry still fits wherever the tail is, if the queue is twice its size. */
START_TEST(test_empty_takes_largest_anywhere)
{
	uint32_t big = entry_size(256), buf[256] = { 0 };
	struct bip_tagq q;
	uint32_t shift;

	for (shift = 0; shift < 2 * big; shift += 4) {
		ck_assert_int_eq(bip_tagq_init(&q, 2 * big), 0);
		if (shift >= BIP_TAGQ_HEAD) {
			/* Move the tail by shift bytes, then empty the queue. */
			ck_assert_int_eq(bip_tagq_push(&q, BIP_TAGQ_SHORT, 0, buf,
						       shift - BIP_TAGQ_HEAD, shift - BIP_TAGQ_HEAD), 0);
			bip_tagq_pop(&q);
		}
		ck_assert_int_eq(bip_tagq_push(&q, BIP_TAGQ_SHORT, 1, buf, 256, 256), 0);
		ck_assert_ptr_nonnull(bip_tagq_peek(&q));
		ck_assert_uint_eq(bip_tagq_peek(&q)->len, 256);
		bip_tagq_free(&q);
	}
}
END_TEST

/*
 * A NIC as producer: it writes entries with bip_tagq_place and
 * bip_tagq_advance into the queue's memory, seeing only the consumer's
 * freed count, and the core counts each with bip_tagq_produced.  The
 * counts start just below 2^32 so that they wrap during the test.
 */
START_TEST(test_nic_producer)
{
	struct bip_tagq q;
	struct bip_tagq_prod nic = { 0, 0xffffff00u };
	uint32_t next_write = 0, next_read = 0, round, room_refused = 0;

	ck_assert_int_eq(bip_tagq_init(&q, 600), 0);
	q.nic_fills = 1;
	q.freed = nic.produced;
	ck_assert_int_eq(bip_tagq_push(&q, BIP_TAGQ_SHORT, 0, &round, 4, 4), -EPROTO);
	for (round = 0; round < 20000; round++) {
		uint32_t words = (round * 5) % 17, size = entry_size(words * 4), i;
		/* What the NIC sees of the consumer: its last published count. */
		uint32_t freed = __atomic_load_n(&q.freed, __ATOMIC_ACQUIRE);
		int wrap;
		int64_t at = bip_tagq_place(&nic, q.cap, freed, size, &wrap);

		if (at >= 0) {
			struct bip_tagq_entry *e = (struct bip_tagq_entry *)(q.buf + at);
			uint32_t *w = (uint32_t *)(e + 1);

			ck_assert_uint_le((uint64_t)at + size, q.cap);
			if (wrap)
				((struct bip_tagq_entry *)(q.buf + nic.tail))->kind = BIP_TAGQ_WRAP;
			*e = (struct bip_tagq_entry){ BIP_TAGQ_SHORT, words * 4, (int32_t)words, size };
			for (i = 0; i < words; i++)
				w[i] = next_write * 100 + i;
			bip_tagq_advance(&nic, q.cap, wrap, size);
			bip_tagq_produced(&q);
			next_write++;
			ck_assert_uint_le(nic.produced - q.freed, q.cap);
			continue;
		}
		room_refused++;
		/* No room: the core takes a few, which frees room. */
		for (i = 0; i < 3 && bip_tagq_peek(&q); i++) {
			struct bip_tagq_entry *e = bip_tagq_peek(&q);
			uint32_t *w = bip_tagq_payload(e), j;

			ck_assert_uint_eq(e->len, (uint32_t)e->src * 4);
			for (j = 0; j < (uint32_t)e->src; j++)
				ck_assert_uint_eq(w[j], next_read * 100 + j);
			bip_tagq_pop(&q);
			next_read++;
		}
	}
	ck_assert_uint_gt(room_refused, 100);
	ck_assert_uint_gt(next_read, 5000);
	ck_assert_uint_lt(nic.produced, 0x1000000u); /* the counts did wrap */
	bip_tagq_free(&q);
}
END_TEST

static Suite *tagq_suite(void)
{
	Suite *s = suite_create("tagq");
	TCase *tc = tcase_create("tagq");

	tcase_add_test(tc, test_init_rejects_bad_sizes);
	tcase_add_test(tc, test_fifo_order_and_contents);
	tcase_add_test(tc, test_capacity_as_taginit_says);
	tcase_add_test(tc, test_wrap_keeps_messages_whole);
	tcase_add_test(tc, test_hold_and_release);
	tcase_add_test(tc, test_long_entries_carry_handles);
	tcase_add_test(tc, test_empty_takes_largest_anywhere);
	tcase_add_test(tc, test_nic_producer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tagq_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
