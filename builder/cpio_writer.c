// SPDX-License-Identifier: MIT
#include "cpio_writer.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

int builder_compression_parse(const char *name, enum builder_compression *out)
{
	static const struct {
		const char *name;
		enum builder_compression value;
	} names[] = {
		{ "zstd", BUILDER_COMPRESS_ZSTD },
		{ "xz", BUILDER_COMPRESS_XZ },
		{ "gzip", BUILDER_COMPRESS_GZIP },
		{ "none", BUILDER_COMPRESS_NONE },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(name, names[i].name)) {
			*out = names[i].value;
			return 0;
		}
	}
	return -EINVAL;
}

int builder_epoch_parse(const char *text, int64_t *out)
{
	int64_t value = 0;

	if (!text) {
		*out = 0;
		return 0;
	}
	if (!*text)
		return -EINVAL;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		value = value * 10 + (*p - '0');
		if (value > 0xffffffffLL)
			return -EINVAL;
	}
	*out = value;
	return 0;
}

/*
 * Compression settings are pinned so the output only depends on the inputs
 * and the library versions. Each choice is one the kernel can unpack.
 */
static int cpio_add_filter(struct archive *a, enum builder_compression compression)
{
	int r;

	switch (compression) {
	case BUILDER_COMPRESS_ZSTD:
		r = archive_write_add_filter_zstd(a);
		if (r == ARCHIVE_OK)
			r = archive_write_set_filter_option(a, "zstd", "compression-level", "19");
		return r;
	case BUILDER_COMPRESS_XZ:
		/*
		 * The kernel's XZ decoder only verifies CRC32 and refuses the CRC64
		 * that libarchive's built-in xz filter hard-codes, so run xz itself
		 * with the options the kernel's own usr/Makefile uses.
		 */
		return archive_write_add_filter_program(a, "xz --check=crc32 --lzma2=dict=1MiB --threads=1 -c -q");
	case BUILDER_COMPRESS_GZIP:
		r = archive_write_add_filter_gzip(a);
		/* "!timestamp": no build time in the gzip header. */
		if (r == ARCHIVE_OK)
			r = archive_write_set_filter_option(a, "gzip", "timestamp", NULL);
		if (r == ARCHIVE_OK)
			r = archive_write_set_filter_option(a, "gzip", "compression-level", "9");
		return r;
	case BUILDER_COMPRESS_NONE:
		return archive_write_add_filter_none(a);
	}
	return ARCHIVE_FATAL;
}

static const char *cpio_archive_error(struct archive *a)
{
	const char *msg = archive_error_string(a);

	return msg ? msg : "unknown libarchive error";
}

static int cpio_copy_data(struct archive *a, const struct builder_entry *entry, int src,
			  int64_t size, char *err, size_t err_size)
{
	char buf[65536];
	int64_t left = size;

	while (left > 0) {
		ssize_t n = bci_read_retry(src, buf, left < (int64_t)sizeof(buf) ? (size_t)left : sizeof(buf));

		if (n < 0) {
			int ret = (int)n;

			bci_message(err, err_size, "%s:%u: reading '%s': %s", entry->origin, entry->line,
				    entry->location, strerror(-ret));
			return ret;
		}
		if (n == 0)
			break;
		if (archive_write_data(a, buf, (size_t)n) != n) {
			bci_message(err, err_size, "writing '/%s': %s", entry->path, cpio_archive_error(a));
			return -EIO;
		}
		left -= n;
	}
	/* A short count would shift every following header: refuse a file that changed. */
	if (left != 0) {
		bci_message(err, err_size, "%s:%u: '%s' changed size while being read", entry->origin,
			    entry->line, entry->location);
		return -EIO;
	}
	return 0;
}

/* Per link group: how many names, which of them (in archive order) is last, its inode. */
struct cpio_link_group {
	unsigned int names;
	size_t last;
	uint32_t ino;
};

/*
 * The cpio type and link count of entry @i; a regular file's data source is
 * opened (*@src, with its *@size) when @i carries the data of its group.
 */
static int cpio_entry_kind(const struct builder_entry *entry, const struct cpio_link_group *group,
			   size_t i, mode_t *type, unsigned int *nlink, int *src, int64_t *size,
			   char *err, size_t err_size)
{
	struct stat st;

	*nlink = 1;
	switch (entry->type) {
	case BUILDER_ENTRY_FILE:
		*type = AE_IFREG;
		*nlink = group->names;
		/*
		 * The data travels with the last name of a link group, as
		 * gen_init_cpio does; the kernel links the earlier names
		 * and fills the file when that one arrives.
		 */
		if (group->last != i)
			return 0;
		*src = open(entry->location, O_RDONLY | O_CLOEXEC);
		if (*src < 0) {
			int ret = -errno;

			bci_message(err, err_size, "%s:%u: cannot open '%s': %s", entry->origin,
				    entry->line, entry->location, strerror(-ret));
			return ret;
		}
		if (fstat(*src, &st) < 0 || !S_ISREG(st.st_mode)) {
			bci_message(err, err_size, "%s:%u: '%s' is not a regular file", entry->origin,
				    entry->line, entry->location);
			return -EINVAL;
		}
		*size = st.st_size;
		return 0;
	case BUILDER_ENTRY_DIR:
		*type = AE_IFDIR;
		*nlink = 2;
		return 0;
	case BUILDER_ENTRY_NOD:
		*type = entry->dev_kind == 'b' ? AE_IFBLK : AE_IFCHR;
		return 0;
	case BUILDER_ENTRY_SLINK:
		*type = AE_IFLNK;
		return 0;
	case BUILDER_ENTRY_PIPE:
		*type = AE_IFIFO;
		return 0;
	case BUILDER_ENTRY_SOCK:
		*type = AE_IFSOCK;
		return 0;
	}
	return -EINVAL;
}

/* One header (and the data from @src, when open). */
static int cpio_write_entry(struct archive *a, struct archive_entry *ae,
			    const struct builder_entry *entry, mode_t type, unsigned int nlink,
			    uint32_t ino, int64_t size, int src,
			    const struct builder_cpio_options *options, char *err, size_t err_size)
{
	archive_entry_clear(ae);
	archive_entry_copy_pathname(ae, entry->path);
	archive_entry_set_filetype(ae, type);
	archive_entry_set_perm(ae, entry->mode);
	archive_entry_set_uid(ae, entry->uid);
	archive_entry_set_gid(ae, entry->gid);
	archive_entry_set_nlink(ae, nlink);
	archive_entry_set_ino64(ae, ino);
	archive_entry_set_mtime(ae, (time_t)options->mtime, 0);
	archive_entry_set_size(ae, size);
	if (entry->type == BUILDER_ENTRY_SLINK)
		archive_entry_copy_symlink(ae, entry->location);
	if (entry->type == BUILDER_ENTRY_NOD) {
		archive_entry_set_rdevmajor(ae, entry->dev_major);
		archive_entry_set_rdevminor(ae, entry->dev_minor);
	}
	/*
	 * Stricter than "below ARCHIVE_WARN is fatal": a warning here means
	 * libarchive altered the header (a truncated field, an untranslatable
	 * name), and an image that differs from its spec is not wanted.
	 */
	if (archive_write_header(a, ae) < ARCHIVE_OK) {
		bci_message(err, err_size, "writing '/%s': %s", entry->path, cpio_archive_error(a));
		return -EIO;
	}
	return src >= 0 ? cpio_copy_data(a, entry, src, size, err, err_size) : 0;
}

static int cpio_write_entries(struct archive *a, const struct builder_spec *spec,
			      const struct builder_cpio_options *options, char *err, size_t err_size)
{
	struct cpio_link_group *groups = calloc(spec->link_groups ? spec->link_groups : 1,
						sizeof(*groups));
	struct archive_entry *ae = archive_entry_new();
	uint32_t next_ino = 1;
	int ret = 0;

	if (!groups || !ae) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < spec->count; i++) {
		size_t g = spec->entries[i].link_group;

		if (g == BUILDER_NO_LINK_GROUP)
			continue;
		groups[g].names++;
		groups[g].last = i;
	}

	for (size_t i = 0; i < spec->count && !ret; i++) {
		const struct builder_entry *entry = &spec->entries[i];
		struct cpio_link_group *group = entry->link_group == BUILDER_NO_LINK_GROUP ?
						NULL : &groups[entry->link_group];
		unsigned int nlink;
		int64_t size = 0;
		int src = -1;
		mode_t type = 0;
		uint32_t ino;

		/* Hard links share the inode number of their group's first name. */
		if (group && group->ino) {
			ino = group->ino;
		} else {
			ino = next_ino++;
			if (group)
				group->ino = ino;
		}
		ret = cpio_entry_kind(entry, group, i, &type, &nlink, &src, &size, err, err_size);
		if (!ret)
			ret = cpio_write_entry(a, ae, entry, type, nlink, ino, size, src, options, err, err_size);
		if (src >= 0)
			close(src);
	}

out_free:
	archive_entry_free(ae);
	free(groups);
	return ret;
}

int builder_cpio_write_fd(const struct builder_spec *spec, int fd,
			  const struct builder_cpio_options *options, char *err, size_t err_size)
{
	struct archive *a = archive_write_new();
	int ret = 0;

	if (!a)
		return -ENOMEM;
	if (cpio_add_filter(a, options->compression) < ARCHIVE_OK ||
	    archive_write_set_format_cpio_newc(a) < ARCHIVE_OK ||
	    /* No zero padding to a 10 KiB block after the trailer. */
	    archive_write_set_bytes_in_last_block(a, 1) < ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) < ARCHIVE_OK) {
		bci_message(err, err_size, "cannot start the archive: %s", cpio_archive_error(a));
		ret = -EIO;
		goto out_free;
	}
	ret = cpio_write_entries(a, spec, options, err, err_size);
	if (ret < 0)
		goto out_free;
	if (archive_write_close(a) < ARCHIVE_OK) {
		bci_message(err, err_size, "finishing the archive: %s", cpio_archive_error(a));
		ret = -EIO;
	}

out_free:
	/* After a failure the output is discarded, so whatever free flushes does not matter. */
	archive_write_free(a);
	return ret;
}

int builder_cpio_write_file(const struct builder_spec *spec, const char *path,
			    const struct builder_cpio_options *options, char *err, size_t err_size)
{
	char tmp[PATH_MAX];
	int fd = bci_atomic_open(path, tmp, 0644);
	int ret;

	if (fd < 0) {
		bci_message(err, err_size, "%s: cannot create: %s", path, strerror(-fd));
		return fd;
	}
	ret = builder_cpio_write_fd(spec, fd, options, err, err_size);
	if (ret < 0) {
		bci_atomic_abort(fd, tmp);
		return ret;
	}
	ret = bci_atomic_commit(fd, tmp, path);
	if (ret < 0)
		bci_message(err, err_size, "%s: cannot commit: %s", path, strerror(-ret));
	return ret;
}
