// SPDX-License-Identifier: MIT
/*
 * Bisecting a series (patchwork.h, "bisect.c"): once a series' fast tier
 * has ended and the scheduler's gate decided (after the reruns of its
 * possible new issues), a series of more than one patch whose report still
 * has possible new issues is bisected on the lab by ../bisect/driver.c
 * (bisect.h: plan, build, run, judge, one step at a time, each a row of
 * the store). What is a series' own, here:
 *
 *   build    the series' mbox cut after its K-th patch, built with the
 *            project's build command into DATA/series/NAME/ID/bisect/K/
 *            and published (not queued) as build BUILD-kK on tree
 *            TREE-bisect (its runs in no baseline); git bisect skip when it
 *            does not apply or build
 *   answer   the first bad patch (subject, author, Message-ID), not
 *            reproduced or inconclusive: a bootci-bisect check on the first
 *            bad patch, a mail to the series' thread
 *
 * It runs in serve's builder thread (a build is as long as a kernel's),
 * after the series' own builds.
 */
#include "patchwork.h"
#include "series_bisect.h"

#include "../bisect/bisect.h"
#include "../build_run.h"
#include "../publish/publish.h"
#include "../schedule/judge.h"
#include "../schedule/schedule.h"
#include "../store/store.h"
#include "fsutil.h"
#include "message.h"
#include "strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the series' mbox and its patches ---- */

struct series_row {
	char *mbox, *name, *message_id, *submitter;
	int total;
	int64_t series;
	bool picked;
};

static void series_row_free(struct series_row *s)
{
	free(s->mbox);
	free(s->name);
	free(s->message_id);
	free(s->submitter);
	memset(s, 0, sizeof(*s));
}

static int series_copy(const struct bci_store_pw_series *row, void *ctx)
{
	struct series_row *s = ctx;

	series_row_free(s);
	s->series = row->series;
	s->total = row->total;
	s->picked = !strcmp(row->state, "picked up");
	s->mbox = row->mbox ? strdup(row->mbox) : NULL;
	s->name = row->name ? strdup(row->name) : NULL;
	s->message_id = row->message_id ? strdup(row->message_id) : NULL;
	s->submitter = row->submitter ? strdup(row->submitter) : NULL;
	return (row->mbox && !s->mbox) || (row->name && !s->name) ||
	       (row->message_id && !s->message_id) || (row->submitter && !s->submitter)
		       ? -ENOMEM : 0;
}

/* The series' mbox read and split: 0, -errno naming the file. */
static int series_patches(const char *mbox, char **text, size_t *len,
			  struct bci_series_patch **patches, size_t *count, char *err,
			  size_t err_size)
{
	char why[512];
	int ret = bci_read_file(mbox, text, len, 256 << 20);

	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", mbox, bci_strerror(-ret));
		return ret;
	}
	ret = bci_series_mbox_split(*text, *len, patches, count, why, sizeof(why));
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", mbox, why);
		free(*text);
		*text = NULL;
	}
	return ret;
}

/* A series' bisection as the driver sees it (bisect.h's kind). */
struct series_kind {
	struct bci_patchwork *pw;
	struct series_row sr;
};

/* ---- a step's candidate built ---- */

struct base_copy {
	char base[256];
};

static int base_of(const struct bci_store_build *build, void *ctx)
{
	snprintf(((struct base_copy *)ctx)->base, sizeof(((struct base_copy *)ctx)->base), "%s",
		 build->base ? build->base : "");
	return 0;
}

/*
 * Builds the series up to patch @k as @candidate: 1 published, 0 it did not
 * apply or build (@why says which), -errno.
 */
static int candidate_build(void *ctx, const struct bci_bisection *b, int k, const char *candidate,
			   char *why, size_t why_size, char *err, size_t err_size)
{
	struct series_kind *sk = ctx;
	struct bci_patchwork *pw = sk->pw;
	const struct series_row *sr = &sk->sr;
	const struct bci_patchwork_project *project = pw->project;
	char dir[PATH_MAX], mbox[PATH_MAX], out[PATH_MAX], log_path[PATH_MAX], commit[128];
	char commit_path[PATH_MAX + 16], perr[1024], base_commit[48];
	char *argv[] = { project->build_command, mbox, project->base, project->branch, out, NULL };
	struct bci_series_patch *patches = NULL;
	struct bci_build_outcome o;
	struct base_copy base = { "" };
	char *text = NULL;
	size_t len = 0, count = 0;
	int fd, ret;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/series/%s/%lld/bisect/%d", pw->data_dir,
			     project->name, (long long)b->series, k) >= sizeof(dir) ||
	    (size_t)snprintf(mbox, sizeof(mbox), "%s/series.mbox", dir) >= sizeof(mbox) ||
	    (size_t)snprintf(out, sizeof(out), "%s/image", dir) >= sizeof(out) ||
	    (size_t)snprintf(log_path, sizeof(log_path), "%s/build.log", dir) >= sizeof(log_path))
		return -ENAMETOOLONG;
	if ((ret = series_patches(sr->mbox, &text, &len, &patches, &count, err, err_size)) < 0)
		return ret;
	/* On the commit the branch was at for the series' own build, when it is known. */
	{
		char path[PATH_MAX + 32];
		char *known = NULL;
		size_t known_len = 0;

		snprintf(path, sizeof(path), "%s/series/%s/%lld/%s", pw->data_dir, project->name,
			 (long long)b->series, BCI_PATCHWORK_BASE_COMMIT_FILE);
		if (bci_read_file(path, &known, &known_len, 128) == 0 && known_len >= 40 &&
		    strspn(known, "0123456789abcdef") == 40) {
			snprintf(base_commit, sizeof(base_commit), "%.40s", known);
			argv[3] = base_commit;
		}
		free(known);
	}
	if ((size_t)k > count) {
		bci_message(err, err_size, "%s holds %zu patches, not %d", sr->mbox, count, k);
		ret = -EINVAL;
		goto out;
	}
	bci_remove_tree(out);
	if ((ret = bci_mkdir_p(out, 0755)) < 0 ||
	    (ret = bci_write_file_atomic(mbox, text, patches[k - 1].end, 0644)) < 0) {
		bci_message(err, err_size, "%s: %s", dir, bci_strerror(-ret));
		goto out;
	}
	fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		bci_message(err, err_size, "%s: %s", log_path, strerror(errno));
		goto out;
	}
	dprintf(fd, "bootci: bisect of %s, step: the series up to patch %d of %d: %s %s %s %s %s\n",
		b->build, k, b->patches, argv[0], argv[1], argv[2], argv[3], argv[4]);
	bci_patchwork_say(pw, "bisect %s: building %s (patches 1 to %d), log %s", b->build,
			  candidate, k, log_path);
	ret = bci_build_run(argv, fd, project->build_timeout, pw->stop, &o, err, err_size);
	if (ret == 0 && WIFEXITED(o.status) && !o.timed_out && !o.stopped)
		dprintf(fd, "bootci: exit status %d\n", WEXITSTATUS(o.status));
	close(fd);
	if (ret < 0)
		goto out;
	if (o.stopped) {
		bci_message(err, err_size, "bisect %s: the build was stopped: it runs again", b->build);
		ret = -EINTR;
		goto out;
	}
	if (o.timed_out || !WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0) {
		if (o.timed_out)
			snprintf(why, why_size, "does not build: killed after build-timeout (%lu s)",
				 project->build_timeout);
		else if (WIFEXITED(o.status) && WEXITSTATUS(o.status) == BCI_PATCHWORK_EXIT_NO_APPLY)
			snprintf(why, why_size, "does not apply to %s %s", project->base, argv[3]);
		else
			snprintf(why, why_size, "does not build (its build.log says why)");
		ret = 0;
		goto out;
	}
	snprintf(commit_path, sizeof(commit_path), "%s/commit", out);
	bci_patchwork_read_commit(commit_path, b->series, commit, sizeof(commit));
	if ((ret = bci_store_build_get(pw->store, b->build, base_of, &base, err, err_size)) < 0)
		goto out;
	{
		/*
		 * A tree of its own: a candidate's runs (a panic, a flake) are no
		 * part of any later build's baseline on the project's tree.
		 */
		char tree[300];

		snprintf(tree, sizeof(tree), "%s-bisect", project->tree);
		struct bci_publish p = {
			.build = candidate, .tree = tree, .commit = commit, .tier = "fast",
			.base = base.base[0] ? base.base : NULL, .image_dir = out, .log = NULL,
			.no_queue = true,
		};

		ret = bci_publish_dir(pw->store, pw->data_dir, &p, perr, sizeof(perr));
	}
	if (ret < 0) {
		snprintf(why, why_size, "its image was refused: %.400s", perr);
		ret = 0;
		goto out;
	}
	ret = 1;
out:
	bci_series_patches_free(patches, count);
	free(text);
	return ret;
}

/* ---- the answer ---- */

/* The bisection's page on serve, or "" without serve-url. */
static void page_url(struct bci_patchwork *pw, const char *build, char *out, size_t size)
{
	if (pw->project->serve_url)
		snprintf(out, size, "%s/bisects/%s", pw->project->serve_url, build);
	else
		out[0] = '\0';
}

/* Candidate @k's build name: BUILD-kK. */
static void candidate_name(void *ctx, const struct bci_bisection *b, int k, char *out,
			   size_t size)
{
	(void)ctx;
	snprintf(out, size, "%s-k%d", b->build, k);
}

/* Patch @k of the series' mbox (NULL when it cannot be read: said as "?"). */
static const struct bci_series_patch *patch_of(const struct series_row *sr, int k, char **text,
					      struct bci_series_patch **patches, size_t *count)
{
	char err[512];
	size_t len = 0;

	if (series_patches(sr->mbox, text, &len, patches, count, err, sizeof(err)) < 0 ||
	    k < 1 || (size_t)k > *count)
		return NULL;
	return &(*patches)[k - 1];
}

static void describe(void *ctx, const struct bci_bisection *b, int k, char *out, size_t size)
{
	struct series_kind *sk = ctx;
	struct bci_series_patch *patches = NULL;
	size_t count = 0;
	char *text = NULL;
	const struct bci_series_patch *p = patch_of(&sk->sr, k, &text, &patches, &count);

	(void)b;
	snprintf(out, size, "%s %s", p ? p->subject : "?", p ? p->message_id : "");
	bci_series_patches_free(patches, count);
	free(text);
}

/* The answer told: the check on the first bad patch, the mail (the driver ends the row). */
static int answer(void *ctx, const struct bci_bisection *b, const struct bci_bisect_steps *steps,
		  enum bci_bisect_next next, int k, const char *verdict, char *err,
		  size_t err_size)
{
	struct series_kind *sk = ctx;
	struct bci_patchwork *pw = sk->pw;
	const struct series_row *sr = &sk->sr;
	struct bci_series_patch *patches = NULL;
	char url[1400], *text = NULL, *body = NULL, *subject = NULL;
	struct bci_str mail = { 0 };
	size_t count = 0;
	const struct bci_series_patch *p = NULL;
	int ret;

	if (next == BCI_BISECT_FOUND)
		p = patch_of(sr, k, &text, &patches, &count);
	page_url(pw, b->build, url, sizeof(url));
	if (next == BCI_BISECT_FOUND) {
		char description[600];

		snprintf(description, sizeof(description), "first bad patch of the series:"
			 " %zu test(s) fail from it on (%zu step(s))", b->tests.count, steps->n);
		ret = bci_store_pw_check_queue_patch(pw->store, pw->project->name, b->series, k,
						     BCI_PATCHWORK_CONTEXT_BISECT, "fail",
						     description, url[0] ? url : NULL, err,
						     err_size);
		if (ret < 0)
			goto out;
	}
	/* The mail: what was bisected, the answer, each step, the page. */
	bci_str_appendf(&mail, "bootci bisected the possible new issues of this series (build %s):\n\n",
			b->build);
	for (size_t i = 0; i < b->tests.count; i++)
		bci_str_appendf(&mail, "  %s\n", b->tests.items[i]);
	if (next == BCI_BISECT_FOUND)
		bci_str_appendf(&mail, "\nFirst bad patch: %d of %d\n  Subject: %s\n  Author: %s\n"
				"  Message-ID: %s\n", k, b->patches, p ? p->subject : "?",
				p ? p->author : "?", p ? p->message_id : "?");
	else
		bci_str_appendf(&mail, "\nNo patch is named: %s\n%s", verdict,
				next == BCI_BISECT_NOT_REPRODUCED
					? "A known-issue filter for the flaky test may be due"
					  " (bootci-known-issues(5)).\n" : "");
	bci_str_appendf(&mail, "\nSteps (each candidate built with the project's build command,"
			" its runs on");
	for (size_t i = 0; i < b->machines.count; i++)
		bci_str_appendf(&mail, "%s %s", i ? "," : "", b->machines.items[i]);
	bci_str_appendf(&mail, "):\n");
	for (size_t i = 0; i < steps->n; i++)
		bci_str_appendf(&mail, "  %d. patches 1 to %d (%s): %s: %s\n", steps->v[i].step,
				steps->v[i].patches, steps->v[i].candidate, steps->v[i].state,
				steps->v[i].note ? steps->v[i].note : "");
	if (url[0])
		bci_str_appendf(&mail, "\nThe bisection: %s\n", url);
	if (!mail.data || asprintf(&subject, "bootci bisect: %s %s",
				   next == BCI_BISECT_FOUND ? "first bad patch of"
				   : next == BCI_BISECT_NOT_REPRODUCED ? "not reproduced for"
								       : "inconclusive for",
				   sr->name ? sr->name : b->build) < 0 ||
	    asprintf(&body, "%s", mail.data) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	{
		char key[300];

		snprintf(key, sizeof(key), "%s-bisect", b->build);
		struct bci_patchwork_mail m = { .series = b->series, .key = key,
						.message_id = sr->message_id,
						.submitter = sr->submitter, .subject = subject,
						.body = body };
		char merr[1024] = "";

		/* The answer is in the store and the check; a mail that cannot be made is said. */
		if (bci_patchwork_mail_queue(pw, &m, merr, sizeof(merr)) < 0)
			bci_patchwork_say(pw, "bisect %s: its mail: %s", b->build, merr);
	}
	/* The driver ends the row after: a check or mail not queued is queued next round (once each). */
	ret = 0;
out:
	bci_str_free(&mail);
	bci_series_patches_free(patches, count);
	free(text);
	free(subject);
	free(body);
	return ret;
}

/* ---- one bisection moved on ---- */

static void say_line(void *ctx, const char *line)
{
	bci_patchwork_say(ctx, "%s", line);
}

/* @b's series from the store into @sr: 1, -ENOENT (said in @err: it stops the bisection). */
static int series_load(struct bci_patchwork *pw, const struct bci_bisection *b,
		       struct series_row *sr, char *err, size_t err_size)
{
	int ret = bci_store_pw_series_get(pw->store, b->project, b->series, series_copy, sr, err,
					  err_size);

	if (ret == 0) {
		bci_message(err, err_size, "bisect %s: series %lld is not in the store", b->build,
			    (long long)b->series);
		return -ENOENT;
	}
	if (ret > 0 && !sr->mbox) {
		bci_message(err, err_size, "bisect %s: series %lld has no mbox in the store",
			    b->build, (long long)b->series);
		return -ENOENT;
	}
	return ret < 0 ? ret : 1;
}

/* Loads DATA/machines.conf: 0 with *@out NULL when there is none (no lab, nothing to run). */
static int inventory_read(struct bci_patchwork *pw, struct bci_inventory **out, char *err,
			  size_t err_size)
{
	char path[PATH_MAX];

	*out = NULL;
	snprintf(path, sizeof(path), "%s/%s", pw->data_dir, BCI_INVENTORY_FILE);
	if (access(path, F_OK) < 0)
		return 0;
	return bci_inventory_load(path, out, err, err_size);
}

/* ---- starting one ---- */

int bci_patchwork_bisect_start(struct bci_patchwork *pw, const char *build, bool by_hand,
			       char *err, size_t err_size)
{
	struct bci_bisect_regressions r = { 0 };
	struct series_row sr = { 0 };
	char *test_lines = NULL, *machine_lines = NULL, *pair_lines = NULL;
	char *text = NULL, why[600] = "";
	struct bci_series_patch *patches = NULL;
	size_t len = 0, count = 0;
	int ret;

	ret = bci_store_pw_series_by_build(pw->store, build, series_copy, &sr, err, err_size);
	if (ret == 0) {
		bci_message(err, err_size, "%s is no series' build", build);
		ret = -ENOENT;
	}
	if (ret < 0)
		goto out;
	if (!sr.mbox || sr.total < 2) {
		bci_message(err, err_size, "series %lld has %d patch(es): nothing to bisect",
			    (long long)sr.series, sr.total);
		ret = by_hand ? -EINVAL : 0;
		goto out;
	}
	if ((ret = bci_bisect_ready(pw->store, build, err, err_size)) <= 0) {
		if (ret == 0)
			bci_message(err, err_size, "%s: its fast tier (and its reruns) have not ended",
				    build);
		ret = by_hand && ret == 0 ? -EAGAIN : ret;
		goto out;
	}
	ret = bci_bisect_regressions(pw->store, pw->data_dir, build, &r, err, err_size);
	if (ret < 0)
		goto out;
	if (ret == 0)
		snprintf(why, sizeof(why), "nothing to bisect: no run of it came back");
	else if (!r.tests.count)
		snprintf(why, sizeof(why), "nothing to bisect: no possible new issue");
	/* A candidate is the mbox cut after a patch: it must hold the series' patches, one each. */
	if (!why[0] &&
	    series_patches(sr.mbox, &text, &len, &patches, &count, why, sizeof(why)) == 0 &&
	    count != (size_t)sr.total)
		snprintf(why, sizeof(why), "its mbox holds %zu message(s), the series %d patches",
			 count, sr.total);
	test_lines = bci_strv_lines(&r.tests);
	machine_lines = bci_strv_lines(&r.machines);
	pair_lines = bci_strv_lines(&r.pairs);
	if (!test_lines || !machine_lines || !pair_lines) {
		ret = -ENOMEM;
		goto out;
	}
	struct bci_store_bisect row = {
		.build = build, .project = pw->project->name, .series = sr.series,
		.patches = sr.total, .tests = test_lines, .machines = machine_lines,
		.pairs = pair_lines,
	};
	if ((ret = bci_store_bisect_add(pw->store, &row, err, err_size)) < 0)
		goto out;
	if (why[0]) {
		char verdict[700];

		snprintf(verdict, sizeof(verdict), "%s%s", r.tests.count ? "not bisected: " : "", why);
		bci_patchwork_say(pw, "bisect %s: %s", build, verdict);
		ret = bci_store_bisect_end(pw->store, build, "done", verdict, err, err_size);
		goto out;
	}
	for (char *nl = strchr(test_lines, '\n'); nl && nl[1]; nl = strchr(nl, '\n'))
		*nl = ' ';
	bci_patchwork_say(pw, "bisect %s: started: %d patches, %zu test(s): %.*s", build, sr.total,
			  r.tests.count, (int)strcspn(test_lines, "\n"), test_lines);
	ret = 1;
out:
	bci_series_patches_free(patches, count);
	free(text);
	free(pair_lines);
	bci_bisect_regressions_free(&r);
	free(test_lines);
	free(machine_lines);
	series_row_free(&sr);
	return ret;
}

/* The series picked up and built whose bisection is due: each started. */
struct due {
	struct bci_strv builds;
};

static int due_series(const struct bci_store_pw_series *s, void *ctx)
{
	struct due *d = ctx;

	if (strcmp(s->state, "picked up") || !s->build || s->total < 2)
		return 0;
	return bci_strv_add(&d->builds, s->build);
}

static int build_seen(const struct bci_store_build *build, void *ctx)
{
	(void)build;
	(void)ctx;
	return 0;
}

static int no_row(const struct bci_store_bisect *row, void *ctx)
{
	(void)row;
	(void)ctx;
	return 0;
}

int bci_patchwork_bisect_round(struct bci_patchwork *pw, unsigned *acted, char *err,
			       size_t err_size)
{
	struct bci_inventory *inv = NULL;
	struct due due = { 0 };
	struct bci_strv running = { 0 };
	int ret, first = 0;

	*acted = 0;
	if (!pw->project->build_command)
		return 0;
	if ((ret = inventory_read(pw, &inv, err, err_size)) <= 0 && !inv)
		return ret;
	if (inv->bisect_steps)
		ret = bci_store_pw_series_each(pw->store, pw->project->name, NULL, NULL, due_series,
					       &due, err, err_size);
	/* One series' or bisection's fault is said and left; the others go on. */
	for (size_t i = 0; ret >= 0 && i < due.builds.count; i++) {
		const char *build = due.builds.items[i];
		int one = bci_store_bisect_get(pw->store, build, no_row, NULL, err, err_size);

		if (one == 0 &&
		    bci_store_build_get(pw->store, build, build_seen, NULL, err, err_size) < 0)
			continue;	/* not built (yet, or it failed): nothing to bisect */
		if (one == 0)
			one = bci_patchwork_bisect_start(pw, build, false, err, err_size);
		*acted += one == 1;
		if (one < 0) {
			bci_patchwork_say(pw, "bisect %s: %s", build, err);
			first = first ? first : one;
		}
	}
	if (ret >= 0)
		ret = bci_bisect_running(pw->store, &running, err, err_size);
	struct bci_bisector bz = { .store = pw->store, .data_dir = pw->data_dir, .inventory = inv,
				   .say = say_line, .say_ctx = pw, .stop = pw->stop };

	for (size_t i = 0; ret >= 0 && i < running.count; i++) {
		struct series_kind sk = { .pw = pw };
		struct bci_bisect_kind kind = { .unit = "patch", .candidate = candidate_name,
						.build = candidate_build, .answer = answer,
						.describe = describe, .ctx = &sk };
		struct bci_bisection b = { 0 };
		int one;

		if (pw->stop && atomic_load(pw->stop))
			break;
		one = bci_bisection_load(pw->store, running.items[i], &b, err, err_size);
		/* This project's series' only (a tree's bisection is bisect/tree.c's). */
		if (one > 0 && (bci_bisection_is_tree(&b) || strcmp(b.project, pw->project->name)))
			one = 0;
		if (one > 0 && (one = series_load(pw, &b, &sk.sr, err, err_size)) < 0)
			bci_bisect_fault(&bz, &b, one, err, err_size);
		else if (one > 0)
			one = bci_bisect_move(&bz, &b, &kind, err, err_size);
		else if (one < 0)
			bci_patchwork_say(pw, "bisect %s: %s", running.items[i], err);
		*acted += one > 0;
		first = first || one == -EINTR ? first : one < 0 ? one : 0;
		series_row_free(&sk.sr);
		bci_bisection_free(&b);
	}
	bci_strv_free(&due.builds);
	bci_strv_free(&running);
	bci_inventory_free(inv);
	if (ret < 0)
		bci_patchwork_say(pw, "bisect: %s", err);
	return ret < 0 ? ret : first;
}
