// SPDX-License-Identifier: MIT
/* lib/ticker.c: runs, pauses, wakes and stops. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ticker.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct work {
	atomic_int runs;
	double pause;
	atomic_bool saw_stop;		/* the flag was true inside a run */
	atomic_bool in_run;
	double hold;			/* seconds a run lasts, polling the stop flag */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double work_run(void *arg, const atomic_bool *stop)
{
	struct work *w = arg;
	double until = now() + w->hold;

	atomic_store(&w->in_run, true);
	while (now() < until && !atomic_load(stop))
		usleep(1000);
	if (atomic_load(stop))
		atomic_store(&w->saw_stop, true);
	atomic_fetch_add(&w->runs, 1);
	atomic_store(&w->in_run, false);
	return w->pause;
}

/* Waits up to @seconds for @w to have run @n times. */
static int runs_reach(struct work *w, int n, double seconds)
{
	double until = now() + seconds;

	while (atomic_load(&w->runs) < n && now() < until)
		usleep(1000);
	return atomic_load(&w->runs);
}

static void first_run_at_once_then_the_pause(void **state)
{
	struct work w = { .pause = 0.2 };
	struct bci_ticker *t;
	char err[256];
	double started = now();

	(void)state;
	assert_int_equal(bci_ticker_start("test", work_run, &w, &t, err, sizeof(err)), 0);
	assert_int_equal(runs_reach(&w, 1, 30), 1);
	/* The second run waits for the pause, then comes. */
	assert_int_equal(runs_reach(&w, 3, 30), 3);
	assert_true(now() - started >= 0.4);
	bci_ticker_stop(t);
}

static void a_wake_ends_a_long_pause(void **state)
{
	struct work w = { .pause = 3600 };
	struct bci_ticker *t;
	char err[256];
	double woken;

	(void)state;
	assert_int_equal(bci_ticker_start("test", work_run, &w, &t, err, sizeof(err)), 0);
	assert_int_equal(runs_reach(&w, 1, 30), 1);
	usleep(50000);
	assert_int_equal(atomic_load(&w.runs), 1);
	woken = now();
	bci_ticker_wake(t);
	assert_int_equal(runs_reach(&w, 2, 30), 2);
	assert_true(now() - woken < 60);	/* not the hour's pause */
	bci_ticker_stop(t);
	assert_int_equal(atomic_load(&w.runs), 2);
}

static void a_wake_during_a_run_is_not_lost(void **state)
{
	struct work w = { .pause = 3600, .hold = 0.3 };
	struct bci_ticker *t;
	char err[256];

	(void)state;
	assert_int_equal(bci_ticker_start("test", work_run, &w, &t, err, sizeof(err)), 0);
	while (!atomic_load(&w.in_run))
		usleep(1000);
	bci_ticker_wake(t);
	/* The run in flight ends, and the next follows without the hour's pause. */
	assert_int_equal(runs_reach(&w, 2, 30), 2);
	bci_ticker_stop(t);
}

static void stop_ends_a_pause_and_a_run_at_once(void **state)
{
	struct work w = { .pause = 3600 };
	struct bci_ticker *t;
	char err[256];
	double asked;

	(void)state;
	assert_int_equal(bci_ticker_start("test", work_run, &w, &t, err, sizeof(err)), 0);
	assert_int_equal(runs_reach(&w, 1, 30), 1);
	asked = now();
	bci_ticker_stop(t);
	assert_true(now() - asked < 60);	/* not the hour's pause */
	assert_int_equal(atomic_load(&w.runs), 1);

	/* A run of an hour sees the flag and gives up; stop waits for it to return. */
	memset(&w, 0, sizeof(w));
	w.pause = 3600;
	w.hold = 3600;
	assert_int_equal(bci_ticker_start("test", work_run, &w, &t, err, sizeof(err)), 0);
	while (!atomic_load(&w.in_run))
		usleep(1000);
	asked = now();
	bci_ticker_stop(t);
	assert_true(now() - asked < 60);	/* not the hour's run */
	assert_true(atomic_load(&w.saw_stop));
	assert_int_equal(atomic_load(&w.runs), 1);
}

static void bad_pauses_are_none(void **state)
{
	struct work w = { .pause = -5 };
	struct bci_ticker *t;
	char err[256];

	(void)state;
	assert_int_equal(bci_ticker_start("test", work_run, &w, &t, err, sizeof(err)), 0);
	assert_true(runs_reach(&w, 20, 30) >= 20);
	bci_ticker_stop(t);
	bci_ticker_stop(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_run_at_once_then_the_pause),
		cmocka_unit_test(a_wake_ends_a_long_pause),
		cmocka_unit_test(a_wake_during_a_run_is_not_lost),
		cmocka_unit_test(stop_ends_a_pause_and_a_run_at_once),
		cmocka_unit_test(bad_pauses_are_none),
	};

	return cmocka_run_group_tests_name("ticker", tests, NULL, NULL);
}
