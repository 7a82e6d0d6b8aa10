// SPDX-License-Identifier: MIT
/* serve's archive validation (validate.h): libarchive reads, nothing is written. */
#include "validate.h"
#include "message.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void bci_archive_limits_default(struct bci_archive_limits *limits)
{
	limits->max_entries = 200000;
	limits->max_unpacked = 16ULL << 30;
	limits->max_ratio = 200;
	limits->max_manifest = 64ULL << 20;
	limits->max_path = BCI_MANIFEST_PATH_MAX;
}

struct check {
	const struct bci_archive_limits *limits;
	uint64_t compressed;		/* the archive's size, for the ratio */
	uint64_t unpacked;		/* file bytes and header blocks so far */
	uint64_t entries;
	struct bci_manifest *manifest;
	bool *seen;			/* per manifest file */
	char *err;
	size_t err_size;
};

/* Counts @n more unpacked bytes; -EINVAL once a limit is crossed. */
static int count_unpacked(struct check *c, uint64_t n)
{
	uint64_t ratio_cap;

	c->unpacked += n;
	if (c->unpacked > c->limits->max_unpacked) {
		bci_message(c->err, c->err_size, "more than %llu bytes once unpacked (the limit)",
			    (unsigned long long)c->limits->max_unpacked);
		return -EINVAL;
	}
	ratio_cap = c->compressed > UINT64_MAX / c->limits->max_ratio ?
		UINT64_MAX : c->compressed * c->limits->max_ratio;
	if (c->unpacked > BCI_ARCHIVE_RATIO_FLOOR && c->unpacked > ratio_cap) {
		bci_message(c->err, c->err_size,
			    "unpacks to more than %llu times its %llu bytes (a compression bomb?)",
			    (unsigned long long)c->limits->max_ratio,
			    (unsigned long long)c->compressed);
		return -EINVAL;
	}
	return 0;
}

/* Whether the symlink at @path pointing to @target resolves outside the run. */
static bool link_leaves(const char *path, const char *target)
{
	long depth = 0;

	if (target[0] == '/')
		return true;
	for (const char *p = path; *p; p++)
		if (*p == '/')
			depth++;
	for (const char *p = target; *p;) {
		const char *end = strchrnul(p, '/');
		size_t n = end - p;

		if (n == 2 && !memcmp(p, "..", 2)) {
			if (--depth < 0)
				return true;
		} else if (n > 0 && !(n == 1 && *p == '.')) {
			depth++;
		}
		p = *end ? end + 1 : end;
	}
	return false;
}

/* Reads the manifest entry (@size bytes claimed) and checks it names the URL's run. */
static int read_manifest(struct archive *a, struct check *c, int64_t size, const char *machine,
			 const char *run_id)
{
	char why[512], *text;
	size_t len = 0;
	int ret;

	if (size < 0 || (uint64_t)size > c->limits->max_manifest) {
		bci_message(c->err, c->err_size, BCI_MANIFEST_NAME ": %lld bytes (at most %llu)",
			    (long long)size, (unsigned long long)c->limits->max_manifest);
		return -EINVAL;
	}
	text = malloc((size_t)size + 1);
	if (!text)
		return -ENOMEM;
	while (len < (size_t)size) {
		la_ssize_t n = archive_read_data(a, text + len, (size_t)size - len);

		if (n < 0) {
			bci_message(c->err, c->err_size, BCI_MANIFEST_NAME ": %s", archive_error_string(a));
			free(text);
			return -EINVAL;
		}
		if (n == 0)
			break;
		len += n;
	}
	ret = count_unpacked(c, len);
	if (ret == 0)
		ret = bci_manifest_parse(text, len, &c->manifest, why, sizeof(why));
	free(text);
	if (ret < 0) {
		if (ret == -EINVAL)
			bci_message(c->err, c->err_size, BCI_MANIFEST_NAME ": %s", why);
		return ret;
	}
	if (strcmp(c->manifest->machine, machine)) {
		bci_message(c->err, c->err_size, BCI_MANIFEST_NAME ": machine '%s', but uploaded as '%s'",
			    c->manifest->machine, machine);
		return -EINVAL;
	}
	if (strcmp(c->manifest->run_id, run_id)) {
		bci_message(c->err, c->err_size, BCI_MANIFEST_NAME ": run_id '%s', but uploaded as '%s'",
			    c->manifest->run_id, run_id);
		return -EINVAL;
	}
	c->seen = calloc(c->manifest->file_count + 1, sizeof(bool));
	return c->seen ? 0 : -ENOMEM;
}

/* Hashes a regular file's data and compares it with its manifest entry. */
static int check_file(struct archive *a, struct check *c, const char *path)
{
	const struct bci_manifest_file *file = bci_manifest_find(c->manifest, path);
	unsigned char buf[65536], digest[BCI_SHA256_SIZE];
	char hex[BCI_SHA256_HEX_LEN + 1];
	struct bci_sha256 hash;
	uint64_t size = 0;
	int ret = 0;

	if (!file) {
		bci_message(c->err, c->err_size, "%s: not in the manifest", path);
		return -EINVAL;
	}
	if (c->seen[file - c->manifest->files]) {
		bci_message(c->err, c->err_size, "%s: twice in the archive", path);
		return -EINVAL;
	}
	c->seen[file - c->manifest->files] = true;
	bci_sha256_init(&hash);
	for (;;) {
		la_ssize_t n = archive_read_data(a, buf, sizeof(buf));

		if (n < 0) {
			bci_message(c->err, c->err_size, "%s: %s", path, archive_error_string(a));
			ret = -EINVAL;
			break;
		}
		if (n == 0)
			break;
		bci_sha256_update(&hash, buf, (size_t)n);
		size += n;
		ret = count_unpacked(c, n);
		if (ret < 0)
			break;
		/* A file longer than the manifest says is refused without reading the rest. */
		if (size > file->size) {
			bci_message(c->err, c->err_size, "%s: more than the %llu bytes the manifest says",
				    path, (unsigned long long)file->size);
			ret = -EINVAL;
			break;
		}
	}
	bci_sha256_final(&hash, digest);
	if (ret < 0)
		return ret;
	if (size != file->size) {
		bci_message(c->err, c->err_size, "%s: %llu bytes, the manifest says %llu", path,
			    (unsigned long long)size, (unsigned long long)file->size);
		return -EINVAL;
	}
	bci_sha256_hex(digest, hex);
	if (strcmp(hex, file->sha256)) {
		bci_message(c->err, c->err_size, "%s: sha256 %s, the manifest says %s", path, hex,
			    file->sha256);
		return -EINVAL;
	}
	return 0;
}

/* One entry: its path and kind, then its data. */
static int check_entry(struct archive *a, struct archive_entry *entry, struct check *c,
		       const char *machine, const char *run_id)
{
	const char *raw = archive_entry_pathname(entry);
	char path[BCI_MANIFEST_PATH_MAX + 2], why[256];
	mode_t type = archive_entry_filetype(entry);
	size_t len;
	int ret;

	if (++c->entries > c->limits->max_entries) {
		bci_message(c->err, c->err_size, "more than %llu entries (the limit)",
			    (unsigned long long)c->limits->max_entries);
		return -EINVAL;
	}
	ret = count_unpacked(c, BCI_ARCHIVE_ENTRY_COST);
	if (ret < 0)
		return ret;
	if (!raw) {
		bci_message(c->err, c->err_size, "entry %llu: no readable path",
			    (unsigned long long)c->entries);
		return -EINVAL;
	}
	if (!strncmp(raw, "./", 2) && raw[2])
		raw += 2;
	len = strlen(raw);
	if (len > c->limits->max_path || len > BCI_MANIFEST_PATH_MAX) {
		bci_message(c->err, c->err_size, "entry %llu: a path of %zu bytes (at most %zu)",
			    (unsigned long long)c->entries, len,
			    c->limits->max_path < BCI_MANIFEST_PATH_MAX ? c->limits->max_path
									: BCI_MANIFEST_PATH_MAX);
		return -EINVAL;
	}
	memcpy(path, raw, len + 1);
	/* Folders: "dir/" and the archive's own "./" are fine, their files are checked. */
	if (type == AE_IFDIR && !archive_entry_hardlink(entry)) {
		if (len > 0 && path[len - 1] == '/')
			path[--len] = '\0';
		if (!strcmp(path, ".") || !strcmp(path, ""))
			return 0;
	}
	if (!bci_manifest_path_ok(path, why, sizeof(why))) {
		bci_message(c->err, c->err_size, "entry %llu: %s", (unsigned long long)c->entries, why);
		return -EINVAL;
	}
	if (archive_entry_hardlink(entry)) {
		const char *target = archive_entry_hardlink(entry);

		bci_message(c->err, c->err_size, "%s: a hardlink to '%.200s'%s", path, target,
			    bci_manifest_path_ok(target, why, sizeof(why)) ?
			    " (links are not accepted)" : ", outside the run");
		return -EINVAL;
	}
	if (type == AE_IFLNK) {
		const char *target = archive_entry_symlink(entry);

		target = target ? target : "";
		bci_message(c->err, c->err_size, "%s: a symlink to '%.200s'%s", path, target,
			    link_leaves(path, target) ? ", outside the run"
						      : " (links are not accepted)");
		return -EINVAL;
	}
	if (type == AE_IFDIR)
		return 0;
	if (type != AE_IFREG) {
		bci_message(c->err, c->err_size, "%s: a %s (only files and folders are accepted)", path,
			    type == AE_IFCHR ? "character device" : type == AE_IFBLK ? "block device" :
			    type == AE_IFIFO ? "FIFO" : type == AE_IFSOCK ? "socket" : "special file");
		return -EINVAL;
	}
	if (!c->manifest) {
		if (strcmp(path, BCI_MANIFEST_NAME)) {
			bci_message(c->err, c->err_size, "%s: the first entry must be " BCI_MANIFEST_NAME,
				    path);
			return -EINVAL;
		}
		return read_manifest(a, c, archive_entry_size(entry), machine, run_id);
	}
	return check_file(a, c, path);
}

static int validate(struct archive *a, uint64_t size, const struct bci_archive_limits *limits,
		    const char *machine, const char *run_id, struct bci_manifest **manifest,
		    char *err, size_t err_size)
{
	struct check c = {
		.limits = limits, .compressed = size, .err = err, .err_size = err_size,
	};
	struct archive_entry *entry;
	int ret = 0, r;

	while ((r = archive_read_next_header(a, &entry)) == ARCHIVE_OK ||
	       r == ARCHIVE_WARN) {
		if (r == ARCHIVE_WARN) {
			bci_message(err, err_size, "entry %llu: %s", (unsigned long long)c.entries + 1,
				    archive_error_string(a));
			ret = -EINVAL;
			break;
		}
		ret = check_entry(a, entry, &c, machine, run_id);
		if (ret < 0)
			break;
	}
	if (ret == 0 && r != ARCHIVE_EOF) {
		bci_message(err, err_size, "not a readable tar%s: %s",
			    c.entries ? " past its start" : "", archive_error_string(a));
		ret = -EINVAL;
	}
	if (ret == 0 && !c.manifest) {
		bci_message(err, err_size, "no " BCI_MANIFEST_NAME " in the archive");
		ret = -EINVAL;
	}
	for (size_t i = 0; ret == 0 && i < c.manifest->file_count; i++)
		if (!c.seen[i]) {
			bci_message(err, err_size, "%s: in the manifest but not in the archive",
				    c.manifest->files[i].path);
			ret = -EINVAL;
		}
	free(c.seen);
	if (ret < 0) {
		if (ret == -ENOMEM)
			bci_message(err, err_size, "out of memory");
		bci_manifest_free(c.manifest);
		return ret;
	}
	*manifest = c.manifest;
	return 0;
}

static struct archive *reader_new(void)
{
	struct archive *a = archive_read_new();

	if (!a)
		return NULL;
	if (archive_read_support_filter_zstd(a) != ARCHIVE_OK ||
	    archive_read_support_format_tar(a) != ARCHIVE_OK) {
		archive_read_free(a);
		return NULL;
	}
	return a;
}

/* @a as archive_read_open_*() left it (@opened): validated when it opened, then freed. */
static int validate_opened(struct archive *a, int opened, uint64_t size,
			   const struct bci_archive_limits *limits, const char *machine,
			   const char *run_id, struct bci_manifest **manifest, char *err,
			   size_t err_size)
{
	int ret;

	if (opened != ARCHIVE_OK) {
		bci_message(err, err_size, "not a tar.zst archive: %s", archive_error_string(a));
		ret = -EINVAL;
	} else {
		ret = validate(a, size, limits, machine, run_id, manifest, err, err_size);
	}
	archive_read_free(a);
	return ret;
}

int bci_archive_validate_fd(int fd, uint64_t size, const struct bci_archive_limits *limits,
			    const char *machine, const char *run_id, struct bci_manifest **manifest,
			    char *err, size_t err_size)
{
	struct archive *a = reader_new();

	if (!a)
		return -ENOMEM;
	return validate_opened(a, archive_read_open_fd(a, fd, 65536), size, limits, machine,
			       run_id, manifest, err, err_size);
}

int bci_archive_validate_memory(const void *data, size_t size,
				const struct bci_archive_limits *limits, const char *machine,
				const char *run_id, struct bci_manifest **manifest, char *err,
				size_t err_size)
{
	struct archive *a = reader_new();

	if (!a)
		return -ENOMEM;
	return validate_opened(a, archive_read_open_memory(a, data, size), size, limits,
			       machine, run_id, manifest, err, err_size);
}
