// SPDX-License-Identifier: MIT
/*
 * A bisection moved on (bisect.h, "driver.c"), whatever it bisects; each
 * step a row of the store, written before what it starts:
 *
 *   plan     the next count K of changes (plan.c: git bisect's choice)
 *   build    candidate K, the kind's way (a series' mbox cut, a tree's
 *            commit), published not queued; one that does not apply or
 *            build is skipped, as git bisect skip
 *   run      the regressed tests the candidate's testlists hold, as jobs of
 *            their own (kind bisect, ahead of any tier's), the inventory's
 *            reruns times in all, in turn on the machines where they
 *            regressed; a candidate whose testlists hold none of them has
 *            not got them (good, no boot)
 *   judge    once its jobs have ended: bad when a regressed test failed in
 *            every run of it, good when every one passed in every run,
 *            flaky otherwise (the bisection ends: not reproduced)
 *   answer   the first bad change, not reproduced or inconclusive: told the
 *            kind's way, then written to the store (so an answer not told
 *            for a fault is told again next round)
 */
#include "bisect.h"

#include "../report/report.h"
#include "../schedule/inventory.h"
#include "../schedule/judge.h"
#include "../schedule/schedule.h"
#include "../store/store.h"
#include "message.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void bci_bisector_say(const struct bci_bisector *bz, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (!bz->say)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	bz->say(bz->say_ctx, line);
}

/* ---- what the store holds, copied ---- */

void bci_bisection_free(struct bci_bisection *b)
{
	free(b->build);
	free(b->project);
	free(b->state);
	free(b->verdict);
	bci_strv_free(&b->tests);
	bci_strv_free(&b->machines);
	bci_strv_free(&b->pair_machine);
	bci_strv_free(&b->pair_test);
	bci_strv_free(&b->commits);
	memset(b, 0, sizeof(*b));
}

bool bci_bisection_is_tree(const struct bci_bisection *b)
{
	return b->commits.count > 0;
}

/* Whether @test regressed on @machine. */
static bool paired(const struct bci_bisection *b, const char *machine, const char *test)
{
	for (size_t i = 0; i < b->pair_test.count; i++)
		if (!strcmp(b->pair_machine.items[i], machine) && !strcmp(b->pair_test.items[i], test))
			return true;
	return false;
}

static int bisection_copy(const struct bci_store_bisect *row, void *ctx)
{
	struct bci_bisection *b = ctx;

	bci_bisection_free(b);
	b->build = strdup(row->build);
	b->project = strdup(row->project);
	b->state = strdup(row->state);
	b->verdict = row->verdict ? strdup(row->verdict) : NULL;
	b->series = row->series;
	b->patches = row->patches;
	if (!b->build || !b->project || !b->state || (row->verdict && !b->verdict) ||
	    bci_strv_split(&b->tests, row->tests, "\n") < 0 ||
	    bci_strv_split(&b->machines, row->machines, "\n") < 0 ||
	    (row->commits && bci_strv_split(&b->commits, row->commits, "\n") < 0))
		return -ENOMEM;
	for (const char *p = row->pairs; *p;) {
		size_t n = strcspn(p, "\n"), m = strcspn(p, " ");

		if (m >= n || bci_strv_addn(&b->pair_machine, p, m) < 0 ||
		    bci_strv_addn(&b->pair_test, p + m + 1, n - m - 1) < 0)
			return m >= n ? -EPROTO : -ENOMEM;
		p += n + (p[n] == '\n');
	}
	/* A tree's range names each candidate: one commit a change. */
	if (row->commits && b->commits.count != (size_t)b->patches)
		return -EPROTO;
	return 0;
}

int bci_bisection_load(struct bci_store *store, const char *build, struct bci_bisection *out,
		       char *err, size_t err_size)
{
	int ret = bci_store_bisect_get(store, build, bisection_copy, out, err, err_size);

	if (ret == -EPROTO)
		bci_message(err, err_size, "bisect %s: its row in the store is damaged (its pairs"
			    " or its commits)", build);
	return ret;
}

void bci_bisect_steps_free(struct bci_bisect_steps *s)
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
	struct bci_bisect_steps *s = ctx;
	struct bci_bisect_step *grown = realloc(s->v, (s->n + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	s->v = grown;
	grown[s->n] = (struct bci_bisect_step){ row->step, row->patches, strdup(row->candidate),
						strdup(row->state),
						row->note ? strdup(row->note) : NULL };
	s->n++;
	return grown[s->n - 1].candidate && grown[s->n - 1].state &&
	       (!row->note || grown[s->n - 1].note) ? 0 : -ENOMEM;
}

int bci_bisect_steps_load(struct bci_store *store, const char *build,
			  struct bci_bisect_steps *out, char *err, size_t err_size)
{
	bci_bisect_steps_free(out);
	return bci_store_bisect_steps_each(store, build, step_copy, out, err, err_size);
}

static int step_put(const struct bci_bisector *bz, const struct bci_bisection *b,
		    const struct bci_bisect_kind *kind, int step, int patches,
		    const char *candidate, const char *state, const char *note, bool ended,
		    char *err, size_t err_size)
{
	struct bci_store_bisect_step row = {
		.build = b->build, .step = step, .patches = patches, .candidate = candidate,
		.state = state, .note = note, .ended = ended ? (double)time(NULL) : 0,
	};

	if (ended)
		bci_bisector_say(bz, "bisect %s: step %d: %s %d of %d (%s): %s: %s", b->build, step,
				 kind->unit, patches, b->patches, candidate, state, note ? note : "");
	return bci_store_bisect_step_put(bz->store, &row, err, err_size);
}

/* ---- a step's runs ---- */

bool bci_bisect_line_runs(const char *line, const char *test)
{
	size_t n = strlen(line);

	return !strncmp(test, line, n) && (test[n] == '\0' || test[n] == '@');
}

/* Whether testlist line @line is one of bootci's suspend cycles. */
static bool suspend_line(const char *line)
{
	return !strncmp(line, BCI_BISECT_SUSPEND_PREFIX, strlen(BCI_BISECT_SUSPEND_PREFIX));
}

/*
 * The regressed tests @candidate's testlists run (a line naming a test, its
 * subtest or its binary runs it; the suspend latency, any suspend cycle)
 * into @listed, and its suspend cycles' lines into @cycles: 0, -errno.
 */
static int candidate_listed(const struct bci_bisector *bz, const struct bci_bisection *b,
			    const char *candidate, struct bci_strv *listed, struct bci_strv *cycles,
			    char *err, size_t err_size)
{
	struct bci_schedule s = { .store = bz->store, .data_dir = bz->data_dir };
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
	for (size_t j = 0; ret >= 0 && j < lines.count; j++)
		if (suspend_line(lines.items[j]) && !bci_strv_contains(cycles, lines.items[j]))
			ret = bci_strv_add(cycles, lines.items[j]);
	for (size_t i = 0; ret >= 0 && i < b->tests.count; i++) {
		bool runs = !strcmp(b->tests.items[i], BCI_BISECT_LATENCY) && cycles->count;

		for (size_t j = 0; j < lines.count && !runs; j++)
			runs = lines.items[j][0] != '#' &&
			       bci_bisect_line_runs(lines.items[j], b->tests.items[i]);
		if (runs)
			ret = bci_strv_add(listed, b->tests.items[i]);
	}
	bci_strv_free(&lines);
	return ret < 0 ? ret : 0;
}

/*
 * Each machine's testlist for a step: the @listed tests that regressed on
 * it, its suspend cycles for the latency (malloc'ed, "": none).
 */
static int machine_testlists(const struct bci_bisection *b, const struct bci_strv *listed,
			     const struct bci_strv *cycles, char **out)
{
	for (size_t i = 0; i < b->machines.count; i++) {
		struct bci_strv mine = { 0 };
		int ret = 0;

		for (size_t t = 0; t < listed->count && ret >= 0; t++) {
			if (!paired(b, b->machines.items[i], listed->items[t]))
				continue;
			if (strcmp(listed->items[t], BCI_BISECT_LATENCY)) {
				ret = bci_strv_add(&mine, listed->items[t]);
				continue;
			}
			for (size_t c = 0; c < cycles->count && ret >= 0; c++)
				ret = bci_strv_add(&mine, cycles->items[c]);
		}
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

/*
 * A test's runs and failures in a step. Every result of a regressed test in
 * a candidate's runs counts: its jobs run only those tests, each on a
 * machine where it regressed or, when that one was taken out, on another
 * of its shard group (the scheduler moved the job).
 */
struct tally {
	const struct bci_bisection *b;
	unsigned *runs, *failed;
};

static int tally_result(const struct bci_store_result *result, void *ctx)
{
	struct tally *t = ctx;

	for (size_t i = 0; i < t->b->tests.count; i++) {
		if (strcmp(result->name, t->b->tests.items[i]) || !strcmp(result->result, "notrun"))
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

/* ---- the suspend latency ---- */

struct latencies {
	double *v;
	size_t n;
};

static int latency_take(const struct bci_store_suspend *cycle, void *ctx)
{
	struct latencies *l = ctx;
	double *grown;

	if (cycle->latency < 0)
		return 0;
	grown = realloc(l->v, (l->n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	l->v = grown;
	l->v[l->n++] = cycle->latency;
	return 0;
}

static int double_order(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The slowest baseline cycle of each machine whose latency regressed in
 * @b's build (its report, as the judge reads it): what a step's median
 * latency is held against, as the report held the build's.
 */
struct limits {
	struct bci_strv machines;
	double *max;
	double any;			/* the largest: a machine with none of its own */
};

static void limits_free(struct limits *l)
{
	bci_strv_free(&l->machines);
	free(l->max);
}

static int limits_load(const struct bci_bisector *bz, const struct bci_bisection *b,
		       struct limits *l, char *err, size_t err_size)
{
	struct bci_report *report = NULL;
	int ret = bci_schedule_judge_build(bz->store, b->build, bz->data_dir, &report, err,
					   err_size);

	l->max = ret < 0 ? NULL : calloc(report->n_suspend + 1, sizeof(*l->max));
	if (ret >= 0 && !l->max)
		ret = -ENOMEM;
	for (size_t i = 0; ret >= 0 && i < report->n_suspend; i++) {
		const struct bci_report_suspend *sp = &report->suspend[i];

		if (!sp->regression)
			continue;
		l->max[l->machines.count] = sp->baseline_max;
		l->any = sp->baseline_max > l->any ? sp->baseline_max : l->any;
		ret = bci_strv_add(&l->machines, sp->machine);
	}
	if (ret >= 0 && !l->machines.count) {
		bci_message(err, err_size, "bisect %s: its build's report has no suspend latency"
			    " regression any more", b->build);
		ret = -EPROTO;
	}
	bci_report_free(report);
	return ret < 0 ? ret : 0;
}

/*
 * A run's suspend latency judged: 1 with *@slow (its median beyond the
 * machine's baseline), 0 when it has no cycle with a latency, -errno.
 */
static int run_latency(const struct bci_bisector *bz, const struct limits *l, int64_t run,
		       const char *machine, bool *slow, double *median, char *err, size_t err_size)
{
	struct latencies lat = { 0 };
	double limit = l->any;
	int ret = bci_store_suspends_each(bz->store, run, latency_take, &lat, err, err_size);

	if (ret < 0 || !lat.n) {
		free(lat.v);
		return ret < 0 ? ret : 0;
	}
	qsort(lat.v, lat.n, sizeof(*lat.v), double_order);
	*median = lat.n % 2 ? lat.v[lat.n / 2] : (lat.v[lat.n / 2 - 1] + lat.v[lat.n / 2]) / 2;
	for (size_t i = 0; i < l->machines.count; i++)
		if (!strcmp(l->machines.items[i], machine))
			limit = l->max[i];
	*slow = *median > limit;
	free(lat.v);
	return 1;
}

/*
 * @candidate's runs judged, once its jobs have ended: 1 with @state and
 * @note set, 0 while they run, -errno.
 */
static int step_judge(const struct bci_bisector *bz, const struct bci_bisection *b,
		      const char *candidate, const struct bci_strv *listed, const char **state,
		      char *note, size_t note_size, char *err, size_t err_size)
{
	struct jobs_state j = { .store = bz->store, .err = err, .err_size = err_size };
	struct run_keys keys = { 0 };
	struct limits limits = { 0 };
	bool latency = bci_strv_contains(listed, BCI_BISECT_LATENCY);
	unsigned *runs = calloc(b->tests.count + 1, sizeof(*runs));
	unsigned *failed = calloc(b->tests.count + 1, sizeof(*failed));
	struct tally t = { b, runs, failed };
	bool bad = false, all_good = true, none = true;
	size_t len = 0;
	int ret;

	if (!runs || !failed) {
		ret = -ENOMEM;
		goto out;
	}
	ret = bci_store_jobs_each(bz->store, candidate, "fast", job_state, &j, err, err_size);
	if (ret < 0 || j.open) {
		ret = ret < 0 ? ret : 0;
		goto out;
	}
	ret = bci_store_build_runs_each(bz->store, candidate, run_key, &keys, err, err_size);
	for (size_t i = 0; ret >= 0 && i < keys.n; i++)
		ret = bci_store_results_each_brief(bz->store, keys.v[i], tally_result, &t, err,
						   err_size);
	if (ret >= 0 && latency)
		ret = limits_load(bz, b, &limits, err, err_size);
	for (size_t i = 0; ret >= 0 && latency && i < b->tests.count; i++) {
		if (strcmp(b->tests.items[i], BCI_BISECT_LATENCY))
			continue;
		for (size_t r = 0; ret >= 0 && r < keys.n; r++) {
			bool slow = false;
			double median = 0;

			ret = run_latency(bz, &limits, keys.v[r], keys.machines.items[r], &slow,
					  &median, err, err_size);
			runs[i] += ret > 0;
			failed[i] += ret > 0 && slow;
		}
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
		if (!strcmp(b->tests.items[i], BCI_BISECT_LATENCY))
			snprintf(line, sizeof(line), "%ssuspend latency beyond the baseline's in %u of"
				 " %u run(s)", len ? "; " : "", failed[i], runs[i]);
		else
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
	limits_free(&limits);
	bci_strv_free(&keys.machines);
	free(keys.v);
	free(runs);
	free(failed);
	return ret;
}

/* ---- one bisection moved on ---- */

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

/* Whether @b still runs (not stopped by hand meanwhile): 1, 0 (said), -errno. */
static int still_running(const struct bci_bisector *bz, const struct bci_bisection *b, char *err,
			 size_t err_size)
{
	struct bci_bisection now = { 0 };
	int ret = bci_bisection_load(bz->store, b->build, &now, err, err_size);

	if (ret > 0 && strcmp(now.state, "running")) {
		bci_bisector_say(bz, "bisect %s: %s meanwhile: nothing queued", b->build, now.state);
		ret = 0;
	}
	bci_bisection_free(&now);
	return ret;
}

void bci_bisect_utf8_whole(char *s)
{
	size_t n = strlen(s), start = n, need;

	while (start > 0 && n - start < 4 && ((unsigned char)s[start - 1] & 0xc0) == 0x80)
		start--;
	if (start == 0 || ((unsigned char)s[start - 1] & 0x80) == 0)
		return;
	start--;
	unsigned char lead = (unsigned char)s[start];

	need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	if (n - start < need)
		s[start] = '\0';
}

/* The answer: told the kind's way, then the store's row ended with it. */
static int answer(const struct bci_bisector *bz, const struct bci_bisection *b,
		  const struct bci_bisect_kind *kind, const struct bci_bisect_steps *steps,
		  enum bci_bisect_next next, int k, const char *why, char *err, size_t err_size)
{
	char verdict[1200], what[800];
	int ret;

	if (next == BCI_BISECT_FOUND) {
		kind->describe(kind->ctx, b, k, what, sizeof(what));
		bci_bisect_utf8_whole(what);
		snprintf(verdict, sizeof(verdict), "first bad %s %d of %d: %s", kind->unit, k,
			 b->patches, what);
	} else {
		snprintf(verdict, sizeof(verdict), "%s: %s",
			 next == BCI_BISECT_NOT_REPRODUCED ? "not reproduced" : "inconclusive", why);
	}
	bci_bisect_utf8_whole(verdict);
	if ((ret = kind->answer(kind->ctx, b, steps, next, k, verdict, err, err_size)) < 0)
		return ret;
	if ((ret = bci_store_bisect_end(bz->store, b->build, "done", verdict, err, err_size)) < 0)
		return ret;
	bci_bisector_say(bz, "bisect %s: %s", b->build, verdict);
	return 0;
}

/* Candidate @k's runs queued: the jobs queued (0: no machine can run them, or none needed). */
static int step_queue(const struct bci_bisector *bz, const struct bci_bisection *b,
		      const char *candidate, const struct bci_strv *listed,
		      const struct bci_strv *cycles, char *err, size_t err_size)
{
	struct bci_schedule s = { .store = bz->store, .inventory = bz->inventory,
				  .data_dir = bz->data_dir };
	char **testlists = calloc(b->machines.count + 1, sizeof(*testlists));
	unsigned long reruns = bz->inventory->reruns;
	int ret;

	ret = testlists ? machine_testlists(b, listed, cycles, testlists) : -ENOMEM;
	/* Queued already by a master stopped before it recorded so: running. */
	if (ret >= 0)
		ret = bci_store_jobs_each(bz->store, candidate, "fast", NULL, NULL, err, err_size);
	if (ret == 0)
		ret = bci_schedule_bisect_queue(&s, candidate, &b->machines,
						(const char *const *)testlists,
						reruns ? (unsigned)reruns : 1, err, err_size);
	for (size_t i = 0; testlists && i < b->machines.count; i++)
		free(testlists[i]);
	free(testlists);
	return ret;
}

int bci_bisect_advance(const struct bci_bisector *bz, const struct bci_bisection *b,
		       const struct bci_bisect_kind *kind, char *err, size_t err_size)
{
	struct bci_bisect_steps steps = { 0 };
	struct bci_bisect_known *known = NULL;
	int acted = 0, ret;

	for (;;) {
		struct bci_bisect_step *last;
		char candidate[300], why[1024], note[1024] = "";
		const char *state = NULL;
		size_t n_known = 0;
		int k = 0;
		enum bci_bisect_next next;

		if ((ret = bci_bisect_steps_load(bz->store, b->build, &steps, err, err_size)) < 0)
			break;
		last = steps.n ? &steps.v[steps.n - 1] : NULL;
		if (last && !strcmp(last->state, "running")) {
			struct bci_strv listed = { 0 }, cycles = { 0 };

			ret = candidate_listed(bz, b, last->candidate, &listed, &cycles, err,
					       err_size);
			if (ret >= 0)
				ret = step_judge(bz, b, last->candidate, &listed, &state, note,
						 sizeof(note), err, err_size);
			bci_strv_free(&listed);
			bci_strv_free(&cycles);
			if (ret <= 0)
				break;
			if ((ret = step_put(bz, b, kind, last->step, last->patches, last->candidate,
					    state, note, true, err, err_size)) < 0)
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
				       bz->inventory->bisect_steps
					       ? (int)bz->inventory->bisect_steps
					       : BCI_INVENTORY_BISECT_STEPS_DEFAULT,
				       &k, why, sizeof(why));
		if (next != BCI_BISECT_TRY) {
			ret = answer(bz, b, kind, &steps, next, k, why, err, err_size);
			acted = 1;
			break;
		}
		int step = last && !strcmp(last->state, "building") ? last->step : (int)steps.n + 1;

		kind->candidate(kind->ctx, b, k, candidate, sizeof(candidate));
		if ((ret = step_put(bz, b, kind, step, k, candidate, "building", NULL, false, err,
				    err_size)) < 0)
			break;
		acted = 1;
		ret = kind->build(kind->ctx, b, k, candidate, why, sizeof(why), err, err_size);
		if (ret < 0)
			break;
		if (ret == 0) {
			if ((ret = step_put(bz, b, kind, step, k, candidate, "skipped", why, true, err,
					    err_size)) < 0)
				break;
			continue;
		}
		/* Stopped by hand while it built: nothing is queued. */
		if ((ret = still_running(bz, b, err, err_size)) <= 0)
			break;
		struct bci_strv listed = { 0 }, cycles = { 0 };

		ret = candidate_listed(bz, b, candidate, &listed, &cycles, err, err_size);
		if (ret >= 0 && !listed.count) {
			bci_strv_free(&listed);
			bci_strv_free(&cycles);
			if ((ret = step_put(bz, b, kind, step, k, candidate, "good",
					    "its testlists run none of the regressed tests (no boot)",
					    true, err, err_size)) < 0)
				break;
			continue;
		}
		if (ret >= 0)
			ret = step_queue(bz, b, candidate, &listed, &cycles, err, err_size);
		bci_strv_free(&listed);
		bci_strv_free(&cycles);
		if (ret < 0)
			break;
		if (ret == 0) {
			if ((ret = step_put(bz, b, kind, step, k, candidate, "skipped",
					    "every machine to run it on is out of the schedule", true,
					    err, err_size)) < 0)
				break;
			continue;
		}
		bci_bisector_say(bz, "bisect %s: step %d: %s %d of %d (%s): %d run(s) queued",
				 b->build, step, kind->unit, k, b->patches, candidate, ret);
		ret = step_put(bz, b, kind, step, k, candidate, "running", NULL, false, err,
			       err_size);
		break;
	}
	free(known);
	bci_bisect_steps_free(&steps);
	return ret < 0 ? ret : acted;
}

/* A fault that will not go away (no series, a damaged row) stops @b, said; others are said. */
int bci_bisect_fault(const struct bci_bisector *bz, const struct bci_bisection *b, int ret,
		     char *err, size_t err_size)
{
	char why[1024];

	if (ret == -ENOENT || ret == -EINVAL || ret == -EPROTO) {
		snprintf(why, sizeof(why), "stopped: %s", err);
		if (bci_store_bisect_end(bz->store, b->build, "stopped", why, err, err_size) == 0)
			bci_bisector_say(bz, "bisect %s: %s", b->build, why);
	} else if (ret < 0 && ret != -EINTR) {
		bci_bisector_say(bz, "bisect %s: %s", b->build, err);
	}
	return ret;
}

int bci_bisect_move(const struct bci_bisector *bz, const struct bci_bisection *b,
		    const struct bci_bisect_kind *kind, char *err, size_t err_size)
{
	int ret = bci_bisect_advance(bz, b, kind, err, err_size);

	return ret < 0 ? bci_bisect_fault(bz, b, ret, err, err_size) : ret;
}

static int running_take(const struct bci_store_bisect *row, void *ctx)
{
	return bci_strv_add(ctx, row->build);
}

int bci_bisect_running(struct bci_store *store, struct bci_strv *builds, char *err,
		       size_t err_size)
{
	return bci_store_bisects_each(store, "running", running_take, builds, err, err_size);
}

/* ---- starting one ---- */

int bci_bisect_ready(struct bci_store *store, const char *build, char *err, size_t err_size)
{
	struct jobs_state j = { 0 };
	char decision[300];
	int ret = bci_store_gate_get(store, build, decision, sizeof(decision), err, err_size);

	if (ret <= 0)
		return ret;
	ret = bci_store_jobs_each(store, build, "fast", job_state, &j, err, err_size);
	return ret < 0 ? ret : j.jobs > 0 && !j.open;
}

void bci_bisect_regressions_free(struct bci_bisect_regressions *r)
{
	bci_strv_free(&r->tests);
	bci_strv_free(&r->machines);
	bci_strv_free(&r->pairs);
}

static int add_once(struct bci_strv *v, const char *s)
{
	return bci_strv_contains(v, s) ? 0 : bci_strv_add(v, s);
}

int bci_bisect_regressions(struct bci_store *store, const char *data_dir, const char *build,
			   struct bci_bisect_regressions *out, char *err, size_t err_size)
{
	struct bci_report *report = NULL;
	int ret = bci_schedule_judge_build(store, build, data_dir, &report, err, err_size);

	/* No run of it came back (every job abandoned): no report. */
	if (ret == -ENOENT)
		return 0;
	for (size_t i = 0; ret >= 0 && i < report->n_changes + report->n_suspend; i++) {
		const char *test, *machine;
		char pair[1024];

		if (i < report->n_changes) {
			if (report->changes[i].verdict != BCI_VERDICT_NEW)
				continue;
			test = report->changes[i].test;
			machine = report->changes[i].machine;
		} else {
			if (!report->suspend[i - report->n_changes].regression)
				continue;
			test = BCI_BISECT_LATENCY;
			machine = report->suspend[i - report->n_changes].machine;
		}
		snprintf(pair, sizeof(pair), "%s %s", machine, test);
		if (add_once(&out->tests, test) < 0 || add_once(&out->machines, machine) < 0 ||
		    add_once(&out->pairs, pair) < 0)
			ret = -ENOMEM;
	}
	bci_report_free(report);
	return ret < 0 ? ret : 1;
}
