// SPDX-License-Identifier: MIT
/*
 * The job initrd: an uncompressed newc cpio holding one job's testlist,
 * which iPXE loads after the build's initrd.img. The kernel unpacks every
 * initrd into the same rootfs, so the executor finds the file without any
 * change to it or to the image. Byte-for-byte the same for the same
 * testlist: inode numbers counted from 1, mtime 0, uid and gid 0.
 *
 * (builder/cpio_writer.c writes whole images from a spec and compresses
 * them; this one file archive does not need it, and the aggregator does
 * not link the builder.)
 */
#include "job_initrd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct cpio {
	char *data;
	size_t len, size;
	unsigned ino;
};

static int cpio_put(struct cpio *c, const void *bytes, size_t len)
{
	if (c->len + len + 4 > c->size) {
		size_t size = (c->len + len + 4) * 2;
		char *grown = realloc(c->data, size);

		if (!grown)
			return -ENOMEM;
		c->data = grown;
		c->size = size;
	}
	memcpy(c->data + c->len, bytes, len);
	c->len += len;
	/* Header + name and the data are each padded to 4 bytes. */
	while (c->len % 4)
		c->data[c->len++] = '\0';
	return 0;
}

static int cpio_entry(struct cpio *c, const char *name, unsigned mode, const char *body,
		      size_t body_len)
{
	char header[128];
	size_t name_len = strlen(name) + 1;
	char *head_and_name;
	int ret;

	/* newc sizes are 32 bits; a testlist is far from it. */
	if (body_len > 0xffffffffu || name_len > 4096)
		return -EFBIG;
	snprintf(header, sizeof(header),
		 "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 mode == 0 ? 0 : ++c->ino, mode, 0u, 0u, (mode & S_IFMT) == S_IFDIR ? 2u : 1u, 0u,
		 (unsigned)body_len, 0u, 0u, 0u, 0u, (unsigned)name_len, 0u);
	head_and_name = malloc(110 + name_len);
	if (!head_and_name)
		return -ENOMEM;
	memcpy(head_and_name, header, 110);
	memcpy(head_and_name + 110, name, name_len);
	ret = cpio_put(c, head_and_name, 110 + name_len);
	free(head_and_name);
	/* No @body: the caller sends the body_len bytes itself (bci_job_initrd_frame). */
	if (ret == 0 && body_len && body)
		ret = cpio_put(c, body, body_len);
	return ret;
}

/* Each parent folder of @path, outermost first: the kernel does not create them. */
static int cpio_parents(struct cpio *c, const char *path)
{
	char *parent = strdup(path), *slash;
	int ret = 0;

	if (!parent)
		return -ENOMEM;
	for (slash = strchr(parent, '/'); slash && ret == 0; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		ret = cpio_entry(c, parent, S_IFDIR | 0755, NULL, 0);
		*slash = '/';
	}
	free(parent);
	return ret;
}

int bci_job_initrd_frame(const char *path, size_t body_len, char **head, size_t *head_len,
			 char **tail, size_t *tail_len)
{
	struct cpio h = { 0 }, t = { 0 };
	size_t pad = (4 - body_len % 4) % 4;
	int ret = cpio_parents(&h, path);

	/* The file's header says body_len; its bytes come between head and tail. */
	if (ret == 0)
		ret = cpio_entry(&h, path, S_IFREG | 0644, NULL, body_len);
	/* The trailer starts 4-aligned in the archive, so its own padding counts from 0. */
	if (ret == 0)
		ret = cpio_entry(&t, "TRAILER!!!", 0, NULL, 0);
	if (ret == 0 && !(*tail = malloc(pad + t.len)))
		ret = -ENOMEM;
	if (ret < 0) {
		free(h.data);
		free(t.data);
		return ret;
	}
	memset(*tail, 0, pad);
	memcpy(*tail + pad, t.data, t.len);
	*tail_len = pad + t.len;
	free(t.data);
	*head = h.data;
	*head_len = h.len;
	return 0;
}

int bci_job_initrd_make(const char *path, const char *text, size_t len, char **data,
			size_t *data_len)
{
	struct cpio c = { 0 };
	int ret = cpio_parents(&c, path);

	if (ret == 0)
		ret = cpio_entry(&c, path, S_IFREG | 0644, text, len);
	if (ret == 0)
		ret = cpio_entry(&c, "TRAILER!!!", 0, NULL, 0);
	if (ret < 0) {
		free(c.data);
		return ret;
	}
	*data = c.data;
	*data_len = c.len;
	return 0;
}
