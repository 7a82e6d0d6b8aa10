// SPDX-License-Identifier: MIT
/*
 * Publishing over HTTP (serve_hook.h): a build's files arrive one PUT each
 * into DATA/builds/staging/<build>/ (streamed to a temporary, its sha256
 * checked against X-Bootci-Sha256, fsync, rename), then the build's PUT with
 * its metadata runs bci_publish_dir() on that folder: the same verification
 * against the builder's manifest as a publish on the master, the same
 * content-addressed keeping, registration and queueing. A known-good image
 * goes the same way (its files into DATA/known-good/staging/<version>/, then
 * its PUT runs bci_publish_known_good()). Publishers have their own tokens
 * (DATA/publishers, auth.h's format), never a machine's.
 */
#include "serve_hook.h"

#include "internal.h"

#include "../publish/publish.h"
#include "../serve/auth.h"
#include "../store/store.h"
#include "fsutil.h"
#include "manifest.h"
#include "message.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define METADATA_MAX (64u << 10)
#define BUILD_FILE_MAX_BYTES (4ULL << 30)

struct bci_schedule_put {
	bool known_good;			/* build is then the known-good image's version */
	char build[BCI_MANIFEST_WORD_MAX + 1];
	char file[BCI_MANIFEST_WORD_MAX + 1];	/* "" for the build's own PUT */
	char sha256[BCI_SHA256_HEX_LEN + 1];
	char staging[PATH_MAX];
	char path[PATH_MAX + 140];
	char tmp[PATH_MAX + 160];
	int fd;
	uint64_t written;
	char *metadata;
	size_t metadata_len;
};

/* The publisher presenting "Bearer TOKEN", or NULL (@why says why). */
static bool publisher_ok(const char *data_dir, const char *authorization, char *why, size_t size)
{
	struct bci_tokens *tokens = NULL;
	char path[PATH_MAX];
	const char *token;
	bool ok;

	snprintf(path, sizeof(path), "%s/publishers", data_dir);
	if (!authorization || strncasecmp(authorization, "Bearer ", 7)) {
		bci_message(why, size, "a publisher's token is needed (Authorization: Bearer)");
		return false;
	}
	token = authorization + 7;
	if (bci_tokens_load(path, &tokens, why, size) < 0)
		return false;
	ok = bci_tokens_machine(tokens, token) != NULL;
	if (!ok)
		bci_message(why, size, "not a publisher's token (%s)", path);
	bci_tokens_free(tokens);
	return ok;
}

static void answer_json_error(struct bci_schedule_answer *a, int status, const char *message)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "error", json_object_new_string(message));
	a->body = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	a->len = a->body ? strlen(a->body) : 0;
	a->status = status;
	a->content_type = "application/json";
	/* The log's note: the message's start when it is longer. */
	snprintf(a->note, sizeof(a->note), "%.*s", (int)sizeof(a->note) - 1, message);
}

void bci_schedule_put_free(struct bci_schedule_put *put)
{
	if (!put)
		return;
	if (put->fd >= 0)
		bci_atomic_abort(put->fd, put->tmp);
	free(put->metadata);
	free(put);
}

int bci_schedule_put_begin(struct bci_schedule_server *s, const char *url,
			   const char *authorization, const char *sha256,
			   struct bci_schedule_put **out, struct bci_schedule_answer *a)
{
	struct bci_schedule_route route;
	struct bci_schedule_put *put;
	char why[PATH_MAX + 400];
	int ret;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	*out = NULL;
	if (!s) {
		answer_json_error(a, 404, "the scheduler is off (no machines.conf in the data folder)");
		return 1;
	}
	if (!publisher_ok(bci_schedule_server_data_dir(s), authorization, why, sizeof(why))) {
		answer_json_error(a, 401, why);
		return 1;
	}
	put = calloc(1, sizeof(*put));
	if (!put)
		return -ENOMEM;
	put->fd = -1;
	if (bci_schedule_route_parse(url, &route) < 0 || (route.kind != BCI_SCHEDULE_ROUTE_BUILD &&
							  route.kind != BCI_SCHEDULE_ROUTE_BUILD_FILE &&
							  route.kind != BCI_SCHEDULE_ROUTE_KNOWN_GOOD &&
							  route.kind != BCI_SCHEDULE_ROUTE_KNOWN_GOOD_FILE))
		goto bad_path;
	strcpy(put->build, route.first);
	put->known_good = route.kind == BCI_SCHEDULE_ROUTE_KNOWN_GOOD ||
			  route.kind == BCI_SCHEDULE_ROUTE_KNOWN_GOOD_FILE;
	if (route.kind == BCI_SCHEDULE_ROUTE_BUILD_FILE ||
	    route.kind == BCI_SCHEDULE_ROUTE_KNOWN_GOOD_FILE) {
		strcpy(put->file, route.second);
		if (!sha256 || bci_sha256_hex_read(sha256, strnlen(sha256, BCI_SHA256_HEX_LEN + 1),
						   put->sha256) < 0) {
			answer_json_error(a, 400, "a build file's PUT carries X-Bootci-Sha256 (64 hex digits)");
			bci_schedule_put_free(put);
			return 1;
		}
	}
	snprintf(put->staging, sizeof(put->staging), "%s/%s/staging/%s",
		 bci_schedule_server_data_dir(s), put->known_good ? "known-good" : "builds", put->build);
	if (put->file[0]) {
		if ((ret = bci_mkdir_p(put->staging, 0755)) < 0) {
			snprintf(why, sizeof(why), "%s: %s", put->staging, strerror(-ret));
			answer_json_error(a, 500, why);
			bci_schedule_put_free(put);
			return 1;
		}
		snprintf(put->path, sizeof(put->path), "%s/%s", put->staging, put->file);
		put->fd = bci_atomic_open(put->path, put->tmp, 0644);
		if (put->fd < 0) {
			snprintf(why, sizeof(why), "%s: %s", put->path, strerror(-put->fd));
			answer_json_error(a, 500, why);
			put->fd = -1;
			bci_schedule_put_free(put);
			return 1;
		}
	}
	*out = put;
	return 0;
bad_path:
	answer_json_error(a, 404, "no such path (/api/v1/builds/<build>[/files/<file>],"
				  " /api/v1/known-good/<version>[/files/<file>])");
	bci_schedule_put_free(put);
	return 1;
}

int bci_schedule_put_data(struct bci_schedule_put *put, const char *data, size_t n,
			  struct bci_schedule_answer *a)
{
	int ret;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	if (!put->file[0]) {
		char *grown;

		if (put->metadata_len + n > METADATA_MAX) {
			answer_json_error(a, 413, "a build's metadata is at most 64 KiB");
			return 1;
		}
		grown = realloc(put->metadata, put->metadata_len + n + 1);
		if (!grown)
			return -ENOMEM;
		put->metadata = grown;
		memcpy(put->metadata + put->metadata_len, data, n);
		put->metadata_len += n;
		put->metadata[put->metadata_len] = '\0';
		return 0;
	}
	if (put->written + n > BUILD_FILE_MAX_BYTES) {
		answer_json_error(a, 413, "a build file is at most 4 GiB");
		return 1;
	}
	if ((ret = bci_write_all(put->fd, data, n)) < 0) {
		answer_json_error(a, 500, strerror(-ret));
		return 1;
	}
	put->written += n;
	return 0;
}

static const char *json_text(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The known-good image's PUT: metadata {} (nothing but the version, which is the path's). */
/*
 * The answer once publishing @what (a build, a known-good image) of @put
 * returned @ret: 201, its staging folder gone; or the error @err, 422 when
 * the files sent were wrong, 500 when the master failed.
 */
static void published_answer(struct bci_schedule_answer *a, struct bci_schedule_put *put, int ret,
			     const char *err, const char *what)
{
	if (ret < 0) {
		answer_json_error(a, ret == -ENOENT || ret == -EINVAL || ret == -EBADMSG ? 422 : 500,
				  err);
		return;
	}
	bci_remove_tree(put->staging);
	a->status = 201;
	a->content_type = "application/json";
	a->body = strdup("{\"status\": \"published\"}\n");
	a->len = a->body ? strlen(a->body) : 0;
	snprintf(a->note, sizeof(a->note), "%s %s published", what, put->build);
}

static void known_good_register(struct bci_schedule_server *s, struct bci_schedule_put *put,
				struct bci_schedule_answer *a)
{
	struct json_object *o = NULL;
	enum json_tokener_error jerr;
	char err[1024], manifest[PATH_MAX + 16];
	int ret;

	o = json_tokener_parse_verbose(put->metadata ? put->metadata : "", &jerr);
	if (!o || !json_object_is_type(o, json_type_object) || json_object_object_length(o)) {
		answer_json_error(a, 400, "a known-good image's metadata is {} (its version is in the path)");
		goto out;
	}
	snprintf(manifest, sizeof(manifest), "%s/manifest", put->staging);
	ret = bci_publish_known_good(bci_schedule_server_store(s), bci_schedule_server_data_dir(s),
				     put->build, put->staging, manifest, bci_schedule_server_log(s),
				     err, sizeof(err));
	published_answer(a, put, ret, err, "known-good image");
out:
	json_object_put(o);
}

static void build_register(struct bci_schedule_server *s, struct bci_schedule_put *put,
			   struct bci_schedule_answer *a)
{
	struct json_object *o = NULL;
	enum json_tokener_error jerr;
	char err[1024], manifest[PATH_MAX + 16];
	struct bci_publish p = { .build = put->build, .image_dir = put->staging };
	int ret;

	o = json_tokener_parse_verbose(put->metadata ? put->metadata : "", &jerr);
	if (!o || !json_object_is_type(o, json_type_object)) {
		snprintf(err, sizeof(err), "the build's metadata is not a JSON object (%s)",
			 o ? "another type" : json_tokener_error_desc(jerr));
		answer_json_error(a, 400, err);
		goto out;
	}
	json_object_object_foreach(o, key, value) {
		(void)value;
		if (strcmp(key, "tree") && strcmp(key, "commit") && strcmp(key, "tier") &&
		    strcmp(key, "base") && strcmp(key, "series_title") && strcmp(key, "message_id")) {
			snprintf(err, sizeof(err), "unknown metadata key '%s'", key);
			answer_json_error(a, 400, err);
			goto out;
		}
	}
	p.tree = json_text(o, "tree");
	p.commit = json_text(o, "commit");
	p.tier = json_text(o, "tier");
	p.base = json_text(o, "base");
	p.series_title = json_text(o, "series_title");
	p.message_id = json_text(o, "message_id");
	if (!p.tree || !p.commit || !p.tier) {
		answer_json_error(a, 400, "the metadata needs tree, commit and tier (strings)");
		goto out;
	}
	snprintf(manifest, sizeof(manifest), "%s/manifest", put->staging);
	p.manifest = manifest;
	p.log = bci_schedule_server_log(s);
	ret = bci_publish_dir(bci_schedule_server_store(s), bci_schedule_server_data_dir(s), &p, err,
			      sizeof(err));
	published_answer(a, put, ret, err, "build");
out:
	json_object_put(o);
}

void bci_schedule_put_end(struct bci_schedule_server *s, struct bci_schedule_put *put,
			  struct bci_schedule_answer *a)
{
	char hex[BCI_SHA256_HEX_LEN + 1], why[PATH_MAX + 200];
	uint64_t size;
	int ret;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	if (!put->file[0]) {
		bci_schedule_server_lock(s, true);
		if (put->known_good)
			known_good_register(s, put, a);
		else
			build_register(s, put, a);
		bci_schedule_server_lock(s, false);
		return;
	}
	if (lseek(put->fd, 0, SEEK_SET) < 0 || bci_sha256_fd(put->fd, hex, &size) < 0) {
		answer_json_error(a, 500, strerror(errno));
		return;
	}
	if (strcmp(hex, put->sha256)) {
		snprintf(why, sizeof(why), "%s/%s: sha256 %s, not %s as announced", put->build,
			 put->file, hex, put->sha256);
		answer_json_error(a, 400, why);
		return;
	}
	ret = bci_atomic_commit(put->fd, put->tmp, put->path);
	put->fd = -1;
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s: %s", put->path, strerror(-ret));
		answer_json_error(a, 500, why);
		return;
	}
	a->status = 201;
	a->content_type = "application/json";
	a->body = strdup("{\"status\": \"kept\"}\n");
	a->len = a->body ? strlen(a->body) : 0;
	snprintf(a->note, sizeof(a->note), "%s %s: %s kept, %llu bytes",
		 put->known_good ? "known-good image" : "build", put->build, put->file,
		 (unsigned long long)size);
}
