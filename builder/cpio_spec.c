// SPDX-License-Identifier: MIT
#include "cpio_spec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "strv.h"

/* Specs are hand-written or generated lists; anything this big is a mistake. */
#define SPEC_MAX_BYTES (64u << 20)
/* Linux dev_t: 12 bits of major, 20 of minor (what MKDEV() in the unpacker keeps). */
#define DEV_MAJOR_MAX 0xfffu
#define DEV_MINOR_MAX 0xfffffu

static const char *spec_getenv(const char *name, void *data)
{
	(void)data;
	return getenv(name);
}

struct builder_spec *builder_spec_new(void)
{
	struct builder_spec *spec = calloc(1, sizeof(*spec));

	if (spec)
		spec->env_lookup = spec_getenv;
	return spec;
}

static void spec_entry_clear(struct builder_entry *entry)
{
	free(entry->path);
	free(entry->location);
}

void builder_spec_free(struct builder_spec *spec)
{
	if (!spec)
		return;
	for (size_t i = 0; i < spec->count; i++)
		spec_entry_clear(&spec->entries[i]);
	free(spec->entries);
	bci_strv_free(&spec->origins);
	free(spec);
}

void builder_spec_set_env_lookup(struct builder_spec *spec, bci_lookup_fn fn, void *data)
{
	spec->env_lookup = fn ? fn : spec_getenv;
	spec->env_data = fn ? data : NULL;
}

/* Takes ownership of entry->path and entry->location, even on failure. */
static int spec_push(struct builder_spec *spec, struct builder_entry *entry)
{
	if (spec->count == spec->capacity) {
		size_t capacity = spec->capacity ? spec->capacity * 2 : 64;
		struct builder_entry *bigger = realloc(spec->entries, capacity * sizeof(*bigger));

		if (!bigger) {
			spec_entry_clear(entry);
			return -ENOMEM;
		}
		spec->entries = bigger;
		spec->capacity = capacity;
	}
	entry->order = spec->count;
	spec->entries[spec->count++] = *entry;
	return 0;
}

static const char *spec_add_origin(struct builder_spec *spec, const char *name)
{
	if (bci_strv_add(&spec->origins, name) < 0)
		return NULL;
	return spec->origins.items[spec->origins.count - 1];
}

/*
 * Image paths are stored without the leading '/' the specs usually carry,
 * because that is how the kernel's unpacker and gen_init_cpio name entries.
 * "." and ".." are refused: an image path must say exactly where it lands.
 */
static int spec_normalize_path(const char *in, char **out)
{
	size_t len = strlen(in);
	char *path = malloc(len + 1);
	size_t used = 0;
	const char *p = in;

	if (!path)
		return -ENOMEM;
	while (*p) {
		const char *start, *end;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && *p != '/')
			p++;
		end = p;
		if ((end - start == 1 && start[0] == '.') ||
		    (end - start == 2 && start[0] == '.' && start[1] == '.')) {
			free(path);
			return -EINVAL;
		}
		if (used)
			path[used++] = '/';
		memcpy(path + used, start, (size_t)(end - start));
		used += (size_t)(end - start);
	}
	if (!used) {
		free(path);
		return -EINVAL;
	}
	path[used] = '\0';
	*out = path;
	return 0;
}

static int spec_parse_mode(const char *s, unsigned int *mode)
{
	unsigned int value = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '7')
			return -EINVAL;
		value = value * 8 + (unsigned int)(*s - '0');
		if (value > 07777)
			return -EINVAL;
	}
	*mode = value;
	return 0;
}

static int spec_parse_decimal(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t value = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		value = value * 10 + (uint64_t)(*s - '0');
		if (value > max)
			return -EINVAL;
	}
	*out = (uint32_t)value;
	return 0;
}

struct spec_context {
	struct builder_spec *spec;
	const char *origin;
	unsigned int line;
	char *err;
	size_t err_size;
};

__attribute__((format(printf, 2, 3)))
static int spec_fail(const struct spec_context *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bci_vmessage_at(ctx->err, ctx->err_size, ctx->origin, ctx->line, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* ${VAR} in a location; a '$' not followed by '{' stays as it is, as in gen_init_cpio. */
static int spec_expand(const struct spec_context *ctx, const char *in, char **out)
{
	char why[512];
	int ret = bci_expand_vars(in, ctx->spec->env_lookup, ctx->spec->env_data, out, why,
				  sizeof(why));

	if (ret == -EINVAL)
		return spec_fail(ctx, "%s", why);
	if (ret == 0 && !**out) {
		free(*out);
		return spec_fail(ctx, "empty location '%s'", in);
	}
	return ret;
}

struct spec_directive {
	const char *name;
	enum builder_entry_type type;
	size_t fields;		/* after the directive; `file` takes more for hard links */
	const char *usage;
};

static const struct spec_directive spec_directives[] = {
	{ "file", BUILDER_ENTRY_FILE, 5, "file <name> <location> <mode> <uid> <gid> [<hard links>...]" },
	{ "dir", BUILDER_ENTRY_DIR, 4, "dir <name> <mode> <uid> <gid>" },
	{ "nod", BUILDER_ENTRY_NOD, 7, "nod <name> <mode> <uid> <gid> <b|c> <major> <minor>" },
	{ "slink", BUILDER_ENTRY_SLINK, 5, "slink <name> <target> <mode> <uid> <gid>" },
	{ "pipe", BUILDER_ENTRY_PIPE, 4, "pipe <name> <mode> <uid> <gid>" },
	{ "sock", BUILDER_ENTRY_SOCK, 4, "sock <name> <mode> <uid> <gid>" },
};

static int spec_entry_path(const struct spec_context *ctx, const char *name, char **out)
{
	int ret = spec_normalize_path(name, out);

	if (ret == -EINVAL)
		return spec_fail(ctx, "bad path '%s' (empty, '.' or '..')", name);
	return ret;
}

/* @fields[0] is the directive; the caller checked it is known. */
static int spec_parse_fields(const struct spec_context *ctx, const struct spec_directive *d,
			     char **fields, size_t count)
{
	struct builder_spec *spec = ctx->spec;
	struct builder_entry entry = { .type = d->type, .origin = ctx->origin, .line = ctx->line,
				       .link_group = BUILDER_NO_LINK_GROUP };
	/* `file` and `slink` carry one more field (location/target) before the mode. */
	size_t mode_at = (d->type == BUILDER_ENTRY_FILE || d->type == BUILDER_ENTRY_SLINK) ? 3 : 2;
	size_t args = count - 1;
	int ret;

	if (d->type == BUILDER_ENTRY_FILE ? args < d->fields : args != d->fields)
		return spec_fail(ctx, "%s: expected %zu fields, got %zu (%s)", d->name, d->fields,
				 args, d->usage);
	if (spec_parse_mode(fields[mode_at], &entry.mode) < 0)
		return spec_fail(ctx, "bad mode '%s' (octal, at most 07777)", fields[mode_at]);
	if (spec_parse_decimal(fields[mode_at + 1], UINT32_MAX - 1, &entry.uid) < 0)
		return spec_fail(ctx, "bad uid '%s'", fields[mode_at + 1]);
	if (spec_parse_decimal(fields[mode_at + 2], UINT32_MAX - 1, &entry.gid) < 0)
		return spec_fail(ctx, "bad gid '%s'", fields[mode_at + 2]);
	if (d->type == BUILDER_ENTRY_NOD) {
		if (strcmp(fields[5], "b") && strcmp(fields[5], "c"))
			return spec_fail(ctx, "bad device type '%s' (b or c)", fields[5]);
		entry.dev_kind = fields[5][0];
		if (spec_parse_decimal(fields[6], DEV_MAJOR_MAX, &entry.dev_major) < 0)
			return spec_fail(ctx, "bad major '%s' (0..%u)", fields[6], DEV_MAJOR_MAX);
		if (spec_parse_decimal(fields[7], DEV_MINOR_MAX, &entry.dev_minor) < 0)
			return spec_fail(ctx, "bad minor '%s' (0..%u)", fields[7], DEV_MINOR_MAX);
	}

	ret = spec_entry_path(ctx, fields[1], &entry.path);
	if (ret < 0)
		return ret;
	if (d->type == BUILDER_ENTRY_SLINK) {
		entry.location = strdup(fields[2]);
		if (!entry.location) {
			free(entry.path);
			return -ENOMEM;
		}
	} else if (d->type == BUILDER_ENTRY_FILE) {
		ret = spec_expand(ctx, fields[2], &entry.location);
		if (ret < 0) {
			free(entry.path);
			return ret;
		}
		entry.link_group = spec->link_groups++;
	}

	/* Hard links: each extra name is the same file under another path. */
	for (size_t i = 6; d->type == BUILDER_ENTRY_FILE && i < count; i++) {
		struct builder_entry link = entry;

		link.path = NULL;
		link.location = strdup(entry.location);
		if (!link.location) {
			ret = -ENOMEM;
			goto out_entry;
		}
		ret = spec_entry_path(ctx, fields[i], &link.path);
		if (ret < 0) {
			free(link.location);
			goto out_entry;
		}
		ret = spec_push(spec, &link);
		if (ret < 0)
			goto out_entry;
	}
	return spec_push(spec, &entry);

out_entry:
	spec_entry_clear(&entry);
	return ret;
}

static const char spec_blanks[] = " \t\r\v\f";

static int spec_parse_line(const struct spec_context *ctx, char *line)
{
	struct bci_strv words = { 0 };
	const struct spec_directive *d = NULL;
	char **fields;
	size_t count;
	int ret = bci_strv_split(&words, line, spec_blanks);

	fields = words.items;
	count = words.count;
	if (ret < 0 || !count || fields[0][0] == '#')
		goto out_fields;

	for (size_t i = 0; i < sizeof(spec_directives) / sizeof(spec_directives[0]); i++)
		if (!strcmp(fields[0], spec_directives[i].name))
			d = &spec_directives[i];
	if (!d) {
		ret = spec_fail(ctx, "unknown directive '%s'", fields[0]);
		goto out_fields;
	}
	ret = spec_parse_fields(ctx, d, fields, count);

out_fields:
	bci_strv_free(&words);
	return ret;
}

int builder_spec_parse(struct builder_spec *spec, const char *name, const char *buf,
		       size_t len, char *err, size_t err_size)
{
	struct spec_context ctx = { .spec = spec, .err = err, .err_size = err_size };
	size_t first = spec->count, groups = spec->link_groups;
	const char *p = buf, *end = buf + len;
	int ret = 0;

	ctx.origin = spec_add_origin(spec, name);
	if (!ctx.origin)
		return -ENOMEM;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t line_len = (eol ? eol : end) - p;
		char *line;

		ctx.line++;
		if (memchr(p, '\0', line_len)) {
			ret = spec_fail(&ctx, "NUL byte in line");
			goto out_rollback;
		}
		line = strndup(p, line_len);
		if (!line) {
			ret = -ENOMEM;
			goto out_rollback;
		}
		ret = spec_parse_line(&ctx, line);
		free(line);
		if (ret < 0)
			goto out_rollback;
		p = eol ? eol + 1 : end;
	}
	return 0;

out_rollback:
	while (spec->count > first)
		spec_entry_clear(&spec->entries[--spec->count]);
	spec->link_groups = groups;
	return ret;
}

int builder_spec_parse_file(struct builder_spec *spec, const char *path, char *err, size_t err_size)
{
	char *buf;
	size_t len;
	int ret = bci_read_file(path, &buf, &len, SPEC_MAX_BYTES);

	if (ret < 0) {
		bci_message(err, err_size, "%s: cannot read spec: %s", path, strerror(-ret));
		return ret;
	}
	ret = builder_spec_parse(spec, path, buf, len, err, err_size);
	free(buf);
	return ret;
}

/* Path order, then declaration order so the later of two duplicates is reported. */
static int spec_entry_compare(const void *a, const void *b)
{
	const struct builder_entry *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

static const struct builder_entry *spec_find(const struct builder_spec *spec, size_t sorted,
					     const char *path)
{
	size_t lo = 0, hi = sorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(path, spec->entries[mid].path);

		if (!c)
			return &spec->entries[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Adds @path as a 0755 root:root directory unless an earlier call already did. */
static int spec_add_parent(struct builder_spec *spec, size_t sorted, const char *path)
{
	struct builder_entry added = { .type = BUILDER_ENTRY_DIR, .mode = 0755,
				       .link_group = BUILDER_NO_LINK_GROUP, .origin = "(parent)" };

	/* Siblings share parents, so a repeat is nearly always among the last added. */
	for (size_t j = spec->count; j > sorted; j--)
		if (!strcmp(spec->entries[j - 1].path, path))
			return 0;
	added.path = strdup(path);
	if (!added.path)
		return -ENOMEM;
	return spec_push(spec, &added);
}

int builder_spec_finalize(struct builder_spec *spec, char *err, size_t err_size)
{
	size_t sorted;
	int ret = 0;

	qsort(spec->entries, spec->count, sizeof(*spec->entries), spec_entry_compare);
	for (size_t i = 1; i < spec->count; i++) {
		const struct builder_entry *first = &spec->entries[i - 1];
		const struct builder_entry *again = &spec->entries[i];

		if (strcmp(first->path, again->path))
			continue;
		bci_message(err, err_size, "%s:%u: duplicate path '/%s' (first declared at %s:%u)",
			    again->origin, again->line, again->path, first->origin,
			    first->line);
		return -EINVAL;
	}

	/* Parents are looked up among the sorted declared entries, appended, then sorted in. */
	sorted = spec->count;
	for (size_t i = 0; i < sorted && !ret; i++) {
		char *path = strdup(spec->entries[i].path);

		if (!path)
			return -ENOMEM;
		for (char *slash = strchr(path, '/'); slash && !ret; slash = strchr(slash + 1, '/')) {
			const struct builder_entry *parent;

			*slash = '\0';
			parent = spec_find(spec, sorted, path);
			if (!parent) {
				ret = spec_add_parent(spec, sorted, path);
			} else if (parent->type != BUILDER_ENTRY_DIR) {
				const struct builder_entry *child = &spec->entries[i];

				bci_message(err, err_size, "%s:%u: '/%s' is inside '/%s', which %s:%u declares as a non-directory",
					    child->origin, child->line, child->path, path,
					    parent->origin, parent->line);
				ret = -EINVAL;
			}
			*slash = '/';
		}
		free(path);
	}
	if (ret < 0)
		return ret;
	if (spec->count > sorted)
		qsort(spec->entries, spec->count, sizeof(*spec->entries), spec_entry_compare);
	return 0;
}
