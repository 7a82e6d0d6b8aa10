/* SPDX-License-Identifier: MIT */
/*
 * Bisecting a build's possible new issues on the lab: which change first
 * shows them. Two kinds, one driver:
 *
 *   a series'  (patchwork/bisect.c) the patches of a Patchwork series: the
 *              candidate K is the series' mbox cut after its K-th patch
 *   a tree's   (tree.c) the commits since the tree's baseline build: the
 *              candidate K is the tree at the range's K-th commit
 *
 * Each bisection is a row of the store with its steps (store.h,
 * "bisections"): a master restarted goes on where it was. The files:
 *
 *   plan.c     the next K to try from the steps judged, or the answer, as
 *              `git bisect` (with `skip`) would
 *   driver.c   a bisection moved on: plan, build (the kind's), queue the
 *              regressed tests as jobs of kind bisect, judge, answer (the
 *              kind's); and what starting one needs (the regressions)
 *   tree.c     a tree's: its range from the tree's clone, candidates built
 *              with the tree's build command, the answer mailed on the
 *              build's reply thread; `bisect start` for a tree's build
 *   serve_hook.c  serve's thread that moves trees' bisections on
 */
#ifndef BCI_BISECT_H
#define BCI_BISECT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "strv.h"

struct bci_store;
struct bci_inventory;

/* ---- plan.c ---- */

/* What a step found, as the store names it. */
enum bci_bisect_verdict {
	BCI_BISECT_GOOD,		/* the regression is not there */
	BCI_BISECT_BAD,			/* it is, every run */
	BCI_BISECT_SKIPPED,		/* the candidate did not build (git bisect skip) */
	BCI_BISECT_FLAKY,		/* it came and went between runs */
};

/* A step judged: the candidate of the first @patches changes, and what it found. */
struct bci_bisect_known {
	int patches;
	enum bci_bisect_verdict verdict;
};

enum bci_bisect_next {
	BCI_BISECT_TRY,			/* build and run the first *@try changes */
	BCI_BISECT_FOUND,		/* the first bad change is *@try */
	BCI_BISECT_NOT_REPRODUCED,	/* a step was flaky: nothing is named */
	BCI_BISECT_INCONCLUSIVE,	/* skipped candidates, or the step limit, hide it */
};

/*
 * The next step of a bisection of @patches changes (none applied, the
 * base, is good; all of them, the build, is bad: its tier found it), from
 * the @count steps judged so far, at most @max_steps steps in all: the
 * untried count nearest the middle of the last good and the first bad,
 * skipped counts left out. A flaky step ends it NOT_REPRODUCED; the first
 * bad next to the last good is FOUND; nothing left to try between them, or
 * @max_steps reached, INCONCLUSIVE. @why (may be NULL) says which, in words.
 */
enum bci_bisect_next bci_bisect_plan(int patches, const struct bci_bisect_known *steps,
				     size_t count, int max_steps, int *try, char *why,
				     size_t why_size);

/* ---- driver.c ---- */

/* Who moves bisections on: the store, DATA, the lab, and where lines are said. */
struct bci_bisector {
	struct bci_store *store;
	const char *data_dir;
	const struct bci_inventory *inventory;
	/* Says one line (no newline) in its own words: "patchwork P: ", "tree T: ". */
	void (*say)(void *ctx, const char *line);
	void *say_ctx;
	const atomic_bool *stop;	/* NULL: never stopped */
};

/* Says a line through @bz->say (nothing without one). */
void bci_bisector_say(const struct bci_bisector *bz, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A bisection as the store holds it, copied. */
struct bci_bisection {
	char *build, *project, *state, *verdict;
	int64_t series;			/* a tree's: 0 */
	int patches;			/* changes: a series' patches, a tree's commits */
	struct bci_strv tests, machines;
	struct bci_strv pair_machine, pair_test;	/* where each test regressed */
	struct bci_strv commits;	/* a tree's range, oldest first; empty for a series */
};

/* @build's bisection into @out: 1, 0 when it has none, -errno (-EPROTO: a bad row). */
int bci_bisection_load(struct bci_store *store, const char *build, struct bci_bisection *out,
		       char *err, size_t err_size);
void bci_bisection_free(struct bci_bisection *b);
/* Whether @b bisects a tree's commits (else a series' patches). */
bool bci_bisection_is_tree(const struct bci_bisection *b);

/* A step as the store holds it, copied. */
struct bci_bisect_step {
	int step, patches;
	char *candidate, *state, *note;
};

struct bci_bisect_steps {
	struct bci_bisect_step *v;
	size_t n;
};

int bci_bisect_steps_load(struct bci_store *store, const char *build,
			  struct bci_bisect_steps *out, char *err, size_t err_size);
void bci_bisect_steps_free(struct bci_bisect_steps *s);

/* What one kind of bisection does its own way. */
struct bci_bisect_kind {
	const char *unit;		/* "patch", "commit": in the log's step lines */
	/* Candidate @k's build name into @out. */
	void (*candidate)(void *ctx, const struct bci_bisection *b, int k, char *out,
			  size_t size);
	/*
	 * Builds and publishes (not queued) candidate @k as @candidate: 1, 0
	 * when it does not apply or build (@why says which), -EINTR when
	 * stopped (built again next time), -errno.
	 */
	int (*build)(void *ctx, const struct bci_bisection *b, int k, const char *candidate,
		     char *why, size_t why_size, char *err, size_t err_size);
	/*
	 * The answer told (@k the first bad change when FOUND, @verdict the
	 * store's words for it): everywhere but the store, which the driver
	 * writes after it. 0, or -errno (the answer is told again next round).
	 */
	int (*answer)(void *ctx, const struct bci_bisection *b,
		      const struct bci_bisect_steps *steps, enum bci_bisect_next next, int k,
		      const char *verdict, char *err, size_t err_size);
	/* The first bad change @k in a line (a patch's subject, a commit's): "?" unknown. */
	void (*describe)(void *ctx, const struct bci_bisection *b, int k, char *out, size_t size);
	void *ctx;
};

/*
 * Moves bisection @b (running) as far as it goes now: a step's runs judged,
 * the next candidate built and its runs queued, or the answer told and the
 * bisection ended. 1 when it acted, 0 when it waits, -errno.
 */
int bci_bisect_advance(const struct bci_bisector *bz, const struct bci_bisection *b,
		       const struct bci_bisect_kind *kind, char *err, size_t err_size);

/*
 * bci_bisect_advance(), its faults said: one that will not go away (-ENOENT,
 * -EINVAL, -EPROTO: no series, a damaged row) ends @b stopped with it;
 * -EINTR (the master stops) is left for next time. Its return.
 */
int bci_bisect_move(const struct bci_bisector *bz, const struct bci_bisection *b,
		    const struct bci_bisect_kind *kind, char *err, size_t err_size);
/* The fault handling of bci_bisect_move() for @ret (@err set): @ret. */
int bci_bisect_fault(const struct bci_bisector *bz, const struct bci_bisection *b, int ret,
		     char *err, size_t err_size);
/* The builds of the running bisections, oldest first, added to @builds: their count. */
int bci_bisect_running(struct bci_store *store, struct bci_strv *builds, char *err,
		       size_t err_size);

/* Whether @build's fast tier (its jobs, its reruns) has ended and its gate decided: 1, 0, -errno. */
int bci_bisect_ready(struct bci_store *store, const char *build, char *err, size_t err_size);

/*
 * A suspend+resume latency regression, as a bisection's test: the report's
 * (a machine's median latency beyond its baseline's slowest cycle). A step
 * runs the candidate's suspend cycles (its testlists' lines starting with
 * BCI_BISECT_SUSPEND_PREFIX) and judges each run as the report did: its
 * median against that slowest cycle of the bisected build's baseline.
 */
#define BCI_BISECT_LATENCY "suspend-latency"
#define BCI_BISECT_SUSPEND_PREFIX "bootci@suspend@"

/*
 * What a build's report names as possible new issues, and the machines
 * whose suspend latency regressed (BCI_BISECT_LATENCY), for a bisection's row.
 */
struct bci_bisect_regressions {
	struct bci_strv tests, machines, pairs;	/* pairs: "MACHINE TEST" */
};

/*
 * @build's possible new issues (its report, as the gate judged it): 1 with
 * @out filled (maybe none), 0 when no run of it came back (no report), -errno.
 */
int bci_bisect_regressions(struct bci_store *store, const char *data_dir, const char *build,
			   struct bci_bisect_regressions *out, char *err, size_t err_size);
void bci_bisect_regressions_free(struct bci_bisect_regressions *r);

/*
 * Drops a UTF-8 sequence that a cut (snprintf's, into a bounded buffer)
 * left incomplete at the end of @s: the store takes only whole characters
 * (a verdict naming a patch's decoded subject).
 */
void bci_bisect_utf8_whole(char *s);

/* Whether testlist line @line runs test @test: the test itself, or its binary or subtest. */
bool bci_bisect_line_runs(const char *line, const char *test);

/* ---- tree.c ---- */

/*
 * Starts the bisection of tree build @build (by hand: `bisect start`): its
 * range is the commits of the tree's clone (machines.conf's [tree] repo)
 * from its baseline build's commit (the newest earlier build of its tree
 * whose commit is an ancestor of @build's) to @build's, first parents only.
 * 1 started, 0 nothing to bisect (said in @err: no possible new issue, one
 * commit), -ENOENT (not a tree's build, no [tree] with a repo and a
 * build-command), -EAGAIN (its fast tier has not ended), -errno.
 */
int bci_tree_bisect_start(struct bci_store *store, const char *data_dir, const char *build,
			  char *err, size_t err_size);

/*
 * One round of the trees' bisections: each running one moved on
 * (bci_bisect_advance). *@acted counts those that did something. 0, or the
 * first error (each one's said, the others go on).
 */
int bci_tree_bisect_round(const struct bci_bisector *bz, unsigned *acted, char *err,
			  size_t err_size);

/* ---- serve_hook.c ---- */

struct bci_bisect_server;

/* serve's thread for trees' bisections (its own store connection), every @interval s. */
int bci_bisect_server_start(const char *data_dir, const char *store_url, FILE *log,
			    struct bci_bisect_server **out, char *err, size_t err_size);
void bci_bisect_server_stop(struct bci_bisect_server *s);

#endif
