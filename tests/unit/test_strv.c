// SPDX-License-Identifier: MIT
/* lib/strv.c: growable strings and lists, ${VAR} expansion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "message.h"
#include "strv.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static void str_grows_and_hands_over(void **state)
{
	struct bci_str s = { 0 };
	char *text;

	(void)state;
	for (int i = 0; i < 1000; i++)
		assert_int_equal(bci_str_appendf(&s, "%d,", i % 10), 0);
	assert_int_equal(s.len, 2000);
	assert_int_equal(strlen(s.data), 2000);
	assert_memory_equal(s.data, "0,1,2,", 6);
	assert_int_equal(bci_str_append(&s, "xyz", 2), 0);
	assert_string_equal(s.data + 2000, "xy");
	text = bci_str_steal(&s);
	assert_null(s.data);
	assert_int_equal(strlen(text), 2002);
	free(text);
	/* An empty string is "" for its new owner, not NULL. */
	text = bci_str_steal(&s);
	assert_string_equal(text, "");
	free(text);
}

/* A reader writes into reserved room; a reused string keeps its memory. */
static void str_reserve_and_reset(void **state)
{
	struct bci_str s = { 0 };
	char *kept;

	(void)state;
	assert_int_equal(bci_str_reserve(&s, 100), 0);
	assert_true(s.cap >= 101);
	assert_string_equal(s.data, "");
	memcpy(s.data, "abc", 4);
	s.len = 3;
	assert_int_equal(bci_str_append(&s, "d", 1), 0);
	assert_string_equal(s.data, "abcd");
	kept = s.data;
	bci_str_reset(&s);
	assert_int_equal(s.len, 0);
	assert_string_equal(s.data, "");
	assert_int_equal(bci_str_append(&s, "x", 1), 0);
	assert_ptr_equal(s.data, kept);
	assert_int_equal(bci_str_reserve(&s, (size_t)-1), -ENOMEM);
	assert_string_equal(s.data, "x");
	bci_str_free(&s);
}

static void strv_is_an_argv(void **state)
{
	struct bci_strv v = { 0 };

	(void)state;
	assert_int_equal(bci_strv_split(&v, "  /bin/prog -a\t--b  ", " \t"), 0);
	assert_int_equal(bci_strv_addf(&v, "N=%d", 3), 0);
	assert_int_equal(bci_strv_addn(&v, "abcdef", 2), 0);
	assert_int_equal(v.count, 5);
	assert_string_equal(v.items[0], "/bin/prog");
	assert_string_equal(v.items[2], "--b");
	assert_string_equal(v.items[3], "N=3");
	assert_string_equal(v.items[4], "ab");
	assert_null(v.items[5]);
	assert_true(bci_strv_contains(&v, "-a"));
	assert_false(bci_strv_contains(&v, "-"));
	char *lines = bci_strv_lines(&v);

	assert_string_equal(lines, "/bin/prog\n-a\n--b\nN=3\nab\n");
	free(lines);
	for (int i = 0; i < 100; i++)
		assert_int_equal(bci_strv_add(&v, "more"), 0);
	assert_null(v.items[v.count]);
	bci_strv_free(&v);
	assert_null(v.items);
	assert_int_equal(v.count, 0);
	lines = bci_strv_lines(&v);
	assert_string_equal(lines, "");
	free(lines);
}

static const char *lookup(const char *name, void *data)
{
	(void)data;
	if (!strcmp(name, "A"))
		return "alpha";
	if (!strcmp(name, "_E9"))
		return "";
	return NULL;
}

static void hex_digit_either_case(void **state)
{
	(void)state;
	assert_int_equal(bci_hex_digit('0'), 0);
	assert_int_equal(bci_hex_digit('9'), 9);
	assert_int_equal(bci_hex_digit('a'), 10);
	assert_int_equal(bci_hex_digit('f'), 15);
	assert_int_equal(bci_hex_digit('A'), 10);
	assert_int_equal(bci_hex_digit('F'), 15);
	/* the neighbours of each range */
	assert_int_equal(bci_hex_digit('/'), -1);
	assert_int_equal(bci_hex_digit(':'), -1);
	assert_int_equal(bci_hex_digit('@'), -1);
	assert_int_equal(bci_hex_digit('G'), -1);
	assert_int_equal(bci_hex_digit('`'), -1);
	assert_int_equal(bci_hex_digit('g'), -1);
}

static void message_at_names_the_line(void **state)
{
	char err[32];

	(void)state;
	bci_message_at(err, sizeof(err), "base.recipe", 12, "bad value '%s'", "x");
	assert_string_equal(err, "base.recipe:12: bad value 'x'");
	/* truncated, still a string, even inside the origin */
	bci_message_at(err, 10, "a-long-origin", 3, "what");
	assert_string_equal(err, "a-long-or");
	bci_message_at(err, 20, "o", 7, "%s", "a long explanation");
	assert_string_equal(err, "o:7: a long explana");
	bci_message_at(NULL, 0, "o", 1, "ignored");
}

static void expand_replaces_names_and_names_mistakes(void **state)
{
	static const struct {
		const char *in, *out, *err;
	} cases[] = {
		{ "${A}/x/${A}", "alpha/x/alpha", NULL },
		{ "$A ${_E9}$", "$A $", NULL },
		{ "no refs", "no refs", NULL },
		{ "${B}", NULL, "variable 'B' is not set" },
		{ "x${A", NULL, "unterminated '${' in 'x${A'" },
		{ "${}", NULL, "bad variable name in '${}'" },
		{ "${9A}", NULL, "bad variable name in '${9A}'" },
		{ "${A-B}", NULL, "bad variable name in '${A-B}'" },
	};
	char err[256], *out;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = bci_expand_vars(cases[i].in, lookup, NULL, &out, err, sizeof(err));

		if (cases[i].out) {
			assert_int_equal(ret, 0);
			assert_string_equal(out, cases[i].out);
			free(out);
		} else {
			assert_int_equal(ret, -EINVAL);
			assert_string_equal(err, cases[i].err);
		}
	}
}

/* bci_strtod() against strtod(): the same bits and the same end, text by text. */
static void same_as_strtod(const char *text)
{
	char *ours_end = NULL, *their_end = NULL;
	double ours = bci_strtod(text, &ours_end), theirs = strtod(text, &their_end);

	if (memcmp(&ours, &theirs, sizeof(ours)) || ours_end != their_end)
		fail_msg("'%s': %.17g (end +%td), strtod %.17g (end +%td)", text, ours,
			 ours_end - text, theirs, their_end - text);
}

static void strtod_as_libc(void **state)
{
	static const char *const texts[] = {
		"0", "0.0", "1", "0.1", "0.123s)", "1.5s)", ".5", "5.", ".", "", "x", " 1.5", "-1.5",
		"+2", "1e3", "1.5e-3", "1.5E3", "0x1p3", "0x10", "inf", "nan", "1.2.3", "5.e3",
		"9007199254740992", "9007199254740993", "9007199254740993.5",
		"1234567890123456789", "12345678901234567890", "0.0000000000000000000001",
		"0.00000000000000000000001", "3.141592653589793238", "123456.789012",
		"4503599627370495.5", "0.30000000000000004", "1.7976931348623157", "00000.5",
		"18446744073709551615", "99999999999999999999.9",
	};
	char text[64];
	uint64_t x = 88172645463325252ull, digits = 1;
	int fast = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		same_as_strtod(texts[i]);
	/*
	 * IGT's times and more: 0 to 12 digits either side of the point, then a
	 * suffix. Those of at most 15 digits in all are the division's case (an
	 * integer below 2^53); the longer ones mostly strtod's.
	 */
	for (int i = 0; i < 200000; i++) {
		int whole, fraction, n = 0;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		whole = (int)(x % 13);
		fraction = (int)((x >> 8) % 13);
		for (int d = 0; d < whole + fraction; d++) {
			if (d == whole)
				text[n++] = '.';
			digits = digits * 6364136223846793005ull + 1442695040888963407ull;
			text[n++] = (char)('0' + (digits >> 33) % 10);
		}
		if (!fraction && x >> 63)
			text[n++] = '.';
		memcpy(text + n, "s)", 3);
		if (whole + fraction <= 15)
			fast++;
		same_as_strtod(text);
	}
	/* The loop reached the division's case often, not only strtod's. */
	assert_true(fast > 100000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(str_grows_and_hands_over),
		cmocka_unit_test(str_reserve_and_reset),
		cmocka_unit_test(strv_is_an_argv),
		cmocka_unit_test(expand_replaces_names_and_names_mistakes),
		cmocka_unit_test(hex_digit_either_case),
		cmocka_unit_test(strtod_as_libc),
		cmocka_unit_test(message_at_names_the_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
