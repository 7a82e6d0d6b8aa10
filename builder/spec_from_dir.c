// SPDX-License-Identifier: MIT
#include "spec_from_dir.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct dir_line {
	char *image_path;
	char *text;
};

struct dir_walk {
	struct dir_line *lines;
	size_t count, capacity;
	char *err;
	size_t err_size;
};

/* gen_init_cpio splits on blanks and has no quoting. */
static bool dir_name_fits_syntax(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			return false;
	return !strstr(s, "${");
}

static int dir_add_line(struct dir_walk *walk, const char *image_path, char *text)
{
	if (walk->count == walk->capacity) {
		size_t capacity = walk->capacity ? walk->capacity * 2 : 128;
		struct dir_line *bigger = realloc(walk->lines, capacity * sizeof(*bigger));

		if (!bigger)
			goto out_text;
		walk->lines = bigger;
		walk->capacity = capacity;
	}
	walk->lines[walk->count].image_path = strdup(image_path);
	if (!walk->lines[walk->count].image_path)
		goto out_text;
	walk->lines[walk->count++].text = text;
	return 0;

out_text:
	free(text);
	return -ENOMEM;
}

static int dir_describe(struct dir_walk *walk, const char *source, const char *image_path,
			const struct stat *st)
{
	unsigned int mode = st->st_mode & 07777;
	char target[PATH_MAX];
	char *text = NULL;
	int n;

	if (!dir_name_fits_syntax(source) || !dir_name_fits_syntax(image_path)) {
		bci_message(walk->err, walk->err_size,
			    "%s: name cannot be written in a spec (blank, control character or '${')",
			    source);
		return -EINVAL;
	}
	switch (st->st_mode & S_IFMT) {
	case S_IFREG:
		n = asprintf(&text, "file %s %s %04o 0 0\n", image_path, source, mode);
		break;
	case S_IFDIR:
		n = asprintf(&text, "dir %s %04o 0 0\n", image_path, mode);
		break;
	case S_IFLNK: {
		ssize_t len = readlink(source, target, sizeof(target) - 1);

		if (len < 0) {
			int ret = -errno;

			bci_message(walk->err, walk->err_size, "%s: readlink: %s", source, strerror(-ret));
			return ret;
		}
		target[len] = '\0';
		if (!len || !dir_name_fits_syntax(target)) {
			bci_message(walk->err, walk->err_size, "%s: link target '%s' cannot be written in a spec",
				    source, target);
			return -EINVAL;
		}
		n = asprintf(&text, "slink %s %s %04o 0 0\n", image_path, target, mode);
		break;
	}
	case S_IFCHR:
	case S_IFBLK:
		n = asprintf(&text, "nod %s %04o 0 0 %c %u %u\n", image_path, mode,
			     S_ISCHR(st->st_mode) ? 'c' : 'b', major(st->st_rdev), minor(st->st_rdev));
		break;
	case S_IFIFO:
		n = asprintf(&text, "pipe %s %04o 0 0\n", image_path, mode);
		break;
	case S_IFSOCK:
		n = asprintf(&text, "sock %s %04o 0 0\n", image_path, mode);
		break;
	default:
		bci_message(walk->err, walk->err_size, "%s: unsupported file type", source);
		return -EINVAL;
	}
	if (n < 0)
		return -ENOMEM;
	return dir_add_line(walk, image_path, text);
}

static int dir_walk_tree(struct dir_walk *walk, const char *source, const char *image_path)
{
	DIR *d = opendir(source);
	struct dirent *de;
	int ret = 0;

	if (!d) {
		ret = -errno;
		bci_message(walk->err, walk->err_size, "%s: %s", source, strerror(-ret));
		return ret;
	}
	while (!ret) {
		char *child_source = NULL, *child_image = NULL;
		struct stat st;

		errno = 0;
		de = readdir(d);
		if (!de) {
			ret = errno ? -errno : 0;
			if (ret)
				bci_message(walk->err, walk->err_size, "%s: %s", source, strerror(-ret));
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (asprintf(&child_source, "%s/%s", source, de->d_name) < 0) {
			ret = -ENOMEM;
			break;
		}
		if (asprintf(&child_image, "%s/%s", image_path, de->d_name) < 0) {
			free(child_source);
			ret = -ENOMEM;
			break;
		}
		if (lstat(child_source, &st) < 0) {
			ret = -errno;
			bci_message(walk->err, walk->err_size, "%s: %s", child_source, strerror(-ret));
		} else {
			ret = dir_describe(walk, child_source, child_image, &st);
			if (!ret && S_ISDIR(st.st_mode))
				ret = dir_walk_tree(walk, child_source, child_image);
		}
		free(child_image);
		free(child_source);
	}
	closedir(d);
	return ret;
}

/* Bytewise path order, the order the image is written in. */
static int dir_line_compare(const void *a, const void *b)
{
	const struct dir_line *x = a, *y = b;

	return strcmp(x->image_path, y->image_path);
}

int builder_spec_from_dir(const char *dir, const char *dest, char **text, size_t *len,
			  char *err, size_t err_size)
{
	struct dir_walk walk = { .err = err, .err_size = err_size };
	char *source = realpath(dir, NULL);
	char *image_root = NULL;
	size_t dest_len, total = 1;
	char *out;
	int ret;

	if (!source) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", dir, strerror(-ret));
		return ret;
	}
	/* The image root is "/"; DEST "/", "" or "/x/" are written "", "" and "/x". */
	while (*dest == '/')
		dest++;
	dest_len = strlen(dest);
	while (dest_len && dest[dest_len - 1] == '/')
		dest_len--;
	if (asprintf(&image_root, "/%.*s", (int)dest_len, dest) < 0) {
		ret = -ENOMEM;
		goto out_source;
	}
	if (!dest_len)
		image_root[0] = '\0';

	ret = dir_walk_tree(&walk, source, image_root);
	if (ret < 0)
		goto out_lines;
	qsort(walk.lines, walk.count, sizeof(*walk.lines), dir_line_compare);
	for (size_t i = 0; i < walk.count; i++)
		total += strlen(walk.lines[i].text);
	out = malloc(total);
	if (!out) {
		ret = -ENOMEM;
		goto out_lines;
	}
	*len = 0;
	for (size_t i = 0; i < walk.count; i++) {
		size_t n = strlen(walk.lines[i].text);

		memcpy(out + *len, walk.lines[i].text, n);
		*len += n;
	}
	out[*len] = '\0';
	*text = out;

out_lines:
	for (size_t i = 0; i < walk.count; i++) {
		free(walk.lines[i].image_path);
		free(walk.lines[i].text);
	}
	free(walk.lines);
	free(image_root);
out_source:
	free(source);
	return ret;
}
