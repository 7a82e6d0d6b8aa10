/* SPDX-License-Identifier: MIT */
/*
 * The report of a build (report.h's bci_report_build), made by the files
 * that share this header; not for use outside them:
 *
 *   regress.c    the driver: the build's runs by machine, each machine read
 *                then judged, the machines on two threads and the halves
 *                merged, the changes sorted; the report freed
 *   baseline.c   a machine read from the store: its results in the build
 *                and in its baseline (report.h says which runs that is: its
 *                own and its shard group's) into cells by test number, its
 *                tags, a test's logs for the filters
 *   judge.c      a machine's cells judged: each change classified by the
 *                transition table, a regression then a known issue (a filter
 *                matched), flaky (it changed inside the baseline, on the
 *                machine or its group) or new
 *   latency.c    a machine's suspend+resume latency against its baseline's
 *                spread
 *   reruns.c     the build's reruns (its confirm jobs' runs, never among its
 *                own): its possible new issues judged by them
 *
 * Memory: one machine at a time. Each test name is given a number once per
 * thread (name_numbers.h); a machine's build results and baseline are two
 * arrays of cells by that number (10k tests: well under a few MiB). A shard
 * group's baseline is read once a thread, when its first machine is
 * judged, and kept for the others: its cells and a byte per test for each
 * of its machines.
 */
#ifndef BCI_REPORT_COMPARE_H
#define BCI_REPORT_COMPARE_H

#include "name_numbers.h"
#include "report.h"
#include "strv.h"
#include "../store/store.h"
#include "manifest.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A run of the build or of a baseline, copied from the store. */
struct compare_run {
	char *machine, *run_id;
	int64_t key;
};

struct compare_runs {
	struct compare_run *v;
	size_t n;
};

/* @run copied to the end of @l: 0, or -ENOMEM (@l unchanged). */
int compare_runs_push(struct compare_runs *l, const struct bci_store_run *run);
void compare_runs_release(struct compare_runs *l);

/*
 * A machine's test, at its number: status -1 where the machine has none. A
 * baseline cell counts the runs of the machine and of the others of its
 * shard group; its status is the machine's own latest when it ran the test.
 */
struct compare_cell {
	int status;		/* build: its status; baseline: the latest status it ran with */
	unsigned seen;		/* baseline: bit per status seen in the window (notrun aside) */
	unsigned runs, failed;	/* baseline: runs that ran it (notrun aside), those that failed */
	int run;		/* build: index in the build's runs of the run that holds it */
	int job;		/* build: the result's job */
};

struct compare_cells {
	struct compare_cell *v;
	size_t n;
};

/*
 * One thread's comparison: what it reads with and writes into, and what it
 * keeps from one machine to the next. The caller sets store, options,
 * build, report, err and err_size, the rest zeroed, and calls
 * compare_release() after the last machine.
 */
struct compare {
	struct bci_store *store;
	const struct bci_report_options *options;
	const struct bci_store_build *build;	/* the build reported on */
	struct bci_report *report;		/* the judgements go there (its base_tree read) */
	char *err;
	size_t err_size;
	size_t changes_cap;			/* room in report->changes */
	struct bci_name_numbers tests;		/* this thread's test numbers */
	struct bci_name_numbers builds;		/* the builds of the machines' runs, */
	signed char *on_base;			/* by number: 1 in a baseline, 0 not, -1 not asked */
	size_t on_base_cap;
	struct compare_cells now, before;	/* the machine's: the build, its baseline */
	struct compare_group *groups;		/* the shard groups read so far */
	size_t n_groups;
};

/*
 * A shard group's baseline (baseline.c): every run of each of its machines'
 * windows counted into @cells (seen, runs and failed over them all; status
 * the latest of the last machine that ran the test), and each machine's own
 * latest status by test number, -1 where it has none.
 */
struct compare_group {
	char name[BCI_MANIFEST_WORD_MAX + 1];
	struct bci_strv machines;		/* by name */
	struct compare_cells cells;
	signed char **latest;			/* by machine: statuses by test number */
	size_t *latest_n;			/* by machine: how many tests its row holds */
};

/* What @c keeps between machines, let go (the store, the report and the options are the caller's). */
void compare_release(struct compare *c);

/* One machine of the build, as compare_machine_read() leaves it. */
struct compare_machine {
	const char *name;
	const struct compare_runs *build_runs;	/* the build's runs, every machine's */
	size_t first, end;			/* this machine's stretch of them */
	struct compare_runs baseline;		/* its baseline runs, oldest first, at most the window */
	char group[BCI_MANIFEST_WORD_MAX + 1];	/* its shard group, "" when it has none */
	struct bci_strv tags;			/* its tags, for the filters */
};

/* ---- baseline.c ---- */

/*
 * @machine's results in the build into @c->now (a later run of the machine
 * replacing an earlier one's), its baseline's (its shard group's when it
 * has one: its group's counts, its own latest status) into @c->before, its
 * group, baseline runs and tags into @machine (name, build_runs, first and
 * end set by the caller). -EPROTO for a stored result of an unknown status (no message:
 * the caller names the machine), the store's errors, -ENOMEM.
 */
int compare_machine_read(struct compare *c, struct compare_machine *machine);
void compare_machine_release(struct compare_machine *machine);
/* The machine's results in the build (@c->now), handed to the options' seen hook. */
int compare_seen_give(struct compare *c, const struct compare_machine *machine);

/* A test's out, err and dmesg, read from its run's archive when a filter first asks. */
struct compare_logs {
	struct compare *c;
	const struct compare_run *run;
	const char *test;
	char *text[3];
	int read[3];
};

/* bci_filter_subject.log with a struct compare_logs as its ctx (NULL: no such log). */
const char *compare_log_read(const char *which, void *ctx);
void compare_logs_release(struct compare_logs *logs);

/* ---- reruns.c ---- */

/* A run of one of the build's confirm jobs that came back. */
struct compare_rerun {
	char *machine, *run_id;
	int64_t run;				/* its store key */
	char group[BCI_MANIFEST_WORD_MAX + 1];	/* its machine's shard group, "" when none */
};

struct compare_reruns {
	struct compare_rerun *v;
	size_t n;
	int jobs;				/* the build's confirm jobs, back or not */
};

/* @build's confirm jobs and the runs of those that came back: 0, -errno (@err). */
int compare_reruns_read(struct bci_store *store, const char *build, struct compare_reruns *r,
			char *err, size_t err_size);
void compare_reruns_release(struct compare_reruns *r);
/*
 * Each possible new issue of @r (its changes judged, not sorted yet) counted
 * against the reruns of its test on its machine and its shard group: flaky
 * when one passed (the counts moved), still new otherwise; @r's reruns and
 * reruns_back set.
 */
int compare_reruns_judge(struct bci_store *store, struct bci_report *r,
			 const struct compare_reruns *reruns, char *err, size_t err_size);

/* ---- judge.c ---- */

/* Each test of @c->now against @c->before: the changes into @c->report. */
int compare_machine_judge(struct compare *c, const struct compare_machine *machine);

/* ---- latency.c ---- */

/*
 * The median suspend+resume latency of the machine's cycles in the build
 * against the spread of its baseline's, into @c->report (nothing when the
 * build's runs have no cycle with a latency).
 */
int compare_latency_judge(struct compare *c, const struct compare_machine *machine);

#endif
