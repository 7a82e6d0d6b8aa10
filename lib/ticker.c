// SPDX-License-Identifier: MIT
/* A thread running one piece of work again and again (ticker.h). */
#include "ticker.h"

#include "message.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAUSE_MAX (24.0 * 3600.0)

struct bci_ticker {
	bci_ticker_work work;
	void *ctx;
	pthread_mutex_t lock;		/* woken, the wait */
	pthread_cond_t wake;
	bool woken;
	atomic_bool stopping;
	pthread_t thread;
};

static void *ticker_main(void *arg)
{
	struct bci_ticker *t = arg;

	while (!atomic_load(&t->stopping)) {
		double pause = t->work(t->ctx, &t->stopping);
		struct timespec deadline;

		if (!(pause >= 0))	/* also NaN */
			pause = 0;
		if (pause > PAUSE_MAX)
			pause = PAUSE_MAX;
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += (time_t)pause;
		deadline.tv_nsec += (long)((pause - (double)(time_t)pause) * 1e9);
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&t->lock);
		while (!atomic_load(&t->stopping) && !t->woken &&
		       pthread_cond_timedwait(&t->wake, &t->lock, &deadline) == 0)
			;
		t->woken = false;
		pthread_mutex_unlock(&t->lock);
	}
	return NULL;
}

int bci_ticker_start(const char *name, bci_ticker_work work, void *ctx, struct bci_ticker **out,
		     char *err, size_t err_size)
{
	struct bci_ticker *t;
	pthread_condattr_t attr;
	int ret;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->work = work;
	t->ctx = ctx;
	atomic_init(&t->stopping, false);
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&t->wake, &attr);
	pthread_condattr_destroy(&attr);
	ret = pthread_create(&t->thread, NULL, ticker_main, t);
	if (ret) {
		bci_message(err, err_size, "cannot start the %s's thread: %s", name, strerror(ret));
		pthread_cond_destroy(&t->wake);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return -ret;
	}
	*out = t;
	return 0;
}

void bci_ticker_wake(struct bci_ticker *t)
{
	pthread_mutex_lock(&t->lock);
	t->woken = true;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
}

void bci_ticker_stop(struct bci_ticker *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	atomic_store(&t->stopping, true);
	pthread_cond_broadcast(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->wake);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
