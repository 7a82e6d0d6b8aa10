// SPDX-License-Identifier: MIT
/*
 * A build's way from the mail to the reply (report.h, "stages"): the times
 * the store keeps of each stage (store.h, struct bci_store_build_times) in
 * one timeline, where its clock starts, the time each stage took, and the
 * timeline as a table of the build's matrix page. The metrics (metrics.c)
 * measure their objectives from the same start and summarise the same
 * stages.
 */
#include "report.h"
#include "../store/store.h"
#include "strv.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

static const struct {
	const char *key;	/* JSON's name */
	const char *label;	/* what happened */
	const char *took;	/* what the time before it went to */
} stages[BCI_STAGE_COUNT] = {
	[BCI_AT_SERIES] = { "series", "series complete on Patchwork (its last patch's date)", NULL },
	[BCI_AT_NOTICED] = { "noticed", "picked up by the master's poll",
			     "waiting for Patchwork's poll" },
	[BCI_AT_PENDING] = { "pending", "bootci-fast pending on every patch", "posting pending" },
	[BCI_AT_BUILD_STARTED] = { "build_started", "build command started",
				   "waiting for the builder" },
	[BCI_AT_BUILD_ENDED] = { "build_ended", "build command ended", "build" },
	[BCI_AT_REGISTERED] = { "registered", "registered, fast tier queued", "publishing" },
	[BCI_AT_FIRST_BOOT] = { "first_boot", "first job handed out to a machine",
				"queue (waiting for a machine)" },
	[BCI_AT_TESTS_STARTED] = { "tests_started", "first fast-tier run started (machine's clock)",
				   "boot" },
	[BCI_AT_TESTS_ENDED] = { "tests_ended", "last fast-tier run ended (machine's clock)",
				 "tests" },
	[BCI_AT_LAST_RESULT] = { "last_result", "last fast-tier run uploaded", "upload" },
	[BCI_AT_VERDICT] = { "verdict", "bootci-fast verdict queued (the fast report)", "report" },
	[BCI_AT_VERDICT_POSTED] = { "verdict_posted", "bootci-fast verdict on every patch",
				    "posting the verdict" },
	[BCI_AT_REPLY_QUEUED] = { "reply_queued", "reply queued (every tier's jobs ended)",
				  "the rest of the build's jobs, then the report" },
	[BCI_AT_REPLY_SENT] = { "reply_sent", "reply accepted by the SMTP server", "mail" },
};

const char *bci_stage_key(enum bci_stage stage)
{
	return stage < BCI_STAGE_COUNT ? stages[stage].key : "";
}

const char *bci_stage_label(enum bci_stage stage)
{
	return stage < BCI_STAGE_COUNT ? stages[stage].label : "";
}

const char *bci_stage_took_label(enum bci_stage stage)
{
	return stage < BCI_STAGE_COUNT && stages[stage].took ? stages[stage].took : "";
}

void bci_stages_from_times(const struct bci_store_build_times *t, struct bci_stages *s)
{
	double *at = s->at;

	at[BCI_AT_SERIES] = t->series;
	at[BCI_AT_NOTICED] = t->noticed;
	at[BCI_AT_PENDING] = t->pending;
	at[BCI_AT_BUILD_STARTED] = t->build_started;
	at[BCI_AT_BUILD_ENDED] = t->build_ended;
	at[BCI_AT_REGISTERED] = t->registered;
	at[BCI_AT_FIRST_BOOT] = t->first_boot;
	at[BCI_AT_TESTS_STARTED] = t->tests_started;
	at[BCI_AT_TESTS_ENDED] = t->tests_ended;
	at[BCI_AT_LAST_RESULT] = t->fast_last_result;
	at[BCI_AT_VERDICT] = t->verdict;
	at[BCI_AT_VERDICT_POSTED] = t->verdict_posted;
	at[BCI_AT_REPLY_QUEUED] = t->reply_queued;
	at[BCI_AT_REPLY_SENT] = t->reply_sent;
	for (int i = 0; i < BCI_STAGE_COUNT; i++)
		if (!(at[i] >= 0))
			at[i] = -1;
	/*
	 * A series' date is its sender's clock (Patchwork keeps the mails'
	 * Date): one ahead of the master's would have the series complete after
	 * the master picked it up. The clock then starts at the pick-up.
	 */
	if (at[BCI_AT_SERIES] >= 0 && at[BCI_AT_NOTICED] >= 0 &&
	    at[BCI_AT_SERIES] > at[BCI_AT_NOTICED])
		at[BCI_AT_SERIES] = at[BCI_AT_NOTICED];
	/* The runs are only the fast tier's once its jobs have all ended. */
	if (t->jobs_open || !t->runs)
		at[BCI_AT_LAST_RESULT] = at[BCI_AT_TESTS_ENDED] = -1;
}

int bci_stages_from_series(const struct bci_stages *s)
{
	return s->at[BCI_AT_SERIES] >= 0;
}

double bci_stages_start(const struct bci_stages *s)
{
	return bci_stages_from_series(s) ? s->at[BCI_AT_SERIES] : s->at[BCI_AT_REGISTERED];
}

double bci_stages_took(const struct bci_stages *s, enum bci_stage stage, bool *known)
{
	*known = false;
	if (stage >= BCI_STAGE_COUNT || s->at[stage] < 0)
		return 0;
	for (int i = (int)stage - 1; i >= 0; i--)
		if (s->at[i] >= 0) {
			*known = true;
			return s->at[stage] - s->at[i];
		}
	return 0;
}

/* Seconds as a person reads them (report.h), a sign when negative. */
void bci_duration_text(struct bci_str *b, double seconds)
{
	double magnitude = seconds < 0 ? -seconds : seconds;
	const char *sign = seconds < 0 ? "-" : "";

	if (magnitude < 120)
		bci_str_appendf(b, "%s%.0f s", sign, magnitude);
	else if (magnitude < 2 * 3600)
		bci_str_appendf(b, "%s%.0f min", sign, magnitude / 60);
	else
		bci_str_appendf(b, "%s%.1f h", sign, magnitude / 3600);
}

int bci_stages_html(struct bci_str *b, const struct bci_stages *s, double objective)
{
	double start = bci_stages_start(s);

	bci_str_appendf(b, "<h2>from the mail to the reply</h2>\n<p>");
	if (bci_stages_from_series(s))
		bci_str_appendf(b, "The clock starts when the series was complete on Patchwork.");
	else
		bci_str_appendf(b, "Published by hand: the clock starts at the build's registration.");
	bci_str_appendf(b, " The fast tier's objective: %.0f min.</p>\n<table id=\"stages\"><tr>"
			   "<th>stage</th><th>at (UTC)</th><th>since the start</th><th>took</th>"
			   "<th>spent on</th></tr>\n", objective / 60);
	for (int i = 0; i < BCI_STAGE_COUNT; i++) {
		char when[32];
		time_t t;
		struct tm tm;
		bool known;
		double took;

		if (s->at[i] < 0)
			continue;
		t = (time_t)s->at[i];
		if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
			snprintf(when, sizeof(when), "%.0f", s->at[i]);
		bci_str_appendf(b, "<tr class=\"stage\" data-stage=\"%s\"><td>%s</td><td>%s</td><td>",
				stages[i].key, stages[i].label, when);
		bci_duration_text(b, s->at[i] - start);
		bci_str_appendf(b, "</td><td>");
		took = bci_stages_took(s, (enum bci_stage)i, &known);
		if (known)
			bci_duration_text(b, took);
		bci_str_appendf(b, "</td><td>%s</td></tr>\n", known ? bci_stage_took_label(i) : "");
	}
	bci_str_appendf(b, "</table>\n");
	return b->data ? 0 : -ENOMEM;
}
