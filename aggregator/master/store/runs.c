// SPDX-License-Identifier: MIT
/*
 * The store's runs and what each holds: boots, crash records, results,
 * suspend cycles (store.h).
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- runs ---- */

int bci_store_run_add(struct bci_store *store, const struct bci_store_run *run, int64_t *key,
		      char *err, size_t err_size)
{
	struct bci_store_value params[13];
	int64_t machine, build = -1, id = -1;
	int ret;

	if (!run->run_id || !*run->run_id || !run->digest || !run->archive_path || !run->state) {
		snprintf(err, err_size, "a run needs an id, an archive digest and path, and a state");
		return -EINVAL;
	}
	ret = bci_store_machine_ensure(store, run->machine, &machine, err, err_size);
	if (ret < 0)
		return ret;
	if (run->build) {
		ret = bci_store_build_key(store, run->build, &build, err, err_size);
		if (ret < 0)
			return ret;
	}
	params[0] = value_int(machine);
	params[1] = value_text(run->run_id);
	params[2] = build >= 0 ? value_int(build) : value_text(NULL);
	params[3] = value_text(run->image_id);
	params[4] = value_text(run->kernel);
	params[5] = value_text(run->cmdline);
	params[6] = value_text(run->digest);
	params[7] = value_text(run->archive_path);
	params[8] = value_text(run->archive_root ? run->archive_root : "");
	params[9] = value_text(run->state);
	params[10] = value_real(run->started, 1e-9);
	params[11] = value_real(run->ended, 1e-9);
	params[12] = value_real(run->ingested > 0 ? run->ingested : bci_store_now(), 0);
	ret = bci_store_query(store, S_RUN_ADD, params, 13, bci_store_row_first_int, &id, err, err_size);
	if (ret == -EEXIST)
		snprintf(err, err_size, "machine %s already has a run '%s'", run->machine, run->run_id);
	if (ret < 0)
		return ret;
	if (key)
		*key = id;
	return 0;
}

static void run_from_row(const struct bci_store_value *c, struct bci_store_run *run)
{
	*run = (struct bci_store_run){
		.key = column_int(&c[0], -1),
		.machine = column_text(&c[1]),
		.run_id = column_text(&c[2]),
		.build = column_text(&c[3]),
		.image_id = column_text(&c[4]),
		.kernel = column_text(&c[5]),
		.cmdline = column_text(&c[6]),
		.digest = column_text(&c[7]),
		.archive_path = column_text(&c[8]),
		.archive_root = column_text(&c[9]),
		.state = column_text(&c[10]),
		.started = column_real(&c[11], 0),
		.ended = column_real(&c[12], 0),
		.ingested = column_real(&c[13], 0),
	};
}

struct run_walk {
	int (*fn)(const struct bci_store_run *run, void *ctx);
	void *ctx;
	int count;
};

static int row_run(const struct bci_store_value *c, int n, void *ctx)
{
	struct run_walk *walk = ctx;
	struct bci_store_run run;

	if (n < RUN_COLUMN_COUNT)
		return -EPROTO;
	run_from_row(c, &run);
	walk->count++;
	return walk->fn ? walk->fn(&run, walk->ctx) : 0;
}

int bci_store_run_get(struct bci_store *store, const char *machine, const char *run_id,
		      int (*fn)(const struct bci_store_run *run, void *ctx), void *ctx,
		      char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(machine), value_text(run_id) };
	struct run_walk walk = { fn, ctx, 0 };
	int ret;

	ret = bci_store_query(store, S_RUN_GET, params, 2, row_run, &walk, err, err_size);
	if (ret)
		return ret;
	if (!walk.count) {
		snprintf(err, err_size, "machine %s has no run '%s' in the store", machine, run_id);
		return -ENOENT;
	}
	return 0;
}

int bci_store_runs_each(struct bci_store *store, const char *machine,
			int (*fn)(const struct bci_store_run *run, void *ctx), void *ctx,
			char *err, size_t err_size)
{
	struct bci_store_value param = value_text(machine);
	struct run_walk walk = { fn, ctx, 0 };
	int ret;

	if (machine)
		ret = bci_store_query(store, S_RUNS_MACHINE, &param, 1, row_run, &walk, err, err_size);
	else
		ret = bci_store_query(store, S_RUNS_ALL, NULL, 0, row_run, &walk, err, err_size);
	return ret ? ret : walk.count;
}

int bci_store_machine_own_runs_each(struct bci_store *store, const char *machine,
				    int (*fn)(const struct bci_store_run *run, void *ctx), void *ctx,
				    char *err, size_t err_size)
{
	struct bci_store_value param = value_text(machine);
	struct run_walk walk = { fn, ctx, 0 };
	int ret = bci_store_query(store, S_RUNS_MACHINE_OWN, &param, 1, row_run, &walk, err,
				  err_size);

	return ret ? ret : walk.count;
}

/* ---- what a run holds ---- */

int bci_store_boot_add(struct bci_store *store, int64_t run, const struct bci_store_boot *boot,
		       char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_int(run), value_int(boot->index), value_real(boot->time, 1e-9),
		value_text(boot->kernel), value_text(boot->cmdline), value_text(boot->previous),
		value_text(boot->ending),
	};
	int ret;

	ret = bci_store_query(store, S_BOOT_ADD, params, 7, NULL, NULL, err, err_size);
	if (ret == -EEXIST)
		snprintf(err, err_size, "boot %d is stored twice", boot->index);
	return ret;
}

int bci_store_crash_add(struct bci_store *store, int64_t run, const struct bci_store_crash *crash,
			char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_int(run), value_int(crash->boot), value_text(crash->source),
		value_text(crash->name), value_text(crash->path),
	};

	return bci_store_query(store, S_CRASH_ADD, params, 5, NULL, NULL, err, err_size);
}

static int result_insert(struct bci_store *store, int64_t run,
			 const struct bci_store_result *result, char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_int(run), value_int(result->job), value_text(result->name),
		value_text(result->result), value_real(result->duration, 0),
		value_int(result->dmesg_warnings ? 1 : 0),
	};

	if (!result->name || !result->result) {
		snprintf(err, err_size, "a result needs a test name and a result");
		return -EINVAL;
	}
	return bci_store_query(store, S_RESULT_ADD, params, 6, NULL, NULL, err, err_size);
}

/* The largest result id now, into *@id: every row stored after it has a larger one. */
static int results_max_id(struct bci_store *store, int64_t *id, char *err, size_t err_size)
{
	*id = 0;
	return bci_store_query(store, S_RESULTS_MAX_ID, NULL, 0, bci_store_row_first_int, id, err,
			       err_size);
}

/*
 * The run's stretch of result ids (schema 5, read by S_RESULTS) grown to
 * hold the rows just stored: every id past @before, up to the largest now.
 */
static int results_range_extend(struct bci_store *store, int64_t run, int64_t before, char *err,
				size_t err_size)
{
	struct bci_store_value params[3] = { value_int(run), value_int(before + 1) };
	int64_t after;
	int ret = results_max_id(store, &after, err, err_size);

	if (ret < 0)
		return ret;
	params[2] = value_int(after);
	return bci_store_query(store, S_RUN_RESULTS_RANGE, params, 3, NULL, NULL, err, err_size);
}

int bci_store_result_add(struct bci_store *store, int64_t run, const struct bci_store_result *result,
			 char *err, size_t err_size)
{
	int64_t before;
	int ret = results_max_id(store, &before, err, err_size);

	if (ret == 0)
		ret = result_insert(store, run, result, err, err_size);
	if (ret == 0)
		ret = results_range_extend(store, run, before, err, err_size);

	/* The test's mean duration, for the scheduler's splits (test_durations). */
	if (ret == 0 && result->duration >= 0) {
		struct bci_store_value duration[] = {
			value_text(result->name), value_real(result->duration, 0),
		};

		ret = bci_store_query(store, S_DURATION_ADD, duration, 2, NULL, NULL, err, err_size);
	}
	return ret;
}

/* Rows @results[0..@rows) in one statement @id, @params room for them. */
static int results_insert_rows(struct bci_store *store, enum bci_store_statement id,
			       struct bci_store_value key, const struct bci_store_result *results,
			       size_t rows, struct bci_store_value *params, char *err,
			       size_t err_size)
{
	for (size_t k = 0; k < rows; k++) {
		const struct bci_store_result *r = &results[k];
		struct bci_store_value *p = &params[k * BCI_STORE_RESULT_VALUES];

		p[0] = key;
		p[1] = value_int(r->job);
		p[2] = value_text(r->name);
		p[3] = value_text(r->result);
		p[4] = value_real(r->duration, 0);
		p[5] = value_int(r->dmesg_warnings ? 1 : 0);
	}
	return bci_store_query(store, id, params, (int)(rows * BCI_STORE_RESULT_VALUES), NULL, NULL,
			       err, err_size);
}

int bci_store_results_add(struct bci_store *store, int64_t run,
			  const struct bci_store_result *results, size_t count, char *err,
			  size_t err_size)
{
	struct bci_store_value key = value_int(run), *params = NULL;
	int64_t before = 0;
	size_t i = 0;
	int ret = 0;

	for (size_t k = 0; k < count; k++)
		if (!results[k].name || !results[k].result) {
			snprintf(err, err_size, "a result needs a test name and a result");
			return -EINVAL;
		}
	if (count >= BCI_STORE_RESULTS_PER_SMALL_INSERT) {
		size_t rows = count >= BCI_STORE_RESULTS_PER_INSERT ? BCI_STORE_RESULTS_PER_INSERT :
								      BCI_STORE_RESULTS_PER_SMALL_INSERT;

		params = malloc(rows * BCI_STORE_RESULT_VALUES * sizeof(*params));
		if (!params) {
			snprintf(err, err_size, "%s", strerror(ENOMEM));
			return -ENOMEM;
		}
	}
	if (count)
		ret = results_max_id(store, &before, err, err_size);
	for (; ret == 0 && count - i >= BCI_STORE_RESULTS_PER_INSERT; i += BCI_STORE_RESULTS_PER_INSERT)
		ret = results_insert_rows(store, S_RESULTS_ADD_MANY, key, &results[i],
					  BCI_STORE_RESULTS_PER_INSERT, params, err, err_size);
	for (; ret == 0 && count - i >= BCI_STORE_RESULTS_PER_SMALL_INSERT;
	     i += BCI_STORE_RESULTS_PER_SMALL_INSERT)
		ret = results_insert_rows(store, S_RESULTS_ADD_SOME, key, &results[i],
					  BCI_STORE_RESULTS_PER_SMALL_INSERT, params, err, err_size);
	for (; ret == 0 && i < count; i++)
		ret = result_insert(store, run, &results[i], err, err_size);
	if (ret == 0 && count)
		ret = results_range_extend(store, run, before, err, err_size);
	if (ret == 0 && count)
		ret = bci_store_query(store, S_DURATIONS_PENDING_ADD, &key, 1, NULL, NULL, err,
				      err_size);
	free(params);
	return ret;
}

int bci_store_suspend_add(struct bci_store *store, int64_t run, const struct bci_store_suspend *cycle,
			  char *err, size_t err_size)
{
	struct bci_store_value params[] = {
		value_int(run), value_int(cycle->cycle), value_text(cycle->state),
		value_text(cycle->result), value_real(cycle->wall, 0),
		value_real(cycle->suspended, 0), value_real(cycle->latency, 0),
		value_real(cycle->kernel_suspend, 0), value_real(cycle->kernel_resume, 0),
		value_text(cycle->woke),
	};
	int ret;

	if (!cycle->state || !cycle->result) {
		snprintf(err, err_size, "suspend cycle %d needs a state and a result", cycle->cycle);
		return -EINVAL;
	}
	ret = bci_store_query(store, S_SUSPEND_ADD, params, 10, NULL, NULL, err, err_size);
	if (ret == -EEXIST)
		snprintf(err, err_size, "suspend cycle %d is stored twice", cycle->cycle);
	return ret;
}

struct each {
	void *fn;
	void *ctx;
	int count;
};

static int row_boot(const struct bci_store_value *c, int n, void *ctx)
{
	struct each *e = ctx;
	int (*fn)(const struct bci_store_boot *, void *) = e->fn;
	struct bci_store_boot boot;

	if (n < 6)
		return -EPROTO;
	boot = (struct bci_store_boot){
		.index = (int)column_int(&c[0], -1),
		.time = column_real(&c[1], 0),
		.kernel = column_text(&c[2]),
		.cmdline = column_text(&c[3]),
		.previous = column_text(&c[4]),
		.ending = column_text(&c[5]),
	};
	e->count++;
	return fn ? fn(&boot, e->ctx) : 0;
}

static int row_crash(const struct bci_store_value *c, int n, void *ctx)
{
	struct each *e = ctx;
	int (*fn)(const struct bci_store_crash *, void *) = e->fn;
	struct bci_store_crash crash;

	if (n < 4)
		return -EPROTO;
	crash = (struct bci_store_crash){
		.boot = (int)column_int(&c[0], -1),
		.source = column_text(&c[1]),
		.name = column_text(&c[2]),
		.path = column_text(&c[3]),
	};
	e->count++;
	return fn ? fn(&crash, e->ctx) : 0;
}

static void result_from_row(const struct bci_store_value *c, struct bci_store_result *result)
{
	*result = (struct bci_store_result){
		.job = (int)column_int(&c[0], -1),
		.name = column_text(&c[1]),
		.result = column_text(&c[2]),
		.duration = column_real(&c[3], -1),
		.dmesg_warnings = (int)column_int(&c[4], 0),
	};
}

static int row_result(const struct bci_store_value *c, int n, void *ctx)
{
	struct each *e = ctx;
	int (*fn)(const struct bci_store_result *, void *) = e->fn;
	struct bci_store_result result;

	if (n < 5)
		return -EPROTO;
	result_from_row(c, &result);
	e->count++;
	return fn ? fn(&result, e->ctx) : 0;
}

static int row_result_brief(const struct bci_store_value *c, int n, void *ctx)
{
	struct each *e = ctx;
	int (*fn)(const struct bci_store_result *, void *) = e->fn;
	struct bci_store_result result;

	if (n < 3)
		return -EPROTO;
	result = (struct bci_store_result){
		.job = (int)column_int(&c[0], -1), .name = column_text(&c[1]),
		.result = column_text(&c[2]), .duration = -1,
	};
	e->count++;
	return fn ? fn(&result, e->ctx) : 0;
}

static int row_suspend(const struct bci_store_value *c, int n, void *ctx)
{
	struct each *e = ctx;
	int (*fn)(const struct bci_store_suspend *, void *) = e->fn;
	struct bci_store_suspend cycle;

	if (n < 9)
		return -EPROTO;
	cycle = (struct bci_store_suspend){
		.cycle = (int)column_int(&c[0], -1),
		.state = column_text(&c[1]),
		.result = column_text(&c[2]),
		.wall = column_real(&c[3], -1),
		.suspended = column_real(&c[4], -1),
		.latency = column_real(&c[5], -1),
		.kernel_suspend = column_real(&c[6], -1),
		.kernel_resume = column_real(&c[7], -1),
		.woke = column_text(&c[8]),
	};
	e->count++;
	return fn ? fn(&cycle, e->ctx) : 0;
}

static int run_each(struct bci_store *store, enum bci_store_statement id, int64_t run,
		    bci_store_row_fn row, void *fn, void *ctx, char *err, size_t err_size)
{
	struct bci_store_value param = value_int(run);
	struct each e = { fn, ctx, 0 };
	int ret;

	ret = bci_store_query(store, id, &param, 1, row, &e, err, err_size);
	return ret ? ret : e.count;
}

int bci_store_boots_each(struct bci_store *store, int64_t run,
			 int (*fn)(const struct bci_store_boot *boot, void *ctx), void *ctx,
			 char *err, size_t err_size)
{
	return run_each(store, S_BOOTS, run, row_boot, (void *)fn, ctx, err, err_size);
}

int bci_store_crashes_each(struct bci_store *store, int64_t run,
			   int (*fn)(const struct bci_store_crash *crash, void *ctx), void *ctx,
			   char *err, size_t err_size)
{
	return run_each(store, S_CRASHES, run, row_crash, (void *)fn, ctx, err, err_size);
}

int bci_store_results_each(struct bci_store *store, int64_t run,
			   int (*fn)(const struct bci_store_result *result, void *ctx), void *ctx,
			   char *err, size_t err_size)
{
	return run_each(store, S_RESULTS, run, row_result, (void *)fn, ctx, err, err_size);
}

int bci_store_results_each_brief(struct bci_store *store, int64_t run,
				 int (*fn)(const struct bci_store_result *result, void *ctx),
				 void *ctx, char *err, size_t err_size)
{
	return run_each(store, S_RESULTS_BRIEF, run, row_result_brief, (void *)fn, ctx, err,
			err_size);
}

int bci_store_suspends_each(struct bci_store *store, int64_t run,
			    int (*fn)(const struct bci_store_suspend *cycle, void *ctx), void *ctx,
			    char *err, size_t err_size)
{
	return run_each(store, S_SUSPENDS, run, row_suspend, (void *)fn, ctx, err, err_size);
}

struct result_get {
	int (*fn)(const struct bci_store_run *run, const struct bci_store_result *result, void *ctx);
	void *ctx;
	int count;
};

static int row_run_result(const struct bci_store_value *c, int n, void *ctx)
{
	struct result_get *get = ctx;
	struct bci_store_run run;
	struct bci_store_result result;

	if (n < RUN_COLUMN_COUNT + 5)
		return -EPROTO;
	run_from_row(c, &run);
	result_from_row(c + RUN_COLUMN_COUNT, &result);
	get->count++;
	return get->fn ? get->fn(&run, &result, get->ctx) : 0;
}

int bci_store_result_get(struct bci_store *store, const char *machine, const char *run_id,
			 const char *test,
			 int (*fn)(const struct bci_store_run *run,
				   const struct bci_store_result *result, void *ctx),
			 void *ctx, char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(machine), value_text(run_id), value_text(test) };
	struct result_get get = { fn, ctx, 0 };
	int ret;

	ret = bci_store_query(store, S_RESULT_GET, params, 3, row_run_result, &get, err, err_size);
	if (ret)
		return ret;
	if (!get.count) {
		snprintf(err, err_size, "machine %s, run '%s': no test '%s' in the store", machine,
			 run_id, test);
		return -ENOENT;
	}
	return 0;
}

/* ---- across runs ---- */

int bci_store_build_runs_each(struct bci_store *store, const char *build,
			      int (*fn)(const struct bci_store_run *run, void *ctx), void *ctx,
			      char *err, size_t err_size)
{
	struct bci_store_value param = value_text(build);
	struct run_walk walk = { fn, ctx, 0 };
	int ret;

	ret = bci_store_query(store, S_RUNS_BUILD, &param, 1, row_run, &walk, err, err_size);
	return ret ? ret : walk.count;
}

int bci_store_test_history(struct bci_store *store, const char *test, const char *machine,
			   int (*fn)(const struct bci_store_run *run,
				     const struct bci_store_result *result, void *ctx),
			   void *ctx, char *err, size_t err_size)
{
	struct bci_store_value params[] = { value_text(test), value_text(machine) };
	struct result_get get = { fn, ctx, 0 };
	int ret;

	if (machine)
		ret = bci_store_query(store, S_HISTORY_MACHINE, params, 2, row_run_result, &get, err,
				      err_size);
	else
		ret = bci_store_query(store, S_HISTORY, params, 1, row_run_result, &get, err,
				      err_size);
	return ret ? ret : get.count;
}
