// SPDX-License-Identifier: MIT
/*
 * Bisecting a series (patchwork.h, "bisect.c"): once a series' fast tier
 * has ended and the scheduler's gate decided (after the reruns of its
 * possible new issues), a series of more than one patch whose report still
 * has possible new issues is bisected on the lab, one step at a time, each
 * step a row of the store (a master restarted goes on where it was):
 *
 *   plan     the next patch count K (bisect_plan.c: git bisect's choice)
 *   build    the series' mbox cut after its K-th patch, built with the
 *            project's build command into DATA/series/NAME/ID/bisect/K/
 *            and published (not queued) as build BUILD-kK on tree
 *            TREE-bisect (its runs in no baseline); one that does not
 *            apply or build is skipped, as git bisect skip
 *   run      the regressed tests the candidate's testlists hold, as jobs of
 *            their own (kind bisect, ahead of any tier's), the inventory's
 *            reruns times in all, in turn on the machines where they
 *            regressed; a candidate whose testlists hold none of them has
 *            not got them (good, no boot)
 *   judge    once its jobs have ended: bad when a regressed test failed in
 *            every run of it, good when every one passed in every run,
 *            flaky otherwise (the bisection ends: not reproduced)
 *
 * The answer (first bad patch, not reproduced, inconclusive) goes into the
 * store, serve's log, a bootci-bisect check on the first bad patch, and a
 * mail to the series' thread. The driver runs in serve's builder thread
 * (a build is as long as a kernel's), after the series' own builds.
 */
#include "patchwork.h"
#include "series_bisect.h"

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

/* ---- what the store holds, copied ---- */

struct bisect {
	char *build, *project, *state, *verdict;
	int64_t series;
	int patches;
	struct bci_strv tests, machines;
	struct bci_strv pair_machine, pair_test;	/* where each test regressed */
};

static void bisect_free(struct bisect *b)
{
	free(b->build);
	free(b->project);
	free(b->state);
	free(b->verdict);
	bci_strv_free(&b->tests);
	bci_strv_free(&b->machines);
	bci_strv_free(&b->pair_machine);
	bci_strv_free(&b->pair_test);
	memset(b, 0, sizeof(*b));
}

/* Whether @test regressed on @machine. */
static bool paired(const struct bisect *b, const char *machine, const char *test)
{
	for (size_t i = 0; i < b->pair_test.count; i++)
		if (!strcmp(b->pair_machine.items[i], machine) && !strcmp(b->pair_test.items[i], test))
			return true;
	return false;
}

static int bisect_copy(const struct bci_store_bisect *row, void *ctx)
{
	struct bisect *b = ctx;

	bisect_free(b);
	b->build = strdup(row->build);
	b->project = strdup(row->project);
	b->state = strdup(row->state);
	b->verdict = row->verdict ? strdup(row->verdict) : NULL;
	b->series = row->series;
	b->patches = row->patches;
	if (!b->build || !b->project || !b->state || (row->verdict && !b->verdict) ||
	    bci_strv_split(&b->tests, row->tests, "\n") < 0 ||
	    bci_strv_split(&b->machines, row->machines, "\n") < 0)
		return -ENOMEM;
	for (const char *p = row->pairs; *p;) {
		size_t n = strcspn(p, "\n"), m = strcspn(p, " ");

		if (m >= n || bci_strv_addn(&b->pair_machine, p, m) < 0 ||
		    bci_strv_addn(&b->pair_test, p + m + 1, n - m - 1) < 0)
			return m >= n ? -EPROTO : -ENOMEM;
		p += n + (p[n] == '\n');
	}
	return 0;
}

struct step {
	int step, patches;
	char *candidate, *state, *note;
};

struct steps {
	struct step *v;
	size_t n;
};

static void steps_free(struct steps *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].candidate);
		free(s->v[i].state);
		free(s->v[i].note);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int step_copy(const struct bci_store_bisect_step *row, void *ctx)
{
	struct steps *s = ctx;
	struct step *grown = realloc(s->v, (s->n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	s->v = grown;
	grown[s->n] = (struct step){ row->step, row->patches, strdup(row->candidate),
				     strdup(row->state), row->note ? strdup(row->note) : NULL };
	s->n++;
	return grown[s->n - 1].candidate && grown[s->n - 1].state &&
	       (!row->note || grown[s->n - 1].note) ? 0 : -ENOMEM;
}

static int step_put(struct bci_patchwork *pw, const struct bisect *b, int step, int patches,
		    const char *candidate, const char *state, const char *note, bool ended,
		    char *err, size_t err_size)
{
	struct bci_store_bisect_step row = {
		.build = b->build, .step = step, .patches = patches, .candidate = candidate,
		.state = state, .note = note, .ended = ended ? (double)time(NULL) : 0,
	};

	if (ended)
		bci_patchwork_say(pw, "bisect %s: step %d: patch %d of %d (%s): %s: %s", b->build,
				  step, patches, b->patches, candidate, state, note ? note : "");
	return bci_store_bisect_step_put(pw->store, &row, err, err_size);
}

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

/* ---- a step's candidate built ---- */

static void remove_tree(const char *path)
{
	char *argv[] = { "/bin/rm", "-rf", (char *)path, NULL };
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
}

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
static int candidate_build(struct bci_patchwork *pw, const struct bisect *b,
			   const struct series_row *sr, int k, const char *candidate, char *why,
			   size_t why_size, char *err, size_t err_size)
{
	const struct bci_patchwork_project *project = pw->project;
	char dir[PATH_MAX], mbox[PATH_MAX], out[PATH_MAX], log_path[PATH_MAX], commit[128];
	char commit_path[PATH_MAX + 16], perr[1024];
	char *argv[] = { project->build_command, mbox, project->base, project->branch, out, NULL };
	struct bci_series_patch *patches = NULL;
	struct bci_patchwork_outcome o;
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
	if ((size_t)k > count) {
		bci_message(err, err_size, "%s holds %zu patches, not %d", sr->mbox, count, k);
		ret = -EINVAL;
		goto out;
	}
	remove_tree(out);
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
	ret = bci_patchwork_run(pw, argv, fd, project->build_timeout, &o, err, err_size);
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
			snprintf(why, why_size, "does not apply to %s %s", project->base,
				 project->branch);
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

/* ---- a step's runs ---- */

/* Whether testlist line @line runs test @test: the test itself, or its binary or subtest. */
static bool line_runs(const char *line, const char *test)
{
	size_t n = strlen(line);

	return !strncmp(test, line, n) && (test[n] == '\0' || test[n] == '@');
}

/*
 * The regressed tests @candidate's testlists run (a line naming a test, its
 * subtest or its binary runs it) into @listed: 0, -errno.
 */
static int candidate_listed(struct bci_patchwork *pw, const struct bisect *b,
			    const char *candidate, struct bci_strv *listed, char *err,
			    size_t err_size)
{
	struct bci_schedule s = { .store = pw->store, .data_dir = pw->data_dir };
	static const char *const lists[] = { BCI_SCHEDULE_FAST_TESTLIST, BCI_SCHEDULE_FULL_TESTLIST };
	struct bci_strv lines = { 0 };
	int ret = 0;

	for (size_t i = 0; i < 2 && ret >= 0; i++) {
		char *text = NULL;
		size_t n = 0;

		ret = bci_schedule_build_file_read(&s, candidate, lists[i], &text, &n, err, err_size);
		if (ret == -ENOENT) {
			ret = 0;
			continue;
		}
		if (ret >= 0)
			ret = bci_strv_split(&lines, text, "\n\r\t ");
		free(text);
	}
	for (size_t i = 0; ret >= 0 && i < b->tests.count; i++) {
		bool runs = false;

		for (size_t j = 0; j < lines.count && !runs; j++)
			runs = lines.items[j][0] != '#' && line_runs(lines.items[j], b->tests.items[i]);
		if (runs)
			ret = bci_strv_add(listed, b->tests.items[i]);
	}
	bci_strv_free(&lines);
	return ret < 0 ? ret : 0;
}

/* Each machine's testlist for a step: the @listed tests that regressed on it (malloc'ed, "": none). */
static int machine_testlists(const struct bisect *b, const struct bci_strv *listed, char **out)
{
	for (size_t i = 0; i < b->machines.count; i++) {
		struct bci_strv mine = { 0 };
		int ret = 0;

		for (size_t t = 0; t < listed->count && ret >= 0; t++)
			if (paired(b, b->machines.items[i], listed->items[t]))
				ret = bci_strv_add(&mine, listed->items[t]);
		out[i] = ret < 0 ? NULL : bci_strv_lines(&mine);
		bci_strv_free(&mine);
		if (!out[i])
			return -ENOMEM;
	}
	return 0;
}

struct jobs_state {
	int jobs, open;
	struct bci_store *store;	/* set: a job whose run is in the store counts as ended */
	char *err;
	size_t err_size;
};

static int run_seen(const struct bci_store_run *run, void *ctx)
{
	(void)run;
	(void)ctx;
	return 0;
}

static int job_state(const struct bci_store_job *job, void *ctx)
{
	struct jobs_state *j = ctx;
	int ret;

	j->jobs++;
	if (!strcmp(job->state, "done") || !strcmp(job->state, "abandoned"))
		return 0;
	/* Its run in (serve marks the job done as it ingests; an ingest by hand does not). */
	if (j->store) {
		ret = bci_store_run_get(j->store, job->machine, job->run_id, run_seen, NULL, j->err,
					j->err_size);
		if (ret == 0)
			return 0;
		if (ret != -ENOENT)
			return ret;
	}
	j->open++;
	return 0;
}

/* A test's runs and failures in a step, on the machines where it regressed. */
struct tally {
	const struct bisect *b;
	const char *machine;		/* the run's */
	unsigned *runs, *failed;
};

static int tally_result(const struct bci_store_result *result, void *ctx)
{
	struct tally *t = ctx;

	for (size_t i = 0; i < t->b->tests.count; i++) {
		if (strcmp(result->name, t->b->tests.items[i]) || !strcmp(result->result, "notrun") ||
		    !paired(t->b, t->machine, result->name))
			continue;
		t->runs[i]++;
		t->failed[i] += strcmp(result->result, "pass") && strcmp(result->result, "skip");
	}
	return 0;
}

struct run_keys {
	int64_t *v;
	struct bci_strv machines;
	size_t n;
};

static int run_key(const struct bci_store_run *run, void *ctx)
{
	struct run_keys *k = ctx;
	int64_t *grown = realloc(k->v, (k->n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	k->v = grown;
	grown[k->n++] = run->key;
	return bci_strv_add(&k->machines, run->machine);
}

/*
 * @candidate's runs judged, once its jobs have ended: 1 with @state and
 * @note set, 0 while they run, -errno.
 */
static int step_judge(struct bci_patchwork *pw, const struct bisect *b, const char *candidate,
		      const struct bci_strv *listed, const char **state, char *note,
		      size_t note_size, char *err, size_t err_size)
{
	struct jobs_state j = { .store = pw->store, .err = err, .err_size = err_size };
	struct run_keys keys = { 0 };
	unsigned *runs = calloc(b->tests.count + 1, sizeof(*runs));
	unsigned *failed = calloc(b->tests.count + 1, sizeof(*failed));
	struct tally t = { b, NULL, runs, failed };
	bool bad = false, all_good = true, none = true;
	size_t len = 0;
	int ret;

	if (!runs || !failed) {
		ret = -ENOMEM;
		goto out;
	}
	ret = bci_store_jobs_each(pw->store, candidate, "fast", job_state, &j, err, err_size);
	if (ret < 0 || j.open) {
		ret = ret < 0 ? ret : 0;
		goto out;
	}
	ret = bci_store_build_runs_each(pw->store, candidate, run_key, &keys, err, err_size);
	for (size_t i = 0; ret >= 0 && i < keys.n; i++) {
		t.machine = keys.machines.items[i];
		ret = bci_store_results_each_brief(pw->store, keys.v[i], tally_result, &t, err,
						   err_size);
	}
	if (ret < 0)
		goto out;
	note[0] = '\0';
	for (size_t i = 0; i < b->tests.count; i++) {
		char line[300];

		if (!bci_strv_contains(listed, b->tests.items[i]))
			continue;
		none &= !runs[i];
		bad |= runs[i] && failed[i] == runs[i];
		all_good &= runs[i] && !failed[i];
		snprintf(line, sizeof(line), "%s%s failed %u of %u run(s)", len ? "; " : "",
			 b->tests.items[i], failed[i], runs[i]);
		if (len + strlen(line) < note_size)
			len += (size_t)sprintf(note + len, "%s", line);
	}
	*state = none ? "skipped" : bad ? "bad" : all_good ? "good" : "flaky";
	if (none)
		snprintf(note, note_size, "no run of its %d job(s) came back", j.jobs);
	ret = 1;
out:
	bci_strv_free(&keys.machines);
	free(keys.v);
	free(runs);
	free(failed);
	return ret;
}

/* ---- the answer ---- */

static int verdict_state(const char *state, enum bci_bisect_verdict *v)
{
	if (!strcmp(state, "good"))
		*v = BCI_BISECT_GOOD;
	else if (!strcmp(state, "bad"))
		*v = BCI_BISECT_BAD;
	else if (!strcmp(state, "skipped"))
		*v = BCI_BISECT_SKIPPED;
	else if (!strcmp(state, "flaky"))
		*v = BCI_BISECT_FLAKY;
	else
		return 0;
	return 1;
}

/* The bisection's page on serve, or "" without serve-url. */
static void page_url(struct bci_patchwork *pw, const char *build, char *out, size_t size)
{
	if (pw->project->serve_url)
		snprintf(out, size, "%s/bisects/%s", pw->project->serve_url, build);
	else
		out[0] = '\0';
}

/* The answer told: the store, the log, the check on the first bad patch, the mail. */
static int answer(struct bci_patchwork *pw, const struct bisect *b, const struct series_row *sr,
		  const struct steps *steps, enum bci_bisect_next next, int k, const char *why,
		  char *err, size_t err_size)
{
	struct bci_series_patch *patches = NULL;
	char verdict[1200], url[1400], *text = NULL, *body = NULL, *subject = NULL;
	struct bci_str mail = { 0 };
	size_t len = 0, count = 0;
	const struct bci_series_patch *p = NULL;
	int ret;

	if (next == BCI_BISECT_FOUND &&
	    series_patches(sr->mbox, &text, &len, &patches, &count, err, err_size) == 0 &&
	    (size_t)k <= count)
		p = &patches[k - 1];
	if (next == BCI_BISECT_FOUND)
		snprintf(verdict, sizeof(verdict), "first bad patch %d of %d: %s %s", k, b->patches,
			 p ? p->subject : "?", p ? p->message_id : "");
	else
		snprintf(verdict, sizeof(verdict), "%s: %s",
			 next == BCI_BISECT_NOT_REPRODUCED ? "not reproduced" : "inconclusive", why);
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
	/* Ended last: a check or mail not queued is queued again by the next round (once each). */
	if ((ret = bci_store_bisect_end(pw->store, b->build, "done", verdict, err, err_size)) < 0)
		goto out;
	bci_patchwork_say(pw, "bisect %s: %s", b->build, verdict);
out:
	bci_str_free(&mail);
	bci_series_patches_free(patches, count);
	free(text);
	free(subject);
	free(body);
	return ret;
}

/* ---- one bisection moved on ---- */

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

/* Whether @b still runs (not stopped by hand meanwhile): 1, 0 (said), -errno. */
static int still_running(struct bci_patchwork *pw, const struct bisect *b, char *err,
			 size_t err_size)
{
	struct bisect now = { 0 };
	int ret = bci_store_bisect_get(pw->store, b->build, bisect_copy, &now, err, err_size);

	if (ret > 0 && strcmp(now.state, "running")) {
		bci_patchwork_say(pw, "bisect %s: %s meanwhile: nothing queued", b->build, now.state);
		ret = 0;
	}
	bisect_free(&now);
	return ret;
}

/* One bisection of this project moved as far as it goes now: 1 when it acted, 0, -errno. */
static int advance(struct bci_patchwork *pw, const struct bci_inventory *inv, struct bisect *b,
		   char *err, size_t err_size)
{
	struct bci_schedule s = { .store = pw->store, .inventory = inv, .data_dir = pw->data_dir,
				  .log = pw->log };
	struct series_row sr = { 0 };
	struct steps steps = { 0 };
	struct bci_bisect_known *known = NULL;
	int acted = 0, ret;

	ret = bci_store_pw_series_get(pw->store, b->project, b->series, series_copy, &sr, err,
				      err_size);
	if (ret == 0) {
		bci_message(err, err_size, "bisect %s: series %lld is not in the store", b->build,
			    (long long)b->series);
		ret = -ENOENT;
	}
	if (ret >= 0 && !sr.mbox) {
		bci_message(err, err_size, "bisect %s: series %lld has no mbox in the store",
			    b->build, (long long)b->series);
		ret = -ENOENT;
	}
	if (ret < 0)
		goto out;
	for (;;) {
		struct step *last;
		char candidate[300], why[1024], note[1024] = "";
		const char *state = NULL;
		size_t n_known = 0;
		int k = 0;
		enum bci_bisect_next next;

		steps_free(&steps);
		ret = bci_store_bisect_steps_each(pw->store, b->build, step_copy, &steps, err,
						  err_size);
		if (ret < 0)
			break;
		last = steps.n ? &steps.v[steps.n - 1] : NULL;
		if (last && !strcmp(last->state, "running")) {
			struct bci_strv listed = { 0 };

			ret = candidate_listed(pw, b, last->candidate, &listed, err, err_size);
			if (ret >= 0)
				ret = step_judge(pw, b, last->candidate, &listed, &state, note,
						 sizeof(note), err, err_size);
			bci_strv_free(&listed);
			if (ret <= 0)
				break;
			if ((ret = step_put(pw, b, last->step, last->patches, last->candidate, state,
					    note, true, err, err_size)) < 0)
				break;
			acted = 1;
			continue;
		}
		/* The plan, from the steps judged (a step left building by a stopped master: again). */
		free(known);
		known = calloc(steps.n + 1, sizeof(*known));
		if (!known) {
			ret = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < steps.n; i++)
			if (verdict_state(steps.v[i].state, &known[n_known].verdict))
				known[n_known++].patches = steps.v[i].patches;
		/* bisect-steps 0 starts none on its own; one started by hand takes the default. */
		next = bci_bisect_plan(b->patches, known, n_known,
				       inv->bisect_steps ? (int)inv->bisect_steps
							 : BCI_INVENTORY_BISECT_STEPS_DEFAULT,
				       &k, why, sizeof(why));
		if (next != BCI_BISECT_TRY) {
			ret = answer(pw, b, &sr, &steps, next, k, why, err, err_size);
			acted = 1;
			break;
		}
		int step = last && !strcmp(last->state, "building") ? last->step : (int)steps.n + 1;

		snprintf(candidate, sizeof(candidate), "%s-k%d", b->build, k);
		if ((ret = step_put(pw, b, step, k, candidate, "building", NULL, false, err,
				    err_size)) < 0)
			break;
		acted = 1;
		ret = candidate_build(pw, b, &sr, k, candidate, why, sizeof(why), err, err_size);
		if (ret < 0)
			break;
		if (ret == 0) {
			if ((ret = step_put(pw, b, step, k, candidate, "skipped", why, true, err,
					    err_size)) < 0)
				break;
			continue;
		}
		/* Stopped by hand while it built: nothing is queued. */
		if ((ret = still_running(pw, b, err, err_size)) <= 0)
			break;
		struct bci_strv listed = { 0 };
		char **testlists = calloc(b->machines.count + 1, sizeof(*testlists));
		bool judged = false;	/* good without a boot */

		ret = testlists ? candidate_listed(pw, b, candidate, &listed, err, err_size) : -ENOMEM;
		if (ret >= 0 && listed.count)
			ret = machine_testlists(b, &listed, testlists);
		if (ret >= 0 && !listed.count) {
			ret = step_put(pw, b, step, k, candidate, "good",
				       "its testlists run none of the regressed tests (no boot)", true,
				       err, err_size);
			judged = true;
		} else if (ret >= 0) {
			/* Queued already by a master stopped before it recorded so: running. */
			ret = bci_store_jobs_each(pw->store, candidate, "fast", NULL, NULL, err,
						  err_size);
			if (ret == 0)
				ret = bci_schedule_bisect_queue(&s, candidate, &b->machines,
								(const char *const *)testlists,
								inv->reruns ? (unsigned)inv->reruns : 1,
								err, err_size);
		}
		for (size_t i = 0; testlists && i < b->machines.count; i++)
			free(testlists[i]);
		free(testlists);
		bci_strv_free(&listed);
		if (ret < 0)
			break;
		if (judged)
			continue;
		if (ret == 0) {
			if ((ret = step_put(pw, b, step, k, candidate, "skipped",
					    "every machine to run it on is out of the schedule", true,
					    err, err_size)) < 0)
				break;
			continue;
		}
		bci_patchwork_say(pw, "bisect %s: step %d: patch %d of %d (%s): %d run(s) queued",
				  b->build, step, k, b->patches, candidate, ret);
		ret = step_put(pw, b, step, k, candidate, "running", NULL, false, err, err_size);
		break;
	}
out:
	free(known);
	steps_free(&steps);
	series_row_free(&sr);
	return ret < 0 ? ret : acted;
}

/* ---- starting one ---- */

static int fast_ended(struct bci_store *store, const char *build, char *err, size_t err_size)
{
	struct jobs_state j = { 0 };
	int ret = bci_store_jobs_each(store, build, "fast", job_state, &j, err, err_size);

	return ret < 0 ? ret : j.jobs > 0 && !j.open;
}

int bci_patchwork_bisect_start(struct bci_patchwork *pw, const char *build, bool by_hand,
			       char *err, size_t err_size)
{
	struct bci_schedule_issues issues = { 0 };
	struct series_row sr = { 0 };
	struct bci_strv tests = { 0 }, machines = { 0 }, pairs = { 0 };
	char decision[300], *test_lines = NULL, *machine_lines = NULL, *pair_lines = NULL;
	char *text = NULL, why[600] = "";
	struct bci_series_patch *patches = NULL;
	size_t len = 0, count = 0;
	int ret;

	ret = bci_store_pw_series_by_build(pw->store, build, series_copy, &sr, err, err_size);
	if (ret == 0) {
		bci_message(err, err_size, "%s is no series' build (a tree's bisection is not"
			    " implemented)", build);
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
	if ((ret = bci_store_gate_get(pw->store, build, decision, sizeof(decision), err,
				      err_size)) <= 0 ||
	    (ret = fast_ended(pw->store, build, err, err_size)) <= 0) {
		if (ret == 0)
			bci_message(err, err_size, "%s: its fast tier (and its reruns) have not ended",
				    build);
		ret = by_hand && ret == 0 ? -EAGAIN : ret;
		goto out;
	}
	ret = bci_schedule_judge_report(pw->store, build, (void *)pw->data_dir, &issues, err,
					err_size);
	if (ret == -ENOENT) {
		/* No run of it came back (every job abandoned): no report, nothing to bisect. */
		bci_patchwork_say(pw, "bisect %s: nothing to bisect: %s", build, err);
		ret = 0;
	}
	for (size_t i = 0; ret > 0 && i < issues.n; i++) {
		char pair[1024];

		snprintf(pair, sizeof(pair), "%s %s", issues.v[i].machine, issues.v[i].test);
		if ((!bci_strv_contains(&tests, issues.v[i].test) &&
		     bci_strv_add(&tests, issues.v[i].test) < 0) ||
		    (!bci_strv_contains(&machines, issues.v[i].machine) &&
		     bci_strv_add(&machines, issues.v[i].machine) < 0) ||
		    (!bci_strv_contains(&pairs, pair) && bci_strv_add(&pairs, pair) < 0))
			ret = -ENOMEM;
	}
	if (ret < 0)
		goto out;
	if (!tests.count)
		snprintf(why, sizeof(why), "nothing to bisect: no possible new issue");
	/* A candidate is the mbox cut after a patch: it must hold the series' patches, one each. */
	if (!why[0] &&
	    series_patches(sr.mbox, &text, &len, &patches, &count, why, sizeof(why)) == 0 &&
	    count != (size_t)sr.total)
		snprintf(why, sizeof(why), "its mbox holds %zu message(s), the series %d patches",
			 count, sr.total);
	test_lines = bci_strv_lines(&tests);
	machine_lines = bci_strv_lines(&machines);
	pair_lines = bci_strv_lines(&pairs);
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

		snprintf(verdict, sizeof(verdict), "%s%s", tests.count ? "not bisected: " : "", why);
		bci_patchwork_say(pw, "bisect %s: %s", build, verdict);
		ret = bci_store_bisect_end(pw->store, build, "done", verdict, err, err_size);
		goto out;
	}
	for (char *nl = strchr(test_lines, '\n'); nl && nl[1]; nl = strchr(nl, '\n'))
		*nl = ' ';
	bci_patchwork_say(pw, "bisect %s: started: %d patches, %zu test(s): %.*s", build, sr.total,
			  tests.count, (int)strcspn(test_lines, "\n"), test_lines);
	ret = 1;
out:
	bci_series_patches_free(patches, count);
	free(text);
	bci_strv_free(&pairs);
	free(pair_lines);
	bci_schedule_issues_free(&issues);
	bci_strv_free(&tests);
	bci_strv_free(&machines);
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

static int running_take(const struct bci_store_bisect *row, void *ctx)
{
	struct bci_strv *builds = ctx;

	return bci_strv_add(builds, row->build);
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
		ret = bci_store_bisects_each(pw->store, "running", running_take, &running, err,
					     err_size);
	for (size_t i = 0; ret >= 0 && i < running.count; i++) {
		struct bisect b = { 0 };
		int one;

		if (pw->stop && atomic_load(pw->stop))
			break;
		one = bci_store_bisect_get(pw->store, running.items[i], bisect_copy, &b, err,
					   err_size);
		if (one > 0 && !strcmp(b.project, pw->project->name))
			one = advance(pw, inv, &b, err, err_size);
		*acted += one > 0;
		/* A fault that will not go away (no mbox, no series) stops it, said; others retry. */
		char why[1024];

		snprintf(why, sizeof(why), "stopped: %s", err);
		if ((one == -ENOENT || one == -EINVAL || one == -EPROTO) &&
		    bci_store_bisect_end(pw->store, running.items[i], "stopped", why, err,
					 err_size) == 0)
			bci_patchwork_say(pw, "bisect %s: %s", running.items[i], why);
		else if (one < 0 && one != -EINTR)
			bci_patchwork_say(pw, "bisect %s: %s", running.items[i], err);
		first = first || one == -EINTR ? first : one < 0 ? one : 0;
		bisect_free(&b);
	}
	bci_strv_free(&due.builds);
	bci_strv_free(&running);
	bci_inventory_free(inv);
	if (ret < 0)
		bci_patchwork_say(pw, "bisect: %s", err);
	return ret < 0 ? ret : first;
}
