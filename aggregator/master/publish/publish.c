// SPDX-License-Identifier: MIT
/* Publishing a build (publish.h): verify, keep content-addressed, register, queue. */
#include "publish.h"

#include "../schedule/inventory.h"
#include "../schedule/schedule.h"
#include "../names.h"
#include "../store/store.h"
#include "fsutil.h"
#include "message.h"
#include "sha256.h"
#include "testlist.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_MAX (64u << 20)
#define TESTLIST_MAX (16u << 20)

int bci_publish_manifest_parse(const char *origin, const char *text, size_t len,
			       int (*fn)(const struct bci_publish_entry *entry, void *ctx), void *ctx,
			       char *err, size_t err_size)
{
	const char *line = text, *end = text + len;
	unsigned number = 0;

	if (memchr(text, '\0', len)) {
		bci_message(err, err_size, "%s: a NUL byte (not a builder manifest)", origin);
		return -EINVAL;
	}
	while (line < end) {
		const char *newline = memchr(line, '\n', (size_t)(end - line));
		const char *stop = newline ? newline : end, *field[4], *p = line;
		size_t field_len[4];
		struct bci_publish_entry entry;
		char number_text[24];
		int ret;

		number++;
		if (line == stop || *line == '#') {
			line = newline ? newline + 1 : end;
			continue;
		}
		/* SHA256 SIZE MODE PATH, then ORIGIN (the rest, may hold blanks). */
		for (int i = 0; i < 4; i++) {
			const char *space = memchr(p, ' ', (size_t)(stop - p));

			if (!space || space == p) {
				bci_message(err, err_size, "%s:%u: expected SHA256 SIZE MODE PATH ORIGIN",
					    origin, number);
				return -EINVAL;
			}
			field[i] = p;
			field_len[i] = (size_t)(space - p);
			p = space + 1;
		}
		if (p >= stop) {
			bci_message(err, err_size, "%s:%u: no ORIGIN", origin, number);
			return -EINVAL;
		}
		if (field_len[3] >= sizeof(entry.path) || field_len[1] >= sizeof(number_text)) {
			bci_message(err, err_size, "%s:%u: a field too long", origin, number);
			return -EINVAL;
		}
		memcpy(entry.path, field[3], field_len[3]);
		entry.path[field_len[3]] = '\0';
		if (!strncmp(entry.path, "initrd.img:", 11)) {
			line = newline ? newline + 1 : end;
			continue;
		}
		entry.sha256[0] = '\0';
		if (field_len[0] == BCI_SHA256_HEX_LEN) {
			memcpy(entry.sha256, field[0], BCI_SHA256_HEX_LEN);
			entry.sha256[BCI_SHA256_HEX_LEN] = '\0';
		}
		if (!bci_sha256_hex_ok(entry.sha256)) {
			bci_message(err, err_size, "%s:%u: %s: the SHA256 is not 64 lowercase hex digits",
				    origin, number, entry.path);
			return -EINVAL;
		}
		memcpy(number_text, field[1], field_len[1]);
		number_text[field_len[1]] = '\0';
		{
			char *tail;

			errno = 0;
			entry.size = strtoull(number_text, &tail, 10);
			if (!isdigit((unsigned char)number_text[0]) || *tail || errno) {
				bci_message(err, err_size, "%s:%u: %s: size '%s' is not a number", origin,
					    number, entry.path, number_text);
				return -EINVAL;
			}
		}
		if (!bci_name_build_file_ok(entry.path)) {
			bci_message(err, err_size, "%s:%u: output '%s' is not a plain file name", origin,
				    number, entry.path);
			return -EINVAL;
		}
		if ((ret = fn(&entry, ctx)) != 0)
			return ret;
		line = newline ? newline + 1 : end;
	}
	return 0;
}

/* ---- queueing ---- */

/* The fast tier of the new build, on the lab the inventory describes (none: nothing to queue). */
static int bci_publish_queue(struct bci_store *store, const char *data_dir,
			     const struct bci_publish *p, char *err, size_t err_size)
{
	struct bci_inventory *inventory = NULL;
	char path[PATH_MAX];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", data_dir, BCI_INVENTORY_FILE);
	if (access(path, F_OK) < 0) {
		if (p->log)
			fprintf(p->log, "publish: %s: no %s, nothing queued\n", p->build, path);
		return 0;
	}
	if ((ret = bci_inventory_load(path, &inventory, err, err_size)) < 0)
		return ret;
	struct bci_schedule s = { .store = store, .inventory = inventory, .data_dir = data_dir,
				  .log = p->log };
	ret = bci_schedule_queue(&s, p->build, "fast", err, err_size);
	bci_inventory_free(inventory);
	return ret < 0 ? ret : 0;
}

/* ---- one file ---- */

struct published {
	const char *name;
	bool required;
	bool from_manifest;	/* verified against the manifest (else a testlist, parsed) */
	struct bci_publish_entry kept;
	bool present;
};

/*
 * Copies @path into the object store while hashing the copy, so what is
 * kept is what was verified. Fills @kept's sha256 and size.
 */
static int object_keep(const char *data_dir, const char *path, struct bci_publish_entry *kept,
		       char *err, size_t err_size)
{
	char dir[PATH_MAX], incoming[PATH_MAX + 16], tmp[PATH_MAX], object[PATH_MAX + 80];
	int in = -1, out = -1, ret;

	if (snprintf(dir, sizeof(dir), "%s/builds/objects", data_dir) >= (int)sizeof(dir) ||
	    snprintf(incoming, sizeof(incoming), "%s/incoming", dir) >= (int)sizeof(incoming))
		return -ENAMETOOLONG;
	if ((ret = bci_mkdir_p(dir, 0755)) < 0) {
		bci_message(err, err_size, "%s: %s", dir, strerror(-ret));
		return ret;
	}
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	out = bci_atomic_open(incoming, tmp, 0644);
	if (out < 0) {
		ret = out;
		bci_message(err, err_size, "%s/incoming: %s", dir, strerror(-ret));
		goto out;
	}
	for (;;) {
		char buf[1 << 16];
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			bci_message(err, err_size, "%s: %s", path, strerror(-ret));
			goto abort;
		}
		if (n == 0)
			break;
		if ((ret = bci_write_all(out, buf, (size_t)n)) < 0) {
			bci_message(err, err_size, "%s: %s", tmp, strerror(-ret));
			goto abort;
		}
	}
	if (lseek(out, 0, SEEK_SET) < 0 || (ret = bci_sha256_fd(out, kept->sha256, &kept->size)) < 0) {
		ret = ret < 0 ? ret : -errno;
		bci_message(err, err_size, "%s: %s", tmp, strerror(-ret));
		goto abort;
	}
	snprintf(object, sizeof(object), "%s/%s", dir, kept->sha256);
	/* The same content kept before is the same object: the rename replaces it with itself. */
	ret = bci_atomic_commit(out, tmp, object);
	out = -1;
	if (ret < 0)
		bci_message(err, err_size, "%s: %s", object, strerror(-ret));
	goto out;
abort:
	bci_atomic_abort(out, tmp);
out:
	close(in);
	return ret;
}

struct manifest_check {
	struct published *files;
	size_t count;
};

static int manifest_entry(const struct bci_publish_entry *entry, void *ctx)
{
	struct manifest_check *c = ctx;

	for (size_t i = 0; i < c->count; i++)
		if (c->files[i].from_manifest && !strcmp(c->files[i].name, entry->path)) {
			c->files[i].kept = *entry;
			c->files[i].present = true;
		}
	return 0;
}

static int testlist_ok(const struct bci_test_name *name, void *data)
{
	(void)name;
	(*(unsigned *)data)++;
	return 0;
}

/*
 * Verifies the files of @files found in @image_dir against the manifest
 * (@manifest, NULL: IMAGE_DIR/manifest) and keeps them, the manifest too
 * (in *@manifest_kept): all verified, or an error and nothing registered.
 */
static int files_keep(const char *data_dir, const char *image_dir, const char *manifest,
		      struct published *files, size_t count,
		      struct bci_publish_entry *manifest_kept, char *err, size_t err_size)
{
	struct manifest_check check = { files, count };
	char path[PATH_MAX], manifest_path[PATH_MAX], *text = NULL;
	size_t len;
	int ret;

	snprintf(manifest_path, sizeof(manifest_path), "%s", manifest ? manifest : "");
	if (!manifest)
		snprintf(manifest_path, sizeof(manifest_path), "%s/manifest", image_dir);
	if ((ret = bci_read_file(manifest_path, &text, &len, MANIFEST_MAX)) < 0) {
		bci_message(err, err_size, "%s: %s", manifest_path, strerror(-ret));
		return ret;
	}
	ret = bci_publish_manifest_parse(manifest_path, text, len, manifest_entry, &check, err,
					 err_size);
	free(text);
	if (ret < 0)
		return ret;
	/* Every file first: kept and verified before anything is registered. */
	for (size_t i = 0; i < count; i++) {
		struct published *f = &files[i];
		struct bci_publish_entry expected = f->kept;

		snprintf(path, sizeof(path), "%s/%s", image_dir, f->name);
		if (access(path, F_OK) < 0) {
			if (f->required || f->present) {
				bci_message(err, err_size, "%s: missing (%s)", path,
					    f->present ? "the manifest lists it" : "it is required");
				return -ENOENT;
			}
			continue;
		}
		if (f->from_manifest && !f->present) {
			bci_message(err, err_size, "%s: not in the manifest %s", path, manifest_path);
			return -EINVAL;
		}
		if (!f->from_manifest) {
			unsigned tests = 0;

			if ((ret = bci_read_file(path, &text, &len, TESTLIST_MAX)) < 0) {
				bci_message(err, err_size, "%s: %s", path, strerror(-ret));
				return ret;
			}
			ret = bci_testlist_parse(path, text, len, testlist_ok, &tests, err, err_size);
			free(text);
			if (ret < 0)
				return ret;
		}
		if ((ret = object_keep(data_dir, path, &f->kept, err, err_size)) < 0)
			return ret;
		if (f->from_manifest && (strcmp(expected.sha256, f->kept.sha256) ||
					 expected.size != f->kept.size)) {
			bci_message(err, err_size,
				    "%s: sha256 %s (%llu bytes), the manifest says %s (%llu bytes)",
				    path, f->kept.sha256, (unsigned long long)f->kept.size,
				    expected.sha256, (unsigned long long)expected.size);
			return -EBADMSG;
		}
		f->present = true;
	}
	if ((ret = object_keep(data_dir, manifest_path, manifest_kept, err, err_size)) < 0)
		return ret;
	return 0;
}

int bci_publish_dir(struct bci_store *store, const char *data_dir, const struct bci_publish *p,
		    char *err, size_t err_size)
{
	struct published files[] = {
		{ .name = "vmlinuz", .required = true, .from_manifest = true },
		{ .name = "initrd.img", .required = true, .from_manifest = true },
		{ .name = "boot.ipxe", .from_manifest = true },
		{ .name = BCI_SCHEDULE_FAST_TESTLIST, .required = true },
		{ .name = BCI_SCHEDULE_FULL_TESTLIST },
	};
	size_t count = sizeof(files) / sizeof(files[0]);
	struct bci_store_build build = {
		.name = p->build, .tree = p->tree, .commit = p->commit, .tier = p->tier,
		.base = p->base, .series_title = p->series_title, .message_id = p->message_id,
	};
	struct bci_publish_entry manifest_kept;
	int ret;

	if (!bci_name_published_build_ok(p->build)) {
		bci_message(err, err_size, "build name '%s' is not a word (letters, digits, . _ -)",
			    p->build);
		return -EINVAL;
	}
	if (p->message_id && !bci_name_message_id_ok(p->message_id)) {
		char quoted[256];

		bci_message(err, err_size, "Message-ID '%s' is not one ("
			    BCI_NAME_MESSAGE_ID_RULE ")",
			    bci_quote(quoted, sizeof(quoted), p->message_id, strlen(p->message_id)));
		return -EINVAL;
	}
	if ((ret = files_keep(data_dir, p->image_dir, p->manifest, files, count, &manifest_kept, err,
			      err_size)) < 0)
		return ret;
	if ((ret = bci_store_begin(store, err, err_size)) < 0)
		return ret;
	if ((ret = bci_store_build_put(store, &build, err, err_size)) < 0)
		goto rollback;
	for (size_t i = 0; i < count; i++) {
		struct bci_store_build_file file = { .build = p->build, .path = files[i].name,
						     .sha256 = files[i].kept.sha256,
						     .size = files[i].kept.size };

		if (files[i].present && (ret = bci_store_build_file_add(store, &file, err, err_size)) < 0)
			goto rollback;
	}
	{
		struct bci_store_build_file file = { .build = p->build, .path = "manifest",
						     .sha256 = manifest_kept.sha256,
						     .size = manifest_kept.size };

		if ((ret = bci_store_build_file_add(store, &file, err, err_size)) < 0)
			goto rollback;
	}
	if ((ret = bci_store_commit(store, err, err_size)) < 0)
		goto rollback;
	if (p->log)
		fprintf(p->log, "publish: %s registered (tree %s, commit %s, %s tier)\n", p->build,
			p->tree, p->commit, p->tier);
	return p->no_queue ? 0 : bci_publish_queue(store, data_dir, p, err, err_size);
rollback:
	bci_store_rollback(store);
	return ret;
}

int bci_publish_known_good(struct bci_store *store, const char *data_dir, const char *version,
			   const char *image_dir, const char *manifest, FILE *log, char *err,
			   size_t err_size)
{
	struct published files[] = {
		{ .name = "disk.img", .required = true, .from_manifest = true },
		{ .name = "known-good.efi", .from_manifest = true },
		{ .name = "layout", .from_manifest = true },
		{ .name = "register-boot-entry.sh", .from_manifest = true },
	};
	size_t count = sizeof(files) / sizeof(files[0]);
	struct bci_publish_entry manifest_kept;
	int ret;

	if (!bci_name_known_good_ok(version)) {
		bci_message(err, err_size, "version '%s' is not a word (letters, digits, . _ -)",
			    version);
		return -EINVAL;
	}
	if ((ret = files_keep(data_dir, image_dir, manifest, files, count, &manifest_kept, err,
			      err_size)) < 0)
		return ret;
	if ((ret = bci_store_begin(store, err, err_size)) < 0)
		return ret;
	for (size_t i = 0; i < count; i++) {
		struct bci_store_build_file file = { .build = version, .path = files[i].name,
						     .sha256 = files[i].kept.sha256,
						     .size = files[i].kept.size };

		if (files[i].present &&
		    (ret = bci_store_known_good_file_add(store, version, &file, err, err_size)) < 0)
			goto rollback;
	}
	{
		struct bci_store_build_file file = { .build = version, .path = "manifest",
						     .sha256 = manifest_kept.sha256,
						     .size = manifest_kept.size };

		if ((ret = bci_store_known_good_file_add(store, version, &file, err, err_size)) < 0)
			goto rollback;
	}
	if ((ret = bci_store_commit(store, err, err_size)) < 0)
		goto rollback;
	if (log)
		fprintf(log, "publish: known-good image %s registered\n", version);
	return 0;
rollback:
	bci_store_rollback(store);
	return ret;
}
