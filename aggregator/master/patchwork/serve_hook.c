// SPDX-License-Identifier: MIT
/*
 * The poller inside `bootci-aggregator serve` (patchwork.h, "serve_hook.c"):
 * one thread (ticker.h), its own store connection, each project polled when
 * its interval has gone by; and the builder, another thread with its own store
 * connection, that runs the build command on the series picked up (woken by
 * a poll that picked one up, else once per interval for a build to retry).
 * A build as long as a kernel's then never holds a poll back: a series is
 * noticed, and its pending checks posted, within a poll interval of its
 * completion even while another series builds. DATA/patchwork.conf is read
 * at start; a change takes a restart of serve.
 */
#include "patchwork.h"

#include "../store/store.h"
#include "config.h"
#include "message.h"
#include "ticker.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct bci_patchwork_server {
	struct bci_patchwork_config *config;
	struct bci_patchwork *projects;		/* one per config project */
	struct bci_patchwork *builders;		/* the same, the builder's (its store) */
	time_t *next_poll;
	size_t count;
	struct bci_store *store;
	struct bci_store *builder_store;
	FILE *log;
	char *data_dir;
	unsigned long poll_override;		/* 0: each project's own */
	atomic_bool stop;			/* serve stops: a poll or a build in flight ends */
	struct bci_ticker *poller;
	struct bci_ticker *builder;		/* NULL: no project builds */
	unsigned long build_interval;		/* the builder's pause: the shortest poll */
};

static time_t now_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void poll_project(struct bci_patchwork_server *s, size_t i)
{
	struct bci_patchwork_poll_counts counts;
	char err[2048];
	unsigned long interval = s->poll_override ? s->poll_override
						  : s->projects[i].project->poll;

	if (bci_patchwork_poll(&s->projects[i], &counts, err, sizeof(err)) >= 0 &&
	    (counts.seen || counts.checks_posted || counts.checks_waiting || counts.built ||
	     counts.build_failed || counts.tier_checks))
		bci_patchwork_say(&s->projects[i],
				  "polled: %u new, %u picked up, %u waiting, %u superseded,"
				  " %u skipped; %u built, %u failed to build; %u check(s) posted,"
				  " %u waiting", counts.seen, counts.picked, counts.waiting,
				  counts.superseded, counts.skipped, counts.built, counts.build_failed,
				  counts.checks_posted, counts.checks_waiting);
	s->next_poll[i] = now_monotonic() + (time_t)interval;
	if (counts.picked && s->builder)
		bci_ticker_wake(s->builder);
}

/*
 * The builder: every project's series picked up and not built yet, then
 * their checks posted; then each project's bisections moved on (bisect.c).
 */
static double build_round(void *arg, const atomic_bool *stop)
{
	struct bci_patchwork_server *s = arg;

	for (size_t i = 0; i < s->count && !atomic_load(stop) && !atomic_load(&s->stop); i++) {
		struct bci_patchwork *pw = &s->builders[i];
		unsigned built = 0, failed = 0;
		char err[2048];

		unsigned bisected = 0;

		if (!pw->project->build_command)
			continue;
		/* Said by it when it fails; the next round retries. */
		if (bci_patchwork_build_pending(pw, &built, &failed, err, sizeof(err)) >= 0 &&
		    (built || failed)) {
			bci_patchwork_say(pw, "builder: %u built, %u failed to build", built, failed);
			/* A failed series' check goes out now; a built one's wait for its tiers. */
			if (failed)
				bci_patchwork_checks_flush(pw, NULL, err, sizeof(err));
		}
		if (atomic_load(stop) || atomic_load(&s->stop))
			break;
		/* The bisections: a step's candidate built, its runs judged, an answer's check posted. */
		if (bci_patchwork_bisect_round(pw, &bisected, err, sizeof(err)) >= 0 && bisected)
			bci_patchwork_checks_flush(pw, NULL, err, sizeof(err));
	}
	return (double)s->build_interval;
}

/* The poller: every project whose interval has gone by; the pause lasts until the next one's. */
static double poll_round(void *arg, const atomic_bool *stop)
{
	struct bci_patchwork_server *s = arg;
	time_t now = now_monotonic(), soonest = now + 3600;

	for (size_t i = 0; i < s->count && !atomic_load(stop); i++) {
		if (s->next_poll[i] <= now)
			poll_project(s, i);
		if (s->next_poll[i] < soonest)
			soonest = s->next_poll[i];
	}
	now = now_monotonic();
	return soonest > now ? (double)(soonest - now) : 1.0;
}

void bci_patchwork_server_stop(struct bci_patchwork_server *s)
{
	if (!s)
		return;
	atomic_store(&s->stop, true);
	bci_ticker_stop(s->poller);
	bci_ticker_stop(s->builder);
	for (size_t i = 0; s->projects && i < s->count; i++)
		bci_patchwork_close(&s->projects[i]);
	for (size_t i = 0; s->builders && i < s->count; i++)
		bci_patchwork_close(&s->builders[i]);
	free(s->projects);
	free(s->builders);
	free(s->next_poll);
	bci_store_close(s->store);
	bci_store_close(s->builder_store);
	bci_patchwork_config_free(s->config);
	free(s->data_dir);
	free(s);
}

int bci_patchwork_server_start(const char *data_dir, const char *store_url, FILE *log,
			       struct bci_patchwork_server **out, char *err, size_t err_size)
{
	struct bci_patchwork_server *s;
	const char *poll = getenv("BOOTCI_PATCHWORK_POLL");
	char path[PATH_MAX];
	int ret;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	atomic_init(&s->stop, false);
	s->log = log;
	if (poll && *poll && (bci_parse_seconds(poll, &s->poll_override) < 0 ||
			      s->poll_override > 86400)) {
		bci_message(err, err_size, "BOOTCI_PATCHWORK_POLL=%s: a duration up to 1 day", poll);
		ret = -EINVAL;
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/%s", data_dir, BCI_PATCHWORK_CONFIG_FILE);
	ret = bci_patchwork_config_load(path, &s->config, err, err_size);
	if (ret == -ENOENT) {
		if (log)
			fprintf(log, "patchwork: no %s: no Patchwork project is followed\n", path);
		bci_patchwork_server_stop(s);
		return 0;
	}
	if (ret < 0)
		goto fail;
	s->count = s->config->project_count;
	if (!(s->data_dir = strdup(data_dir)) ||
	    !(s->projects = calloc(s->count + 1, sizeof(*s->projects))) ||
	    !(s->builders = calloc(s->count + 1, sizeof(*s->builders))) ||
	    !(s->next_poll = calloc(s->count + 1, sizeof(*s->next_poll)))) {
		ret = -ENOMEM;
		goto fail;
	}
	if ((ret = bci_store_open(store_url, data_dir, &s->store, err, err_size)) < 0)
		goto fail;
	for (size_t i = 0; i < s->count; i++) {
		const struct bci_patchwork_project *project = &s->config->projects[i];

		if ((ret = bci_patchwork_open(&s->projects[i], project, s->store, s->data_dir, log,
					      err, err_size)) < 0)
			goto fail;
		s->projects[i].stop = &s->stop;
		s->projects[i].builds_apart = project->build_command != NULL;
		if (!project->build_command)
			continue;
		if (!s->builder_store &&
		    (ret = bci_store_open(store_url, data_dir, &s->builder_store, err, err_size)) < 0)
			goto fail;
		if ((ret = bci_patchwork_open(&s->builders[i], project, s->builder_store,
					      s->data_dir, log, err, err_size)) < 0)
			goto fail;
		s->builders[i].stop = &s->stop;
	}
	/*
	 * The token's rights are checked by each project's first poll, at once
	 * in the thread: a Patchwork slow to answer does not hold serve's start.
	 */
	for (size_t i = 0; i < s->count; i++)
		bci_patchwork_say(&s->projects[i], "following project %s on %s, a poll every %lu s",
				  s->config->projects[i].linkname, s->config->projects[i].url,
				  s->poll_override ? s->poll_override : s->config->projects[i].poll);
	/* The builder first: the poller wakes it. */
	if (s->builder_store) {
		s->build_interval = 86400;
		for (size_t i = 0; i < s->count; i++) {
			unsigned long every = s->poll_override ? s->poll_override
							       : s->projects[i].project->poll;

			if (every < s->build_interval)
				s->build_interval = every;
		}
		if ((ret = bci_ticker_start("Patchwork builder", build_round, s, &s->builder, err,
					    err_size)) < 0)
			goto fail;
	}
	if ((ret = bci_ticker_start("Patchwork poller", poll_round, s, &s->poller, err,
				    err_size)) < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	bci_patchwork_server_stop(s);
	return ret;
}
