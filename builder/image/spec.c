// SPDX-License-Identifier: MIT
/*
 * The image's spec as a build fills it (internal.h): host files, folders,
 * symbolic links and programs' ELF closures said as gen_init_cpio lines, and
 * the entry at a path looked up. What build.c, igt.c and check.c share, so
 * none of them calls back into another.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cpio_spec.h"
#include "spec_from_dir.h"

/* spec syntax separates fields by white space: a path holding some cannot be said. */
int image_spec_safe(struct image_build *b, const char *what, const char *path)
{
	for (const char *p = path; *p; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			bci_message(b->err, b->err_size, "%s '%s': white space or control characters in the path",
				    what, path);
			return -EINVAL;
		}
	}
	if (strstr(path, "${")) {
		bci_message(b->err, b->err_size, "%s '%s': '${' in the path", what, path);
		return -EINVAL;
	}
	return 0;
}

int image_parse_text(struct image_build *b, const char *name, const char *text, size_t len)
{
	return builder_spec_parse(b->spec, name, text, len, b->err, b->err_size);
}

/* Adds a whole host folder at @dest. */
int image_add_dir(struct image_build *b, const char *name, const char *source, const char *dest)
{
	char *text;
	size_t len;
	int ret = builder_spec_from_dir(source, dest, &text, &len, b->err, b->err_size);

	if (ret < 0)
		return ret;
	ret = image_parse_text(b, name, text, len);
	free(text);
	return ret;
}

/* Adds one host file at @dest with its own permission bits. */
int image_add_file(struct image_build *b, const char *name, const char *source, const char *dest)
{
	struct stat st;
	char *line;
	int ret;

	if (stat(source, &st) < 0) {
		ret = -errno;
		bci_message(b->err, b->err_size, "%s: %s: %s", name, source, strerror(-ret));
		return ret;
	}
	if ((ret = image_spec_safe(b, name, source)) < 0 || (ret = image_spec_safe(b, name, dest)) < 0)
		return ret;
	if (S_ISDIR(st.st_mode))
		return image_add_dir(b, name, source, dest);
	if (asprintf(&line, "file %s %s %04o 0 0\n", dest, source, (unsigned int)(st.st_mode & 07777)) < 0)
		return -ENOMEM;
	ret = image_parse_text(b, name, line, strlen(line));
	free(line);
	return ret;
}

int image_add_symlink(struct image_build *b, const char *name, const char *path, const char *target)
{
	char *line;
	int ret;

	if ((ret = image_spec_safe(b, name, path)) < 0 || (ret = image_spec_safe(b, name, target)) < 0)
		return ret;
	if (asprintf(&line, "slink %s %s 0777 0 0\n", path, target) < 0)
		return -ENOMEM;
	ret = image_parse_text(b, name, line, strlen(line));
	free(line);
	return ret;
}

int image_closure_add(struct image_build *b, const char *source, const char *dest)
{
	if (!b->closure_ready) {
		int ret = builder_elf_closure_init(&b->closure, b->o->sysroot, b->err, b->err_size);

		if (ret < 0)
			return ret;
		b->closure_ready = 1;
	}
	return builder_elf_closure_add(&b->closure, source, dest, b->err, b->err_size);
}

const struct builder_entry *image_spec_entry(const struct image_build *b, const char *path)
{
	path += strspn(path, "/");
	for (size_t i = 0; i < b->spec->count; i++)
		if (!strcmp(b->spec->entries[i].path, path))
			return &b->spec->entries[i];
	return NULL;
}
