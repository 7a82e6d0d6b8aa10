/* SPDX-License-Identifier: MIT */
/*
 * A thread that runs one piece of work again and again, with a pause between
 * runs that the work itself chooses, until it is stopped: serve's scheduler,
 * its Patchwork poller and builder and its mail sender are each one.
 *
 * The work runs without any lock of the ticker's held, so it may block on
 * the network or a child process. bci_ticker_wake() ends the pause at once (a
 * wake during a run makes the next pause none), bci_ticker_stop() ends it for
 * good: it raises the stop flag, wakes the thread and waits for the run in
 * flight to return. Work that can take long reads the flag it is given (or
 * hands it to code that takes a const atomic_bool *) and gives up early,
 * leaving what it did not finish for the next start. Pauses are measured on
 * CLOCK_MONOTONIC: a change of the wall clock neither stretches nor cuts one.
 */
#ifndef BCI_TICKER_H
#define BCI_TICKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct bci_ticker;

/*
 * One run of the work, on the ticker's thread; @stop turns true when the
 * ticker is being stopped. Returns the pause before the next run, in seconds
 * (0: at once; a day at most).
 */
typedef double (*bci_ticker_work)(void *ctx, const atomic_bool *stop);

/*
 * Starts the thread; its first run is at once. 0, or -errno with @err set
 * (naming @name, what the thread is for) and *@out NULL.
 */
int bci_ticker_start(const char *name, bci_ticker_work work, void *ctx, struct bci_ticker **out,
		     char *err, size_t err_size);

/* Ends the current pause (or the next, when the work is running). Any thread. */
void bci_ticker_wake(struct bci_ticker *t);

/* Raises the stop flag, wakes the thread, waits for it and frees @t. NULL is nothing. */
void bci_ticker_stop(struct bci_ticker *t);

#endif
