// SPDX-License-Identifier: MIT
/*
 * DATA/incoming's upkeep (internal.h): an upload cut short and never resumed
 * would keep its bytes for ever, across restarts. Once its .part has not been
 * written for --incoming-max-age seconds it is removed, at start and then
 * every quarter of that age (at most hourly), each removal said in the log.
 * An upload in progress is never removed: the sweep takes the run as an
 * upload does (serve_busy_claim()), so the two exclude each other. What the
 * machine still has is uploaded afresh.
 */
#include "internal.h"
#include "spool.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int expire_one(void *ctx, const char *machine, const char *run_id, uint64_t size,
		      uint64_t age)
{
	struct bci_server *s = ctx;
	int removed;

	if (!serve_busy_claim(s, machine, run_id))
		return 0;	/* being uploaded right now: not cut any more */
	removed = bci_spool_expire(&s->spool, machine, run_id, time(NULL),
				   s->config.incoming_max_age, &size);
	serve_busy_release(s, machine, run_id);
	if (removed > 0) {
		pthread_mutex_lock(&s->lock);
		fprintf(s->config.log,
			"serve: incoming/%s/%s.part: expired, removed (%llu bytes of a cut upload"
			" not written for %llu s, past --incoming-max-age %llu)\n",
			machine, run_id, (unsigned long long)size, (unsigned long long)age,
			(unsigned long long)s->config.incoming_max_age);
		fflush(s->config.log);
		pthread_mutex_unlock(&s->lock);
	}
	return 0;
}

static void expire_all(struct bci_server *s)
{
	bci_spool_each_expired(&s->spool, time(NULL), s->config.incoming_max_age, expire_one, s);
}

/* Seconds between two sweeps: a quarter of the age, from 1 s to an hour. */
static time_t sweep_interval(const struct bci_server *s)
{
	uint64_t every = s->config.incoming_max_age / 4;

	return every < 1 ? 1 : every > 3600 ? 3600 : (time_t)every;
}

static void *expiry_main(void *arg)
{
	struct bci_server *s = arg;
	struct timespec next;

	pthread_mutex_lock(&s->lock);
	while (!s->expiry_stopping) {
		clock_gettime(CLOCK_MONOTONIC, &next);
		next.tv_sec += sweep_interval(s);
		while (!s->expiry_stopping &&
		       pthread_cond_timedwait(&s->expiry_wake, &s->lock, &next) != ETIMEDOUT)
			;
		if (s->expiry_stopping)
			break;
		pthread_mutex_unlock(&s->lock);
		expire_all(s);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int serve_incoming_start(struct bci_server *s, char *err, size_t err_size)
{
	pthread_condattr_t attr;
	int ret;

	expire_all(s);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	ret = -pthread_cond_init(&s->expiry_wake, &attr);
	pthread_condattr_destroy(&attr);
	if (ret == 0 && (ret = -pthread_create(&s->expiry, NULL, expiry_main, s)) < 0)
		pthread_cond_destroy(&s->expiry_wake);
	if (ret < 0) {
		snprintf(err, err_size, "cannot start the expiry of cut uploads: %s", strerror(-ret));
		return ret;
	}
	s->expiry_running = true;
	return 0;
}

void serve_incoming_stop(struct bci_server *s)
{
	if (!s->expiry_running)
		return;
	pthread_mutex_lock(&s->lock);
	s->expiry_stopping = true;
	pthread_cond_broadcast(&s->expiry_wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->expiry, NULL);
	pthread_cond_destroy(&s->expiry_wake);
	s->expiry_running = false;
}
