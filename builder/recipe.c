// SPDX-License-Identifier: MIT
#include "recipe.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fsutil.h"
#include "strv.h"

#define RECIPE_MAX_BYTES (1024 * 1024)

struct builder_recipe *builder_recipe_new(void)
{
	struct builder_recipe *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->compression = BUILDER_COMPRESS_ZSTD;
	r->uki = true;
	r->esp_size_mib = 64;
	r->results_size_mib = 256;
	r->esp_volume_id = 0xb0075e11;
	r->igt_tests_dest = strdup("/usr/libexec/igt-gpu-tools");
	r->igt_data_dest = strdup("/usr/share/igt-gpu-tools");
	r->testlist_dest = strdup("/etc/bootci/testlist");
	r->boot_entry = strdup("bootci-known-good");
	r->cmdline = strdup("");
	if (!r->igt_tests_dest || !r->igt_data_dest || !r->testlist_dest || !r->boot_entry ||
	    !r->cmdline) {
		builder_recipe_free(r);
		return NULL;
	}
	return r;
}

static void copies_free(struct builder_recipe_copy *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].source);
		free(c[i].image_path);
	}
	free(c);
}

void builder_recipe_free(struct builder_recipe *r)
{
	if (!r)
		return;
	free(r->name);
	bci_strv_free(&r->specs);
	bci_strv_free(&r->modules);
	bci_strv_free(&r->modaliases);
	bci_strv_free(&r->firmware_dirs);
	copies_free(r->programs, r->program_count);
	copies_free(r->files, r->file_count);
	free(r->igt_tests_dest);
	free(r->igt_data_dest);
	free(r->testlist_dest);
	free(r->cmdline);
	free(r->disk_guid);
	free(r->esp_partuuid);
	free(r->results_partuuid);
	free(r->results_fs_uuid);
	free(r->boot_entry);
	free(r);
}

struct recipe_parser {
	struct builder_recipe *r;
	const char *name, *base_dir;
	unsigned int line;
	bci_lookup_fn lookup;
	void *lookup_data;
	char *err;
	size_t err_size;
};

__attribute__((format(printf, 2, 3)))
static int recipe_bad(struct recipe_parser *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bci_vmessage_at(p->err, p->err_size, p->name, p->line, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *recipe_getenv(const char *name, void *data)
{
	(void)data;
	return getenv(name);
}

/* ${VAR} expansion of @value into a malloc'ed string. */
static int recipe_expand(struct recipe_parser *p, const char *value, char **out)
{
	char why[512];
	int ret = bci_expand_vars(value, p->lookup ? p->lookup : recipe_getenv, p->lookup_data, out,
				  why, sizeof(why));

	if (ret == -EINVAL)
		return recipe_bad(p, "%s", why);
	return ret;
}

/* A path value: relative ones are joined to the recipe's folder. */
static int recipe_path(struct recipe_parser *p, const char *value, size_t len, char **out)
{
	if (!len)
		return recipe_bad(p, "empty path");
	if (value[0] == '/' || !p->base_dir) {
		*out = strndup(value, len);
	} else if (asprintf(out, "%s/%.*s", p->base_dir, (int)len, value) < 0) {
		*out = NULL;
	}
	return *out ? 0 : -ENOMEM;
}

/* Splits a white-space separated list into @v. */
static int recipe_words(struct recipe_parser *p, const char *value, struct bci_strv *v, int paths)
{
	int ret = 0;

	for (const char *s = value; *s && !ret;) {
		size_t n;

		s += strspn(s, " \t");
		n = strcspn(s, " \t");
		if (!n)
			break;
		if (paths) {
			char *path;

			ret = recipe_path(p, s, n, &path);
			if (!ret) {
				ret = bci_strv_add(v, path);
				free(path);
			}
		} else {
			ret = bci_strv_addn(v, s, n);
		}
		s += n;
	}
	return ret;
}

static int recipe_copy(struct recipe_parser *p, const char *key, const char *value,
		       struct builder_recipe_copy **list, size_t *count)
{
	struct bci_strv words = { 0 };
	struct builder_recipe_copy *bigger, *c;
	int ret = recipe_words(p, value, &words, 0);

	if (ret < 0)
		goto out;
	if (words.count < 1 || words.count > 2) {
		ret = recipe_bad(p, "%s: expected SOURCE [IMAGE_PATH], got %zu words", key, words.count);
		goto out;
	}
	if (words.count == 2 && words.items[1][0] != '/') {
		ret = recipe_bad(p, "%s: image path '%s' is not absolute", key, words.items[1]);
		goto out;
	}
	if (words.count == 1 && words.items[0][0] != '/') {
		ret = recipe_bad(p, "%s: a relative SOURCE '%s' needs an IMAGE_PATH", key, words.items[0]);
		goto out;
	}
	bigger = realloc(*list, (*count + 1) * sizeof(*bigger));
	if (!bigger) {
		ret = -ENOMEM;
		goto out;
	}
	*list = bigger;
	c = &bigger[*count];
	c->line = p->line;
	c->image_path = strdup(words.items[words.count - 1]);
	ret = recipe_path(p, words.items[0], strlen(words.items[0]), &c->source);
	if (ret < 0 || !c->image_path) {
		free(c->image_path);
		if (!ret)
			free(c->source);
		ret = ret < 0 ? ret : -ENOMEM;
		goto out;
	}
	(*count)++;
out:
	bci_strv_free(&words);
	return ret;
}

static int recipe_replace(char **field, const char *value)
{
	char *copy = strdup(value);

	if (!copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

static int recipe_uuid(struct recipe_parser *p, const char *key, const char *value, char **field)
{
	static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

	if (strlen(value) != sizeof(shape) - 1)
		return recipe_bad(p, "%s: '%s' is not a UUID", key, value);
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == '-' ? value[i] != '-' : !isxdigit((unsigned char)value[i]))
			return recipe_bad(p, "%s: '%s' is not a UUID", key, value);
	return recipe_replace(field, value);
}

static int recipe_mib(struct recipe_parser *p, const char *key, const char *value, uint64_t *field)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(value, &end, 10);
	if (!isdigit((unsigned char)value[0]) || *end || errno || n < 1 || n > 65536)
		return recipe_bad(p, "%s: '%s' is not a size in MiB (1-65536)", key, value);
	*field = n;
	return 0;
}

static int recipe_line(struct recipe_parser *p, const char *key, const char *value)
{
	struct builder_recipe *r = p->r;

	if (!strcmp(key, "image")) {
		if (!strcmp(value, "test"))
			r->kind = BUILDER_IMAGE_TEST;
		else if (!strcmp(value, "known-good"))
			r->kind = BUILDER_IMAGE_KNOWN_GOOD;
		else
			return recipe_bad(p, "image: '%s' is neither test nor known-good", value);
		return 0;
	}
	if (!strcmp(key, "spec"))
		return recipe_words(p, value, &r->specs, 1);
	if (!strcmp(key, "modules"))
		return recipe_words(p, value, &r->modules, 0);
	if (!strcmp(key, "modalias"))
		return recipe_words(p, value, &r->modaliases, 0);
	if (!strcmp(key, "firmware_dir"))
		return recipe_words(p, value, &r->firmware_dirs, 1);
	if (!strcmp(key, "program"))
		return recipe_copy(p, key, value, &r->programs, &r->program_count);
	if (!strcmp(key, "file"))
		return recipe_copy(p, key, value, &r->files, &r->file_count);
	if (!strcmp(key, "igt_tests_dest") || !strcmp(key, "igt_data_dest") ||
	    !strcmp(key, "testlist_dest")) {
		if (value[0] != '/' || strpbrk(value, " \t"))
			return recipe_bad(p, "%s: '%s' is not an absolute image path", key, value);
		return recipe_replace(!strcmp(key, "igt_tests_dest") ? &r->igt_tests_dest :
				      !strcmp(key, "igt_data_dest") ? &r->igt_data_dest :
				      &r->testlist_dest, value);
	}
	if (!strcmp(key, "cmdline"))
		return recipe_replace(&r->cmdline, value);
	if (!strcmp(key, "compress")) {
		if (builder_compression_parse(value, &r->compression) < 0)
			return recipe_bad(p, "compress: unknown compression '%s'", value);
		return 0;
	}
	if (!strcmp(key, "uki")) {
		if (strcmp(value, "yes") && strcmp(value, "no"))
			return recipe_bad(p, "uki: '%s' is neither yes nor no", value);
		r->uki = !strcmp(value, "yes");
		return 0;
	}
	if (!strcmp(key, "esp_size_mib"))
		return recipe_mib(p, key, value, &r->esp_size_mib);
	if (!strcmp(key, "results_size_mib"))
		return recipe_mib(p, key, value, &r->results_size_mib);
	if (!strcmp(key, "disk_guid"))
		return recipe_uuid(p, key, value, &r->disk_guid);
	if (!strcmp(key, "esp_partuuid"))
		return recipe_uuid(p, key, value, &r->esp_partuuid);
	if (!strcmp(key, "results_partuuid"))
		return recipe_uuid(p, key, value, &r->results_partuuid);
	if (!strcmp(key, "results_fs_uuid"))
		return recipe_uuid(p, key, value, &r->results_fs_uuid);
	if (!strcmp(key, "esp_volume_id")) {
		char *end;
		unsigned long id = strtoul(value, &end, 16);

		if (strlen(value) != 8 || *end || strspn(value, "0123456789abcdefABCDEF") != 8)
			return recipe_bad(p, "esp_volume_id: '%s' is not 8 hex digits", value);
		r->esp_volume_id = (uint32_t)id;
		return 0;
	}
	if (!strcmp(key, "boot_entry")) {
		if (!value[0] || strlen(value) > 64)
			return recipe_bad(p, "boot_entry: '%s' must have 1 to 64 characters", value);
		/* It goes between single quotes in register-boot-entry.sh. */
		for (const char *c = value; *c; c++)
			if (*c < ' ' || *c > '~' || *c == '\'' || *c == '\\')
				return recipe_bad(p, "boot_entry: '%s': only printable ASCII, no quote or backslash",
						  value);
		return recipe_replace(&r->boot_entry, value);
	}
	return recipe_bad(p, "unknown key '%s'", key);
}

static int recipe_entry(const char *key, const char *value, unsigned int line, void *data)
{
	struct recipe_parser *p = data;
	char *expanded;
	int ret;

	p->line = line;
	ret = recipe_expand(p, value, &expanded);
	if (ret < 0)
		return ret;
	ret = recipe_line(p, key, expanded);
	free(expanded);
	return ret;
}

int builder_recipe_parse(struct builder_recipe *recipe, const char *name, const char *buf,
			 size_t len, const char *base_dir, bci_lookup_fn lookup,
			 void *lookup_data, char *err, size_t err_size)
{
	struct recipe_parser p = {
		.r = recipe, .name = name, .base_dir = base_dir,
		.lookup = lookup, .lookup_data = lookup_data, .err = err, .err_size = err_size,
	};
	int ret;

	if (!recipe->name && !(recipe->name = strdup(name)))
		return -ENOMEM;
	ret = bci_kv_parse(name, buf, len, recipe_entry, &p, err, err_size);
	if (!ret && recipe->kind == BUILDER_IMAGE_UNSET) {
		bci_message(err, err_size, "%s: no 'image = test|known-good' line", name);
		ret = -EINVAL;
	}
	return ret;
}

int builder_recipe_load(struct builder_recipe *recipe, const char *path, char *err, size_t err_size)
{
	char *text, *dir, *slash, *real;
	size_t len;
	int ret;

	ret = bci_read_file(path, &text, &len, RECIPE_MAX_BYTES);
	if (ret < 0) {
		bci_message(err, err_size, "recipe %s: %s", path, strerror(-ret));
		return ret;
	}
	dir = strdup(path);
	if (!dir) {
		free(text);
		return -ENOMEM;
	}
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	/* Absolute, so what the recipe names is named the same (manifest) from any cwd. */
	real = realpath(dir[0] ? dir : "/", NULL);
	ret = builder_recipe_parse(recipe, path, text, len, real ? real : dir[0] ? dir : "/", NULL,
				   NULL, err, err_size);
	free(real);
	free(dir);
	free(text);
	return ret;
}
