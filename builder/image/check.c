// SPDX-License-Identifier: MIT
/*
 * The executor.conf and testlist an image carries, checked with the
 * executor's own key table and testlist parser (lib/executor_keys.h,
 * lib/testlist.h) before the image is written.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor_keys.h"
#include "cpio_spec.h"
#include "fsutil.h"
#include "testlist.h"

/*
 * The line that put @e in the image, for messages: a recipe `file =` line
 * naming it (or a folder above it), else its spec's line.
 */
static void image_entry_where(const struct image_build *b, const struct builder_entry *e,
			      char *where, size_t size)
{
	for (size_t i = 0; i < b->r->file_count; i++) {
		const char *dest = b->r->files[i].image_path + strspn(b->r->files[i].image_path, "/");
		size_t n = strlen(dest);

		if (!strncmp(e->path, dest, n) && (e->path[n] == '\0' || e->path[n] == '/')) {
			snprintf(where, size, "%s:%u", b->r->name, b->r->files[i].line);
			return;
		}
	}
	snprintf(where, size, "%s:%u", e->origin, e->line);
}

static int image_read_entry(struct image_build *b, const struct builder_entry *e, const char *what,
			    char **text, size_t *len)
{
	char where[PATH_MAX + 32];
	int ret;

	image_entry_where(b, e, where, sizeof(where));
	if (e->type != BUILDER_ENTRY_FILE) {
		bci_message(b->err, b->err_size, "%s: %s /%s is not a file", where, what, e->path);
		return -EINVAL;
	}
	ret = bci_read_file(e->location, text, len, 16 << 20);
	if (ret < 0)
		bci_message(b->err, b->err_size, "%s: %s /%s: %s: %s", where, what, e->path, e->location,
			    strerror(-ret));
	return ret;
}

static int image_count_test(const struct bci_test_name *name, void *data)
{
	(void)name;
	++*(size_t *)data;
	return 0;
}

/* The testlist the configuration names must be in the image and parse. */
static int image_check_testlist(struct image_build *b, const char *path)
{
	const struct builder_entry *e = image_spec_entry(b, path);
	char where[PATH_MAX + 32], msg[1024], *text = NULL;
	size_t len = 0, tests = 0;
	int ret;

	if (!e) {
		bci_message(b->err, b->err_size, "/" EXECUTOR_CONF_PATH ": testlist %s is not in the image", path);
		return -ENOENT;
	}
	ret = image_read_entry(b, e, "testlist", &text, &len);
	if (ret < 0)
		return ret;
	ret = bci_testlist_parse(e->location, text, len, image_count_test, &tests, msg, sizeof(msg));
	if (ret < 0) {
		image_entry_where(b, e, where, sizeof(where));
		bci_message(b->err, b->err_size, "%s: testlist %s: %s", where, path, msg);
	}
	free(text);
	return ret;
}

/*
 * The executor.conf and testlist an image carries are checked here through the
 * executor's own key table and testlist parser, so that a typo fails the build,
 * naming the line that put the file in the image, instead of the test
 * machine's boot. An image without executor.conf runs on the defaults.
 */
int image_check_executor_files(struct image_build *b)
{
	const struct builder_entry *conf = image_spec_entry(b, EXECUTOR_CONF_PATH);
	char where[PATH_MAX + 32], msg[1024], *text = NULL;
	struct bci_config *config = NULL;
	const char *name = NULL;
	size_t len = 0;
	int ret;

	if (conf) {
		ret = image_read_entry(b, conf, "executor configuration", &text, &len);
		if (ret < 0)
			return ret;
		/* The file the builder completed keeps the lines of the one it came from. */
		name = b->executor_conf_origin ? b->executor_conf_origin : conf->location;
		ret = bci_executor_config_load(name, text, len, NULL, &config, msg, sizeof(msg));
		if (ret < 0) {
			image_entry_where(b, conf, where, sizeof(where));
			bci_message(b->err, b->err_size, "%s: /" EXECUTOR_CONF_PATH ": %s", where, msg);
			goto out;
		}
		bci_config_free(config);
		config = NULL;
	}
	/* Then as the executor reads it: the recipe's bootci.<key>= parameters win. */
	ret = bci_executor_config_load(name, text, len, b->r->cmdline, &config, msg, sizeof(msg));
	if (ret < 0)
		bci_message(b->err, b->err_size, "%s: cmdline: %s", b->r->name, msg);
	else if (*bci_config_get(config, "testlist"))
		ret = image_check_testlist(b, bci_config_get(config, "testlist"));
out:
	bci_config_free(config);
	free(text);
	return ret;
}
