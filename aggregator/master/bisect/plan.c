// SPDX-License-Identifier: MIT
/* The next step of a bisection (bisect.h): git bisect's choice, skip included. */
#include "bisect.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static void say(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!why || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
}

enum bci_bisect_next bci_bisect_plan(int patches, const struct bci_bisect_known *steps,
				     size_t count, int max_steps, int *try, char *why,
				     size_t why_size)
{
	int good = 0, bad = patches, best = -1;

	for (size_t i = 0; i < count; i++) {
		if (steps[i].verdict == BCI_BISECT_FLAKY) {
			*try = steps[i].patches;
			say(why, why_size, "the regression came and went with %d change(s) applied:"
			    " flaky", steps[i].patches);
			return BCI_BISECT_NOT_REPRODUCED;
		}
		if (steps[i].verdict == BCI_BISECT_GOOD && steps[i].patches > good)
			good = steps[i].patches;
		if (steps[i].verdict == BCI_BISECT_BAD && steps[i].patches < bad)
			bad = steps[i].patches;
	}
	if (good >= bad) {
		/* A later count good, an earlier one bad: the regression is not one change's. */
		*try = bad;
		say(why, why_size, "good with %d change(s) applied, bad with %d: not reproduced",
		    good, bad);
		return BCI_BISECT_NOT_REPRODUCED;
	}
	if (bad - good == 1) {
		*try = bad;
		say(why, why_size, "change %d is the first bad one", bad);
		return BCI_BISECT_FOUND;
	}
	for (int k = good + 1; k < bad; k++) {
		bool tried = false;
		int twice_distance, best_distance;

		for (size_t i = 0; i < count; i++)
			tried |= steps[i].patches == k;
		if (tried)
			continue;
		/* Distances to the middle, doubled: whole numbers; the lower count on a tie. */
		twice_distance = 2 * k - good - bad;
		twice_distance = twice_distance < 0 ? -twice_distance : twice_distance;
		best_distance = 2 * best - good - bad;
		best_distance = best_distance < 0 ? -best_distance : best_distance;
		if (best < 0 || twice_distance < best_distance)
			best = k;
	}
	if (best < 0) {
		*try = bad;
		say(why, why_size, "the first bad change is one of %d to %d: the candidates between"
		    " did not build", good + 1, bad);
		return BCI_BISECT_INCONCLUSIVE;
	}
	if ((int)count >= max_steps) {
		*try = bad;
		say(why, why_size, "the first bad change is one of %d to %d: the step limit was"
		    " reached", good + 1, bad);
		return BCI_BISECT_INCONCLUSIVE;
	}
	*try = best;
	say(why, why_size, "try %d change(s) (good with %d)", best, good);
	return BCI_BISECT_TRY;
}
