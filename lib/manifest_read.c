// SPDX-License-Identifier: MIT
/*
 * manifest.json's reader (format in manifest.h; the writer is lib/manifest.c).
 * It walks the top-level object itself and hands each member's value to json-c
 * (strict mode, UTF-8 checked), except the files array, whose entries are
 * parsed and turned into bci_manifest_file one at a time: a whole-document
 * json-c tree of a large run is many times the size of the entries
 * themselves. The members are then checked in the same order as ever, so
 * every error names its member as before.
 */
#include "manifest.h"
#include "manifest_internal.h"
#include "message.h"

#include <errno.h>
#include <json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- reader ---- */

struct reader {
	char *err;
	size_t err_size;
	/* The files array, read while the outline is walked: its first error, kept till its turn. */
	bool files_streamed;
	int files_ret;
	char files_err[512];
};

/*
 * Members of @obj must be exactly @names (NULL-terminated): a missing one or
 * one the format does not have is an error naming it under @where.
 */
static int members_exact(struct reader *r, struct json_object *obj, const char *where,
			 const char *const *names)
{
	size_t expected = 0;

	for (; names[expected]; expected++)
		if (!json_object_object_get_ex(obj, names[expected], NULL)) {
			bci_message(r->err, r->err_size, "%s%s%s: missing", where, *where ? "." : "",
				    names[expected]);
			return -EINVAL;
		}
	json_object_object_foreach(obj, key, value) {
		size_t i;

		(void)value;
		for (i = 0; names[i] && strcmp(names[i], key); i++)
			;
		if (!names[i]) {
			bci_message(r->err, r->err_size, "%s%s%.64s: unknown member", where,
				    *where ? "." : "", key);
			return -EINVAL;
		}
	}
	return 0;
}

static int get_typed(struct reader *r, struct json_object *obj, const char *where, const char *key,
		     enum json_type type, struct json_object **out)
{
	static const char *const type_names[] = {
		[json_type_null] = "null", [json_type_boolean] = "a boolean",
		[json_type_double] = "a fraction", [json_type_int] = "an integer",
		[json_type_object] = "an object", [json_type_array] = "an array",
		[json_type_string] = "a string",
	};
	struct json_object *value = json_object_object_get(obj, key);

	if (!json_object_is_type(value, type)) {
		bci_message(r->err, r->err_size, "%s%s%s: %s, expected %s", where, *where ? "." : "",
			    key, type_names[json_object_get_type(value)], type_names[type]);
		return -EINVAL;
	}
	*out = value;
	return 0;
}

static int get_string(struct reader *r, struct json_object *obj, const char *where, const char *key,
		      char **out)
{
	struct json_object *value;
	int ret = get_typed(r, obj, where, key, json_type_string, &value);

	if (ret < 0)
		return ret;
	/* A \u0000 would cut the C string short: "a\u0000b" must not pass for "a". */
	if ((size_t)json_object_get_string_len(value) != strlen(json_object_get_string(value))) {
		bci_message(r->err, r->err_size, "%s%s%s: a NUL character in the string", where,
			    *where ? "." : "", key);
		return -EINVAL;
	}
	return bci_manifest_set(out, json_object_get_string(value));
}

/* An integer in [@min, @max]. */
static int get_int(struct reader *r, struct json_object *obj, const char *where, const char *key,
		   int64_t min, int64_t max, int64_t *out)
{
	struct json_object *value;
	int ret = get_typed(r, obj, where, key, json_type_int, &value);
	int64_t v;

	if (ret < 0)
		return ret;
	errno = 0;
	v = json_object_get_int64(value);
	if (errno || v < min || v > max) {
		bci_message(r->err, r->err_size, "%s%s%s: %s out of range [%lld, %lld]", where,
			    *where ? "." : "", key, json_object_get_string(value), (long long)min,
			    (long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int read_boots(struct reader *r, struct json_object *boots, struct bci_manifest *m)
{
	json_object_object_foreach(boots, name, env) {
		struct bci_manifest_boot *boot;
		char where[128];
		int ret;

		snprintf(where, sizeof(where), "boots.%.64s", name);
		if (!json_object_is_type(env, json_type_object)) {
			bci_message(r->err, r->err_size, "%s: not an object", where);
			return -EINVAL;
		}
		ret = bci_manifest_add_boot(m, name, &boot);
		if (ret < 0)
			return ret;
		json_object_object_foreach(env, key, value) {
			if (!json_object_is_type(value, json_type_string)) {
				bci_message(r->err, r->err_size, "%s.%.64s: not a string", where, key);
				return -EINVAL;
			}
			ret = bci_manifest_boot_set(boot, key, json_object_get_string(value));
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

static int read_efi(struct reader *r, struct json_object *efi, struct bci_manifest *m)
{
	static const char *const members[] = { "boot_current", "boot_order", "entries", NULL };
	static const char *const entry_members[] = { "number", "label", "active", "device_path",
						     NULL };
	struct json_object *order, *entries, *current;
	int64_t v;
	int ret;

	ret = members_exact(r, efi, "efi", members);
	if (ret < 0)
		return ret;
	current = json_object_object_get(efi, "boot_current");
	if (current) {
		ret = get_int(r, efi, "efi", "boot_current", 0, 0xffff, &v);
		if (ret < 0)
			return ret;
		m->efi_boot_current = (int)v;
	}
	if ((ret = get_typed(r, efi, "efi", "boot_order", json_type_array, &order)) < 0 ||
	    (ret = get_typed(r, efi, "efi", "entries", json_type_array, &entries)) < 0)
		return ret;
	for (size_t i = 0; i < json_object_array_length(order); i++) {
		struct json_object *n = json_object_array_get_idx(order, i);

		errno = 0;
		v = json_object_get_int64(n);
		if (!json_object_is_type(n, json_type_int) || errno || v < 0 || v > 0xffff) {
			bci_message(r->err, r->err_size, "efi.boot_order[%zu]: not a number 0..65535", i);
			return -EINVAL;
		}
		ret = bci_manifest_add_boot_order(m, (unsigned)v);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; i < json_object_array_length(entries); i++) {
		struct json_object *e = json_object_array_get_idx(entries, i), *active;
		char where[64], *label = NULL, *path = NULL;

		snprintf(where, sizeof(where), "efi.entries[%zu]", i);
		if (!json_object_is_type(e, json_type_object)) {
			bci_message(r->err, r->err_size, "%s: not an object", where);
			return -EINVAL;
		}
		if ((ret = members_exact(r, e, where, entry_members)) < 0 ||
		    (ret = get_int(r, e, where, "number", 0, 0xffff, &v)) < 0 ||
		    (ret = get_typed(r, e, where, "active", json_type_boolean, &active)) < 0 ||
		    (ret = get_string(r, e, where, "label", &label)) < 0 ||
		    (ret = get_string(r, e, where, "device_path", &path)) < 0 ||
		    (ret = bci_manifest_add_efi_entry(m, (unsigned)v, label, json_object_get_boolean(active),
						      path)) < 0) {
			free(label);
			free(path);
			return ret;
		}
		free(label);
		free(path);
	}
	return 0;
}

/* Entry @i of the files array, appended to @m->files. */
static int read_file_entry(struct reader *r, struct json_object *f, size_t i,
			   struct bci_manifest *m)
{
	static const char *const members[] = { "path", "size", "sha256", NULL };
	char *path = NULL;
	struct json_object *hash;
	struct bci_manifest_file *file;
	char where[64];
	int64_t size;
	int ret;

	snprintf(where, sizeof(where), "files[%zu]", i);
	if (!json_object_is_type(f, json_type_object)) {
		bci_message(r->err, r->err_size, "%s: not an object", where);
		return -EINVAL;
	}
	if ((ret = members_exact(r, f, where, members)) < 0 ||
	    (ret = get_int(r, f, where, "size", 0, (int64_t)MANIFEST_SIZE_MAX, &size)) < 0 ||
	    (ret = get_typed(r, f, where, "sha256", json_type_string, &hash)) < 0)
		return ret;
	if (strlen(json_object_get_string(hash)) != BCI_SHA256_HEX_LEN) {
		bci_message(r->err, r->err_size, "%s.sha256: not 64 lowercase hex digits", where);
		return -EINVAL;
	}
	file = bci_manifest_array_grow(&m->files, &m->file_count, sizeof(*file));
	if (!file)
		return -ENOMEM;
	file->size = (uint64_t)size;
	memcpy(file->sha256, json_object_get_string(hash), sizeof(file->sha256));
	ret = get_string(r, f, where, "path", &path);
	if (ret < 0)
		return ret;
	file->path = bci_arena_strdup(&m->paths, path);
	free(path);
	return file->path ? 0 : -ENOMEM;
}

static int read_manifest(struct reader *r, struct json_object *root, struct bci_manifest *m)
{
	static const char *const members[] = { "format", "format_version", "run_id", "image_id",
					       "machine", "kernel", "cmdline", "versions",
					       "boots", "efi", "files", NULL };
	static const char *const version_members[] = { "igt", "bootci", NULL };
	struct json_object *format, *versions, *boots, *efi, *files;
	int64_t version;
	int ret;

	if (!json_object_is_type(root, json_type_object)) {
		bci_message(r->err, r->err_size, "not a JSON object");
		return -EINVAL;
	}
	/* The version first: a newer manifest is told apart from a broken one. */
	if ((ret = get_typed(r, root, "", "format", json_type_string, &format)) < 0)
		return ret;
	if (strcmp(json_object_get_string(format), BCI_MANIFEST_FORMAT)) {
		bci_message(r->err, r->err_size, "format: '%.64s', expected '%s'",
			    json_object_get_string(format), BCI_MANIFEST_FORMAT);
		return -EINVAL;
	}
	if ((ret = get_int(r, root, "", "format_version", 0, INT32_MAX, &version)) < 0)
		return ret;
	if (version != BCI_MANIFEST_VERSION) {
		bci_message(r->err, r->err_size,
			    "format_version %lld is not supported (this bootci reads %d)",
			    (long long)version, BCI_MANIFEST_VERSION);
		return -EINVAL;
	}
	if ((ret = members_exact(r, root, "", members)) < 0 ||
	    (ret = get_string(r, root, "", "run_id", &m->run_id)) < 0 ||
	    (ret = get_string(r, root, "", "image_id", &m->image_id)) < 0 ||
	    (ret = get_string(r, root, "", "machine", &m->machine)) < 0 ||
	    (ret = get_string(r, root, "", "kernel", &m->kernel)) < 0 ||
	    (ret = get_string(r, root, "", "cmdline", &m->cmdline)) < 0 ||
	    (ret = get_typed(r, root, "", "versions", json_type_object, &versions)) < 0 ||
	    (ret = members_exact(r, versions, "versions", version_members)) < 0 ||
	    (ret = get_string(r, versions, "versions", "igt", &m->igt_version)) < 0 ||
	    (ret = get_string(r, versions, "versions", "bootci", &m->bootci_version)) < 0 ||
	    (ret = get_typed(r, root, "", "boots", json_type_object, &boots)) < 0 ||
	    (ret = read_boots(r, boots, m)) < 0 ||
	    (ret = get_typed(r, root, "", "efi", json_type_object, &efi)) < 0 ||
	    (ret = read_efi(r, efi, m)) < 0 ||
	    (ret = get_typed(r, root, "", "files", json_type_array, &files)) < 0)
		return ret;
	if (r->files_streamed && r->files_ret < 0) {
		bci_message(r->err, r->err_size, "%s", r->files_err);
		return r->files_ret;
	}
	return bci_manifest_check(m, r->err, r->err_size);
}

/* ---- the outline: the top-level object walked here, its values parsed by json-c ---- */

struct outline {
	const char *text;
	size_t len, at;
	struct json_tokener *member_tok;	/* a member's value, one level down */
	struct json_tokener *entry_tok;		/* an entry of the files array, two down */
	char *err;
	size_t err_size;
};

/* JSON's whitespace (a 40k-file manifest is megabytes of indentation). */
static bool json_space(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

static void outline_skip_ws(struct outline *o)
{
	while (o->at < o->len && json_space(o->text[o->at]))
		o->at++;
}

/*
 * A structural character expected at the current byte and not there, said
 * as json-c says it over a whole document: a byte that is not ASCII is bad
 * UTF-8 before it is anything else.
 */
static int outline_expected(struct outline *o, enum json_tokener_error e)
{
	if (o->at < o->len && (unsigned char)o->text[o->at] >= 0x80)
		e = json_tokener_error_parse_utf8_string;
	bci_message(o->err, o->err_size, "bad JSON at byte %zu: %s", o->at,
		    o->at == o->len ? "unexpected end of text" : json_tokener_error_desc(e));
	return -EINVAL;
}

/*
 * After a member or element: 1 at a ',' (another follows), 0 at @close (the
 * object or array ends), else json-c's error @e said at this byte.
 */
static int outline_after_item(struct outline *o, char close, enum json_tokener_error e)
{
	outline_skip_ws(o);
	if (o->at < o->len && o->text[o->at] == ',') {
		o->at++;
		return 1;
	}
	if (o->at < o->len && o->text[o->at] == close) {
		o->at++;
		return 0;
	}
	return outline_expected(o, e);
}

/*
 * Where the value at the current byte ends: a string to its closing quote, an
 * object or array to its matching bracket (strings skipped), anything else
 * (a number, a literal) to the next separator. json-c judges what is inside.
 */
static size_t outline_extent(const struct outline *o)
{
	size_t at = o->at, depth = 0;
	bool in_string = false;

	if (at < o->len && !strchr("\"{[", o->text[at])) {
		while (at < o->len && !strchr(",:]} \t\r\n{[\"", o->text[at]))
			at++;
		return at - o->at;
	}
	for (; at < o->len; at++) {
		char c = o->text[at];

		if (in_string) {
			if (c == '\\')
				at++;
			else if (c == '"')
				in_string = false;
			else
				continue;
			if (in_string || depth)
				continue;
			return at + 1 - o->at;
		}
		if (c == '"')
			in_string = true;
		else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && depth && --depth == 0)
			return at + 1 - o->at;
	}
	return o->len - o->at;
}

/* One JSON value at the current byte (NULL for null), *@out the caller's; the next byte after. */
static int outline_value(struct outline *o, struct json_tokener *tok, struct json_object **out)
{
	size_t extent = outline_extent(o);
	struct json_object *value;
	enum json_tokener_error e;
	char *copy;

	/*
	 * Strict json-c refuses text after a value, and keeps a number at the
	 * end of its input waiting for more: it gets the value alone, NUL-ended.
	 */
	copy = malloc(extent + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, o->text + o->at, extent);
	copy[extent] = '\0';
	json_tokener_reset(tok);
	value = json_tokener_parse_ex(tok, copy, (int)extent + 1);
	e = json_tokener_get_error(tok);
	free(copy);
	/* A JSON null is a NULL object. */
	if (e != json_tokener_success) {
		size_t end = json_tokener_get_parse_end(tok);

		/*
		 * Short of its end: at the end of the text, as json-c says it
		 * over a whole document; else at the separator that cut it.
		 */
		if (e == json_tokener_continue || e == json_tokener_error_parse_eof) {
			e = o->at + extent == o->len ? json_tokener_continue
						     : json_tokener_error_parse_unexpected;
			end = extent;
		}
		bci_message(o->err, o->err_size, "bad JSON at byte %zu: %s",
			    o->at + (end < extent ? end : extent),
			    e == json_tokener_continue ? "unexpected end of text"
						       : json_tokener_error_desc(e));
		json_object_put(value);
		return -EINVAL;
	}
	o->at += extent;
	*out = value;
	return 0;
}

/*
 * The fast path for an entry as bci_manifest_write() makes it:
 * {"path": "<printable ASCII, no escape>", "size": <digits>, "sha256": "<64 such>"}
 * with any JSON whitespace. json-c would read exactly these values from
 * exactly this text, only slower; any other text (escapes, UTF-8,
 * another order, a fraction, anything wrong) goes to json-c and the checks.
 * 1 and the entry appended to @m, 0 when the text is not of that shape.
 */
/* @token, a literal (its length known where it is inlined), after any JSON whitespace. */
#define fast_token(o, at, token) fast_literal((o), (at), (token), sizeof(token) - 1)

static inline bool fast_literal(const struct outline *o, size_t *at, const char *token, size_t n)
{
	const char *t = o->text;
	size_t i = *at;

	while (i < o->len && json_space(t[i]))
		i++;
	if (o->len - i < n || memcmp(t + i, token, n))
		return false;
	*at = i + n;
	return true;
}

/* Bytes a fast string may hold: printable ASCII but the quote and the backslash. */
static const unsigned char fast_plain[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7e] = 1,
};

/* Where the run of fast_plain bytes of @t from @i (before @len) ends. */
static inline size_t plain_end(const char *t, size_t i, size_t len)
{
#ifdef __SSE2__
	/* Sixteen at a time: a quote, a backslash, a control byte, DEL or a byte above 0x7f. */
	const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
	const __m128i space = _mm_set1_epi8(' '), del = _mm_set1_epi8(0x7f);

	for (; len - i >= 16; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(t + i));
		__m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote),
							 _mm_cmpeq_epi8(v, backslash)),
					    _mm_or_si128(_mm_cmplt_epi8(v, space), _mm_cmpeq_epi8(v, del)));
		int mask = _mm_movemask_epi8(stop);

		if (mask)
			return i + (size_t)__builtin_ctz((unsigned)mask);
	}
#endif
	for (; i < len && fast_plain[(unsigned char)t[i]]; i++)
		;
	return i;
}

static inline bool fast_string(const struct outline *o, size_t *at, size_t *start, size_t *len)
{
	const char *t = o->text;
	size_t i;

	if (!fast_token(o, at, "\""))
		return false;
	i = plain_end(t, *at, o->len);
	if (i == o->len || t[i] != '"')
		return false;
	*start = *at;
	*len = i - *at;
	*at = i + 1;
	return true;
}

static int entry_fast(struct outline *o, struct bci_manifest *m)
{
	size_t at = o->at, path, path_len, hash, hash_len, digits = 0;
	struct bci_manifest_file *file;
	uint64_t size = 0;

	if (!fast_token(o, &at, "{") || !fast_token(o, &at, "\"path\"") || !fast_token(o, &at, ":") ||
	    !fast_string(o, &at, &path, &path_len) || !fast_token(o, &at, ",") ||
	    !fast_token(o, &at, "\"size\"") || !fast_token(o, &at, ":") || !fast_token(o, &at, ""))
		return 0;
	/* An integer as strict JSON writes it, small enough to need no range check. */
	while (at + digits < o->len && o->text[at + digits] >= '0' && o->text[at + digits] <= '9') {
		size = size * 10 + (uint64_t)(o->text[at + digits] - '0');
		if (++digits > 15)
			return 0;
	}
	if (!digits || (digits > 1 && o->text[at] == '0'))
		return 0;
	at += digits;
	if (!fast_token(o, &at, ",") || !fast_token(o, &at, "\"sha256\"") || !fast_token(o, &at, ":") ||
	    !fast_string(o, &at, &hash, &hash_len) || hash_len != BCI_SHA256_HEX_LEN ||
	    !fast_token(o, &at, "}"))
		return 0;
	file = bci_manifest_array_grow(&m->files, &m->file_count, sizeof(*file));
	if (!file)
		return -ENOMEM;
	file->path = bci_arena_memdup0(&m->paths, o->text + path, path_len);
	if (!file->path)
		return -ENOMEM;
	file->size = size;
	memcpy(file->sha256, o->text + hash, BCI_SHA256_HEX_LEN);
	file->sha256[BCI_SHA256_HEX_LEN] = '\0';
	o->at = at;
	return 1;
}

/* The files array at the current '[: each entry read into @m as it comes. */
static int outline_files(struct outline *o, struct reader *r, struct bci_manifest *m)
{
	struct reader entry = { .err = r->files_err, .err_size = sizeof(r->files_err) };
	size_t i = 0;
	int ret;

	/* A second "files" member replaces the first, as a JSON object's keys do. */
	/* (Their paths stay in the arena until the manifest goes: bounded by the text.) */
	free(m->files);
	m->files = NULL;
	m->file_count = 0;
	r->files_streamed = true;
	r->files_ret = 0;
	o->at++;
	outline_skip_ws(o);
	if (o->at < o->len && o->text[o->at] == ']') {
		o->at++;
		return 0;
	}
	for (;; i++) {
		struct json_object *f;

		outline_skip_ws(o);
		ret = r->files_ret == 0 ? entry_fast(o, m) : 0;
		if (ret < 0)
			return ret;
		if (ret == 1)
			goto next;
		ret = outline_value(o, o->entry_tok, &f);
		if (ret < 0)
			return ret;
		/* The first bad entry is the error; the rest is still read for bad JSON. */
		if (r->files_ret == 0) {
			r->files_ret = read_file_entry(&entry, f, i, m);
			if (r->files_ret == -ENOMEM) {
				json_object_put(f);
				return -ENOMEM;
			}
		}
		json_object_put(f);
next:
		ret = outline_after_item(o, ']', json_tokener_error_parse_array);
		if (ret <= 0)
			return ret;
	}
}

/*
 * The top-level object at the current '{' into @root (every member but an
 * array "files", which goes to @m with an empty array left in its place).
 */
static int outline_object(struct outline *o, struct reader *r, struct json_object *root,
			  struct bci_manifest *m)
{
	o->at++;
	outline_skip_ws(o);
	if (o->at < o->len && o->text[o->at] == '}') {
		o->at++;
		return 0;
	}
	for (;;) {
		struct json_object *key, *value;
		int ret;

		outline_skip_ws(o);
		if (o->at >= o->len || o->text[o->at] != '"')
			return outline_expected(o, json_tokener_error_parse_object_key_name);
		ret = outline_value(o, o->member_tok, &key);
		if (ret < 0)
			return ret;
		outline_skip_ws(o);
		if (o->at >= o->len || o->text[o->at] != ':') {
			json_object_put(key);
			return outline_expected(o, json_tokener_error_parse_object_key_sep);
		}
		o->at++;
		outline_skip_ws(o);
		if (!strcmp(json_object_get_string(key), "files") && o->at < o->len &&
		    o->text[o->at] == '[') {
			ret = outline_files(o, r, m);
			value = ret < 0 ? NULL : json_object_new_array();
			if (ret == 0 && !value)
				ret = -ENOMEM;
		} else {
			ret = outline_value(o, o->member_tok, &value);
		}
		if (ret == 0 && json_object_object_add(root, json_object_get_string(key), value) < 0) {
			json_object_put(value);
			ret = -ENOMEM;
		}
		json_object_put(key);
		if (ret < 0)
			return ret;
		ret = outline_after_item(o, '}', json_tokener_error_parse_object_value_sep);
		if (ret <= 0)
			return ret;
	}
}

/* Anything but an object at the top: json-c's whole-document parse says what is wrong. */
static int parse_whole(const char *text, size_t len, struct json_object **out, char *err,
		       size_t err_size)
{
	struct json_tokener *tok = json_tokener_new_ex(MANIFEST_DEPTH);
	struct outline o = { .text = text, .len = len, .err = err, .err_size = err_size };
	int ret;

	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	ret = outline_value(&o, tok, out);
	json_tokener_free(tok);
	if (ret == 0)
		outline_skip_ws(&o);
	if (ret == 0 && o.at < len) {
		bci_message(err, err_size, "bad JSON at byte %zu: %s", o.at,
			    json_tokener_error_desc(json_tokener_error_parse_unexpected));
		json_object_put(*out);
		*out = NULL;
		ret = -EINVAL;
	}
	return ret;
}

int bci_manifest_parse(const char *text, size_t len, struct bci_manifest **out, char *err,
		       size_t err_size)
{
	struct reader r = { .err = err, .err_size = err_size };
	struct outline o = { .text = text, .len = len, .err = err, .err_size = err_size };
	struct json_object *root = NULL;
	struct bci_manifest *m;
	int ret;

	if (memchr(text, '\0', len)) {
		bci_message(err, err_size, "a NUL byte in the JSON text");
		return -EINVAL;
	}
	if (len > INT_MAX) {
		bci_message(err, err_size, "%zu bytes is too large for a manifest", len);
		return -EFBIG;
	}
	m = bci_manifest_new();
	if (!m)
		return -ENOMEM;
	outline_skip_ws(&o);
	if (o.at >= len || text[o.at] != '{') {
		ret = parse_whole(text, len, &root, err, err_size);
		goto read;
	}
	/* The root is one level: its values may nest MANIFEST_DEPTH - 1, the files' entries - 2. */
	o.member_tok = json_tokener_new_ex(MANIFEST_DEPTH - 1);
	o.entry_tok = json_tokener_new_ex(MANIFEST_DEPTH - 2);
	root = json_object_new_object();
	if (!o.member_tok || !o.entry_tok || !root) {
		ret = -ENOMEM;
		goto done;
	}
	json_tokener_set_flags(o.member_tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	json_tokener_set_flags(o.entry_tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	ret = outline_object(&o, &r, root, m);
	if (ret == 0) {
		outline_skip_ws(&o);
		if (o.at < len)
			ret = outline_expected(&o, json_tokener_error_parse_unexpected);
	}
read:
	if (ret == 0)
		ret = read_manifest(&r, root, m);
done:
	if (o.member_tok)
		json_tokener_free(o.member_tok);
	if (o.entry_tok)
		json_tokener_free(o.entry_tok);
	json_object_put(root);
	if (ret < 0) {
		if (ret == -ENOMEM)
			bci_message(err, err_size, "out of memory");
		bci_manifest_free(m);
		return ret;
	}
	*out = m;
	return 0;
}
