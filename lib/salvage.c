// SPDX-License-Identifier: MIT
/* The salvage area's reader and writer (salvage.h). */
#include "salvage.h"

#include "executor_keys.h"
#include "message.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (1024 * 1024)

/* ---- where ---- */

uint64_t bci_salvage_footer_offset(uint64_t disk_size)
{
	uint64_t whole = disk_size - disk_size % BCI_SALVAGE_FOOTER_SIZE;

	return whole > BCI_SALVAGE_FOOTER_SIZE ? whole - BCI_SALVAGE_FOOTER_SIZE : 0;
}

int bci_salvage_room(uint64_t disk_size, uint64_t used, uint64_t *start, uint64_t *end)
{
	uint64_t footer = bci_salvage_footer_offset(disk_size);
	uint64_t aligned = used + (BCI_SALVAGE_ALIGN - used % BCI_SALVAGE_ALIGN) % BCI_SALVAGE_ALIGN;

	*end = footer;
	if (aligned < used || aligned >= footer) {
		*start = footer;
		return -ENOSPC;
	}
	*start = aligned;
	return 0;
}

/* ---- numbers and names ---- */

/* A decimal number of @len bytes (digits only, no leading zero but "0"): true with *@out. */
static bool decimal_parse(const char *text, size_t len, uint64_t *out)
{
	uint64_t n = 0;

	if (!len || len > 20 || (len > 1 && text[0] == '0'))
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned digit = (unsigned)(text[i] - '0');

		if (text[i] < '0' || text[i] > '9' || n > (UINT64_MAX - digit) / 10)
			return false;
		n = n * 10 + digit;
	}
	*out = n;
	return true;
}

/* Octal permission bits of @len bytes, at most 07777. */
static bool mode_parse(const char *text, size_t len, unsigned *out)
{
	unsigned n = 0;

	if (!len || len > 5)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '7')
			return false;
		n = n * 8 + (unsigned)(text[i] - '0');
	}
	if (n > 07777)
		return false;
	*out = n;
	return true;
}

int bci_salvage_path_check(const char *path, char *err, size_t err_size)
{
	size_t len = strlen(path);
	const char *component = path;

	if (!len || len > BCI_SALVAGE_PATH_MAX) {
		bci_message(err, err_size, "path of %zu bytes: 1 to %d", len, BCI_SALVAGE_PATH_MAX);
		return -EINVAL;
	}
	for (const char *p = path;; p++) {
		if (*p == '/' || !*p) {
			size_t n = (size_t)(p - component);

			if (!n || (n == 1 && component[0] == '.') ||
			    (n == 2 && component[0] == '.' && component[1] == '.')) {
				bci_message(err, err_size, "path '%.200s' has an empty, '.' or '..'"
					    " component (or is absolute)", path);
				return -EINVAL;
			}
			if (!*p)
				return 0;
			component = p + 1;
		} else if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			bci_message(err, err_size, "path '%.200s' has a control character", path);
			return -EINVAL;
		}
	}
}

/* ---- the footer ---- */

/* Names of what was lost: printable, without a control character, at most BCI_SALVAGE_LOST_MAX. */
static int lost_names_check(const char *names, size_t len)
{
	if (len > BCI_SALVAGE_LOST_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)names[i] < 0x20 || names[i] == 0x7f)
			return -EINVAL;
	return 0;
}

static const char *const footer_keys[] = {
	"deploy_id", "machine", "payload_offset", "payload_size", "payload_sha256", "entries",
	"lost", "footer_sha256",
};
#define FOOTER_KEYS (sizeof(footer_keys) / sizeof(*footer_keys))

int bci_salvage_footer_format(const struct bci_salvage_footer *f,
			      char block[BCI_SALVAGE_FOOTER_SIZE], char *err, size_t err_size)
{
	char why[160], hex[BCI_SHA256_HEX_LEN + 1];
	struct bci_sha256 sha;
	int n;

	if (bci_executor_name_check(f->deploy_id, why, sizeof(why)) < 0 ||
	    bci_executor_name_check(f->machine, why, sizeof(why)) < 0) {
		bci_message(err, err_size, "salvage footer: deploy id '%.64s' or machine '%.64s' %s",
			    f->deploy_id, f->machine, why);
		return -EINVAL;
	}
	if (!bci_sha256_hex_ok(f->payload_sha256)) {
		bci_message(err, err_size, "salvage footer: the payload's digest is not 64 hex digits");
		return -EINVAL;
	}
	if (lost_names_check(f->lost_names, strlen(f->lost_names)) < 0) {
		bci_message(err, err_size, "salvage footer: the names of what was lost are not"
			    " printable words of at most %d bytes", BCI_SALVAGE_LOST_MAX);
		return -EINVAL;
	}
	memset(block, 0, BCI_SALVAGE_FOOTER_SIZE);
	n = snprintf(block, BCI_SALVAGE_FOOTER_SIZE,
		     BCI_SALVAGE_MAGIC "\ndeploy_id %s\nmachine %s\npayload_offset %llu\n"
		     "payload_size %llu\npayload_sha256 %s\nentries %llu\nlost %llu%s%s\n",
		     f->deploy_id, f->machine, (unsigned long long)f->payload_offset,
		     (unsigned long long)f->payload_size, f->payload_sha256,
		     (unsigned long long)f->entries, (unsigned long long)f->lost,
		     f->lost_names[0] ? " " : "", f->lost_names);
	bci_sha256_init(&sha);
	bci_sha256_update(&sha, block, (size_t)n);
	bci_sha256_final_hex(&sha, hex);
	snprintf(block + n, BCI_SALVAGE_FOOTER_SIZE - (size_t)n, "footer_sha256 %s\n", hex);
	return 0;
}

int bci_salvage_footer_parse(const char *block, size_t len, uint64_t footer_offset,
			     struct bci_salvage_footer *f, char *err, size_t err_size)
{
	const size_t magic_len = strlen(BCI_SALVAGE_MAGIC);
	const char *line, *end = block + len;
	char hex[BCI_SHA256_HEX_LEN + 1], own[BCI_SHA256_HEX_LEN + 1], why[160];
	struct bci_sha256 sha;

	memset(f, 0, sizeof(*f));
	if (len < 15 || memcmp(block, "bootci-salvage ", 15))
		return -ENOENT;
	if (len < magic_len + 1 || memcmp(block, BCI_SALVAGE_MAGIC "\n", magic_len + 1)) {
		bci_message(err, err_size, "salvage footer: not '%s' (another version?)",
			    BCI_SALVAGE_MAGIC);
		return -EBADMSG;
	}
	line = block + magic_len + 1;
	for (size_t k = 0; k < FOOTER_KEYS; k++) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t key_len = strlen(footer_keys[k]), value_len;
		const char *value = line + key_len + 1;
		char text[BCI_SALVAGE_WORD_MAX + 1];
		uint64_t *number = NULL;

		if (!nl || (size_t)(nl - line) <= key_len || memcmp(line, footer_keys[k], key_len) ||
		    line[key_len] != ' ') {
			bci_message(err, err_size, "salvage footer: line %zu is not '%s VALUE'", k + 2,
				    footer_keys[k]);
			return -EBADMSG;
		}
		value_len = (size_t)(nl - value);
		if (memchr(value, '\0', value_len)) {
			bci_message(err, err_size, "salvage footer: %s holds a NUL", footer_keys[k]);
			return -EBADMSG;
		}
		switch (k) {
		case 0:
		case 1:
			if (value_len > BCI_SALVAGE_WORD_MAX)
				value_len = BCI_SALVAGE_WORD_MAX + 1;
			snprintf(text, sizeof(text), "%.*s", (int)value_len, value);
			if (value_len > BCI_SALVAGE_WORD_MAX ||
			    bci_executor_name_check(text, why, sizeof(why)) < 0) {
				bci_message(err, err_size, "salvage footer: %s '%.64s' is not a name",
					    footer_keys[k], text);
				return -EBADMSG;
			}
			snprintf(k == 0 ? f->deploy_id : f->machine, BCI_SALVAGE_WORD_MAX + 1, "%s",
				 text);
			break;
		case 2: number = &f->payload_offset; break;
		case 3: number = &f->payload_size; break;
		case 5: number = &f->entries; break;
		case 6: {
			const char *space = memchr(value, ' ', value_len);
			size_t count_len = space ? (size_t)(space - value) : value_len;

			if (!decimal_parse(value, count_len, &f->lost) ||
			    (space && (lost_names_check(space + 1, value_len - count_len - 1) < 0 ||
				       count_len + 1 == value_len))) {
				bci_message(err, err_size, "salvage footer: lost is not 'COUNT[ NAMES]'");
				return -EBADMSG;
			}
			if (space)
				memcpy(f->lost_names, space + 1, value_len - count_len - 1);
			break;
		}
		case 4:
		case 7:
			if (bci_sha256_hex_read(value, value_len, hex) < 0 || value_len != 64 ||
			    strncmp(hex, value, 64)) {
				bci_message(err, err_size, "salvage footer: %s is not 64 lowercase hex"
					    " digits", footer_keys[k]);
				return -EBADMSG;
			}
			if (k == 4) {
				memcpy(f->payload_sha256, hex, sizeof(hex));
				break;
			}
			/* The footer's own digest covers every byte before its line. */
			bci_sha256_init(&sha);
			bci_sha256_update(&sha, block, (size_t)(line - block));
			bci_sha256_final_hex(&sha, own);
			if (strcmp(own, hex)) {
				bci_message(err, err_size, "salvage footer: its digest does not match"
					    " (a torn or overwritten footer)");
				return -EBADMSG;
			}
			break;
		}
		if (number && !decimal_parse(value, value_len, number)) {
			bci_message(err, err_size, "salvage footer: %s '%.24s' is not a number",
				    footer_keys[k], value);
			return -EBADMSG;
		}
		line = nl + 1;
	}
	for (const char *p = line; p < end; p++) {
		if (*p) {
			bci_message(err, err_size, "salvage footer: bytes after footer_sha256");
			return -EBADMSG;
		}
	}
	if (f->payload_offset > footer_offset || f->payload_size > footer_offset - f->payload_offset) {
		bci_message(err, err_size, "salvage footer: a payload of %llu bytes at byte %llu does"
			    " not end below the footer at byte %llu",
			    (unsigned long long)f->payload_size,
			    (unsigned long long)f->payload_offset, (unsigned long long)footer_offset);
		return -EBADMSG;
	}
	if (f->entries > f->payload_size) {
		bci_message(err, err_size, "salvage footer: %llu entries in %llu bytes",
			    (unsigned long long)f->entries, (unsigned long long)f->payload_size);
		return -EBADMSG;
	}
	return 0;
}

/* ---- the entries ---- */

int bci_salvage_entry_format(const struct bci_salvage_entry *e, char *line, size_t size,
			     char *err, size_t err_size)
{
	int n;

	if (bci_salvage_path_check(e->path, err, err_size) < 0)
		return -EINVAL;
	if (e->mode > 07777) {
		bci_message(err, err_size, "%s: mode %o is more than permission bits", e->path,
			    e->mode);
		return -EINVAL;
	}
	if (e->dir)
		n = snprintf(line, size, "dir %04o %s\n", e->mode, e->path);
	else
		n = snprintf(line, size, "file %04o %llu %s\n", e->mode,
			     (unsigned long long)e->size, e->path);
	if (n < 0 || (size_t)n >= size) {
		bci_message(err, err_size, "%s: header line too long", e->path);
		return -EINVAL;
	}
	return n;
}

int bci_salvage_entry_parse(const char *line, size_t len, struct bci_salvage_entry *e, char *err,
			    size_t err_size)
{
	const char *p = line, *end = line + len, *space;
	char why[200];

	memset(e, 0, sizeof(*e));
	if (memchr(line, '\0', len)) {
		bci_message(err, err_size, "salvage entry: a NUL in its header");
		return -EBADMSG;
	}
	if (len > 4 && !memcmp(line, "dir ", 4)) {
		e->dir = true;
		p += 4;
	} else if (len > 5 && !memcmp(line, "file ", 5)) {
		p += 5;
	} else {
		bci_message(err, err_size, "salvage entry: '%.40s' is not 'dir ...' or 'file ...'",
			    line);
		return -EBADMSG;
	}
	space = memchr(p, ' ', (size_t)(end - p));
	if (!space || !mode_parse(p, (size_t)(space - p), &e->mode)) {
		bci_message(err, err_size, "salvage entry: '%.40s': no mode of at most 07777", line);
		return -EBADMSG;
	}
	p = space + 1;
	if (!e->dir) {
		space = memchr(p, ' ', (size_t)(end - p));
		if (!space || !decimal_parse(p, (size_t)(space - p), &e->size)) {
			bci_message(err, err_size, "salvage entry: '%.40s': no size", line);
			return -EBADMSG;
		}
		p = space + 1;
	}
	if ((size_t)(end - p) > BCI_SALVAGE_PATH_MAX) {
		bci_message(err, err_size, "salvage entry: a path of more than %d bytes",
			    BCI_SALVAGE_PATH_MAX);
		return -EBADMSG;
	}
	memcpy(e->path, p, (size_t)(end - p));
	e->path[end - p] = '\0';
	if (bci_salvage_path_check(e->path, why, sizeof(why)) < 0) {
		bci_message(err, err_size, "salvage entry: %s", why);
		return -EBADMSG;
	}
	return 0;
}

/* ---- writing ---- */

void bci_salvage_writer_init(struct bci_salvage_writer *w, int fd, uint64_t start, uint64_t end)
{
	*w = (struct bci_salvage_writer){ .fd = fd, .start = start, .end = end < start ? start : end };
	bci_sha256_init(&w->sha);
	bci_salvage_writer_mark(w);
}

uint64_t bci_salvage_writer_left(const struct bci_salvage_writer *w)
{
	return w->end - w->start - w->size;
}

void bci_salvage_writer_mark(struct bci_salvage_writer *w)
{
	w->mark_size = w->size;
	w->mark_entries = w->entries;
	w->mark_sha = w->sha;
}

void bci_salvage_writer_rewind(struct bci_salvage_writer *w)
{
	w->size = w->mark_size;
	w->entries = w->mark_entries;
	w->sha = w->mark_sha;
}

/* @len bytes at the payload's end. */
static int payload_append(struct bci_salvage_writer *w, const void *data, size_t len)
{
	const char *p = data;
	size_t done = 0;

	if (len > bci_salvage_writer_left(w))
		return -ENOSPC;
	while (done < len) {
		ssize_t n = pwrite(w->fd, p + done, len - done, (off_t)(w->start + w->size + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	bci_sha256_update(&w->sha, data, len);
	w->size += len;
	return 0;
}

/* One entry whole or not at all: its header, then @from_fd's bytes for a file. */
static int entry_write(struct bci_salvage_writer *w, const struct bci_salvage_entry *e,
		       int from_fd, char *err, size_t err_size)
{
	uint64_t size = w->size, copied = 0;
	struct bci_sha256 sha = w->sha;
	char line[BCI_SALVAGE_LINE_MAX + 1], *buf = NULL;
	int n = bci_salvage_entry_format(e, line, sizeof(line), err, err_size), ret;

	if (n < 0)
		return n;
	if ((uint64_t)n + e->size > bci_salvage_writer_left(w)) {
		bci_message(err, err_size, "%s: %llu bytes do not fit in the %llu left", e->path,
			    (unsigned long long)((uint64_t)n + e->size),
			    (unsigned long long)bci_salvage_writer_left(w));
		return -ENOSPC;
	}
	if ((ret = payload_append(w, line, (size_t)n)) < 0)
		goto fail_write;
	if (!e->dir && e->size) {
		buf = malloc(CHUNK);
		if (!buf) {
			ret = -ENOMEM;
			goto fail_write;
		}
	}
	while (copied < e->size) {
		size_t want = e->size - copied < CHUNK ? (size_t)(e->size - copied) : CHUNK;
		ssize_t got = pread(from_fd, buf, want, (off_t)copied);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			ret = got < 0 ? -errno : -EIO;
			bci_message(err, err_size, "%s: reading at byte %llu: %s", e->path,
				    (unsigned long long)copied,
				    got < 0 ? strerror(errno) : "the file is shorter than it was");
			goto fail;
		}
		if ((ret = payload_append(w, buf, (size_t)got)) < 0)
			goto fail_write;
		copied += (uint64_t)got;
	}
	free(buf);
	w->entries++;
	return 0;
fail_write:
	bci_message(err, err_size, "%s: writing the salvage at byte %llu: %s", e->path,
		    (unsigned long long)(w->start + w->size), strerror(-ret));
fail:
	free(buf);
	w->size = size;
	w->sha = sha;
	return ret;
}

int bci_salvage_write_dir(struct bci_salvage_writer *w, const char *path, unsigned mode,
			  char *err, size_t err_size)
{
	struct bci_salvage_entry e = { .dir = true, .mode = mode & 07777 };

	if (strlen(path) >= sizeof(e.path)) {
		bci_message(err, err_size, "path of more than %d bytes", BCI_SALVAGE_PATH_MAX);
		return -EINVAL;
	}
	strcpy(e.path, path);
	return entry_write(w, &e, -1, err, err_size);
}

int bci_salvage_write_file(struct bci_salvage_writer *w, const char *path, unsigned mode,
			   int from_fd, uint64_t size, char *err, size_t err_size)
{
	struct bci_salvage_entry e = { .mode = mode & 07777, .size = size };

	if (strlen(path) >= sizeof(e.path)) {
		bci_message(err, err_size, "path of more than %d bytes", BCI_SALVAGE_PATH_MAX);
		return -EINVAL;
	}
	strcpy(e.path, path);
	return entry_write(w, &e, from_fd, err, err_size);
}

static int write_at(int fd, const void *data, size_t len, uint64_t offset)
{
	const char *p = data;
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, p + done, len - done, (off_t)(offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

int bci_salvage_writer_finish(struct bci_salvage_writer *w, struct bci_salvage_footer *f,
			      char *err, size_t err_size)
{
	char block[BCI_SALVAGE_FOOTER_SIZE];
	struct bci_sha256 sha = w->sha;
	int ret = 0;

	f->payload_offset = w->start;
	f->payload_size = w->size;
	f->entries = w->entries;
	bci_sha256_final_hex(&sha, f->payload_sha256);
	if ((ret = bci_salvage_footer_format(f, block, err, err_size)) < 0)
		return ret;
	/* The payload is on the disk before the footer that vouches for it. */
	if (fdatasync(w->fd) < 0 || (ret = write_at(w->fd, block, sizeof(block), w->end)) < 0 ||
	    fdatasync(w->fd) < 0) {
		ret = ret < 0 ? ret : -errno;
		bci_message(err, err_size, "writing the salvage's footer at byte %llu: %s",
			    (unsigned long long)w->end, strerror(-ret));
		return ret;
	}
	return 0;
}

int bci_salvage_clear(int fd, uint64_t disk_size)
{
	static const char zeros[BCI_SALVAGE_FOOTER_SIZE];
	uint64_t footer = bci_salvage_footer_offset(disk_size);
	int ret;

	if (!footer)
		return -ENOSPC;
	if ((ret = write_at(fd, zeros, sizeof(zeros), footer)) < 0)
		return ret;
	return fdatasync(fd) < 0 ? -errno : 0;
}

/* ---- reading ---- */

static int read_at(int fd, void *buf, size_t len, uint64_t offset)
{
	char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, p + done, len - done, (off_t)(offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

int bci_salvage_footer_read(int fd, uint64_t disk_size, struct bci_salvage_footer *f, char *err,
			    size_t err_size)
{
	uint64_t footer = bci_salvage_footer_offset(disk_size);
	char block[BCI_SALVAGE_FOOTER_SIZE];
	int ret;

	memset(f, 0, sizeof(*f));
	if (!footer)
		return -ENOENT;
	if ((ret = read_at(fd, block, sizeof(block), footer)) < 0) {
		bci_message(err, err_size, "reading the salvage's footer at byte %llu: %s",
			    (unsigned long long)footer, strerror(-ret));
		return ret;
	}
	return bci_salvage_footer_parse(block, sizeof(block), footer, f, err, err_size);
}

int bci_salvage_payload_check(int fd, const struct bci_salvage_footer *f, char *err,
			      size_t err_size)
{
	char hex[BCI_SHA256_HEX_LEN + 1], *buf = malloc(CHUNK);
	struct bci_sha256 sha;
	uint64_t done = 0;
	int ret;

	if (!buf)
		return -ENOMEM;
	bci_sha256_init(&sha);
	while (done < f->payload_size) {
		size_t want = f->payload_size - done < CHUNK ? (size_t)(f->payload_size - done) : CHUNK;

		if ((ret = read_at(fd, buf, want, f->payload_offset + done)) < 0) {
			bci_message(err, err_size, "reading the salvage at byte %llu: %s",
				    (unsigned long long)(f->payload_offset + done), strerror(-ret));
			free(buf);
			return ret;
		}
		bci_sha256_update(&sha, buf, want);
		done += want;
	}
	free(buf);
	bci_sha256_final_hex(&sha, hex);
	if (strcmp(hex, f->payload_sha256)) {
		bci_message(err, err_size, "the salvage's %llu bytes at byte %llu read back as sha256"
			    " %s, its footer says %s", (unsigned long long)f->payload_size,
			    (unsigned long long)f->payload_offset, hex, f->payload_sha256);
		return -EBADMSG;
	}
	return 0;
}

int bci_salvage_each(int fd, const struct bci_salvage_footer *f, bci_salvage_entry_fn fn,
		     void *ctx, char *err, size_t err_size)
{
	uint64_t at = 0, count = 0;
	char line[BCI_SALVAGE_LINE_MAX + 1];
	struct bci_salvage_entry e;
	int ret;

	while (at < f->payload_size) {
		size_t want = f->payload_size - at < BCI_SALVAGE_LINE_MAX
				      ? (size_t)(f->payload_size - at) : BCI_SALVAGE_LINE_MAX;
		const char *nl;

		if ((ret = read_at(fd, line, want, f->payload_offset + at)) < 0) {
			bci_message(err, err_size, "reading the salvage at byte %llu: %s",
				    (unsigned long long)(f->payload_offset + at), strerror(-ret));
			return ret;
		}
		nl = memchr(line, '\n', want);
		if (!nl) {
			bci_message(err, err_size, "salvage entry %llu: no header line at payload byte"
				    " %llu", (unsigned long long)count, (unsigned long long)at);
			return -EBADMSG;
		}
		if ((ret = bci_salvage_entry_parse(line, (size_t)(nl - line), &e, err, err_size)) < 0)
			return ret;
		at += (uint64_t)(nl - line) + 1;
		if (e.size > f->payload_size - at) {
			bci_message(err, err_size, "salvage entry %s: %llu bytes past the payload's end",
				    e.path, (unsigned long long)e.size);
			return -EBADMSG;
		}
		if (++count > f->entries) {
			bci_message(err, err_size, "salvage: more entries than the footer's %llu",
				    (unsigned long long)f->entries);
			return -EBADMSG;
		}
		if ((ret = fn(&e, fd, f->payload_offset + at, ctx)) != 0)
			return ret;
		at += e.size;
	}
	if (count != f->entries) {
		bci_message(err, err_size, "salvage: %llu entries, the footer says %llu",
			    (unsigned long long)count, (unsigned long long)f->entries);
		return -EBADMSG;
	}
	return 0;
}
