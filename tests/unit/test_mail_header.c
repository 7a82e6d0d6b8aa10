// SPDX-License-Identifier: MIT
/* lib/mail_header.c: header values unfolded, RFC 2047 encoded words decoded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "mail_header.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* @in decoded: asserts it gives @expected with @words words decoded. */
static void check(const char *in, const char *expected, int words)
{
	char *out = NULL;
	int ret = bci_mail_header_decode(in, strlen(in), &out);

	assert_non_null(out);
	assert_string_equal(out, expected);
	assert_int_equal(ret, words);
	assert_true(strlen(out) <= BCI_MAIL_HEADER_DECODED_MAX(strlen(in)));
	free(out);
}

/* The same, for a value written as it is: nothing in it decodes. */
static void kept(const char *in)
{
	check(in, in, 0);
}

/* RFC 2047 section 8's examples. */
static void rfc2047_examples(void **state)
{
	(void)state;
	check("=?US-ASCII?Q?Keith_Moore?= <moore@cs.utk.edu>", "Keith Moore <moore@cs.utk.edu>", 1);
	check("=?ISO-8859-1?Q?Keld_J=F8rn_Simonsen?= <keld@dkuug.dk>",
	      "Keld J\u00f8rn Simonsen <keld@dkuug.dk>", 1);
	check("=?ISO-8859-1?Q?Andr=E9?= Pirard <PIRARD@vm1.ulg.ac.be>",
	      "Andr\u00e9 Pirard <PIRARD@vm1.ulg.ac.be>", 1);
	check("=?ISO-8859-1?Q?Olle_J=E4rnefors?= <ojarnef@admin.kth.se>",
	      "Olle J\u00e4rnefors <ojarnef@admin.kth.se>", 1);
	/* ISO-8859-2 is not read: its word stays, with the blanks before it. */
	check("=?ISO-8859-1?B?SWYgeW91IGNhbiByZWFkIHRoaXMgeW8=?=\r\n"
	      "    =?ISO-8859-2?B?dSB1bmRlcnN0YW5kIHRoZSBleGFtcGxlLg==?=",
	      "If you can read this yo    =?ISO-8859-2?B?dSB1bmRlcnN0YW5kIHRoZSBleGFtcGxlLg==?=", 1);
	/* Section 8's table of blanks between words. */
	check("(=?ISO-8859-1?Q?a?=)", "(a)", 1);
	check("(=?ISO-8859-1?Q?a?= b)", "(a b)", 1);
	check("(=?ISO-8859-1?Q?a?= =?ISO-8859-1?Q?b?=)", "(ab)", 2);
	check("(=?ISO-8859-1?Q?a?=  =?ISO-8859-1?Q?b?=)", "(ab)", 2);
	check("(=?ISO-8859-1?Q?a?=\r\n    =?ISO-8859-1?Q?b?=)", "(ab)", 2);
	check("(=?ISO-8859-1?Q?a_b?=)", "(a b)", 1);
	check("(=?ISO-8859-1?Q?a?= =?ISO-8859-2?Q?_b?=)", "(a =?ISO-8859-2?Q?_b?=)", 1);
}

/*
 * What git format-patch (2.39.5) writes for a commit by "René Düsseldorf"
 * whose subject has a "ü" and is long enough to fold: the From and Subject
 * values as they follow "From:" and "Subject:" (their lines ended in LF).
 * Python's email package (B and Q) writes the other subject.
 */
static void git_format_patch_and_python(void **state)
{
	(void)state;
	check("=?UTF-8?q?Ren=C3=A9=20D=C3=BCsseldorf?= <rene@example.org>",
	      "Ren\u00e9 D\u00fcsseldorf <rene@example.org>", 1);
	check("[PATCH] =?UTF-8?q?drm/i915:=20Pr=C3=BCfe=20den=20R=C3=BCckgabewer?=\n"
	      " =?UTF-8?q?t=20von=20intel=5F=C3=BCber=5Falles=5Fund=5Fnoch=5Fein=5Fsehr?=\n"
	      " =?UTF-8?q?=5Flanger=5FName=5Ff=C3=BCr=5Fdas=5FFalten=20der=20Zeile?=",
	      "[PATCH] drm/i915: Pr\u00fcfe den R\u00fcckgabewert von intel_\u00fcber_alles_und"
	      "_noch_ein_sehr_langer_Name_f\u00fcr_das_Falten der Zeile", 3);
	check("=?utf-8?b?W1BBVENIIHYyIDMvN10gZHJtL2k5MTUvZGlzcGxheTogUHLDvGZlIGRl?=\n"
	      " =?utf-8?b?biBSw7xja2dhYmV3ZXJ0IHZvbiBpbnRlbF/DvGJlcl9hbGxlcw==?=",
	      "[PATCH v2 3/7] drm/i915/display: Pr\u00fcfe den R\u00fcckgabewert von"
	      " intel_\u00fcber_alles", 2);
	check("=?utf-8?q?=5BPATCH_v2_3/7=5D_drm/i915/display=3A_Pr=C3=BCfe_den_R?=\n"
	      " =?utf-8?q?=C3=BCckgabewert_von_intel=5F=C3=BCber=5Falles?=",
	      "[PATCH v2 3/7] drm/i915/display: Pr\u00fcfe den R\u00fcckgabewert von"
	      " intel_\u00fcber_alles", 2);
}

/* Unfolding: a line break before a blank goes, the blank stays; no other break goes. */
static void unfolding(void **state)
{
	char *out = NULL;

	(void)state;
	check("[PATCH 1/2] a subject\r\n\tfolded twice\n over lines", "[PATCH 1/2] a subject\tfolded"
	      " twice over lines", 0);
	kept("a\nb");
	kept("a\r b");
	kept("trailing break\n");
	/* A NUL ends the value: nothing after it is read. */
	assert_int_equal(bci_mail_header_decode("ab\0=?utf-8?q?c?=", 16, &out), 0);
	assert_string_equal(out, "ab");
	free(out);
	kept("");
	/* Unfolding alone leaves the words: a Message-ID is no text. */
	assert_int_equal(bci_mail_header_unfold("\r\n <=?utf-8?q?a?=@example.org>\n", 35, &out), 0);
	assert_string_equal(out, " <=?utf-8?q?a?=@example.org>\n");
	free(out);
}

/* The words' own forms: either case, a language, latin1 and ASCII, words stuck to text. */
static void word_forms(void **state)
{
	(void)state;
	check("=?utf-8?Q?a?= =?UTF-8?b?YQ==?= =?Utf8?q?b?=", "aab", 3);
	check("=?UTF-8*de?q?R=c3=bcckgabe?=", "R\u00fcckgabe", 1);
	check("=?ISO-8859-1*en-GB?B?6XTp?=", "\u00e9t\u00e9", 1);
	check("=?latin1?q?=E9?= =?iso_8859-1?q?=FF?=", "\u00e9\u00ff", 2);
	check("=?US-ASCII?q?plain?=", "plain", 1);
	/* An empty word, though RFC 2047 wants a character, is read as nothing. */
	check("a =?utf-8?q?" "?= =?utf-8?b?" "?= b", "a  b", 2);
	/* Unpadded base64 is read; one character over a multiple of 4 is not. */
	check("=?utf-8?b?YWI?=", "ab", 1);
	kept("=?utf-8?b?YWJjZ?=");
	/* git am's reading: inside a quoted name, or stuck to the text around it. */
	check("\"=?utf-8?q?Ren=C3=A9?= Dev\" <r@example.org>", "\"Ren\u00e9 Dev\" <r@example.org>", 1);
	check("Re:=?utf-8?q?x?=!", "Re:x!", 1);
	/* Blanks stay between a word and text, and between words text separates. */
	check("=?utf-8?q?a?= - =?utf-8?q?b?=", "a - b", 2);
	check("x =?utf-8?q?a?=\t =?utf-8?q?b?= y", "x ab y", 2);
}

/* Anything that does not decode to printable UTF-8 stays exactly as written. */
static void malformed_words_kept(void **state)
{
	(void)state;
	kept("=?KOI8-R?q?abc?=");			/* a charset not read */
	kept("=?UTF-8*?q?abc?=");			/* an empty language */
	kept("=?UTF-8*e_n?q?abc?=");			/* not a language tag */
	kept("=?utf-8?x?abc?=");			/* no such encoding */
	kept("=?utf-8?q?a=4?=");			/* Q: '=' without two hex digits */
	kept("=?utf-8?q?a=G0?=");
	kept("=?utf-8?b?YW=j?=");			/* base64: padding inside */
	kept("=?utf-8?b?YQ=?=");			/* base64: short padding */
	kept("=?utf-8?b?Y!==?=");			/* base64: not its alphabet */
	kept("=?utf-8?q?a=00b?=");			/* NUL */
	kept("=?utf-8?q?Subject:=20x=0D=0ABcc:=20y?=");	/* a line break: no smuggled header */
	kept("=?utf-8?q?a=09b?=");			/* TAB, a control */
	kept("=?utf-8?q?a=7Fb?=");			/* DEL */
	kept("=?utf-8?q?a=C2=85b?=");			/* C1 (NEL) */
	kept("=?latin1?q?a=85b?=");			/* C1 in latin1 */
	kept("=?utf-8?q?=C0=AF?=");			/* an overlong '/' */
	kept("=?utf-8?q?=ED=A0=80?=");			/* a surrogate */
	kept("=?utf-8?q?=F4=90=80=80?=");		/* past U+10FFFF */
	kept("=?utf-8?q?=FF?=");
	kept("=?us-ascii?q?=E9?=");			/* not ASCII */
	/* A blank ends a word's text: the second is none. */
	check("=?utf-8?b?w6k?= stop =?utf-8?q?no end?=", "\u00e9 stop =?utf-8?q?no end?=", 1);
	kept("=?utf-8?q?abc?");
	kept("=?utf-8?q?abc");
	kept("=?");
	/* A bad word between two good ones: both blanks around it stay. */
	check("=?utf-8?q?a?= =?utf-8?q?=ZZ?= =?utf-8?q?b?=", "a =?utf-8?q?=ZZ?= b", 2);
}

/* A character split between adjacent words is read whole; one never ended is not read. */
static void characters_split_between_words(void **state)
{
	(void)state;
	check("=?UTF-8?B?UHLD?= =?UTF-8?B?vGZl?=", "Pr\u00fcfe", 2);
	check("=?utf-8?q?=F0=9F?=\n =?utf-8?q?=98?= =?utf-8?q?=80!?=", "\U0001f600!", 3);
	/* Nothing ends it: the whole run stays as written, the word after read alone. */
	kept("=?UTF-8?B?UHLD?=");
	check("=?UTF-8?B?UHLD?= x", "=?UTF-8?B?UHLD?= x", 0);
	check("=?UTF-8?B?UHLD?= =?latin1?q?=FC?=", "=?UTF-8?B?UHLD?= \u00fc", 1);
	check("=?utf-8?q?a?= =?UTF-8?B?UHLD?=  =?utf-8?q?=ZZ?= =?utf-8?q?b?=",
	      "a =?UTF-8?B?UHLD?=  =?utf-8?q?=ZZ?= b", 2);
	check("=?utf-8?q?=E2=82?= =?utf-8?q?x?=", "=?utf-8?q?=E2=82?= x", 1);
}

/* The bound holds where decoding grows the text most: latin1 in base64. */
static void decoded_length_bounded(void **state)
{
	char in[4096], *out = NULL;
	size_t n = 0;

	(void)state;
	while (n + 40 < sizeof(in))
		n += (size_t)snprintf(in + n, sizeof(in) - n, "=?x-latin9?b?6enp6enp6enp6enp6enp?= ");
	/* A charset not read: as written. */
	assert_int_equal(bci_mail_header_decode(in, n, &out), 0);
	assert_string_equal(out, in);
	free(out);
	n = 0;
	while (n + 80 < sizeof(in))
		n += (size_t)snprintf(in + n, sizeof(in) - n, "=?latin1?b?6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp?=");
	assert_true(bci_mail_header_decode(in, n, &out) > 0);
	assert_true(strlen(out) <= BCI_MAIL_HEADER_DECODED_MAX(n));
	assert_true(strlen(out) > n);
	for (size_t i = 0; out[i]; i += 2)
		assert_memory_equal(out + i, "\u00e9", 2);
	free(out);
}

/* What the writer makes of a text, the reader reads back: one home for the format. */
static void writer_read_back(void **state)
{
	char four[4 * 60 + 1] = "", *h = NULL, *out = NULL;
	const char *texts[] = {
		"bootci bisect: first bad patch of [PATCH v2 0/3] drm/i915: Pr\u00fcfe",
		"\u2713 success: d\u00e9j\u00e0 =?utf-8?q?not_a_word?= <tag>  ",
		" leading and trailing blanks ", "x", four,
	};

	(void)state;
	for (int i = 0; i < 60; i++)
		strcat(four, "\U0001f600");	/* 4-byte characters across the words' seams */
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		assert_int_equal(bci_mail_header_encode("Subject", texts[i], &h), 0);
		assert_memory_equal(h, "Subject: =?UTF-8?B?", 19);
		assert_true(bci_mail_header_decode(h + 8, strlen(h + 8), &out) > 0);
		/* The blank after "Subject:" is the reader's; the text follows it as it was. */
		assert_int_equal(out[0], ' ');
		assert_string_equal(out + 1, texts[i]);
		free(out);
		free(h);
	}
	assert_int_equal(bci_mail_header_encode("Subject", "", &h), 0);
	assert_int_equal(bci_mail_header_decode(h + 8, strlen(h + 8), &out), 1);
	assert_string_equal(out, " ");
	free(out);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rfc2047_examples),
		cmocka_unit_test(git_format_patch_and_python),
		cmocka_unit_test(unfolding),
		cmocka_unit_test(word_forms),
		cmocka_unit_test(malformed_words_kept),
		cmocka_unit_test(characters_split_between_words),
		cmocka_unit_test(decoded_length_bounded),
		cmocka_unit_test(writer_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
