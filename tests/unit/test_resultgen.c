// SPDX-License-Identifier: MIT
/*
 * lib/jsonw.c (escaping, UTF-8 and Latin-1 handling, doubles, misuse),
 * lib/igt_protocol.c (igt_runner's rules for cutting test output) and
 * lib/resultgen/ on small results directories built in a temporary tree:
 * the cases igt_runner's scenario folders (tests/resultgen/conformance.t)
 * do not cover, and the errors bootci adds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeroot.h"
#include "igt_protocol.h"
#include "jsonw.h"
#include "resultgen/resultgen.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- jsonw ---- */

struct capture {
	char *buf;
	size_t len;
	FILE *f;
	struct bci_jsonw w;
};

static void capture_open(struct capture *c, int indent)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	bci_jsonw_init(&c->w, c->f, indent);
}

/* Finishes the document and returns its text without the final newline. */
static const char *capture_close(struct capture *c)
{
	static char text[4096];

	assert_int_equal(bci_jsonw_finish(&c->w), 0);
	fclose(c->f);
	assert_true(c->len > 0 && c->len < sizeof(text));
	memcpy(text, c->buf, c->len - 1);
	text[c->len - 1] = '\0';
	free(c->buf);
	return text;
}

static const char *json_of_bytes(const char *s, size_t len, enum bci_jsonw_bytes mode)
{
	struct capture c;

	capture_open(&c, 0);
	assert_int_equal(bci_jsonw_string_n(&c.w, s, len, mode), 0);
	return capture_close(&c);
}

static void jsonw_escapes_controls_and_quotes(void **state)
{
	static const char in[] = "a\"b\\c/\b\f\n\r\t\x01\x1f\x7f";

	(void)state;
	assert_string_equal(json_of_bytes(in, sizeof(in) - 1, BCI_JSONW_UTF8),
			    "\"a\\\"b\\\\c/\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\"");
	/* NUL is data too: written escaped, not cut. */
	assert_string_equal(json_of_bytes("a\0b", 3, BCI_JSONW_UTF8), "\"a\\u0000b\"");
}

static void jsonw_utf8_mode_keeps_valid_maps_invalid(void **state)
{
	(void)state;
	/* é, €, U+1F600 pass through unchanged. */
	assert_string_equal(json_of_bytes("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9, BCI_JSONW_UTF8),
			    "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
	/* A lone 0xE9 (Latin-1 é) becomes U+00E9. */
	assert_string_equal(json_of_bytes("x\xe9y", 3, BCI_JSONW_UTF8), "\"x\xc3\xa9y\"");
	/* Overlong NUL, a surrogate, and a sequence cut short by the end. */
	assert_string_equal(json_of_bytes("\xc0\x80", 2, BCI_JSONW_UTF8), "\"\xc3\x80\xc2\x80\"");
	assert_string_equal(json_of_bytes("\xed\xa0\x80", 3, BCI_JSONW_UTF8),
			    "\"\xc3\xad\xc2\xa0\xc2\x80\"");
	assert_string_equal(json_of_bytes("\xe2\x82", 2, BCI_JSONW_UTF8), "\"\xc3\xa2\xc2\x82\"");
	/* An invalid continuation: the lead is Latin-1, the rest read again. */
	assert_string_equal(json_of_bytes("\xe2\x41", 2, BCI_JSONW_UTF8), "\"\xc3\xa2" "A\"");
}

static void jsonw_latin1_mode_is_igt_runners(void **state)
{
	(void)state;
	/* Every byte >= 0x80 is one Latin-1 character, even inside valid UTF-8. */
	assert_string_equal(json_of_bytes("\xc3\xa9", 2, BCI_JSONW_LATIN1), "\"\xc3\x83\xc2\xa9\"");
	assert_string_equal(json_of_bytes("\xff", 1, BCI_JSONW_LATIN1), "\"\xc3\xbf\"");
}

static void jsonw_utf8_split_across_appends(void **state)
{
	struct capture c;

	(void)state;
	capture_open(&c, 0);
	bci_jsonw_string_begin(&c.w, BCI_JSONW_UTF8);
	bci_jsonw_string_append(&c.w, "a\xf0\x9f", 3);
	bci_jsonw_string_append(&c.w, "\x98", 1);
	bci_jsonw_string_append(&c.w, "\x80" "b\xe2", 3);
	bci_jsonw_string_append(&c.w, "Z", 1);	/* breaks the pending 0xE2 */
	bci_jsonw_string_append(&c.w, "\xc3", 1);	/* cut short by the end */
	assert_int_equal(bci_jsonw_string_end(&c.w), 0);
	assert_string_equal(capture_close(&c), "\"a\xf0\x9f\x98\x80" "b\xc3\xa2Z\xc3\x83\"");
}

static void jsonw_structure_and_indent(void **state)
{
	struct capture c;

	(void)state;
	capture_open(&c, 2);
	bci_jsonw_object_begin(&c.w);
	bci_jsonw_key(&c.w, "a");
	bci_jsonw_array_begin(&c.w);
	bci_jsonw_int(&c.w, -3);
	bci_jsonw_bool(&c.w, true);
	bci_jsonw_null(&c.w);
	bci_jsonw_array_end(&c.w);
	bci_jsonw_key(&c.w, "e");
	bci_jsonw_object_begin(&c.w);
	bci_jsonw_object_end(&c.w);
	bci_jsonw_object_end(&c.w);
	assert_string_equal(capture_close(&c),
			    "{\n  \"a\": [\n    -3,\n    true,\n    null\n  ],\n  \"e\": {}\n}");
}

static void jsonw_misuse_is_sticky_einval(void **state)
{
	struct capture c;

	(void)state;
	capture_open(&c, 0);
	bci_jsonw_object_begin(&c.w);
	assert_int_equal(bci_jsonw_int(&c.w, 1), -EINVAL);	/* value without a key */
	assert_int_equal(bci_jsonw_key(&c.w, "k"), -EINVAL);	/* sticky */
	assert_int_equal(bci_jsonw_finish(&c.w), -EINVAL);
	fclose(c.f);
	free(c.buf);

	capture_open(&c, 0);
	bci_jsonw_array_begin(&c.w);
	assert_int_equal(bci_jsonw_finish(&c.w), -EINVAL);	/* unclosed */
	fclose(c.f);
	free(c.buf);
}

static void jsonw_doubles_round_trip(void **state)
{
	static const double values[] = {
		0.0, 0.1, 0.027, 0.020999999999999998, 1539953735.111039, 1e-300, 5e-324,
		1.7976931348623157e308, -2.5, 123456789.0,
	};
	char buf[40];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		bci_jsonw_format_double(values[i], buf, sizeof(buf));
		assert_true(strtod(buf, NULL) == values[i]);
		assert_non_null(strpbrk(buf, ".eE"));
	}
	bci_jsonw_format_double(0.1, buf, sizeof(buf));
	assert_string_equal(buf, "0.1");
	bci_jsonw_format_double(3.0, buf, sizeof(buf));
	assert_string_equal(buf, "3.0");
	bci_jsonw_format_double(NAN, buf, sizeof(buf));
	assert_string_equal(buf, "null");
	bci_jsonw_format_double(INFINITY, buf, sizeof(buf));
	assert_string_equal(buf, "null");
}

/* What format_double gave before its fast path for whole numbers: %.15g..%.17g, then ".0". */
static void format_double_by_printf(double v, char *buf, size_t size)
{
	int precision;

	for (precision = 15; precision <= 17; precision++) {
		snprintf(buf, size, "%.*g", precision, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".eE"))
		strcat(buf, ".0");
}

static void jsonw_doubles_fast_paths_as_printf(void **state)
{
	static const double values[] = {
		0.0, -0.0, 1.0, -1.0, 7.0, 10.0, 1234567.0, -98765.0, 999999999999999.0,
		-999999999999999.0, 1e15, -1e15, 1e16, 4503599627370496.0, 9007199254740993.0, 0.5,
		1e-4, 0.00011, 0.000099, 999999999.999999, 1e9 - 0.5, 0.1, 0.3, 1.000001, -2.5,
		0.020999999999999998, 1539953735.111039, 0.1 * 1.0000001,
	};
	char fast[40], slow[40];
	size_t i;
	long long n;

	(void)state;
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		bci_jsonw_format_double(values[i], fast, sizeof(fast));
		format_double_by_printf(values[i], slow, sizeof(slow));
		assert_string_equal(fast, slow);
	}
	for (n = -100000; n <= 100000; n += 7) {
		bci_jsonw_format_double((double)n * 1000003.0, fast, sizeof(fast));
		format_double_by_printf((double)n * 1000003.0, slow, sizeof(slow));
		assert_string_equal(fast, slow);
	}
	/* Times in microseconds, as test times are, up to 1e9 s. */
	for (n = 1; n < 1000000000000000LL; n = n * 3 + 1) {
		double v = (double)n / 1e6;

		bci_jsonw_format_double(v, fast, sizeof(fast));
		format_double_by_printf(v, slow, sizeof(slow));
		assert_string_equal(fast, slow);
		bci_jsonw_format_double(-v, fast, sizeof(fast));
		format_double_by_printf(-v, slow, sizeof(slow));
		assert_string_equal(fast, slow);
	}
}

/* The Latin-1 escaping of one byte, written out the long way. */
static size_t escape_byte(unsigned char c, char *out)
{
	static const char shorts[] = "\"\"\\\\\bb\ff\nn\rr\tt";
	const char *p;

	for (p = shorts; *p; p += 2)
		if ((unsigned char)p[0] == c) {
			out[0] = '\\';
			out[1] = p[1];
			return 2;
		}
	if (c < 0x20)
		return (size_t)sprintf(out, "\\u%04x", c);
	if (c >= 0x80) {
		out[0] = (char)(0xC0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3F));
		return 2;
	}
	out[0] = (char)c;
	return 1;
}

/* Strings scanned eight bytes at a time: every byte class at every place of a block. */
static void jsonw_escapes_at_every_position(void **state)
{
	static const unsigned char specials[] = {
		0x00, 0x01, 0x08, 0x0a, 0x1f, 0x20, 0x21, '"', 0x23, '[', '\\', ']', 0x7e, 0x7f,
		0x80, 0xa0, 0xe9, 0xff,
	};
	unsigned char text[41];
	char want[41 * 8], got_json[41 * 8 + 3];
	size_t i, pos, k, n;

	(void)state;
	for (i = 0; i < sizeof(specials); i++) {
		for (pos = 0; pos < sizeof(text); pos++) {
			memset(text, 'a', sizeof(text));
			text[pos] = specials[i];
			n = 0;
			want[n++] = '"';
			for (k = 0; k < sizeof(text); k++)
				n += escape_byte(text[k], want + n);
			want[n++] = '"';
			want[n] = '\0';
			snprintf(got_json, sizeof(got_json), "%s",
				 json_of_bytes((const char *)text, sizeof(text), BCI_JSONW_LATIN1));
			assert_string_equal(got_json, want);
		}
	}
}

/* A document written in pieces both ways: @buf_size 0 unbuffered. */
static char *jsonw_document(size_t buf_size, size_t *len)
{
	static char big[5000];
	char *text = NULL, *buf = buf_size ? malloc(buf_size) : NULL;
	FILE *f = open_memstream(&text, len);
	struct bci_jsonw w;
	int i;

	assert_non_null(f);
	memset(big, 'x', sizeof(big) - 1);
	big[100] = '"';
	big[200] = '\xe9';
	bci_jsonw_init(&w, f, 2);
	if (buf_size)
		bci_jsonw_buffer(&w, buf, buf_size);
	bci_jsonw_object_begin(&w);
	for (i = 0; i < 50; i++) {
		char key[16];

		snprintf(key, sizeof(key), "k%d", i);
		bci_jsonw_key(&w, key);
		if (i % 3 == 0)
			bci_jsonw_string_n(&w, big, sizeof(big) - 1 - (size_t)i, BCI_JSONW_LATIN1);
		else
			bci_jsonw_double(&w, i * 0.25);
	}
	bci_jsonw_object_end(&w);
	assert_int_equal(bci_jsonw_finish(&w), 0);
	fclose(f);
	free(buf);
	return text;
}

static void jsonw_buffer_writes_the_same_bytes(void **state)
{
	static const size_t sizes[] = { 1, 7, 64, 4096, 65536 };
	size_t len, plain_len, i;
	char *plain = jsonw_document(0, &plain_len), *text;
	struct capture c;
	char buf[16];

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		text = jsonw_document(sizes[i], &len);
		assert_int_equal(len, plain_len);
		assert_memory_equal(text, plain, len);
		free(text);
	}
	free(plain);
	/* Gathered output reaches the FILE at a flush, not before. */
	capture_open(&c, 0);
	bci_jsonw_buffer(&c.w, buf, sizeof(buf));
	bci_jsonw_array_begin(&c.w);
	bci_jsonw_int(&c.w, 42);
	fflush(c.f);
	assert_int_equal(c.len, 0);
	assert_int_equal(bci_jsonw_flush(&c.w), 0);
	fflush(c.f);
	assert_int_equal(c.len, 3);
	assert_memory_equal(c.buf, "[42", 3);
	bci_jsonw_array_end(&c.w);
	assert_string_equal(capture_close(&c), "[42]");
}

/* ---- igt_protocol ---- */

static void igt_protocol_result_words(void **state)
{
	double t = -1;

	(void)state;
	assert_string_equal(bci_igt_result_from_word("SUCCESS (1.5s)", 14, &t), "pass");
	assert_true(t == 1.5);
	t = -1;
	assert_string_equal(bci_igt_result_from_word("SKIP", 4, &t), "skip");
	assert_true(t == -1);	/* no time given: left alone */
	assert_string_equal(bci_igt_result_from_word("FAIL (0.1s)", 11, &t), "fail");
	assert_string_equal(bci_igt_result_from_word("CRASH", 5, &t), "crash");
	assert_string_equal(bci_igt_result_from_word("TIMEOUT", 7, &t), "timeout");
	/* igt_runner compares by prefix: a truncated word still counts, an empty one is a pass. */
	assert_string_equal(bci_igt_result_from_word("SK", 2, &t), "skip");
	assert_string_equal(bci_igt_result_from_word("", 0, &t), "pass");
	assert_string_equal(bci_igt_result_from_word("SUCCESSFUL", 10, &t), "incomplete");
	assert_string_equal(bci_igt_result_from_word("PASS", 4, &t), "incomplete");
}

static void igt_protocol_spans(void **state)
{
	static const char out[] =
		"IGT-Version: 9.9\n"
		"noise before\n"
		"Starting subtest: a\n"
		"inside a\n"
		"Subtest a: SUCCESS (0.250s)\n"
		"after a\n"
		"Subtest b: SKIP\n"		/* from a fixture: no start line */
		"Subtest c failed.\n"		/* not a result line */
		"Starting subtest: c\n"
		"half a line";			/* incomplete, no newline */
	struct bci_igt_output o;
	struct bci_igt_span s;

	(void)state;
	assert_int_equal(bci_igt_output_parse(&o, out, sizeof(out) - 1), 0);
	assert_true(o.has_version);
	assert_int_equal(o.version_len, strlen("IGT-Version: 9.9"));
	assert_int_equal(o.mark_count, 4);

	bci_igt_output_subtest(&o, "a", &s);
	/* The first subtest takes everything before it, and what follows its result. */
	assert_int_equal(s.begin, 0);
	assert_int_equal(s.end, strstr(out, "Subtest b") - out);
	assert_string_equal(s.result, "pass");
	assert_true(s.time == 0.25);

	bci_igt_output_subtest(&o, "b", &s);
	assert_int_equal(s.begin, strstr(out, "after a") - out);
	assert_int_equal(s.end, strstr(out, "Starting subtest: c") - out);
	assert_string_equal(s.result, "skip");
	assert_true(s.time == 0.0);

	bci_igt_output_subtest(&o, "c", &s);
	assert_int_equal(s.begin, strstr(out, "Subtest c failed") - out);
	assert_int_equal(s.end, sizeof(out) - 1);
	assert_string_equal(s.result, "incomplete");

	bci_igt_output_subtest(&o, "never", &s);
	assert_int_equal(s.begin, 0);
	assert_int_equal(s.end, sizeof(out) - 1);
	assert_string_equal(s.result, "incomplete");
	bci_igt_output_release(&o);
}

static void igt_protocol_dynamic_subtests(void **state)
{
	static const char out[] =
		"Starting subtest: s\n"
		"Starting dynamic subtest: d1\n"
		"Dynamic subtest d1: FAIL (0.5s)\n"
		"between\n"
		"Starting dynamic subtest: D2\n"
		"hang\n"
		"Subtest s: FAIL (1.0s)\n";
	struct bci_igt_output o;
	struct bci_igt_span s, d;
	size_t cursor = 0;
	char name[64], piglit[256];

	(void)state;
	assert_int_equal(bci_igt_output_parse(&o, out, sizeof(out) - 1), 0);
	bci_igt_output_subtest(&o, "s", &s);
	assert_string_equal(s.result, "fail");

	assert_int_equal(bci_igt_output_next_dynamic(&o, &s, &cursor, name, sizeof(name), &d), 1);
	assert_string_equal(name, "d1");
	assert_string_equal(d.result, "fail");
	assert_true(d.time == 0.5);
	assert_int_equal(d.begin, 0);
	assert_int_equal(d.end, strstr(out, "Starting dynamic subtest: D2") - out);

	assert_int_equal(bci_igt_output_next_dynamic(&o, &s, &cursor, name, sizeof(name), &d), 1);
	assert_string_equal(name, "D2");
	assert_string_equal(d.result, "incomplete");
	assert_int_equal(d.begin, strstr(out, "between") - out);
	assert_int_equal(d.end, sizeof(out) - 1);

	assert_int_equal(bci_igt_output_next_dynamic(&o, &s, &cursor, name, sizeof(name), &d), 0);
	bci_igt_output_release(&o);

	bci_igt_piglit_name_dynamic("igt@bin@s", name, piglit, sizeof(piglit));
	assert_string_equal(piglit, "igt@bin@s@d2");
}

static void igt_protocol_nul_ends_the_text(void **state)
{
	static const char out[] = "Starting subtest: a\n\0Subtest a: SUCCESS\n";
	struct bci_igt_output o;
	struct bci_igt_span s;

	(void)state;
	assert_int_equal(bci_igt_output_parse(&o, out, sizeof(out) - 1), 0);
	assert_int_equal(o.len, strlen(out));
	bci_igt_output_subtest(&o, "a", &s);
	assert_string_equal(s.result, "incomplete");
	bci_igt_output_release(&o);
}

static void igt_protocol_err_warnings(void **state)
{
	static const char clean[] = "Starting subtest: a\nSubtest a: SUCCESS (0.1s)\n";
	static const char noisy[] = "Starting subtest: a\nwarning!\nSubtest a: SUCCESS (0.1s)\n";
	static const char trailing[] = "Starting subtest: a\nSubtest a: SUCCESS (0.1s)\nlate\n";

	(void)state;
	assert_false(bci_igt_err_has_warnings("", 0));
	assert_false(bci_igt_err_has_warnings(clean, sizeof(clean) - 1));
	assert_true(bci_igt_err_has_warnings(noisy, sizeof(noisy) - 1));
	/* igt_runner only sees output that comes before a protocol line. */
	assert_false(bci_igt_err_has_warnings(trailing, sizeof(trailing) - 1));
	assert_false(bci_igt_err_has_warnings("only noise\n", 11));
}

static void igt_protocol_piglit_names(void **state)
{
	char name[256], longname[400];

	(void)state;
	bci_igt_piglit_name("Kms_Flip", "Basic-Plain flip", name, sizeof(name));
	assert_string_equal(name, "igt@kms_flip@basic-plain");
	bci_igt_piglit_name("core_auth", NULL, name, sizeof(name));
	assert_string_equal(name, "igt@core_auth");
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	bci_igt_piglit_name("b", longname, name, sizeof(name));
	assert_int_equal(strlen(name), 255);	/* igt_runner's buffers */
}

/* Suspend cycles are a family of their own: bootci@suspend@<state>[_<pm_test>]@<NNNN>. */
static void igt_protocol_piglit_names_suspend(void **state)
{
	char name[256], dyn[256];

	(void)state;
	bci_igt_piglit_name("bootci_suspend", "mem-0007", name, sizeof(name));
	assert_string_equal(name, "bootci@suspend@mem@0007");
	bci_igt_piglit_name("bootci_suspend", "Mem_Devices-0003", name, sizeof(name));
	assert_string_equal(name, "bootci@suspend@mem_devices@0003");
	bci_igt_piglit_name("bootci_suspend", "freeze-12345", name, sizeof(name));
	assert_string_equal(name, "bootci@suspend@freeze@12345");
	bci_igt_piglit_name("bootci_suspend", NULL, name, sizeof(name));
	assert_string_equal(name, "bootci@suspend");
	/* Not a cycle name: kept whole. */
	bci_igt_piglit_name("bootci_suspend", "odd", name, sizeof(name));
	assert_string_equal(name, "bootci@suspend@odd");
	bci_igt_piglit_name("bootci_suspend", "-0001", name, sizeof(name));
	assert_string_equal(name, "bootci@suspend@-0001");
	bci_igt_piglit_name("bootci_suspend", "mem-0001", name, 12);
	assert_string_equal(name, "bootci@susp");
	bci_igt_piglit_name_dynamic("bootci@suspend@mem@0001", "Dyn", dyn, sizeof(dyn));
	assert_string_equal(dyn, "bootci@suspend@mem@0001@dyn");
	/* Only that binary: a test binary with a similar name stays igt@. */
	bci_igt_piglit_name("bootci_suspend2", "mem-0001", name, sizeof(name));
	assert_string_equal(name, "igt@bootci_suspend2@mem-0001");
}

/* ---- resultgen on small results directories ---- */

static int setup_tree(void **state)
{
	struct fakeroot *root = calloc(1, sizeof(*root));

	if (!root)
		return -1;
	fakeroot_create(root, "");
	fakeroot_write(root, "/res/metadata.txt", "abort_mask : 0\nname : unit\nmultiple_mode : 0\n");
	fakeroot_write(root, "/res/uname.txt", "Linux box\n");
	fakeroot_write(root, "/res/starttime.txt", "100.5\n");
	fakeroot_write(root, "/res/endtime.txt", "200.25\n");
	*state = root;
	return 0;
}

static int teardown_tree(void **state)
{
	fakeroot_remove(*state);
	free(*state);
	return 0;
}

static char generated[1 << 16];
static char error_text[1024];

static int generate(struct fakeroot *root)
{
	char dir[PATH_MAX + 8];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	assert_non_null(f);
	snprintf(dir, sizeof(dir), "%s/res", root->dir);
	ret = bci_resultgen_write(dir, f, error_text, sizeof(error_text));
	fclose(f);
	assert_true(len < sizeof(generated));
	memcpy(generated, buf, len);
	generated[len] = '\0';
	free(buf);
	return ret;
}

/*
 * The string value of @key in test @test of the generated document (which
 * bci_resultgen writes with two-space indentation), unescaped only for \n.
 */
static const char *field(const char *test, const char *key)
{
	static char value[8192];
	char pattern[512];
	const char *obj, *close, *p;
	size_t n = 0;

	snprintf(pattern, sizeof(pattern), "\n    \"%s\": {", test);
	obj = strstr(generated, pattern);
	if (!obj)
		return NULL;
	close = strstr(obj + 1, "\n    }");
	snprintf(pattern, sizeof(pattern), "\n      \"%s\": \"", key);
	p = strstr(obj, pattern);
	if (!p || p > close)
		return NULL;
	for (p += strlen(pattern); *p && *p != '"' && n + 1 < sizeof(value); p++) {
		if (p[0] == '\\' && p[1] == 'n') {
			value[n++] = '\n';
			p++;
		} else {
			value[n++] = *p;
		}
	}
	value[n] = '\0';
	return value;
}

static void resultgen_timeout_and_abort(void **state)
{
	struct fakeroot *root = *state;

	fakeroot_write(root, "/res/joblist.txt", "hang a,b\nstop x,y\n");
	fakeroot_write(root, "/res/0/journal.txt", "a\nb\ntimeout:-15 (30.000s)\nexit:-15 (31.000s)\n");
	fakeroot_write(root, "/res/0/out.txt", "Starting subtest: a\nSubtest a: SUCCESS (1.000s)\nStarting subtest: b\n");
	fakeroot_write(root, "/res/0/err.txt", "");
	fakeroot_write(root, "/res/0/dmesg.txt", "");
	fakeroot_write(root, "/res/1/journal.txt", "x\nexit:112 (2.000s)\n");
	fakeroot_write(root, "/res/1/out.txt", "Starting subtest: x\n");
	fakeroot_write(root, "/res/1/err.txt", "");
	fakeroot_write(root, "/res/1/dmesg.txt", "");
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@hang@a", "result"), "pass");
	assert_string_equal(field("igt@hang@b", "result"), "timeout");
	assert_non_null(strstr(generated, "\"end\": 30.0"));
	assert_string_equal(field("igt@stop@x", "result"), "abort");
	/* "y" was never started and is not in the journal: no entry. */
	assert_null(field("igt@stop@y", "result"));
	assert_non_null(strstr(generated, "\"name\": \"unit\""));
	assert_non_null(strstr(generated, "\"uname\": \"Linux box\""));
	assert_non_null(strstr(generated, "\"start\": 100.5"));
}

/*
 * N/bootci-incomplete.txt (results_dir.h): the executor could not write all
 * of job 0's output. Each of its tests gets the note in its out; a pass or
 * skip becomes incomplete, a fail stays fail; job 1 is not touched.
 */
static void resultgen_incomplete_output_marker(void **state)
{
	struct fakeroot *root = *state;

	fakeroot_write(root, "/res/joblist.txt", "flood a,b,c\nnext z\n");
	fakeroot_write(root, "/res/0/journal.txt", "a\nb\nc\nexit:-3 (2.000s)\n");
	fakeroot_write(root, "/res/0/out.txt",
		       "Starting subtest: a\nSubtest a: SUCCESS (1.000s)\nStarting subtest: b\n"
		       "Subtest b: FAIL (0.100s)\nStarting subtest: c\nSubtest c: SKIP (0.000s)\n"
		       "flood 00001\n");
	fakeroot_write(root, "/res/0/err.txt", "");
	fakeroot_write(root, "/res/0/dmesg.txt", "");
	fakeroot_write(root, "/res/0/bootci-incomplete.txt", "out.txt 5242880 No space left on device\n");
	fakeroot_write(root, "/res/1/journal.txt", "z\nexit:0 (1.000s)\n");
	fakeroot_write(root, "/res/1/out.txt", "Starting subtest: z\nSubtest z: SUCCESS (1.000s)\n");
	fakeroot_write(root, "/res/1/err.txt", "");
	fakeroot_write(root, "/res/1/dmesg.txt", "");
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@flood@a", "result"), "incomplete");
	assert_string_equal(field("igt@flood@b", "result"), "fail");
	assert_string_equal(field("igt@flood@c", "result"), "incomplete");
	assert_non_null(strstr(field("igt@flood@a", "out"),
			       "\nbootci: the output of this job is incomplete (0/bootci-incomplete.txt: "
			       "file, bytes written, why):\nout.txt 5242880 No space left on device\n"));
	assert_non_null(strstr(field("igt@flood@b", "out"), "out.txt 5242880 No space left"));
	assert_string_equal(field("igt@next@z", "result"), "pass");
	assert_null(strstr(field("igt@next@z", "out"), "incomplete"));
}

static void resultgen_dmesg_escapes_and_ignores(void **state)
{
	struct fakeroot *root = *state;

	fakeroot_write(root, "/res/joblist.txt", "drv one,two\n");
	fakeroot_write(root, "/res/0/journal.txt", "one\ntwo\nexit:0 (1.0s)\n");
	fakeroot_write(root, "/res/0/out.txt",
		       "Starting subtest: one\nSubtest one: SUCCESS (0.1s)\n"
		       "Starting subtest: two\nSubtest two: SUCCESS (0.1s)\n");
	fakeroot_write(root, "/res/0/err.txt", "");
	fakeroot_write(root, "/res/0/dmesg.txt",
		       "6,1,1000000,-;[IGT] drv: starting subtest one\n"
		       " SUBSYSTEM=drm\n"
		       "3,2,2000001,-;tab\\x09here \\x01 kept\n"
		       "6,3,3000000,-;[IGT] drv: starting subtest two\n"
		       "6,4,3000001,-;[IGT] add ignored dmesg regex: wedged \\d+\n"
		       "3,5,3000002,-;device wedged 42\n"
		       "3,6,3000003,c;continuation is no warning\n");
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@drv@one", "dmesg"),
			    "<6> [1.000000] [IGT] drv: starting subtest one\n"
			    "<3> [2.000001] tab\\there \\\\x01 kept\n");
	assert_string_equal(field("igt@drv@one", "result"), "dmesg-warn");
	assert_non_null(field("igt@drv@one", "dmesg-warnings"));
	/* The test asked for "wedged \d+" to be ignored; a continuation never warns. */
	assert_string_equal(field("igt@drv@two", "result"), "pass");
	assert_null(field("igt@drv@two", "dmesg-warnings"));
}

/* Cycles in a results directory: their own names, totals and runtimes; a dead one incomplete. */
static void resultgen_suspend_cycles(void **state)
{
	struct fakeroot *root = *state;

	fakeroot_write(root, "/res/joblist.txt",
		       "bootci_suspend mem-0001\nbootci_suspend mem-0002\nbootci_suspend freeze-0001\n"
		       "bootci_suspend mem_devices-0001\n");
	fakeroot_write(root, "/res/0/journal.txt", "mem-0001\nexit:0 (6.012s)\n");
	fakeroot_write(root, "/res/0/out.txt",
		       "IGT-Version: bootci-suspend (x86_64) (Linux: 6.1.0 x86_64)\n"
		       "Starting subtest: mem-0001\n"
		       "bootci-suspend: write returned after 6.000s: suspended 5.000s, suspend+resume 1.000s\n"
		       "Subtest mem-0001: SUCCESS (6.012s)\n");
	fakeroot_write(root, "/res/0/err.txt", "");
	fakeroot_write(root, "/res/0/dmesg.txt", "6,1,1000000,-;PM: suspend entry (deep)\n"
		       "6,2,1400000,-;PM: suspend exit\n");
	fakeroot_write(root, "/res/1/journal.txt", "mem-0002\nexit:98 (0.100s)\n");
	fakeroot_write(root, "/res/1/out.txt",
		       "Starting subtest: mem-0002\nSubtest mem-0002: FAIL (0.100s)\n");
	fakeroot_write(root, "/res/1/err.txt",
		       "bootci-suspend: writing mem to /sys/power/state failed: Device or resource busy\n");
	fakeroot_write(root, "/res/1/dmesg.txt", "");
	/* s2idle never woke: the machine was reset, the journal names the cycle and nothing more. */
	fakeroot_write(root, "/res/2/journal.txt", "freeze-0001\n");
	fakeroot_write(root, "/res/2/out.txt", "Starting subtest: freeze-0001\n");
	fakeroot_write(root, "/res/2/err.txt", "");
	fakeroot_write(root, "/res/2/dmesg.txt", "");
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("bootci@suspend@mem@0001", "result"), "pass");
	assert_non_null(strstr(field("bootci@suspend@mem@0001", "out"), "suspended 5.000s"));
	assert_string_equal(field("bootci@suspend@mem@0002", "result"), "fail");
	assert_string_equal(field("bootci@suspend@freeze@0001", "result"), "incomplete");
	/* Never started: notrun, as any other job of the joblist. */
	assert_string_equal(field("bootci@suspend@mem_devices@0001", "result"), "notrun");
	assert_null(strstr(generated, "igt@bootci_suspend"));
	assert_non_null(strstr(generated, "\"bootci@suspend\": {"));
}

static void resultgen_missing_files(void **state)
{
	struct fakeroot *root = *state;

	/* Job 0 has no folder, job 1 lost its dmesg.txt, job 2 left nothing at all. */
	fakeroot_write(root, "/res/joblist.txt", "gone\nhalf s\nempty\n");
	fakeroot_write(root, "/res/1/out.txt", "x\n");
	fakeroot_write(root, "/res/1/err.txt", "");
	fakeroot_write(root, "/res/2/journal.txt", "");
	fakeroot_write(root, "/res/2/out.txt", "");
	fakeroot_write(root, "/res/2/err.txt", "");
	fakeroot_write(root, "/res/2/dmesg.txt", "");
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@gone", "result"), "notrun");
	assert_string_equal(field("igt@half@s", "result"), "notrun");
	assert_string_equal(field("igt@empty", "result"), "incomplete");
	assert_string_equal(field("igt@empty", "out"),
			    "This test didn't produce any output. The machine probably rebooted ungracefully.\n");
}

static void expect_error(struct fakeroot *root, const char *where)
{
	assert_true(generate(root) < 0);
	if (!strstr(error_text, where))
		fail_msg("error '%s' lacks '%s'", error_text, where);
}

static void resultgen_errors_name_file_and_line(void **state)
{
	struct fakeroot *root = *state;

	fakeroot_write(root, "/res/joblist.txt", "bin\n");
	fakeroot_write(root, "/res/0/out.txt", "");
	fakeroot_write(root, "/res/0/err.txt", "");
	fakeroot_write(root, "/res/0/dmesg.txt", "");

	fakeroot_write(root, "/res/0/journal.txt", "a\nexit:zero (1.0s)\n");
	expect_error(root, "0/journal.txt:2: malformed exit line");
	fakeroot_write(root, "/res/0/journal.txt", "a\ntimeout:9 1.0s\n");
	expect_error(root, "0/journal.txt:2: malformed timeout line");
	fakeroot_write(root, "/res/0/journal.txt", "a\n\nexit:0\n");
	expect_error(root, "0/journal.txt:2: empty line");
	/* A last line cut short by a crash is read leniently, as igt_runner does. */
	fakeroot_write(root, "/res/0/journal.txt", "exit:0 (1.");
	assert_int_equal(generate(root), 0);

	fakeroot_write(root, "/res/joblist.txt", "bin\n\n");
	expect_error(root, "joblist.txt:2: no test binary named");
	fakeroot_write(root, "/res/joblist.txt", "bin\n");

	fakeroot_write(root, "/res/metadata.txt", "name : x\nprune_mode : many\n");
	expect_error(root, "metadata.txt:2: prune_mode: 'many' is not a number");
	fakeroot_write(root, "/res/metadata.txt", "name x\n");
	expect_error(root, "metadata.txt:1: expected 'key : value'");
	fakeroot_write(root, "/res/metadata.txt", "prune_mode : 7\n");
	expect_error(root, "metadata.txt:1: prune_mode 7 is not 0..3");
	fakeroot_write(root, "/res/metadata.txt", "name : x\n");

	/* A comms dump that is no records at all is left out (test_runner_comms.c). */
	fakeroot_write(root, "/res/0/comms", "binary");
	assert_int_equal(generate(root), 0);
}

static void resultgen_not_a_results_dir(void **state)
{
	char err[256];
	FILE *f = fopen("/dev/null", "w");

	(void)state;
	assert_non_null(f);
	assert_int_equal(bci_resultgen_write("/nonexistent/dir", f, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/dir"));
	assert_int_equal(bci_resultgen_write("/", f, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "metadata.txt: missing"));
	fclose(f);
}

/* ---- files over the limit, dmesg levels, ignore regexes ---- */

static char warnings_text[8192];

/* generate() with a file limit of @max_file (0: the default), warnings kept in warnings_text. */
static int generate_limited(struct fakeroot *root, size_t max_file)
{
	struct bci_resultgen_options options = { 0 };
	char dir[PATH_MAX + 8], *buf = NULL, *wbuf = NULL;
	size_t len = 0, wlen = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	assert_non_null(f);
	options.warnings = open_memstream(&wbuf, &wlen);
	assert_non_null(options.warnings);
	options.max_file = max_file;
	snprintf(dir, sizeof(dir), "%s/res", root->dir);
	ret = bci_resultgen_write_options(dir, f, &options, error_text, sizeof(error_text));
	fclose(f);
	fclose(options.warnings);
	assert_true(len < sizeof(generated));
	memcpy(generated, buf, len);
	generated[len] = '\0';
	snprintf(warnings_text, sizeof(warnings_text), "%s", wbuf);
	free(buf);
	free(wbuf);
	return ret;
}

static FILE *open_job_file(struct fakeroot *root, const char *name)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/res/0/%s", root->dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	return f;
}

static void noise(FILE *f, const char *what, int lines)
{
	for (int i = 0; i < lines; i++)
		fprintf(f, "%s noise line %04d\n", what, i);
}

/*
 * An out.txt of about 20 KiB against a 4 KiB limit: the result lines of
 * "a" and "b" and all of dynamic subtest "d1" are in the left-out middle.
 */
static void resultgen_big_output_keeps_results(void **state)
{
	struct fakeroot *root = *state;
	const char *out;
	FILE *f;

	fakeroot_write(root, "/res/metadata.txt", "name : unit\nprune_mode : 2\n");
	fakeroot_write(root, "/res/joblist.txt", "big a,b,c\n");
	fakeroot_write(root, "/res/0/journal.txt", "a\nb\nc\nexit:98 (3.000s)\n");
	fakeroot_write(root, "/res/0/err.txt", "");
	fakeroot_write(root, "/res/0/dmesg.txt", "");
	f = open_job_file(root, "out.txt");
	fputs("IGT-Version: 1.99\nStarting subtest: a\n", f);
	noise(f, "a", 300);
	fputs("Subtest a: SUCCESS (1.250s)\nStarting subtest: b\nStarting dynamic subtest: d1\n", f);
	noise(f, "d1", 200);
	fputs("Dynamic subtest d1: FAIL (0.500s)\nSubtest b: FAIL (0.700s)\n", f);
	noise(f, "b", 200);
	fputs("Starting subtest: c\n", f);
	noise(f, "c", 20);
	fputs("Subtest c: SKIP\n", f);
	fclose(f);

	assert_int_equal(generate_limited(root, 4096), 0);
	assert_string_equal(field("igt@big@a", "result"), "pass");
	assert_non_null(strstr(generated, "\"end\": 1.25"));
	assert_string_equal(field("igt@big@b", "result"), "fail");
	assert_string_equal(field("igt@big@b@d1", "result"), "fail");
	assert_string_equal(field("igt@big@c", "result"), "skip");
	assert_string_equal(field("igt@big@a", "igt-version"), "IGT-Version: 1.99");
	/* a: its head, a marker saying what was left out and where, its result line. */
	out = field("igt@big@a", "out");
	assert_non_null(strstr(out, "a noise line 0000\n"));
	assert_null(strstr(out, "a noise line 0299\n"));
	assert_non_null(strstr(out, "bytes left out here: 0/out.txt is "));
	assert_non_null(strstr(out, "over the 4096-byte limit of results.json; the whole file is "
				    "in the results directory]\nSubtest a: SUCCESS (1.250s)\n"));
	/* c: from the tail, whole. */
	assert_non_null(strstr(field("igt@big@c", "out"), "c noise line 0019\nSubtest c: SKIP"));
	assert_true(strlen(generated) < 3 * 4096);
	if (!strstr(warnings_text, "/res/0/out.txt: ") ||
	    !strstr(warnings_text, "over the 4096-byte limit"))
		fail_msg("warning does not name the file: '%s'", warnings_text);
	assert_null(strstr(warnings_text, "err.txt"));
}

/* err.txt over the limit: output left out before a protocol line still makes a pass "warn". */
static void resultgen_big_err_keeps_warn_override(void **state)
{
	struct fakeroot *root = *state;
	FILE *f;

	fakeroot_write(root, "/res/joblist.txt", "big a\n");
	fakeroot_write(root, "/res/0/journal.txt", "a\nexit:0 (1.000s)\n");
	fakeroot_write(root, "/res/0/out.txt", "Starting subtest: a\nSubtest a: SUCCESS (1.000s)\n");
	fakeroot_write(root, "/res/0/dmesg.txt", "");
	f = open_job_file(root, "err.txt");
	for (int i = 0; i < 400; i++)
		fputs("Starting subtest: a\n", f);
	noise(f, "stderr", 10);
	for (int i = 0; i < 400; i++)
		fputs("Subtest a: SUCCESS (1.000s)\n", f);
	fclose(f);
	assert_int_equal(generate_limited(root, 4096), 0);
	assert_string_equal(field("igt@big@a", "result"), "warn");
	assert_non_null(strstr(warnings_text, "0/err.txt"));
}

/* A dmesg.txt over the real 64 MiB limit (sparse): a warning in its middle still counts. */
static void resultgen_big_dmesg_keeps_warnings(void **state)
{
	struct fakeroot *root = *state;
	const char *dmesg;
	FILE *f;

	fakeroot_write(root, "/res/joblist.txt", "drv one,two\n");
	fakeroot_write(root, "/res/0/journal.txt", "one\ntwo\nexit:0 (1.000s)\n");
	fakeroot_write(root, "/res/0/out.txt",
		       "Starting subtest: one\nSubtest one: SUCCESS (0.100s)\n"
		       "Starting subtest: two\nSubtest two: SUCCESS (0.100s)\n");
	fakeroot_write(root, "/res/0/err.txt", "");
	f = open_job_file(root, "dmesg.txt");
	fputs("6,1,1000000,-;[IGT] drv: starting subtest one\n", f);
	assert_int_equal(fseek(f, 35L << 20, SEEK_SET), 0);
	fputs("\n4,2,2000000,-;WARNING: storm in the middle\n"
	      "6,3,3000000,-;[IGT] drv: starting subtest two\n", f);
	assert_int_equal(fseek(f, 70L << 20, SEEK_SET), 0);
	fputs("\n6,4,4000000,-;quiet end of two\n", f);
	fclose(f);

	assert_int_equal(generate_limited(root, 0), 0);
	assert_string_equal(field("igt@drv@one", "result"), "dmesg-warn");
	assert_string_equal(field("igt@drv@one", "dmesg-warnings"),
			    "<4> [2.000000] WARNING: storm in the middle\n");
	dmesg = field("igt@drv@one", "dmesg");
	assert_non_null(strstr(dmesg, "<6> [1.000000] [IGT] drv: starting subtest one\n"));
	assert_non_null(strstr(dmesg, "bytes left out here: 0/dmesg.txt is "));
	assert_null(strstr(dmesg, "storm"));
	assert_string_equal(field("igt@drv@two", "result"), "pass");
	assert_non_null(strstr(field("igt@drv@two", "dmesg"), "<6> [4.000000] quiet end of two\n"));
	assert_non_null(strstr(warnings_text, "/res/0/dmesg.txt: "));
}

static void dmesg_levels_job(struct fakeroot *root)
{
	fakeroot_write(root, "/res/joblist.txt", "drv one\n");
	fakeroot_write(root, "/res/0/journal.txt", "one\nexit:0 (1.000s)\n");
	fakeroot_write(root, "/res/0/out.txt", "Starting subtest: one\nSubtest one: SUCCESS (0.100s)\n");
	fakeroot_write(root, "/res/0/err.txt", "");
	fakeroot_write(root, "/res/0/dmesg.txt",
		       "6,1,1000000,-;[IGT] drv: starting subtest one\n"
		       "5,2,2000000,-;[drm] notice from the driver\n");
}

/* igt_runner's read_settings_from_file: a level below 0 or none is 4, or 5 piglit-style. */
static void resultgen_dmesg_warn_level_defaults(void **state)
{
	static const struct { const char *metadata, *result; } cases[] = {
		{ "piglit_style_dmesg : 1\n", "dmesg-warn" },
		{ "piglit_style_dmesg : 1\ndmesg_warn_level : -1\n", "dmesg-warn" },
		{ "dmesg_warn_level : -1\npiglit_style_dmesg : 1\n", "dmesg-warn" },
		{ "piglit_style_dmesg : 1\ndmesg_warn_level : 4\n", "pass" },
		{ "piglit_style_dmesg : 0\n", "pass" },
		{ "piglit_style_dmesg : 0\ndmesg_warn_level : 5\n", "dmesg-warn" },
		{ "name : x\n", "pass" },
	};
	struct fakeroot *root = *state;
	size_t i;

	dmesg_levels_job(root);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fakeroot_write(root, "/res/metadata.txt", cases[i].metadata);
		assert_int_equal(generate(root), 0);
		if (strcmp(field("igt@drv@one", "result"), cases[i].result))
			fail_msg("metadata '%s': %s, expected %s", cases[i].metadata,
				 field("igt@drv@one", "result"), cases[i].result);
	}
}

/* PCRE escapes of "add ignored dmesg regex:" lines, as POSIX regexes. */
static void resultgen_ignore_regex_translation(void **state)
{
	static const struct { const char *regex, *message; bool ignored; } cases[] = {
		{ "wedged \\d+", "device wedged 42", true },
		{ "wedged\\D", "device wedged!", true },
		{ "a\\sb", "x a\tb", true },
		{ "a\\Sb", "a b", false },
		{ "^\\w+: \\W", "drv_1: !", true },
		{ "\\bdrm\\b", "the drm core", true },
		{ "\\bdrm\\b", "the drmcore", false },
		{ "\\(sigh\\)\\.\\[x\\]", "(sigh).[x]", true },
		{ "\\(sigh\\)", "sigh", false },
		{ "\\<\\>\\/\\-\\:", "<>/-:", true },
		{ "[\\d\\s]+z", "1 2z", true },
		{ "(?:ab)+?c\\x41", "ababcA", true },
		{ "tab\\there", "tab\there", true },
	};
	struct fakeroot *root = *state;
	char dmesg[512];
	size_t i;

	fakeroot_write(root, "/res/joblist.txt", "drv one\n");
	fakeroot_write(root, "/res/0/journal.txt", "one\nexit:0 (1.000s)\n");
	fakeroot_write(root, "/res/0/out.txt", "Starting subtest: one\nSubtest one: SUCCESS (0.100s)\n");
	fakeroot_write(root, "/res/0/err.txt", "");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(dmesg, sizeof(dmesg),
			 "6,1,1000000,-;[IGT] drv: starting subtest one\n"
			 "6,2,1000001,-;[IGT] drv: add ignored dmesg regex: %s\n"
			 "3,3,2000000,-;%s\n", cases[i].regex, cases[i].message);
		fakeroot_write(root, "/res/0/dmesg.txt", dmesg);
		assert_int_equal(generate_limited(root, 0), 0);
		if (strcmp(field("igt@drv@one", "result"), cases[i].ignored ? "pass" : "dmesg-warn"))
			fail_msg("regex '%s' on '%s': %s", cases[i].regex, cases[i].message,
				 field("igt@drv@one", "result"));
		if (warnings_text[0])
			fail_msg("regex '%s': unexpected warning '%s'", cases[i].regex, warnings_text);
	}

	/* Not translatable: a warning naming it, and nothing ignored. */
	fakeroot_write(root, "/res/0/dmesg.txt",
		       "6,1,1000000,-;[IGT] drv: starting subtest one\n"
		       "6,2,1000001,-;[IGT] drv: add ignored dmesg regex: (?<=x)y\\z\n"
		       "3,3,2000000,-;xy\n");
	assert_int_equal(generate_limited(root, 0), 0);
	assert_string_equal(field("igt@drv@one", "result"), "dmesg-warn");
	if (!strstr(warnings_text, "0/dmesg.txt: 'add ignored dmesg regex: (?<=x)y\\z' does not"))
		fail_msg("warning does not name the regex: '%s'", warnings_text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jsonw_escapes_controls_and_quotes),
		cmocka_unit_test(jsonw_utf8_mode_keeps_valid_maps_invalid),
		cmocka_unit_test(jsonw_latin1_mode_is_igt_runners),
		cmocka_unit_test(jsonw_utf8_split_across_appends),
		cmocka_unit_test(jsonw_structure_and_indent),
		cmocka_unit_test(jsonw_doubles_fast_paths_as_printf),
		cmocka_unit_test(jsonw_buffer_writes_the_same_bytes),
		cmocka_unit_test(jsonw_escapes_at_every_position),
		cmocka_unit_test(jsonw_misuse_is_sticky_einval),
		cmocka_unit_test(jsonw_doubles_round_trip),
		cmocka_unit_test(igt_protocol_result_words),
		cmocka_unit_test(igt_protocol_spans),
		cmocka_unit_test(igt_protocol_dynamic_subtests),
		cmocka_unit_test(igt_protocol_nul_ends_the_text),
		cmocka_unit_test(igt_protocol_err_warnings),
		cmocka_unit_test(igt_protocol_piglit_names),
		cmocka_unit_test(igt_protocol_piglit_names_suspend),
		cmocka_unit_test_setup_teardown(resultgen_timeout_and_abort, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_incomplete_output_marker, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_dmesg_escapes_and_ignores, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_suspend_cycles, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_missing_files, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_errors_name_file_and_line, setup_tree, teardown_tree),
		cmocka_unit_test(resultgen_not_a_results_dir),
		cmocka_unit_test_setup_teardown(resultgen_big_output_keeps_results, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_big_err_keeps_warn_override, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_big_dmesg_keeps_warnings, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_dmesg_warn_level_defaults, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_ignore_regex_translation, setup_tree, teardown_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
