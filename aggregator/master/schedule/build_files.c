// SPDX-License-Identifier: MIT
/*
 * A published build's files as the scheduler reads them (internal.h): kept
 * content-addressed under DATA/builds/objects/, listed by the store; the
 * testlists the tiers queue, and the kernel command line the builder wrote
 * in boot.ipxe, which the netboot and deploy answers pass on.
 */
#include "internal.h"

#include "../store/store.h"
#include "fsutil.h"
#include "manifest.h"
#include "message.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUILD_FILE_MAX (16u << 20)

int bci_schedule_object_path(const char *data_dir, const char *sha256, char *path, size_t size)
{
	int n = snprintf(path, size, "%s/builds/objects/%s", data_dir, sha256);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

struct file_find {
	const char *path;
	struct bci_schedule_file *file;
	bool found;
};

static int file_match(const struct bci_store_build_file *file, void *ctx)
{
	struct file_find *find = ctx;

	if (strcmp(file->path, find->path))
		return 0;
	snprintf(find->file->sha256, sizeof(find->file->sha256), "%s", file->sha256);
	find->file->size = file->size;
	find->found = true;
	return 0;
}

int bci_schedule_file_find(struct bci_store *store, bool known_good, const char *owner,
			   const char *name, struct bci_schedule_file *file, char *err,
			   size_t err_size)
{
	struct file_find find = { .path = name, .file = file };
	int ret = known_good ? bci_store_known_good_files_each(store, owner, file_match, &find, err,
							       err_size)
			     : bci_store_build_files_each(store, owner, file_match, &find, err,
							  err_size);

	return ret < 0 ? ret : find.found;
}

int bci_schedule_build_file_read(struct bci_schedule *s, const char *build, const char *name,
				 char **text, size_t *len, char *err, size_t err_size)
{
	struct bci_schedule_file file;
	char path[4096];
	int ret;

	ret = bci_schedule_file_find(s->store, false, build, name, &file, err, err_size);
	if (ret < 0)
		return ret;
	if (!ret) {
		bci_message(err, err_size, "build %s has no file %s", build, name);
		return -ENOENT;
	}
	if ((ret = bci_schedule_object_path(s->data_dir, file.sha256, path, sizeof(path))) < 0 ||
	    (ret = bci_read_file(path, text, len, BUILD_FILE_MAX)) < 0) {
		bci_message(err, err_size, "build %s: %s (%s): %s", build, name, path, strerror(-ret));
		return ret;
	}
	return 0;
}

/* Its boot.ipxe's kernel line after the initrd=: the command line the builder gave the image. */
void bci_schedule_build_cmdline(struct bci_schedule *s, const char *build, char *out, size_t size)
{
	static const char prefix[] = "kernel vmlinuz initrd=initrd.img";
	char *text = NULL, *line, err[256];
	size_t len;

	out[0] = '\0';
	if (bci_schedule_build_file_read(s, build, "boot.ipxe", &text, &len, err, sizeof(err)) < 0)
		return;
	for (line = text; line && *line;) {
		char *newline = strchr(line, '\n');

		if (newline)
			*newline = '\0';
		if (!strncmp(line, prefix, sizeof(prefix) - 1) &&
		    (line[sizeof(prefix) - 1] == ' ' || !line[sizeof(prefix) - 1])) {
			const char *args = line + sizeof(prefix) - 1;

			args += strspn(args, " ");
			/* Only printable text goes into our script: a line break would add commands. */
			for (const char *p = args; *p; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f)
					args = "";
			snprintf(out, size, "%s", args);
			break;
		}
		line = newline ? newline + 1 : NULL;
	}
	free(text);
}
