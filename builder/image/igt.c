// SPDX-License-Identifier: MIT
/*
 * A test image's IGT: its test binaries (with their ELF closures) and data,
 * the testlist, and the executor.conf completed to run it.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpio_spec.h"
#include "fsutil.h"
#include "strv.h"

static int image_compare_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every executable regular file of @dir goes to @dest, with its ELF closure. */
static int image_add_igt_tests(struct image_build *b, const char *dir, const char *dest)
{
	DIR *d = opendir(dir);
	struct bci_strv names = { 0 };
	struct dirent *e;
	int ret = 0;

	if (!d) {
		ret = -errno;
		bci_message(b->err, b->err_size, "IGT tests folder %s: %s", dir, strerror(-ret));
		return ret;
	}
	while ((e = readdir(d)) && !ret) {
		char *path;
		struct stat st;

		if (e->d_name[0] == '.' || asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
			ret = bci_strv_add(&names, e->d_name);
		free(path);
	}
	closedir(d);
	/* readdir order depends on the file system: sort, so the closure is visited the same way. */
	if (names.count)
		qsort(names.items, names.count, sizeof(*names.items), image_compare_names);
	for (size_t i = 0; i < names.count && !ret; i++) {
		char *source, *image;

		if (asprintf(&source, "%s/%s", dir, names.items[i]) < 0)
			ret = -ENOMEM;
		else if (asprintf(&image, "%s/%s", dest, names.items[i]) < 0) {
			free(source);
			ret = -ENOMEM;
		} else {
			ret = image_spec_safe(b, "IGT test", source);
			if (!ret)
				ret = image_closure_add(b, source, image);
			free(source);
			free(image);
		}
	}
	if (!ret && !names.count)
		ret = -ENOENT;
	bci_strv_free(&names);
	if (ret == -ENOENT) {
		bci_message(b->err, b->err_size, "IGT tests folder %s: no test program in it", dir);
		ret = -ENOENT;
	}
	return ret;
}

static int image_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * An image given a testlist runs it: its executor.conf gets testlist= (and
 * test_dir= when IGT came with it) appended, so these win over what the spec's
 * file said before and that file stays the one place saying what the image
 * runs (bootci.<key>= on the command line still overrides it). An image
 * without one gets one holding just these keys.
 */
static int image_run_testlist(struct image_build *b)
{
	struct builder_entry *conf = NULL;
	char *old_text = NULL, *text = NULL, *line = NULL;
	size_t old_len = 0;
	int ret;

	for (size_t i = 0; i < b->spec->count; i++)
		if (!strcmp(b->spec->entries[i].path, EXECUTOR_CONF_PATH))
			conf = &b->spec->entries[i];
	if (conf && conf->type != BUILDER_ENTRY_FILE) {
		bci_message(b->err, b->err_size, "%s:%u: /" EXECUTOR_CONF_PATH " is not a file: the testlist "
			    "cannot be set in it", conf->origin, conf->line);
		return -EINVAL;
	}
	if (conf) {
		ret = bci_read_file(conf->location, &old_text, &old_len, 1 << 20);
		if (ret < 0) {
			bci_message(b->err, b->err_size, "%s: %s", conf->location, strerror(-ret));
			return ret;
		}
	}
	if (asprintf(&text, "%.*s%s# bootci-builder test-image: run the testlist it put in the image.\n"
		     "testlist = %s\n%s%s%s", (int)old_len, old_text ? old_text : "",
		     old_len && old_text[old_len - 1] != '\n' ? "\n" : "", b->r->testlist_dest,
		     b->o->igt ? "test_dir = " : "", b->o->igt ? b->r->igt_tests_dest : "",
		     b->o->igt ? "\n" : "") < 0) {
		text = NULL;
		ret = -ENOMEM;
		goto out;
	}
	if (asprintf(&b->executor_conf, "%s/executor.conf", b->work) < 0) {
		b->executor_conf = NULL;
		ret = -ENOMEM;
		goto out;
	}
	ret = bci_write_file_atomic(b->executor_conf, text, strlen(text), 0644);
	if (ret < 0) {
		bci_message(b->err, b->err_size, "%s: %s", b->executor_conf, strerror(-ret));
		goto out;
	}
	if (!conf) {
		if (asprintf(&line, "file /" EXECUTOR_CONF_PATH " %s 0644 0 0\n", b->executor_conf) < 0) {
			line = NULL;
			ret = -ENOMEM;
		} else {
			ret = image_parse_text(b, "testlist", line, strlen(line));
		}
		goto out;
	}
	/* Hard links of the file (one `file` line) must keep the same data. */
	b->executor_conf_origin = conf->location;
	for (size_t i = 0; i < b->spec->count && !ret; i++) {
		struct builder_entry *e = &b->spec->entries[i];
		char *copy;

		if (e != conf && (conf->link_group == BUILDER_NO_LINK_GROUP || e->link_group != conf->link_group ||
				  e->type != BUILDER_ENTRY_FILE))
			continue;
		copy = strdup(b->executor_conf);
		if (!copy) {
			ret = -ENOMEM;
			break;
		}
		if (e->location != b->executor_conf_origin)
			free(e->location);
		e->location = copy;
	}
out:
	free(line);
	free(text);
	free(old_text);
	return ret;
}

int image_add_igt(struct image_build *b)
{
	const char *igt = b->o->igt;
	char *tests = NULL, *data = NULL, *list = NULL;
	int ret = 0;

	if (igt) {
		/* An install prefix (meson install) or a build folder (its tests/ holds the binaries). */
		if (asprintf(&tests, "%s/libexec/igt-gpu-tools", igt) < 0)
			return -ENOMEM;
		if (image_is_dir(tests)) {
			if (asprintf(&data, "%s/share/igt-gpu-tools", igt) < 0 ||
			    asprintf(&list, "%s/test-list.txt", tests) < 0) {
				ret = -ENOMEM;
				goto out;
			}
		} else {
			free(tests);
			if (asprintf(&tests, "%s/tests", igt) < 0) {
				tests = NULL;
				ret = -ENOMEM;
				goto out;
			}
			if (asprintf(&list, "%s/test-list.txt", tests) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			if (!image_is_dir(tests)) {
				bci_message(b->err, b->err_size, "missing IGT prefix: %s has neither libexec/igt-gpu-tools/ "
					    "(install prefix) nor tests/ (build folder)", igt);
				ret = -ENOENT;
				goto out;
			}
			/* meson copies the data files (1080p-left.png, pass.png...) to data/ of the build. */
			if (asprintf(&data, "%s/data", igt) < 0) {
				data = NULL;
				ret = -ENOMEM;
				goto out;
			}
		}
		ret = image_add_igt_tests(b, tests, b->r->igt_tests_dest);
		if (!ret && data && image_is_dir(data))
			ret = image_add_dir(b, "IGT data", data, b->r->igt_data_dest);
		if (ret < 0)
			goto out;
	}
	if (b->o->testlist) {
		ret = image_add_file(b, "testlist", b->o->testlist, b->r->testlist_dest);
	} else if (list) {
		if (access(list, R_OK) < 0) {
			bci_message(b->err, b->err_size, "IGT %s has no test-list.txt (%s): give --testlist", igt, list);
			ret = -ENOENT;
		} else {
			ret = image_add_file(b, "testlist", list, b->r->testlist_dest);
		}
	}
	if (!ret && (b->o->testlist || list))
		ret = image_run_testlist(b);
out:
	free(tests);
	free(data);
	free(list);
	return ret;
}
