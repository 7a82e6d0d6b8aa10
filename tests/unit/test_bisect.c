// SPDX-License-Identifier: MIT
/*
 * aggregator/master/patchwork/bisect_plan.c and series_mbox.c: a bisection's
 * next step as git bisect (skip included) would take it, and a series' mbox
 * split into its patches as Patchwork writes it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/bisect/bisect.h"
#include "../../aggregator/master/patchwork/series_bisect.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define G BCI_BISECT_GOOD
#define B BCI_BISECT_BAD
#define S BCI_BISECT_SKIPPED
#define F BCI_BISECT_FLAKY

/* Plays a bisection of @patches patches whose first bad one is @first_bad; returns the steps. */
static int play(int patches, int first_bad, const int *skipped, int max_steps,
		enum bci_bisect_next *end, int *answer)
{
	struct bci_bisect_known known[64];
	size_t n = 0;
	int k;

	for (;;) {
		enum bci_bisect_next next = bci_bisect_plan(patches, known, n, max_steps, &k, NULL, 0);

		if (next != BCI_BISECT_TRY) {
			*end = next;
			*answer = k;
			return (int)n;
		}
		assert_true(k > 0 && k < patches);
		for (size_t i = 0; i < n; i++)
			assert_int_not_equal(known[i].patches, k);
		bool skip = false;

		for (const int *s = skipped; s && *s; s++)
			skip |= *s == k;
		known[n++] = (struct bci_bisect_known){ k, skip ? S : k >= first_bad ? B : G };
	}
}

/* Issue 37's scenario: 8 patches, the 5th bad, named in at most 4 steps; every other spot too. */
static void test_plan_finds_first_bad(void **state)
{
	enum bci_bisect_next end;
	int answer;

	(void)state;
	assert_true(play(8, 5, NULL, 8, &end, &answer) <= 4);
	assert_int_equal(end, BCI_BISECT_FOUND);
	assert_int_equal(answer, 5);
	for (int patches = 2; patches <= 40; patches++)
		for (int bad = 1; bad <= patches; bad++) {
			int steps = play(patches, bad, NULL, 64, &end, &answer), bound = 0;

			while ((1 << bound) < patches)
				bound++;
			assert_int_equal(end, BCI_BISECT_FOUND);
			assert_int_equal(answer, bad);
			assert_true(steps <= bound);
		}
}

/* The first candidate tried is the middle; the whole series (8 of 8) is never built again. */
static void test_plan_middle_first(void **state)
{
	int k = 0;

	(void)state;
	assert_int_equal(bci_bisect_plan(8, NULL, 0, 8, &k, NULL, 0), BCI_BISECT_TRY);
	assert_int_equal(k, 4);
	assert_int_equal(bci_bisect_plan(2, NULL, 0, 8, &k, NULL, 0), BCI_BISECT_TRY);
	assert_int_equal(k, 1);
	/* One patch: it is the first bad one without a step. */
	assert_int_equal(bci_bisect_plan(1, NULL, 0, 8, &k, NULL, 0), BCI_BISECT_FOUND);
	assert_int_equal(k, 1);
}

/* A candidate that does not build is skipped as git bisect skip: its neighbours are tried. */
static void test_plan_skip(void **state)
{
	static const int skip_5[] = { 5, 0 };
	static const int skip_4_5[] = { 4, 5, 0 };
	enum bci_bisect_next end;
	int answer;
	char why[200];

	(void)state;
	/* 5 skipped, 6 bad: 5 or 6 could be first; with 4 good, inconclusive, naming both. */
	play(8, 6, skip_5, 8, &end, &answer);
	assert_int_equal(end, BCI_BISECT_INCONCLUSIVE);
	assert_int_equal(answer, 6);
	/* The bad patch itself skipped, but found from its neighbours when they bracket it. */
	play(8, 3, skip_5, 8, &end, &answer);
	assert_int_equal(end, BCI_BISECT_FOUND);
	assert_int_equal(answer, 3);
	play(8, 7, skip_4_5, 8, &end, &answer);
	assert_int_equal(end, BCI_BISECT_FOUND);
	assert_int_equal(answer, 7);
	struct bci_bisect_known known[] = { { 4, G }, { 6, B }, { 5, S } };
	int k;

	assert_int_equal(bci_bisect_plan(8, known, 3, 8, &k, why, sizeof(why)),
			 BCI_BISECT_INCONCLUSIVE);
	assert_non_null(strstr(why, "one of 5 to 6"));
}

/* A flaky step ends it (not reproduced); so does good after bad; the step limit too. */
static void test_plan_not_reproduced_and_limit(void **state)
{
	struct bci_bisect_known flaky[] = { { 4, G }, { 6, F } };
	struct bci_bisect_known crossed[] = { { 4, B }, { 6, G } };
	struct bci_bisect_known two[] = { { 4, G }, { 6, G } };
	char why[200];
	int k;

	(void)state;
	assert_int_equal(bci_bisect_plan(8, flaky, 2, 8, &k, why, sizeof(why)),
			 BCI_BISECT_NOT_REPRODUCED);
	assert_non_null(strstr(why, "flaky"));
	assert_int_equal(bci_bisect_plan(8, crossed, 2, 8, &k, why, sizeof(why)),
			 BCI_BISECT_NOT_REPRODUCED);
	assert_int_equal(bci_bisect_plan(8, two, 2, 2, &k, why, sizeof(why)),
			 BCI_BISECT_INCONCLUSIVE);
	assert_non_null(strstr(why, "step limit"));
	assert_int_equal(bci_bisect_plan(8, two, 2, 3, &k, why, sizeof(why)), BCI_BISECT_TRY);
	assert_int_equal(k, 7);
}

/* Patchwork's series mbox: a Message-ID folded onto its next line, CRLF or LF lines. */
static void test_series_mbox(void **state)
{
	static const char mbox[] =
		"From patchwork Sun Dec  6 15:09:51 2026\n"
		"Message-Id: \n <one@x>\n"
		"From: Ann Developer <ann@x>\n"
		"Subject: [PATCH 1/2] drm/a: the first\n"
		"\n"
		"body\n"
		">From quoted, not a message\n"
		"\n"
		"From the datasheet, unquoted as Patchwork leaves it: not a message either\n"
		"\n"
		"From patchwork Sun Dec  6 15:09:51 2026\r\n"
		"Subject: [PATCH 2/2] drm/a:\r\n the second, folded\r\n"
		"Message-ID: <two@x>\r\n"
		"\r\n"
		"the second's body\r\n";
	struct bci_series_patch *p = NULL;
	size_t n = 0;
	char err[200];

	(void)state;
	assert_int_equal(bci_series_mbox_split(mbox, strlen(mbox), &p, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(p[0].message_id, "<one@x>");
	assert_string_equal(p[0].author, "Ann Developer <ann@x>");
	assert_string_equal(p[0].subject, "[PATCH 1/2] drm/a: the first");
	assert_string_equal(p[1].subject, "[PATCH 2/2] drm/a: the second, folded");
	assert_string_equal(p[1].message_id, "<two@x>");
	assert_string_equal(p[1].author, "");
	assert_int_equal(p[0].start, 0);
	assert_int_equal(p[0].end, p[1].start);
	assert_int_equal(memcmp(mbox + p[1].start, "From patchwork", 14), 0);
	assert_int_equal(p[1].end, strlen(mbox));
	bci_series_patches_free(p, n);
	/* A From_ line after a blank one starts a message: one without its headers' end is refused. */
	static const char bad[] = "From a Sun Dec  6 15:09:51 2026\nSubject: x\n\nbody\n\n"
				  "From b Mon Sep 17 00:00:00 2001\nSubject: y\n";

	assert_int_equal(bci_series_mbox_split(bad, strlen(bad), &p, &n, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "message 2 "));
	assert_int_equal(bci_series_mbox_split("Subject: x\n\n", 12, &p, &n, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "does not start"));
	assert_int_equal(bci_series_mbox_split("From a Sun Dec  6 15:09:51 2026\n\n\0", 35, &p, &n,
					       err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NUL"));
}

/*
 * A series whose author and subjects git format-patch (2.39.5) wrote in RFC
 * 2047 encoded words, folded; the second message in CRLF lines with Python's
 * B words: the subject and author come decoded, the Message-ID as written.
 */
static void test_series_mbox_encoded_words(void **state)
{
	static const char mbox[] =
		"From cf6fb009cb53235732341eee811969e88c88fadb Mon Sep 17 00:00:00 2001\n"
		"From: =?UTF-8?q?Ren=C3=A9=20D=C3=BCsseldorf?= <rene@example.org>\n"
		"Date: Sun, 6 Dec 2026 12:00:00 +0000\n"
		"Subject: [PATCH 1/2] =?UTF-8?q?drm/i915:=20Pr=C3=BCfe=20den=20R=C3=BCckgabewer?=\n"
		" =?UTF-8?q?t=20von=20intel=5F=C3=BCber=5Falles?=\n"
		"Message-ID: <=?UTF-8?q?not-a-word?=@example.org>\n"
		"MIME-Version: 1.0\n"
		"Content-Type: text/plain; charset=UTF-8\n"
		"Content-Transfer-Encoding: 8bit\n"
		"\n"
		"body\n"
		"\n"
		"From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001\r\n"
		"From: =?utf-8?q?Ren=C3=A9?= =?KOI8-R?q?D=FCsseldorf?= <rene@example.org>\r\n"
		"Subject:\r\n"
		"\t=?utf-8?b?W1BBVENIIDIvMl0gZHJtL2k5MTU6IFLDvGNrZ2FiZQ==?=\r\n"
		" =?utf-8?b?d2VydA==?=\r\n"
		"Message-ID:\r\n <two@example.org>\r\n"
		"\r\n"
		"the second's body\r\n";
	struct bci_series_patch *p = NULL;
	size_t n = 0;
	char err[200];

	(void)state;
	assert_int_equal(bci_series_mbox_split(mbox, strlen(mbox), &p, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(p[0].author, "Ren\u00e9 D\u00fcsseldorf <rene@example.org>");
	assert_string_equal(p[0].subject, "[PATCH 1/2] drm/i915: Pr\u00fcfe den R\u00fcckgabewert"
			    " von intel_\u00fcber_alles");
	assert_string_equal(p[0].message_id, "<=?UTF-8?q?not-a-word?=@example.org>");
	/* A word in a charset not read stays as written, the blank before it too. */
	assert_string_equal(p[1].author, "Ren\u00e9 =?KOI8-R?q?D=FCsseldorf?= <rene@example.org>");
	assert_string_equal(p[1].subject, "[PATCH 2/2] drm/i915: R\u00fcckgabewert");
	assert_string_equal(p[1].message_id, "<two@example.org>");
	assert_int_equal(p[1].end, strlen(mbox));
	bci_series_patches_free(p, n);
}

/* A verdict cut inside a character keeps only whole ones; whole text is left as it is. */
static void test_utf8_whole(void **state)
{
	char cut2[] = "Ren\xc3", cut3[] = "x \xe2\x80", whole[] = "D\xc3\xbcsseldorf \xe2\x80\xb9",
	     four[] = "a\xf0\x9f\x98", ascii[] = "abc", empty[] = "";

	(void)state;
	bci_bisect_utf8_whole(cut2);
	assert_string_equal(cut2, "Ren");
	bci_bisect_utf8_whole(cut3);
	assert_string_equal(cut3, "x ");
	bci_bisect_utf8_whole(whole);
	assert_string_equal(whole, "D\xc3\xbcsseldorf \xe2\x80\xb9");
	bci_bisect_utf8_whole(four);
	assert_string_equal(four, "a");
	bci_bisect_utf8_whole(ascii);
	assert_string_equal(ascii, "abc");
	bci_bisect_utf8_whole(empty);
	assert_string_equal(empty, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_whole),
		cmocka_unit_test(test_plan_finds_first_bad),
		cmocka_unit_test(test_plan_middle_first),
		cmocka_unit_test(test_plan_skip),
		cmocka_unit_test(test_plan_not_reproduced_and_limit),
		cmocka_unit_test(test_series_mbox),
		cmocka_unit_test(test_series_mbox_encoded_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
