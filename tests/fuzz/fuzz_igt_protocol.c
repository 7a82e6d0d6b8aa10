// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the IGT output parser (lib/igt_protocol.c): the input is read as
 * a test's out.txt/err.txt. Every subtest named by a protocol line, and the
 * dynamic subtests inside it, must get a span inside the text, and the
 * text written through the JSON writer must come out as valid UTF-8 JSON
 * string bodies, in both byte modes.
 */
#include "igt_protocol.h"
#include "jsonw.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_span(const struct bci_igt_output *o, const struct bci_igt_span *s)
{
	if (s->begin > s->end || s->end > o->len)
		abort();
	if (!s->result)
		abort();
}

/* The subtest name a protocol line carries, as the journal would hold it. */
static void name_of(const struct bci_igt_output *o, size_t k, char *name, size_t size)
{
	const char *p = o->buf + o->marks[k].offset, *end = o->buf + o->len;
	size_t n = 0;

	p += o->marks[k].kind == BCI_IGT_MARK_SUBTEST_START ? strlen("Starting subtest: ")
							  : strlen("Subtest ");
	while (p < end && *p != '\n' && *p != ':' && n + 1 < size)
		name[n++] = *p++;
	name[n] = '\0';
}

/* Valid UTF-8 and no raw control characters: what a JSON string body needs. */
static void check_json_string(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t need = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;

		if (need == 0 || i + need > len || c < 0x20)
			abort();
		for (size_t k = 1; k < need; k++)
			if ((s[i + k] & 0xC0) != 0x80)
				abort();
		i += need;
	}
}

static void write_json(const uint8_t *data, size_t size, enum bci_jsonw_bytes mode)
{
	struct bci_jsonw w;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	bci_jsonw_init(&w, f, 0);
	/* Split in two appends to cross a UTF-8 sequence now and then. */
	bci_jsonw_string_begin(&w, mode);
	bci_jsonw_string_append(&w, (const char *)data, size / 2);
	bci_jsonw_string_append(&w, (const char *)data + size / 2, size - size / 2);
	bci_jsonw_string_end(&w);
	if (bci_jsonw_finish(&w) != 0)
		abort();
	fclose(f);
	if (len < 3 || buf[0] != '"' || buf[len - 2] != '"')
		abort();
	check_json_string((const unsigned char *)buf, len - 1);
	free(buf);
}

/* The subtest index must find what a plain scan of every mark finds. */
static void check_index(const struct bci_igt_output *o, const char *name)
{
	struct bci_igt_output plain = *o;
	struct bci_igt_span a, b;

	plain.index_cap = 0;
	bci_igt_output_subtest(o, name, &a);
	bci_igt_output_subtest(&plain, name, &b);
	if (a.start_mark != b.start_mark || a.result_mark != b.result_mark ||
	    a.begin != b.begin || a.end != b.end || strcmp(a.result, b.result))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_igt_output o;
	char name[300], dynamic[300], piglit[256], dyn_piglit[256];
	double time = 0;
	size_t k;

	if (bci_igt_output_parse(&o, (const char *)data, size) < 0)
		return 0;
	if (o.has_version && o.version_offset + o.version_len > o.len)
		abort();
	for (k = 0; k < o.mark_count; k++) {
		struct bci_igt_span s, d;
		size_t cursor = 0, count = 0;

		if (k > 0 && o.marks[k].offset <= o.marks[k - 1].offset)
			abort();
		if (o.marks[k].kind != BCI_IGT_MARK_SUBTEST_START &&
		    o.marks[k].kind != BCI_IGT_MARK_SUBTEST_RESULT)
			continue;
		name_of(&o, k, name, sizeof(name));
		check_index(&o, name);
		/* Names a cut last line or a longer result line could also match. */
		if (name[0]) {
			char variant[310];

			snprintf(variant, sizeof(variant), "%.*s", (int)strlen(name) - 1, name);
			check_index(&o, variant);
			snprintf(variant, sizeof(variant), "%s: x", name);
			check_index(&o, variant);
			snprintf(variant, sizeof(variant), "%sz", name);
			check_index(&o, variant);
		}
		bci_igt_output_subtest(&o, name, &s);
		check_span(&o, &s);
		while (bci_igt_output_next_dynamic(&o, &s, &cursor, dynamic, sizeof(dynamic), &d)) {
			check_span(&o, &d);
			if (strlen(dynamic) == 0 || ++count > o.mark_count)
				abort();
			bci_igt_piglit_name("bin", name, piglit, sizeof(piglit));
			bci_igt_piglit_name_dynamic(piglit, dynamic, dyn_piglit, sizeof(dyn_piglit));
		}
	}
	bci_igt_output_release(&o);
	bci_igt_err_has_warnings((const char *)data, size);
	bci_igt_result_from_word((const char *)data, size, &time);
	write_json(data, size, BCI_JSONW_UTF8);
	write_json(data, size, BCI_JSONW_LATIN1);
	return 0;
}
