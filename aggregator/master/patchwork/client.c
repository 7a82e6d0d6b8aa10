// SPDX-License-Identifier: MIT
/* HTTP to Patchwork through libcurl (patchwork.h, "client.c"). */
#include "patchwork.h"

#include "fsutil.h"
#include "message.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How long a request may take: Patchwork answers a page in well under it. */
#define CONNECT_TIMEOUT 20L
#define REQUEST_TIMEOUT 120L
#define DOWNLOAD_TIMEOUT 600L
#define TOKEN_MAX 256

struct bci_patchwork_client {
	char api[1024];
	char authorization[TOKEN_MAX + 32];
};

int bci_patchwork_client_new(const struct bci_patchwork_project *project,
			     struct bci_patchwork_client **out, char *err, size_t err_size)
{
	struct bci_patchwork_client *client;
	char *token = NULL;
	size_t len = 0;
	int ret;

	*out = NULL;
	ret = bci_read_file(project->token_file, &token, &len, 4096);
	if (ret < 0) {
		bci_message(err, err_size, "project %s: token-file %s: %s", project->name,
			    project->token_file, bci_strerror(-ret));
		return ret;
	}
	while (len && (token[len - 1] == '\n' || token[len - 1] == '\r' || token[len - 1] == ' '))
		token[--len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (!((token[i] >= '0' && token[i] <= '9') || (token[i] >= 'a' && token[i] <= 'z') ||
		      (token[i] >= 'A' && token[i] <= 'Z'))) {
			len = 0;
			break;
		}
	if (!len || len > TOKEN_MAX) {
		bci_message(err, err_size,
			    "project %s: token-file %s: expected one line, Patchwork's REST token"
			    " (letters and digits)", project->name, project->token_file);
		free(token);
		return -EINVAL;
	}
	client = calloc(1, sizeof(*client));
	if (!client) {
		free(token);
		return -ENOMEM;
	}
	snprintf(client->authorization, sizeof(client->authorization), "Authorization: Token %s",
		 token);
	free(token);
	if ((size_t)snprintf(client->api, sizeof(client->api), "%s/api/1.2", project->url) >=
	    sizeof(client->api)) {
		bci_message(err, err_size, "project %s: url too long", project->name);
		free(client);
		return -ENAMETOOLONG;
	}
	*out = client;
	return 0;
}

void bci_patchwork_client_free(struct bci_patchwork_client *client)
{
	if (client)
		explicit_bzero(client->authorization, sizeof(client->authorization));
	free(client);
}

const char *bci_patchwork_client_api(const struct bci_patchwork_client *client)
{
	return client->api;
}

void bci_patchwork_reply_clear(struct bci_patchwork_reply *reply)
{
	free(reply->body);
	memset(reply, 0, sizeof(*reply));
}

struct sink {
	struct bci_patchwork_reply *reply;
	size_t limit;
	size_t size;
	bool too_big;
	FILE *file;		/* download: the body goes here */
	unsigned long long file_len, file_limit;
};

static size_t body_keep(char *data, size_t size, size_t n, void *ctx)
{
	struct sink *s = ctx;
	size_t len = size * n;

	if (s->file) {
		if (s->file_len + len > s->file_limit) {
			s->too_big = true;
			return 0;
		}
		s->file_len += len;
		return fwrite(data, 1, len, s->file) == len ? len : 0;
	}
	if (s->reply->len + len > s->limit) {
		s->too_big = true;
		return 0;
	}
	if (s->reply->len + len + 1 > s->size) {
		size_t want = (s->reply->len + len + 1) * 2;
		char *grown = realloc(s->reply->body, want);

		if (!grown)
			return 0;
		s->reply->body = grown;
		s->size = want;
	}
	memcpy(s->reply->body + s->reply->len, data, len);
	s->reply->len += len;
	s->reply->body[s->reply->len] = '\0';
	return len;
}

static size_t header_keep(char *data, size_t size, size_t n, void *ctx)
{
	struct sink *s = ctx;
	size_t len = size * n;
	char line[2300];

	if (len > 5 && len < sizeof(line) && !strncasecmp(data, "Link:", 5)) {
		memcpy(line, data + 5, len - 5);
		line[len - 5] = '\0';
		line[strcspn(line, "\r\n")] = '\0';
		if (bci_patchwork_link_next(line, s->reply->next, sizeof(s->reply->next)) <= 0)
			s->reply->next[0] = '\0';
	}
	return len;
}

static int perform(struct bci_patchwork_client *client, const char *method, const char *url,
		   const char *json_body, struct sink *sink, long timeout, char *err,
		   size_t err_size)
{
	CURL *curl = curl_easy_init();
	struct curl_slist *headers = NULL;
	char curl_err[CURL_ERROR_SIZE] = "";
	CURLcode code;
	int ret = 0;

	if (!curl)
		return -ENOMEM;
	headers = curl_slist_append(headers, client->authorization);
	headers = curl_slist_append(headers, "Accept: application/json");
	if (json_body)
		headers = curl_slist_append(headers, "Content-Type: application/json");
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeout);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, body_keep);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, sink);
	curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, header_keep);
	curl_easy_setopt(curl, CURLOPT_HEADERDATA, sink);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "bootci-aggregator");
	if (json_body) {
		curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, json_body);
	} else if (strcmp(method, "GET")) {
		curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	}
	code = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &sink->reply->status);
	if (code != CURLE_OK) {
		long os_errno = 0;

		curl_easy_getinfo(curl, CURLINFO_OS_ERRNO, &os_errno);
		if (sink->too_big) {
			bci_message(err, err_size, "%s %s: the answer is larger than %llu bytes",
				    method, url,
				    sink->file ? sink->file_limit : (unsigned long long)sink->limit);
			ret = -EFBIG;
		} else {
			bci_message(err, err_size, "%s %s: %s", method, url,
				    curl_err[0] ? curl_err : curl_easy_strerror(code));
			ret = code == CURLE_COULDNT_CONNECT && os_errno == ECONNREFUSED ? -ECONNREFUSED
											  : -EIO;
		}
		sink->reply->sent = code != CURLE_COULDNT_CONNECT &&
				    code != CURLE_COULDNT_RESOLVE_HOST;
		if (!sink->too_big)
			sink->reply->status = 0;
	} else {
		sink->reply->sent = true;
	}
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	return ret;
}

int bci_patchwork_request(struct bci_patchwork_client *client, const char *method, const char *url,
			  const char *json_body, size_t limit, struct bci_patchwork_reply *reply,
			  char *err, size_t err_size)
{
	struct sink sink = { .reply = reply, .limit = limit };

	memset(reply, 0, sizeof(*reply));
	return perform(client, method, url, json_body, &sink, REQUEST_TIMEOUT, err, err_size);
}

int bci_patchwork_download(struct bci_patchwork_client *client, const char *url, const char *path,
			   unsigned long long limit, long *status, char *err, size_t err_size)
{
	struct bci_patchwork_reply reply = { 0 };
	struct sink sink = { .reply = &reply, .limit = 4096, .file_limit = limit };
	char tmp[PATH_MAX];
	int fd, ret;

	*status = 0;
	fd = bci_atomic_open(path, tmp, 0644);
	if (fd < 0) {
		bci_message(err, err_size, "%s: cannot create: %s", path, bci_strerror(-fd));
		return fd;
	}
	sink.file = fdopen(fd, "w");
	if (!sink.file) {
		ret = -errno;
		bci_atomic_abort(fd, tmp);
		return ret;
	}
	ret = perform(client, "GET", url, NULL, &sink, DOWNLOAD_TIMEOUT, err, err_size);
	*status = reply.status;
	if (!ret && fflush(sink.file) != 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", path, bci_strerror(-ret));
	}
	if (!ret && reply.status == 200) {
		/* fdopen()'s stream owns fd: commit on a duplicate, then close the stream. */
		int copy = dup(fd);

		fclose(sink.file);
		if (copy < 0)
			ret = -errno;
		else if ((ret = bci_atomic_commit(copy, tmp, path)) < 0)
			bci_message(err, err_size, "%s: %s", path, bci_strerror(-ret));
	} else {
		fclose(sink.file);
		unlink(tmp);
	}
	bci_patchwork_reply_clear(&reply);
	return ret;
}
