// SPDX-License-Identifier: MIT
/*
 * Checks on Patchwork's patches (patchwork.h, "check.c"): queued in the
 * store, marked "posting" before the POST and "posted" after Patchwork's
 * 201, so a check is posted once. A "posting" check (the master stopped or
 * the answer was lost mid-POST) is first looked for on Patchwork.
 */
#include "patchwork.h"

#include "../store/store.h"
#include "jsonw.h"
#include "message.h"

#include <errno.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

static double now_unix(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool state_ok(const char *state)
{
	return !strcmp(state, "pending") || !strcmp(state, "success") ||
	       !strcmp(state, "warning") || !strcmp(state, "fail");
}

/* Patchwork's context is a slug: letters, digits, '-' and '_'. */
static bool context_ok(const char *context)
{
	size_t len = strlen(context);

	if (!len || len > 255)
		return false;
	for (const char *c = context; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
			return false;
	return true;
}

struct open_checks {
	struct bci_store_pw_check *checks;
	size_t count;
	bool nomem;
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int keep_check(const struct bci_store_pw_check *check, void *ctx)
{
	struct open_checks *open = ctx;
	struct bci_store_pw_check *grown, *c;

	grown = realloc(open->checks, (open->count + 1) * sizeof(*open->checks));
	if (!grown) {
		open->nomem = true;
		return -ENOMEM;
	}
	open->checks = grown;
	c = &grown[open->count++];
	*c = *check;
	c->context = dup_or_null(check->context);
	c->state = dup_or_null(check->state);
	c->description = dup_or_null(check->description);
	c->target_url = dup_or_null(check->target_url);
	c->status = dup_or_null(check->status);
	c->note = NULL;
	return 0;
}

static void open_checks_free(struct open_checks *open)
{
	for (size_t i = 0; i < open->count; i++) {
		free((char *)open->checks[i].context);
		free((char *)open->checks[i].state);
		free((char *)open->checks[i].description);
		free((char *)open->checks[i].target_url);
		free((char *)open->checks[i].status);
	}
	free(open->checks);
}

static char *check_body(const struct bci_store_pw_check *check)
{
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	struct bci_jsonw w;

	if (!f)
		return NULL;
	bci_jsonw_init(&w, f, 0);
	bci_jsonw_object_begin(&w);
	bci_jsonw_key(&w, "state");
	bci_jsonw_string(&w, check->state);
	bci_jsonw_key(&w, "context");
	bci_jsonw_string(&w, check->context);
	if (check->description) {
		bci_jsonw_key(&w, "description");
		bci_jsonw_string(&w, check->description);
	}
	if (check->target_url) {
		bci_jsonw_key(&w, "target_url");
		bci_jsonw_string(&w, check->target_url);
	}
	bci_jsonw_object_end(&w);
	bci_jsonw_finish(&w);
	if (fclose(f) != 0) {
		free(body);
		return NULL;
	}
	return body;
}

static int mark(struct bci_patchwork *pw, struct bci_store_pw_check *check, const char *status,
		const char *note, char *err, size_t err_size)
{
	struct bci_store_pw_check row = *check;

	/* @check's own strings stay as they are: it owns them (keep_check()). */
	row.status = status;
	row.note = note;
	return bci_store_pw_check_mark(pw->store, pw->project->name, &row, err, err_size);
}

/*
 * Whether Patchwork already has the check (a "posting" one): 1 yes, 0 no,
 * -errno when it could not tell.
 */
static int already_there(struct bci_patchwork *pw, const struct bci_store_pw_check *check,
			 char *err, size_t err_size)
{
	struct bci_patchwork_reply reply;
	char url[sizeof(((struct bci_patchwork_reply *)0)->next)];
	int ret;

	snprintf(url, sizeof(url), "%s/patches/%lld/checks/?context=%s&per_page=250",
		 bci_patchwork_client_api(pw->client), (long long)check->patch, check->context);
	for (;;) {
		ret = bci_patchwork_request(pw->client, "GET", url, NULL, BCI_PATCHWORK_PAGE_LIMIT,
					    &reply, err, err_size);
		if (ret < 0)
			return ret;
		if (reply.status != 200) {
			bci_message(err, err_size, "%s: Patchwork answered %ld", url, reply.status);
			bci_patchwork_reply_clear(&reply);
			return -EIO;
		}
		ret = bci_patchwork_checks_has(reply.body, reply.len, check->context, check->state,
					       err, err_size);
		if (ret != 0 || !reply.next[0] ||
		    strncmp(reply.next, pw->project->url, strlen(pw->project->url))) {
			bci_patchwork_reply_clear(&reply);
			return ret;
		}
		snprintf(url, sizeof(url), "%s", reply.next);
		bci_patchwork_reply_clear(&reply);
	}
}

/*
 * Posts one check: 1 posted (or found already there), 0 left to another
 * poster, queued or refused (said), -errno for a fault that stops the flush
 * (said by the caller).
 *
 * Its status says what is known: "queued" was never sent; "posting" is
 * being sent by a poster (this process or another on the same store) since
 * it was claimed, or that poster died mid-POST once BCI_PATCHWORK_STALE
 * seconds went by; "unknown" was sent and no clear answer came. The last
 * two are looked for on Patchwork before any new POST.
 */
static int post_one(struct bci_patchwork *pw, struct bci_store_pw_check *check, char *err,
		    size_t err_size)
{
	struct bci_patchwork_reply reply;
	char url[1400], note[2000], body_quoted[200];
	bool posting = !strcmp(check->status, "posting");
	char *body;
	int ret;

	if (posting && now_unix() - check->claimed < BCI_PATCHWORK_STALE)
		return 0;
	if (posting || !strcmp(check->status, "unknown")) {
		ret = already_there(pw, check, err, err_size);
		if (ret < 0)
			return ret;
		if (ret > 0) {
			bci_patchwork_say(pw, "patch %lld: check %s %s was posted before: kept",
					  (long long)check->patch, check->context, check->state);
			return mark(pw, check, "posted", NULL, err, err_size) < 0 ? -EIO : 1;
		}
	}
	ret = bci_store_pw_check_claim(pw->store, pw->project->name, check, err, err_size);
	if (ret <= 0)
		return ret;
	if (!(body = check_body(check))) {
		mark(pw, check, "queued", NULL, note, sizeof(note));
		return -ENOMEM;
	}
	snprintf(url, sizeof(url), "%s/patches/%lld/checks/", bci_patchwork_client_api(pw->client),
		 (long long)check->patch);
	ret = bci_patchwork_request(pw->client, "POST", url, body, BCI_PATCHWORK_PAGE_LIMIT,
				    &reply, err, err_size);
	free(body);
	if (ret < 0) {
		/* Never sent: it is still only queued. Sent but no answer: unknown. */
		mark(pw, check, reply.sent ? "unknown" : "queued", NULL, note, sizeof(note));
		bci_patchwork_reply_clear(&reply);
		return ret;
	}
	bci_quote(body_quoted, sizeof(body_quoted), reply.body ? reply.body : "",
		  reply.body ? (reply.len < 150 ? reply.len : 150) : 0);
	if (reply.status == 201 || reply.status == 200) {
		bci_patchwork_reply_clear(&reply);
		if ((ret = mark(pw, check, "posted", NULL, err, err_size)) < 0)
			return ret;
		return 1;
	}
	if (reply.status == 401 || reply.status == 403) {
		snprintf(note, sizeof(note),
			 "%ld: Patchwork refuses checks from the token of %s (%s): its user must be"
			 " a maintainer of %s", reply.status, pw->project->token_file, body_quoted,
			 pw->project->linkname);
		bci_patchwork_reply_clear(&reply);
		mark(pw, check, "queued", note, err, err_size);
		bci_message(err, err_size, "%s", note);
		return -EACCES;
	}
	if (reply.status >= 400 && reply.status < 500) {
		snprintf(note, sizeof(note), "%s: Patchwork refused it: %ld (%s)", url, reply.status,
			 body_quoted);
		bci_patchwork_reply_clear(&reply);
		bci_patchwork_say(pw, "patch %lld: check %s %s: %s: not posted", (long long)check->patch,
				  check->context, check->state, note);
		return mark(pw, check, "refused", note, err, err_size) < 0 ? -EIO : 0;
	}
	/* A 5xx: whether Patchwork kept it is unknown; it is looked for next time. */
	bci_message(err, err_size, "%s: Patchwork answered %ld (%s)", url, reply.status,
		    body_quoted);
	bci_patchwork_reply_clear(&reply);
	mark(pw, check, "unknown", NULL, note, sizeof(note));
	return -EIO;
}

int bci_patchwork_checks_flush(struct bci_patchwork *pw, unsigned *waiting, char *err,
			       size_t err_size)
{
	struct open_checks open = { 0 };
	int posted = 0, ret;
	size_t i;

	if (waiting)
		*waiting = 0;
	ret = bci_store_pw_checks_open(pw->store, pw->project->name, keep_check, &open, err,
				       err_size);
	if (ret < 0) {
		open_checks_free(&open);
		return ret;
	}
	for (i = 0; i < open.count; i++) {
		ret = post_one(pw, &open.checks[i], err, err_size);
		if (ret < 0)
			break;
		posted += ret;
	}
	if (ret < 0) {
		if (waiting)
			*waiting = (unsigned)(open.count - i);
		bci_patchwork_say(pw, "%s: %zu check(s) wait for the next poll", err,
				  open.count - i);
	}
	open_checks_free(&open);
	if (posted)
		bci_patchwork_say(pw, "%d check(s) posted", posted);
	return ret < 0 && !posted ? ret : posted;
}

int bci_patchwork_check(struct bci_patchwork *pw, int64_t series, const char *context,
			const char *state, const char *description, const char *target_url,
			char *err, size_t err_size)
{
	int ret;

	if (!context_ok(context)) {
		bci_message(err, err_size,
			    "context '%s': Patchwork takes a slug (letters, digits, '-', '_')",
			    context);
		return -EINVAL;
	}
	if (!state_ok(state)) {
		bci_message(err, err_size, "state '%s': pending, success, warning or fail", state);
		return -EINVAL;
	}
	if (target_url && strncmp(target_url, "http://", 7) && strncmp(target_url, "https://", 8)) {
		bci_message(err, err_size, "url '%s': an http:// or https:// URL", target_url);
		return -EINVAL;
	}
	ret = bci_store_pw_series_get(pw->store, pw->project->name, series, NULL, NULL, err,
				      err_size);
	if (ret < 0)
		return ret;
	if (!ret) {
		bci_message(err, err_size, "project %s has no series %lld picked up",
			    pw->project->name, (long long)series);
		return -ENOENT;
	}
	ret = bci_store_pw_check_queue(pw->store, pw->project->name, series, context, state,
				       description, target_url, err, err_size);
	if (ret < 0)
		return ret;
	if (!ret)
		bci_patchwork_say(pw, "series %lld: check %s %s is already there on every patch",
				  (long long)series, context, state);
	return bci_patchwork_checks_flush(pw, NULL, err, err_size);
}
