/* SPDX-License-Identifier: MIT */
/* Unit tests of the per-tag circular queue (lib/bip/tagq.c). */
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
