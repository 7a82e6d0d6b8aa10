// SPDX-License-Identifier: MIT
/*
 * publish --master: the files of a test image sent to serve one PUT each,
 * then the build's metadata (publish.h, serve_hook.h for the protocol).
 */
#include "publish.h"

#include "../schedule/schedule.h"
#include "fsutil.h"
#include "message.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct reply {
	char text[1024];
	size_t len;
};

static size_t reply_keep(char *data, size_t size, size_t n, void *ctx)
{
	struct reply *r = ctx;
	size_t len = size * n, room = sizeof(r->text) - 1 - r->len;

	memcpy(r->text + r->len, data, len < room ? len : room);
	r->len += len < room ? len : room;
	r->text[r->len] = '\0';
	return len;
}

/* One PUT of @fd (@size bytes) or @body; 0 on 2xx, else -EIO with the server's answer in @err. */
static int put(const char *url, const char *token, const char *sha256, FILE *file, uint64_t size,
	       const char *body, char *err, size_t err_size)
{
	CURL *curl = curl_easy_init();
	struct curl_slist *headers = NULL;
	struct reply reply = { "", 0 };
	char header[BCI_SHA256_HEX_LEN + 64], auth[600];
	long status = 0;
	CURLcode code;

	if (!curl)
		return -ENOMEM;
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
	headers = curl_slist_append(headers, auth);
	if (sha256) {
		snprintf(header, sizeof(header), "X-Bootci-Sha256: %s", sha256);
		headers = curl_slist_append(headers, header);
	}
	headers = curl_slist_append(headers, body ? "Content-Type: application/json"
						  : "Content-Type: application/octet-stream");
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 120L);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, reply_keep);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply);
	if (body) {
		curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PUT");
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	} else {
		curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(curl, CURLOPT_READDATA, file);
		curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)size);
	}
	code = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	if (code != CURLE_OK) {
		bci_message(err, err_size, "%s: %s", url, curl_easy_strerror(code));
		return -EIO;
	}
	if (status < 200 || status > 299) {
		while (reply.len && reply.text[reply.len - 1] == '\n')
			reply.text[--reply.len] = '\0';
		bci_message(err, err_size, "%s: %ld %s", url, status, reply.text);
		return -EIO;
	}
	return 0;
}

/* @kind: "builds" or "known-good"; @build: the build's name or the image's version. */
static int put_file(const char *master, const char *token, const char *kind, const char *build,
		    const char *name, const char *path, FILE *log, char *err, size_t err_size)
{
	char url[PATH_MAX + 512], hex[BCI_SHA256_HEX_LEN + 1];
	uint64_t size;
	FILE *f = fopen(path, "rb");
	int ret;

	if (!f) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if ((ret = bci_sha256_fd(fileno(f), hex, &size)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
		bci_message(err, err_size, "%s: %s", path, strerror(ret < 0 ? -ret : errno));
		fclose(f);
		return ret < 0 ? ret : -EIO;
	}
	snprintf(url, sizeof(url), "%s/api/v1/%s/%s/files/%s", master, kind, build, name);
	ret = put(url, token, hex, f, size, NULL, err, err_size);
	fclose(f);
	if (ret == 0 && log)
		fprintf(log, "publish: %s: %s sent (%llu bytes)\n", build, name,
			(unsigned long long)size);
	return ret;
}

int bci_publish_remote(const char *master, const char *token, const struct bci_publish *p,
		       char *err, size_t err_size)
{
	static const char *const names[] = { "vmlinuz", "initrd.img", "boot.ipxe",
					     BCI_SCHEDULE_FAST_TESTLIST, BCI_SCHEDULE_FULL_TESTLIST };
	struct json_object *meta = json_object_new_object();
	char path[PATH_MAX], url[PATH_MAX + 512];
	int ret = 0;

	if (!meta)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s", p->manifest ? p->manifest : "");
	if (!p->manifest)
		snprintf(path, sizeof(path), "%s/manifest", p->image_dir);
	ret = put_file(master, token, "builds", p->build, "manifest", path, p->log, err, err_size);
	for (size_t i = 0; ret == 0 && i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", p->image_dir, names[i]);
		if (access(path, F_OK) == 0)
			ret = put_file(master, token, "builds", p->build, names[i], path, p->log, err,
				       err_size);
	}
	if (ret == 0) {
		json_object_object_add(meta, "tree", json_object_new_string(p->tree));
		json_object_object_add(meta, "commit", json_object_new_string(p->commit));
		json_object_object_add(meta, "tier", json_object_new_string(p->tier));
		if (p->base)
			json_object_object_add(meta, "base", json_object_new_string(p->base));
		if (p->series_title)
			json_object_object_add(meta, "series_title",
					       json_object_new_string(p->series_title));
		if (p->message_id)
			json_object_object_add(meta, "message_id",
					       json_object_new_string(p->message_id));
		snprintf(url, sizeof(url), "%s/api/v1/builds/%s", master, p->build);
		ret = put(url, token, NULL, NULL, 0,
			  json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PLAIN), err, err_size);
		if (ret == 0 && p->log)
			fprintf(p->log, "publish: %s published on %s\n", p->build, master);
	}
	json_object_put(meta);
	return ret;
}

int bci_publish_known_good_remote(const char *master, const char *token, const char *version,
				  const char *image_dir, const char *manifest, FILE *log, char *err,
				  size_t err_size)
{
	static const char *const names[] = { "disk.img", "known-good.efi", "layout",
					     "register-boot-entry.sh" };
	char path[PATH_MAX], url[PATH_MAX + 512];
	int ret;

	snprintf(path, sizeof(path), "%s", manifest ? manifest : "");
	if (!manifest)
		snprintf(path, sizeof(path), "%s/manifest", image_dir);
	ret = put_file(master, token, "known-good", version, "manifest", path, log, err, err_size);
	for (size_t i = 0; ret == 0 && i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", image_dir, names[i]);
		if (access(path, F_OK) == 0)
			ret = put_file(master, token, "known-good", version, names[i], path, log, err,
				       err_size);
	}
	if (ret < 0)
		return ret;
	snprintf(url, sizeof(url), "%s/api/v1/known-good/%s", master, version);
	ret = put(url, token, NULL, NULL, 0, "{}", err, err_size);
	if (ret == 0 && log)
		fprintf(log, "publish: known-good image %s published on %s\n", version, master);
	return ret;
}
