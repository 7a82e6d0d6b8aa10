// SPDX-License-Identifier: MIT
/*
 * One poll of a Patchwork project (patchwork.h, "poll.c"): the series
 * listing newest first down to the watermark, each new complete series
 * settled oldest first, the watermark moved up to just below the oldest
 * series still waiting (incomplete, or a fault to retry).
 */
#include "patchwork.h"

#include "../store/store.h"
#include "fsutil.h"
#include "message.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* At most this many pages are read in one poll: a project followed from far back needs first-series. */
#define MAX_PAGES 200

/* What an answer that is not a 2xx means, for the log. */
static void status_message(struct bci_patchwork *pw, const char *what,
			   const struct bci_patchwork_reply *reply, char *err, size_t err_size)
{
	char body[200] = "";

	if (reply->body)
		bci_quote(body, sizeof(body), reply->body, reply->len < 160 ? reply->len : 160);
	if (reply->status == 401 || reply->status == 403)
		bci_message(err, err_size,
			    "%s: %ld: Patchwork refuses the token of %s (%s)", what, reply->status,
			    pw->project->token_file, body);
	else
		bci_message(err, err_size, "%s: Patchwork answered %ld (%s)", what, reply->status,
			    body);
}

int bci_patchwork_check_rights(struct bci_patchwork *pw, char *err, size_t err_size)
{
	struct bci_patchwork_reply reply;
	char url[1400];
	int64_t *maintainers = NULL;
	size_t count = 0;
	bool maintainer = false;
	int ret;

	snprintf(url, sizeof(url), "%s/projects/%s/", bci_patchwork_client_api(pw->client),
		 pw->project->linkname);
	ret = bci_patchwork_request(pw->client, "GET", url, NULL, BCI_PATCHWORK_PAGE_LIMIT, &reply,
				    err, err_size);
	if (ret < 0)
		return ret;
	if (reply.status == 404) {
		bci_message(err, err_size, "%s: no project '%s' on %s", url, pw->project->linkname,
			    pw->project->url);
		bci_patchwork_reply_clear(&reply);
		return -ENOENT;
	}
	if (reply.status != 200) {
		status_message(pw, url, &reply, err, err_size);
		bci_patchwork_reply_clear(&reply);
		return -EIO;
	}
	ret = bci_patchwork_project_maintainers(reply.body, reply.len, &maintainers, &count, err,
						err_size);
	bci_patchwork_reply_clear(&reply);
	if (ret < 0)
		return ret;
	/*
	 * The API names no "me": a user may PATCH only their own profile, so an
	 * empty PATCH (it changes nothing) answers 200 for the token's own user
	 * and 403 for anyone else's; an unknown token is refused (401) first.
	 */
	for (size_t i = 0; i < count && !maintainer; i++) {
		snprintf(url, sizeof(url), "%s/users/%lld/", bci_patchwork_client_api(pw->client),
			 (long long)maintainers[i]);
		ret = bci_patchwork_request(pw->client, "PATCH", url, "{}", BCI_PATCHWORK_PAGE_LIMIT,
					    &reply, err, err_size);
		if (ret < 0)
			break;
		if (reply.status == 401) {
			status_message(pw, url, &reply, err, err_size);
			ret = -EACCES;
		}
		maintainer = reply.status == 200;
		bci_patchwork_reply_clear(&reply);
		if (ret < 0)
			break;
	}
	free(maintainers);
	if (ret < 0) {
		if (ret == -EACCES)
			bci_patchwork_say(pw, "%s", err);
		return ret;
	}
	if (!count) {
		/* No maintainer to compare with: whether the token is known is all that can be said. */
		snprintf(url, sizeof(url), "%s/users/?per_page=1",
			 bci_patchwork_client_api(pw->client));
		ret = bci_patchwork_request(pw->client, "GET", url, NULL, BCI_PATCHWORK_PAGE_LIMIT,
					    &reply, err, err_size);
		if (ret < 0)
			return ret;
		if (reply.status == 401 || reply.status == 403) {
			status_message(pw, url, &reply, err, err_size);
			bci_patchwork_say(pw, "%s", err);
			bci_patchwork_reply_clear(&reply);
			return -EACCES;
		}
		bci_patchwork_reply_clear(&reply);
	}
	if (!maintainer) {
		bci_message(err, err_size,
			    "the token of %s is no maintainer's of project %s: Patchwork will refuse"
			    " its checks (403); make its user a maintainer", pw->project->token_file,
			    pw->project->linkname);
		bci_patchwork_say(pw, "%s", err);
		return -EACCES;
	}
	pw->rights_checked = true;
	return 0;
}

/* ---- settling one series ---- */

struct newer {
	int64_t series;
	int version;
	int64_t newer_than_us;	/* a stored series of a higher version, or 0 */
	int64_t older[64];	/* stored "picked up" series of a lower version */
	size_t older_count;
};

static int series_same_name(const struct bci_store_pw_series *s, void *ctx)
{
	struct newer *n = ctx;

	if (s->series == n->series)
		return 0;
	if (s->version > n->version && !n->newer_than_us)
		n->newer_than_us = s->series;
	else if (s->version < n->version && !strcmp(s->state, "picked up") &&
		 n->older_count < sizeof(n->older) / sizeof(n->older[0]))
		n->older[n->older_count++] = s->series;
	return 0;
}

/* The series' folder and mbox: DATA/series/NAME/ID/series.mbox. */
static int mbox_path(struct bci_patchwork *pw, int64_t series, char *dir, char *path)
{
	if ((size_t)snprintf(dir, PATH_MAX, "%s/series/%s/%lld", pw->data_dir, pw->project->name,
			     (long long)series) >= PATH_MAX ||
	    (size_t)snprintf(path, PATH_MAX, "%s/series.mbox", dir) >= PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

static int record(struct bci_patchwork *pw, const struct bci_patchwork_series *s,
		  const char *state, const char *build, const char *mbox, int64_t superseded_by,
		  const char *note, const struct newer *newer, const char *target_url, char *err,
		  size_t err_size)
{
	struct bci_store_pw_series row = {
		.project = pw->project->name, .series = s->id, .name = s->name,
		.version = s->version, .submitter = s->submitter, .date = s->date,
		.message_id = s->message_id, .total = s->total, .state = state, .build = build,
		.mbox = mbox, .superseded_by = superseded_by, .note = note,
	};
	char why[300];
	int ret;

	if ((ret = bci_store_begin(pw->store, err, err_size)) < 0)
		return ret;
	if ((ret = bci_store_pw_series_add(pw->store, &row, err, err_size)) < 0)
		goto fail;
	for (size_t i = 0; i < s->patch_count; i++)
		if ((ret = bci_store_pw_patch_add(pw->store, pw->project->name, s->id, (int)i + 1,
						  s->patches[i], err, err_size)) < 0)
			goto fail;
	for (size_t i = 0; newer && i < newer->older_count; i++) {
		snprintf(why, sizeof(why), "superseded by series %lld (v%d)", (long long)s->id,
			 s->version);
		if ((ret = bci_store_pw_series_supersede(pw->store, pw->project->name,
							 newer->older[i], s->id, why, err,
							 err_size)) < 0)
			goto fail;
	}
	/* Where the build's clock starts (metrics): a series without a date has none. */
	if (!strcmp(state, "picked up") && build && s->complete >= 0 &&
	    (ret = bci_store_build_stage_put(pw->store, build, BCI_STAGE_SERIES, s->complete, 0,
					     err, err_size)) < 0)
		goto fail;
	if (!strcmp(state, "picked up") &&
	    (ret = bci_store_pw_check_queue(pw->store, pw->project->name, s->id,
					    BCI_PATCHWORK_CONTEXT_FAST, "pending",
					    "picked up by bootci: building", target_url, err,
					    err_size)) < 0)
		goto fail;
	return bci_store_commit(pw->store, err, err_size);
fail:
	bci_store_rollback(pw->store);
	return ret;
}

/*
 * Settles complete series @s: 1 picked up, 2 superseded, 3 skipped; -EAGAIN
 * (with @err) when a fault leaves it for the next poll; another -errno for
 * a store failure.
 */
static int settle(struct bci_patchwork *pw, const struct bci_patchwork_series *s, char *err,
		  size_t err_size)
{
	struct newer newer = { .series = s->id, .version = s->version };
	char dir[PATH_MAX], path[PATH_MAX], build[256], note[600], target[1400], quoted[120];
	const char *name = s->name ? s->name : "(no name)";
	long status = 0;
	int ret;

	bci_quote(quoted, sizeof(quoted), name, strlen(name));
	if (s->name && (ret = bci_store_pw_series_each(pw->store, pw->project->name, s->name,
						       s->submitter, series_same_name, &newer, err,
						       err_size)) < 0)
		return ret;
	if (newer.newer_than_us) {
		snprintf(note, sizeof(note), "superseded by series %lld, a newer version, already in",
			 (long long)newer.newer_than_us);
		if ((ret = record(pw, s, "superseded", NULL, NULL, newer.newer_than_us, note, NULL,
				  NULL, err, err_size)) < 0)
			return ret;
		bci_patchwork_say(pw, "series %lld '%s' v%d: %s: not built", (long long)s->id,
				  quoted, s->version, note);
		return 2;
	}
	if (!s->mbox || !s->patch_count) {
		snprintf(note, sizeof(note), "%s", !s->mbox ? "no mbox" : "no patches");
		goto skip;
	}
	if ((ret = mbox_path(pw, s->id, dir, path)) < 0 || (ret = bci_mkdir_p(dir, 0755)) < 0) {
		bci_message(err, err_size, "%s: %s", dir, bci_strerror(-ret));
		return ret;
	}
	ret = bci_patchwork_download(pw->client, s->mbox, path, pw->project->mbox_limit, &status,
				     err, err_size);
	if (ret == -EFBIG) {
		snprintf(note, sizeof(note), "its mbox is larger than mbox-limit (%llu bytes)",
			 pw->project->mbox_limit);
		goto skip;
	}
	if (ret < 0)
		return -EAGAIN;
	if (status == 404 || status == 410) {
		snprintf(note, sizeof(note), "no mbox (%s answered %ld)", s->mbox, status);
		goto skip;
	}
	if (status != 200) {
		bci_message(err, err_size, "series %lld: mbox %s: Patchwork answered %ld",
			    (long long)s->id, s->mbox, status);
		return -EAGAIN;
	}
	if ((ret = bci_patchwork_build_name(pw->project, s->id, build, sizeof(build))) < 0)
		return ret;
	if (pw->project->serve_url) {
		char *escaped = curl_easy_escape(NULL, build, 0);

		snprintf(target, sizeof(target), "%s/builds/%s", pw->project->serve_url,
			 escaped ? escaped : build);
		curl_free(escaped);
	}
	if ((ret = record(pw, s, "picked up", build, path, 0, NULL, &newer,
			  pw->project->serve_url ? target : NULL, err, err_size)) < 0)
		return ret;
	bci_patchwork_say(pw, "series %lld '%s' v%d (%zu patch%s) picked up: build %s, mbox %s",
			  (long long)s->id, quoted, s->version, s->patch_count,
			  s->patch_count == 1 ? "" : "es", build, path);
	for (size_t i = 0; i < newer.older_count; i++)
		bci_patchwork_say(pw, "series %lld superseded by series %lld '%s' v%d",
				  (long long)newer.older[i], (long long)s->id, quoted, s->version);
	return 1;
skip:
	if ((ret = record(pw, s, "skipped", NULL, NULL, 0, note, NULL, NULL, err, err_size)) < 0)
		return ret;
	bci_patchwork_say(pw, "series %lld '%s': %s: skipped, not built", (long long)s->id, quoted,
			  note);
	return 3;
}

static int known(const struct bci_store_pw_series *s, void *ctx)
{
	(void)s;
	(void)ctx;
	return 0;
}

/* ---- the listing ---- */

static int fetch_new(struct bci_patchwork *pw, int64_t watermark,
		     struct bci_patchwork_series **series, size_t *count, char *err,
		     size_t err_size)
{
	char url[2048];
	struct bci_patchwork_reply reply;
	int pages = 0, ret;

	snprintf(url, sizeof(url), "%s/series/?project=%s&order=-id&per_page=%d",
		 bci_patchwork_client_api(pw->client), pw->project->linkname,
		 BCI_PATCHWORK_PER_PAGE);
	for (;;) {
		size_t before = *count;
		bool below = false;

		ret = bci_patchwork_request(pw->client, "GET", url, NULL, BCI_PATCHWORK_PAGE_LIMIT,
					    &reply, err, err_size);
		if (ret < 0)
			return ret;
		if (reply.status != 200) {
			status_message(pw, url, &reply, err, err_size);
			ret = reply.status == 401 || reply.status == 403 ? -EACCES : -EIO;
			bci_patchwork_reply_clear(&reply);
			return ret;
		}
		ret = bci_patchwork_series_parse(reply.body, reply.len, series, count, err,
						 err_size);
		if (ret < 0) {
			char what[1200];

			snprintf(what, sizeof(what), "%s", err);
			bci_message(err, err_size, "%s: %s", url, what);
			bci_patchwork_reply_clear(&reply);
			return ret;
		}
		/* Newest first: below the watermark, the rest is settled. */
		for (size_t i = before; i < *count; i++)
			if ((*series)[i].id <= watermark)
				below = true;
		if (below || !reply.next[0]) {
			bci_patchwork_reply_clear(&reply);
			return 0;
		}
		if (++pages >= MAX_PAGES) {
			/*
			 * Settling these and moving the watermark above them would
			 * skip the older ones for good: nothing is taken instead.
			 */
			bci_message(err, err_size,
				    "more than %d pages of series above series %lld: set"
				    " first-series in %s to start nearer the present",
				    MAX_PAGES, (long long)watermark, BCI_PATCHWORK_CONFIG_FILE);
			bci_patchwork_reply_clear(&reply);
			return -E2BIG;
		}
		if (strncmp(reply.next, pw->project->url, strlen(pw->project->url))) {
			bci_message(err, err_size, "%s: its next page %s is not on %s", url,
				    reply.next, pw->project->url);
			bci_patchwork_reply_clear(&reply);
			return -EBADMSG;
		}
		snprintf(url, sizeof(url), "%s", reply.next);
		bci_patchwork_reply_clear(&reply);
	}
}

static int by_id(const void *a, const void *b)
{
	const struct bci_patchwork_series *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/*
 * Patchwork could not be listed: the series picked up before are built and
 * the tiers looked at all the same (their checks wait in the store). @ret
 * is the fault's, returned with its message left in the caller's @err.
 */
static int without_listing(struct bci_patchwork *pw, struct bci_patchwork_poll_counts *counts,
			   int ret)
{
	char err[1024];

	if (!pw->builds_apart &&
	    bci_patchwork_build_pending(pw, &counts->built, &counts->build_failed, err,
					sizeof(err)) == -EINTR)
		return -EINTR;
	bci_patchwork_tiers(pw, &counts->tier_checks, err, sizeof(err));
	return ret;
}

int bci_patchwork_poll(struct bci_patchwork *pw, struct bci_patchwork_poll_counts *counts,
		       char *err, size_t err_size)
{
	struct bci_patchwork_series *series = NULL;
	size_t count = 0;
	int64_t watermark, oldest_waiting = 0, highest = 0;
	bool fault = false;
	char fault_err[1500] = "";
	int ret;

	memset(counts, 0, sizeof(*counts));
	if (!pw->rights_checked) {
		ret = bci_patchwork_check_rights(pw, err, err_size);
		/* Without rights series are still picked up; their checks wait in the store. */
		if (ret < 0 && ret != -EACCES) {
			bci_patchwork_say(pw, "%s: nothing polled", err);
			return without_listing(pw, counts, ret);
		}
		pw->rights_checked = true;
	}
	if ((ret = bci_store_pw_watermark_get(pw->store, pw->project->name, &watermark, err,
					      err_size)) < 0)
		return ret;
	if (watermark < pw->project->first_series - 1)
		watermark = pw->project->first_series - 1;
	highest = watermark;
	ret = fetch_new(pw, watermark, &series, &count, err, err_size);
	if (ret < 0) {
		bci_patchwork_say(pw, "%s: nothing new taken; next poll retries", err);
		bci_patchwork_series_free_all(series, count);
		return without_listing(pw, counts, ret);
	}
	qsort(series, count, sizeof(*series), by_id);
	for (size_t i = 0; i < count; i++) {
		const struct bci_patchwork_series *s = &series[i];

		if (s->id <= watermark || (i && s->id == series[i - 1].id))
			continue;
		counts->seen++;
		if (s->id > highest)
			highest = s->id;
		ret = bci_store_pw_series_get(pw->store, pw->project->name, s->id, known, NULL, err,
					      err_size);
		if (ret < 0)
			goto out;
		if (ret > 0)
			continue;
		if (!s->received_all) {
			bci_patchwork_say(pw, "series %lld: %zu of %d patch(es) received: it waits",
					  (long long)s->id, s->patch_count, s->total);
			counts->waiting++;
			if (!oldest_waiting)
				oldest_waiting = s->id;
			continue;
		}
		if (fault) {
			counts->waiting++;
			continue;
		}
		ret = settle(pw, s, err, err_size);
		if (ret == -EAGAIN) {
			bci_patchwork_say(pw, "series %lld: %s: next poll retries", (long long)s->id,
					  err);
			snprintf(fault_err, sizeof(fault_err), "%s", err);
			fault = true;
			counts->waiting++;
			if (!oldest_waiting)
				oldest_waiting = s->id;
			continue;
		}
		if (ret < 0)
			goto out;
		if (ret == 1)
			counts->picked++;
		else if (ret == 2)
			counts->superseded++;
		else
			counts->skipped++;
	}
	{
		int64_t mark = oldest_waiting ? oldest_waiting - 1 : highest;

		if (mark > watermark &&
		    (ret = bci_store_pw_watermark_put(pw->store, pw->project->name, mark, err,
						      err_size)) < 0)
			goto out;
	}
	/*
	 * The pending checks of the series picked up go out now, not after
	 * their builds: a build takes as long as the kernel's.
	 */
	if (!fault && counts->picked) {
		ret = bci_patchwork_checks_flush(pw, &counts->checks_waiting, err, err_size);
		if (ret > 0)
			counts->checks_posted += (unsigned)ret;
	}
	/* A build fault is said by it and retried at the next poll; the checks go out still. */
	if (!pw->builds_apart &&
	    bci_patchwork_build_pending(pw, &counts->built, &counts->build_failed, err,
					err_size) == -EINTR) {
		ret = -EINTR;
		goto out;
	}
	/* Said by it when it fails; the next poll looks again. */
	bci_patchwork_tiers(pw, &counts->tier_checks, err, err_size);
	if (!fault) {
		ret = bci_patchwork_checks_flush(pw, &counts->checks_waiting, err, err_size);
		if (ret >= 0) {
			counts->checks_posted += (unsigned)ret;
			ret = 0;
		} else {
			/* Said by the flush; the checks stay queued. */
			ret = 0;
		}
	} else {
		bci_message(err, err_size, "%s", fault_err);
		ret = -EAGAIN;
	}
out:
	bci_patchwork_series_free_all(series, count);
	return ret;
}
