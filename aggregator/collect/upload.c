// SPDX-License-Identifier: MIT
/*
 * One archive to the master over HTTP(S) (libcurl), as the master's API says
 * (bootci-aggregator-serve(1)):
 *
 *   GET URL                     what the master holds of the run: 404 nothing;
 *                               200 {"state": "partial"|"stored", "received": N,
 *                               "sha256": "<hex>"}; both with "job": {"state",
 *                               "boots", "ended", "note"} when the master's
 *                               scheduler handed the run out (ended: it will not
 *                               hand it out again, the run is over)
 *   PUT URL                     the archive's bytes from the offset the master
 *     Content-Range: bytes S-E/T    confirmed (S = received; absent when S = 0)
 *     X-Bootci-Sha256: <hex>        the whole archive's digest
 *                               200/201 {"state": "stored", "sha256": "<hex>"} once
 *                               complete and verified
 *   Authorization: Bearer <token> on both.
 *
 * Every attempt starts by asking the master what it has, so an upload cut by
 * a network error, a restarted master or a reboot resumes where the master's
 * own bookkeeping says, never from a guess. Failures that may pass (no
 * connection, 5xx, 408, 429) are retried with exponential backoff and full
 * jitter until the deadline; a refusal (401, 403, 409, 413, other 4xx) is
 * final for this run. The run counts as uploaded only when the master's
 * answer carries the archive's own digest.
 *
 * When the master holds the run under another digest (409, or a GET saying
 * so), what it holds is asked for, to tell the same run apart from another:
 *
 *   GET URL/manifest            the stored archive's manifest.json (its files'
 *                               paths, sizes and sha256), 404 when not stored
 *
 * And a machine that cannot run its jobs says so (bci_collect_report_fault()),
 * and every start of collect says hello (bci_collect_hello()):
 *
 *   PUT MASTER/api/v1/machines/<machine>/fault   the note, text, one line
 *   PUT MASTER/api/v1/machines/<machine>/hello   no body; JSON answer: the state
 */
#include "collect.h"

#include "message.h"

#include "manifest.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DIGEST_HEADER "X-Bootci-Sha256"
#define RESPONSE_MAX (64 * 1024)
#define CONNECT_TIMEOUT_S 10L
/* A master that takes nothing for this long is taken as gone: the attempt ends. */
#define STALL_SECONDS 30L
#define BACKOFF_BASE_MS 500L
#define BACKOFF_CAP_MS 60000L
#define PROGRESS_EVERY_MS 1000L

long long bci_collect_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

struct response {
	char body[RESPONSE_MAX + 1];
	size_t len;
};

struct transfer {
	const struct bci_collect_upload *upload;
	int fd;
	uint64_t offset;     /* where this attempt started */
	long long started_ms, last_print_ms;
	bool printed;
};

static size_t collect_body(char *data, size_t size, size_t count, void *opaque)
{
	struct response *r = opaque;
	size_t n = size * count, room = RESPONSE_MAX - r->len;

	/* A longer answer is cut: only its first fields matter. */
	memcpy(r->body + r->len, data, n < room ? n : room);
	r->len += n < room ? n : room;
	r->body[r->len] = '\0';
	return n;
}

static size_t read_archive(char *buf, size_t size, size_t count, void *opaque)
{
	struct transfer *t = opaque;
	ssize_t n;

	do
		n = read(t->fd, buf, size * count);
	while (n < 0 && errno == EINTR);
	return n < 0 ? CURL_READFUNC_ABORT : (size_t)n;
}

static void human_bytes(double bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB" };
	unsigned u = 0;

	while (bytes >= 1024 && u < 3) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

static void print_progress(struct transfer *t, uint64_t sent_now, bool last)
{
	const struct bci_collect_upload *u = t->upload;
	long long elapsed = now_ms() - t->started_ms;
	uint64_t done = t->offset + sent_now;
	double rate = elapsed > 0 ? sent_now * 1000.0 / (double)elapsed : 0;
	char have[32], total[32], speed[32], eta[32] = "?";

	human_bytes((double)done, have, sizeof(have));
	human_bytes((double)u->size, total, sizeof(total));
	human_bytes(rate, speed, sizeof(speed));
	if (rate > 0)
		snprintf(eta, sizeof(eta), "%.0f s", (double)(u->size - done) / rate);
	fprintf(u->console, "collect: upload %s / %s (%.0f%%), %s/s, ETA %s%s\n", have, total,
		u->size ? done * 100.0 / (double)u->size : 100.0, speed, last ? "0 s" : eta,
		last ? " (sent)" : "");
	fflush(u->console);
	t->printed = true;
}

static int on_progress(void *opaque, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct transfer *t = opaque;
	long long now = now_ms();

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	if (now - t->last_print_ms >= PROGRESS_EVERY_MS) {
		t->last_print_ms = now;
		print_progress(t, (uint64_t)ulnow, false);
	}
	return 0;
}

static CURL *request_new(const struct bci_collect_upload *u, struct curl_slist **headers,
			 struct response *r)
{
	char auth[512];
	CURL *curl = curl_easy_init();

	if (!curl)
		return NULL;
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", u->token);
	*headers = curl_slist_append(NULL, auth);
	explicit_bzero(auth, sizeof(auth));
	r->len = 0;
	r->body[0] = '\0';
	curl_easy_setopt(curl, CURLOPT_URL, u->url);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, STALL_SECONDS);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, r);
	/* The known-good image names its CA bundle; libcurl's built-in path may not exist there. */
	if (u->ca_file && *u->ca_file)
		curl_easy_setopt(curl, CURLOPT_CAINFO, u->ca_file);
	return curl;
}

/* The JSON member @key of @root as a string / number; false when absent or of another type. */
static bool json_string(struct json_object *root, const char *key, char *out, size_t size)
{
	struct json_object *value;

	if (!json_object_object_get_ex(root, key, &value) ||
	    !json_object_is_type(value, json_type_string))
		return false;
	snprintf(out, size, "%s", json_object_get_string(value));
	return true;
}

static bool json_number(struct json_object *root, const char *key, int64_t *out)
{
	struct json_object *value;

	if (!json_object_object_get_ex(root, key, &value) ||
	    !json_object_is_type(value, json_type_int))
		return false;
	*out = json_object_get_int64(value);
	return true;
}

/* @body (@len bytes) as one JSON object and nothing but blanks after it; NULL when it is not. */
static struct json_object *json_object_read(const char *body, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root = NULL;
	size_t end;

	if (!tok)
		return NULL;
	if (len <= INT_MAX)
		root = json_tokener_parse_ex(tok, body, (int)len);
	end = root ? json_tokener_get_parse_end(tok) : 0;
	json_tokener_free(tok);
	while (end < len && strchr(" \t\r\n", body[end]) && body[end])
		end++;
	if (root && (!json_object_is_type(root, json_type_object) || end < len)) {
		json_object_put(root);
		root = NULL;
	}
	return root;
}

enum bci_collect_master_state bci_collect_master_state_parse(const char *body, size_t len,
							     const char *sha256, uint64_t size,
							     uint64_t *received, char *err,
							     size_t err_size)
{
	struct json_object *root = json_object_read(body, len);
	char digest[BCI_SHA256_HEX] = "", state[32] = "";
	enum bci_collect_master_state ret = BCI_MASTER_UNCLEAR;
	int64_t n = 0;

	*received = 0;
	if (!root) {
		bci_message(err, err_size, "not a JSON object: %.120s", body);
		return ret;
	}
	if (!json_string(root, "state", state, sizeof(state))) {
		bci_message(err, err_size, "no \"state\" in %.120s", body);
		goto out;
	}
	json_string(root, "sha256", digest, sizeof(digest));
	if (!strcmp(state, "stored")) {
		if (!strcmp(digest, sha256)) {
			ret = BCI_MASTER_HOLDS;
		} else {
			bci_message(err, err_size, "the master holds this run with another digest (%s, ours %s)",
				    digest[0] ? digest : "none", sha256);
			ret = BCI_MASTER_CONFLICT;
		}
		goto out;
	}
	if (!strcmp(state, "absent")) {
		ret = BCI_MASTER_SEND;
		goto out;
	}
	if (strcmp(state, "partial") != 0 || !json_number(root, "received", &n) || n < 0) {
		bci_message(err, err_size, "state '%s' without a usable \"received\": %.120s", state, body);
		goto out;
	}
	/* Another upload's bytes, or more than ours: not ours to continue. */
	if (strcmp(digest, sha256) == 0 && (uint64_t)n <= size)
		*received = (uint64_t)n;
	ret = BCI_MASTER_SEND;
out:
	json_object_put(root);
	return ret;
}

int bci_collect_master_job_parse(const char *body, size_t len, struct bci_collect_master_job *job)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root = NULL, *member, *value;
	int64_t boots = 0;
	int ret = -EINVAL;

	*job = (struct bci_collect_master_job){ .ended = false };
	if (!tok)
		return -ENOMEM;
	if (len <= INT_MAX)
		root = json_tokener_parse_ex(tok, body, (int)len);
	if (!root || !json_object_is_type(root, json_type_object))
		goto out;
	ret = 0;
	if (!json_object_object_get_ex(root, "job", &member))
		goto out;
	ret = -EINVAL;
	if (!json_object_is_type(member, json_type_object) ||
	    !json_object_object_get_ex(member, "ended", &value) ||
	    !json_object_is_type(value, json_type_boolean) || !json_number(member, "boots", &boots) ||
	    boots < 0 || boots > INT_MAX)
		goto out;
	job->ended = json_object_get_boolean(value);
	job->boots = (int)boots;
	json_string(member, "note", job->note, sizeof(job->note));
	ret = 1;
out:
	json_object_put(root);
	json_tokener_free(tok);
	return ret;
}

int bci_collect_master_job(const struct bci_collect_upload *u, struct bci_collect_master_job *job,
			   char *err, size_t err_size)
{
	struct curl_slist *headers = NULL;
	struct response *r = malloc(sizeof(*r));
	long status = 0;
	CURLcode code;
	CURL *curl;
	int ret = -EIO;

	if (!r)
		return -ENOMEM;
	curl = request_new(u, &headers, r);
	if (!curl) {
		free(r);
		return -ENOMEM;
	}
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	code = curl_easy_perform(curl);
	if (code != CURLE_OK) {
		bci_message(err, err_size, "GET %s: %s", u->url, curl_easy_strerror(code));
		ret = -ETIMEDOUT;
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200 && status != 404) {
		bci_message(err, err_size, "GET %s: HTTP %ld: %.200s", u->url, status, r->body);
		goto out;
	}
	ret = bci_collect_master_job_parse(r->body, r->len, job);
	if (ret < 0)
		bci_message(err, err_size, "GET %s: an answer without a usable job: %.200s", u->url,
			    r->body);
out:
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	free(r);
	return ret;
}

enum outcome {
	OUTCOME_DONE,    /* the master holds the archive with our digest */
	OUTCOME_RETRY,   /* may pass: try again after a pause */
	OUTCOME_REFUSED, /* final for this run */
	OUTCOME_CONFLICT, /* the master holds the run with another digest: final */
	OUTCOME_SEND,    /* query: the master wants the bytes from *received on */
};

/* A status that is worth retrying: the master is busy, restarting or timed us out. */
static bool transient(long status)
{
	return status >= 500 || status == 408 || status == 429;
}

/* Asks the master what it holds: sets *@received, or says it is done or refused. */
static enum outcome query(const struct bci_collect_upload *u, uint64_t *received, char *err,
			  size_t err_size)
{
	struct curl_slist *headers = NULL;
	struct response *r = malloc(sizeof(*r));
	enum outcome outcome = OUTCOME_RETRY;
	char why[512] = "";
	long status = 0;
	CURL *curl;
	CURLcode code;

	if (!r)
		return OUTCOME_RETRY;
	curl = request_new(u, &headers, r);
	if (!curl) {
		free(r);
		return OUTCOME_RETRY;
	}
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	code = curl_easy_perform(curl);
	if (code != CURLE_OK) {
		bci_message(err, err_size, "GET %s: %s", u->url, curl_easy_strerror(code));
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status == 404) {
		*received = 0;
		outcome = OUTCOME_SEND; /* nothing there yet */
		goto out;
	}
	if (status != 200) {
		bci_message(err, err_size, "GET %s: HTTP %ld: %.200s", u->url, status, r->body);
		outcome = transient(status) ? OUTCOME_RETRY : OUTCOME_REFUSED;
		goto out;
	}
	switch (bci_collect_master_state_parse(r->body, r->len, u->sha256, u->size, received, why,
					       sizeof(why))) {
	case BCI_MASTER_HOLDS:
		outcome = OUTCOME_DONE;
		break;
	case BCI_MASTER_SEND:
		outcome = OUTCOME_SEND;
		break;
	case BCI_MASTER_CONFLICT:
		bci_message(err, err_size, "GET %s: %s", u->url, why);
		outcome = OUTCOME_CONFLICT;
		break;
	case BCI_MASTER_UNCLEAR:
		bci_message(err, err_size, "GET %s: %s", u->url, why);
		break;
	}
out:
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	free(r);
	return outcome;
}

static enum outcome send_from(const struct bci_collect_upload *u, uint64_t offset, char *err,
			      size_t err_size)
{
	struct transfer t = { .upload = u, .offset = offset };
	struct curl_slist *headers = NULL;
	struct response *r = malloc(sizeof(*r));
	char header[256], digest[BCI_SHA256_HEX] = "";
	enum outcome outcome = OUTCOME_RETRY;
	curl_off_t sent = 0;
	long status = 0;
	CURL *curl;
	CURLcode code;

	if (!r)
		return OUTCOME_RETRY;
	t.fd = open(u->path, O_RDONLY | O_CLOEXEC);
	if (t.fd < 0 || lseek(t.fd, (off_t)offset, SEEK_SET) < 0) {
		bci_message(err, err_size, "%s: %s", u->path, strerror(errno));
		outcome = OUTCOME_REFUSED;
		goto out_fd;
	}
	curl = request_new(u, &headers, r);
	if (!curl)
		goto out_fd;
	snprintf(header, sizeof(header), DIGEST_HEADER ": %s", u->sha256);
	headers = curl_slist_append(headers, header);
	if (offset > 0) {
		snprintf(header, sizeof(header), "Content-Range: bytes %llu-%llu/%llu",
			 (unsigned long long)offset, (unsigned long long)u->size - 1,
			 (unsigned long long)u->size);
		headers = curl_slist_append(headers, header);
	}
	/* No "Expect: 100-continue" round trip: the master reads the body or closes. */
	headers = curl_slist_append(headers, "Expect:");
	headers = curl_slist_append(headers, "Content-Type: application/zstd");
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(curl, CURLOPT_READFUNCTION, read_archive);
	curl_easy_setopt(curl, CURLOPT_READDATA, &t);
	curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)(u->size - offset));
	if (u->max_rate)
		curl_easy_setopt(curl, CURLOPT_MAX_SEND_SPEED_LARGE, (curl_off_t)u->max_rate);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
	t.started_ms = t.last_print_ms = now_ms();
	fprintf(u->console, "collect: PUT %s from byte %llu of %llu\n", u->url,
		(unsigned long long)offset, (unsigned long long)u->size);
	code = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_SIZE_UPLOAD_T, &sent);
	if (code != CURLE_OK) {
		bci_message(err, err_size, "PUT %s: %s after %lld bytes", u->url,
			 curl_easy_strerror(code), (long long)sent);
		goto out;
	}
	print_progress(&t, (uint64_t)sent, true);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200 && status != 201) {
		bci_message(err, err_size, "PUT %s: HTTP %ld: %.200s", u->url, status, r->body);
		outcome = status == 409 ? OUTCOME_CONFLICT :
			  transient(status) ? OUTCOME_RETRY : OUTCOME_REFUSED;
		goto out;
	}
	struct json_object *root = json_tokener_parse(r->body);
	if (!root || !json_string(root, "sha256", digest, sizeof(digest)))
		digest[0] = '\0';
	json_object_put(root);
	if (strcmp(digest, u->sha256) != 0) {
		/* Not confirmed: the next attempt's GET says what the master really has. */
		bci_message(err, err_size, "PUT %s: the master answered digest '%s', ours is %s", u->url,
			 digest, u->sha256);
		goto out;
	}
	outcome = OUTCOME_DONE;
out:
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
out_fd:
	if (t.fd >= 0)
		close(t.fd);
	free(r);
	return outcome;
}

/* Full jitter: a random pause in [base/2, min(cap, base * 2^attempt)]. */
static long long backoff_ms(unsigned attempt)
{
	long long ceiling = BACKOFF_BASE_MS << (attempt < 10 ? attempt : 10);

	if (ceiling > BACKOFF_CAP_MS)
		ceiling = BACKOFF_CAP_MS;
	return BACKOFF_BASE_MS / 2 + random() % (ceiling - BACKOFF_BASE_MS / 2 + 1);
}

int bci_collect_upload_run(const struct bci_collect_upload *upload, char *err, size_t err_size)
{
	char why[512] = "";
	enum outcome outcome;
	unsigned attempt = 0;

	srandom((unsigned)(now_ms() ^ getpid()));
	for (;;) {
		uint64_t received = 0;

		why[0] = '\0';
		outcome = query(upload, &received, why, sizeof(why));
		if (outcome == OUTCOME_DONE) {
			fprintf(upload->console, "collect: the master holds the archive (sha256 %s)\n",
				upload->sha256);
			return 0;
		}
		if (outcome == OUTCOME_SEND) {
			if (received > 0)
				fprintf(upload->console, "collect: resuming: the master has %llu of %llu bytes\n",
					(unsigned long long)received, (unsigned long long)upload->size);
			outcome = send_from(upload, received, why, sizeof(why));
			if (outcome == OUTCOME_DONE) {
				fprintf(upload->console,
					"collect: the master confirmed the archive (sha256 %s)\n",
					upload->sha256);
				return 0;
			}
		}
		if (outcome == OUTCOME_REFUSED || outcome == OUTCOME_CONFLICT) {
			bci_message(err, err_size, "%s", why);
			return outcome == OUTCOME_CONFLICT ? -EEXIST : -EPERM;
		}
		long long pause = backoff_ms(attempt++);
		long long left = (upload->deadline - bci_collect_now()) * 1000;
		if (left <= pause) {
			bci_message(err, err_size, "%s; deadline reached after %u attempts", why, attempt);
			return -ETIMEDOUT;
		}
		fprintf(upload->console, "collect: %s; retrying in %.1f s\n", why, pause / 1000.0);
		fflush(upload->console);
		struct timespec ts = { pause / 1000, (pause % 1000) * 1000000 };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

/* ---- what the master holds of a run it refused another archive of ---- */

/* A body of any length up to @limit, grown as it comes. */
struct growing {
	char *data;
	size_t len, cap, limit;
	bool over;
};

static size_t grow_body(char *data, size_t size, size_t count, void *opaque)
{
	struct growing *g = opaque;
	size_t n = size * count;

	if (g->over || n > g->limit - g->len) {
		g->over = true;
		return 0; /* libcurl ends the transfer */
	}
	if (g->len + n + 1 > g->cap) {
		size_t cap = g->cap ? g->cap : 64 * 1024;
		char *grown;

		while (cap < g->len + n + 1)
			cap *= 2;
		grown = realloc(g->data, cap);
		if (!grown)
			return 0;
		g->data = grown;
		g->cap = cap;
	}
	memcpy(g->data + g->len, data, n);
	g->len += n;
	g->data[g->len] = '\0';
	return n;
}

/* GET @url into @g: 0 with the HTTP status in *@status, or -EIO (@err). */
static int get_body(const struct bci_collect_upload *u, const char *url, struct growing *g,
		    long *status, char *err, size_t err_size)
{
	struct curl_slist *headers = NULL;
	struct response *r = malloc(sizeof(*r));
	CURLcode code;
	CURL *curl;

	if (!r)
		return -ENOMEM;
	curl = request_new(u, &headers, r);
	if (!curl) {
		free(r);
		return -ENOMEM;
	}
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, grow_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, g);
	code = curl_easy_perform(curl);
	*status = 0;
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	free(r);
	if (code != CURLE_OK) {
		bci_message(err, err_size, "GET %s: %s", url,
			    g->over ? "an answer larger than a manifest may be" : curl_easy_strerror(code));
		return -EIO;
	}
	return 0;
}

int bci_collect_master_held(const struct bci_collect_upload *upload, struct bci_collect_held *held,
			    char *err, size_t err_size)
{
	struct growing g = { .limit = BCI_COLLECT_MANIFEST_MAX };
	char url[8192], why[512] = "";
	struct json_object *root = NULL;
	int64_t size = -1;
	long status;
	int ret;

	memset(held, 0, sizeof(*held));
	ret = get_body(upload, upload->url, &g, &status, err, err_size);
	if (ret < 0)
		goto out;
	root = g.data ? json_tokener_parse(g.data) : NULL;
	if (status != 200 || !root || !json_string(root, "state", why, sizeof(why)) ||
	    strcmp(why, "stored") || !json_string(root, "sha256", held->sha256, sizeof(held->sha256)) ||
	    !json_number(root, "size", &size) || size < 0) {
		bci_message(err, err_size, "GET %s: HTTP %ld: not a stored run: %.200s", upload->url,
			    status, g.data ? g.data : "");
		ret = -EPROTO;
		goto out;
	}
	held->size = (uint64_t)size;
	g.len = 0;
	if (snprintf(url, sizeof(url), "%s/manifest", upload->url) >= (int)sizeof(url)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	ret = get_body(upload, url, &g, &status, err, err_size);
	if (ret < 0)
		goto out;
	if (status != 200) {
		bci_message(err, err_size, "GET %s: HTTP %ld: %.200s", url, status, g.data ? g.data : "");
		ret = -EPROTO;
		goto out;
	}
	ret = bci_manifest_parse(g.data ? g.data : "", g.len, &held->manifest, why, sizeof(why));
	if (ret < 0)
		bci_message(err, err_size, "GET %s: the master's manifest: %s", url, why);
out:
	json_object_put(root);
	free(g.data);
	return ret;
}

/* ---- what the machine says to the master: its fault note, its hello ---- */

/* PUT @body (text) to @upload's URL: 0 once the master answered 200 (its answer in @r), -errno. */
static int put_text(const struct bci_collect_upload *upload, const char *body, struct response *r,
		    char *err, size_t err_size)
{
	struct curl_slist *headers = NULL;
	long status = 0;
	CURLcode code;
	CURL *curl;
	int ret = -EIO;

	curl = request_new(upload, &headers, r);
	if (!curl)
		return -ENOMEM;
	headers = curl_slist_append(headers, "Content-Type: text/plain; charset=utf-8");
	headers = curl_slist_append(headers, "Expect:");
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PUT");
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	code = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (code != CURLE_OK) {
		bci_message(err, err_size, "PUT %s: %s", upload->url, curl_easy_strerror(code));
	} else if (status == 404) {
		bci_message(err, err_size, "PUT %s: HTTP 404: %.200s", upload->url, r->body);
		ret = -ENOENT;
	} else if (status != 200) {
		bci_message(err, err_size, "PUT %s: HTTP %ld: %.200s", upload->url, status, r->body);
	} else {
		ret = 0;
	}
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	return ret;
}

int bci_collect_report_fault(const struct bci_collect_upload *upload, const char *note, char *err,
			     size_t err_size)
{
	struct response *r = malloc(sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	ret = put_text(upload, note, r, err, err_size);
	free(r);
	return ret < 0 ? (ret == -ENOENT ? -EIO : ret) : 0;
}

int bci_collect_hello_parse(const char *body, size_t len, struct bci_collect_hello *hello,
			    char *err, size_t err_size)
{
	struct json_object *root = json_object_read(body, len);
	int ret = -EPROTO;

	*hello = (struct bci_collect_hello){ .out = false };
	if (!root) {
		bci_message(err, err_size, "not a JSON object: %.120s", body);
		return ret;
	}
	if (!json_string(root, "state", hello->state, sizeof(hello->state)) ||
	    (strcmp(hello->state, "ready") && strcmp(hello->state, "out") &&
	     strcmp(hello->state, "unscheduled"))) {
		bci_message(err, err_size, "no \"state\" of ready, out or unscheduled in %.120s", body);
		hello->state[0] = '\0';
		goto out;
	}
	hello->out = !strcmp(hello->state, "out");
	json_string(root, "note", hello->note, sizeof(hello->note));
	for (char *c = hello->note; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	ret = 0;
out:
	json_object_put(root);
	return ret;
}

int bci_collect_hello(const struct bci_collect_upload *upload, struct bci_collect_hello *hello,
		      char *err, size_t err_size)
{
	struct response *r = malloc(sizeof(*r));
	char why[256];
	int ret;

	*hello = (struct bci_collect_hello){ .out = false };
	if (!r)
		return -ENOMEM;
	ret = put_text(upload, "", r, err, err_size);
	if (ret == 0 && bci_collect_hello_parse(r->body, r->len, hello, why, sizeof(why)) < 0) {
		bci_message(err, err_size, "PUT %s: the master's answer: %s", upload->url, why);
		ret = -EPROTO;
	}
	free(r);
	return ret;
}
