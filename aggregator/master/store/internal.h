/* SPDX-License-Identifier: MIT */
/*
 * What the store's modules share (database.c: the schema, the core
 * statements, running any statement, opening, transactions; machines.c:
 * machines, tags, builds; runs.c: runs and what they hold; schedule.c,
 * metrics.c, outbox.c and patchwork.c: their parts, each with its own statements; logs.c: a result's
 * logs). Each calls database.c, which calls none of them. store.h is the
 * folder's interface; this header is not for use outside the folder.
 */
#ifndef BCI_STORE_INTERNAL_H
#define BCI_STORE_INTERNAL_H

#include "backend.h"
#include "store.h"

#include <stdint.h>
#include <stdlib.h>

struct bci_store {
	const struct bci_store_backend *backend;
	void *db;
	int in_transaction;
};

/* Every statement, by id; their SQL is in database.c's table. */
enum bci_store_statement {
	S_VERSION_TABLE,
	S_VERSION_GET,
	S_VERSION_CLEAR,
	S_VERSION_SET,
	S_MACHINE_ENSURE,
	S_TAG_ADD,
	S_TAG_DELETE,
	S_TAGS,
	S_MACHINES_ALL,
	S_MACHINES_TAGGED,
	S_MACHINE_GROUP_SET,
	S_MACHINE_GROUP,
	S_MACHINES_GROUPED,
	S_BUILD_ID,
	S_BUILD_PUT,
	S_BUILD_GET,
	S_BUILDS_TREE,
	S_RUN_ADD,
	S_RUN_GET,
	S_RUNS_ALL,
	S_RUNS_MACHINE,
	S_RUNS_MACHINE_OWN,
	S_BOOT_ADD,
	S_CRASH_ADD,
	S_RESULT_ADD,
	S_RESULTS_ADD_MANY,
	S_RESULTS_ADD_SOME,
	S_RESULTS_MAX_ID,
	S_RUN_RESULTS_RANGE,
	S_DURATION_ADD,
	S_DURATIONS_PENDING_ADD,
	S_DURATIONS_FOLD,
	S_DURATIONS_PENDING_CLEAR,
	S_SUSPEND_ADD,
	S_BOOTS,
	S_CRASHES,
	S_RESULTS,
	S_RESULTS_BRIEF,
	S_SUSPENDS,
	S_RESULT_GET,
	S_RUNS_BUILD,
	S_HISTORY,
	S_HISTORY_MACHINE,
	/* ---- the scheduler's (schedule.c; their SQL is in its own table there) ---- */
	S_SCHEDULE_FIRST,
	S_JOB_ADD = S_SCHEDULE_FIRST,
	S_JOB_NEXT,
	S_JOB_UPDATE,
	S_JOBS_BUILD,
	S_JOBS_BUILD_TIER,
	S_JOBS_MACHINE,
	S_JOB_GET,
	S_JOB_END,
	S_JOB_ASKED,
	S_JOB_MOVE,
	S_SPLIT_ADD,
	S_SPLITS,
	S_MACHINE_STATE_PUT,
	S_MACHINE_STATE_GET,
	S_TEST_DURATION,
	S_LAST_UPLOAD,
	S_BUILD_FILE_ADD,
	S_BUILD_FILES,
	S_GATE_PUT,
	S_GATE_GET,
	S_BUILDS_UNGATED,
	S_BUILD_RERUNS,
	S_KNOWN_GOOD_ENSURE,
	S_KNOWN_GOOD_FILE_ADD,
	S_KNOWN_GOOD_FILES,
	S_KNOWN_GOOD_LATEST,
	/* ---- metrics (metrics.c; their SQL is in its own table there) ---- */
	S_METRICS_FIRST,
	S_METRICS_BUILDS = S_METRICS_FIRST,
	S_METRICS_BUSY,
	S_METRICS_RUNS,
	S_BUILD_TIMES,
	S_STAGE_PUT,
	S_STAGE_KEEP,
	/* ---- the mail outbox (outbox.c; their SQL is in its own table there) ---- */
	S_MAIL_FIRST,
	S_MAIL_QUEUE = S_MAIL_FIRST,
	S_MAIL_DUE,
	S_MAIL_CLAIM,
	S_MAIL_SENT,
	S_MAIL_RETRY,
	S_MAIL_FAILED,
	S_MAIL_ALL,
	S_MAIL_BUILD,
	S_MAIL_GET,
	S_MAIL_BUILDS_FINAL,
	/* ---- Patchwork (patchwork.c; their SQL is in its own table there) ---- */
	S_PATCHWORK_FIRST,
	S_PW_WATERMARK_GET = S_PATCHWORK_FIRST,
	S_PW_WATERMARK_PUT,
	S_PW_SERIES_ADD,
	S_PW_SERIES_GET,
	S_PW_SERIES_ALL,
	S_PW_SERIES_NAMED,
	S_PW_SERIES_BY_BUILD,
	S_PW_SERIES_SUPERSEDE,
	S_PW_PATCH_ADD,
	S_PW_CHECK_QUEUE,
	S_PW_CHECKS_OPEN,
	S_PW_CHECKS_SERIES,
	S_PW_CHECK_MARK,
	S_PW_CHECK_CLAIM,
	S_PW_CHECK_QUEUE_PATCH,
	/* ---- bisections (bisect.c; their SQL is in its own table there) ---- */
	S_BISECT_FIRST,
	S_BISECT_ADD = S_BISECT_FIRST,
	S_BISECT_GET,
	S_BISECTS_ALL,
	S_BISECTS_STATE,
	S_BISECT_END,
	S_BISECT_STEP_PUT,
	S_BISECT_STEPS,
	S_COUNT,
};


/* Columns of RUN_COLUMNS in database.c (runs.c reads them in that order). */
#define RUN_COLUMN_COUNT 14

/*
 * Runs statement @id of database.c's table (below S_SCHEDULE_FIRST) with
 * @params; @row (may be NULL) gets each row. See backend.h.
 */
int bci_store_query(struct bci_store *store, enum bci_store_statement id,
		    const struct bci_store_value *params, int n_params, bci_store_row_fn row,
		    void *ctx, char *err, size_t err_size);
/*
 * The same for a statement whose text @sql the caller keeps (schedule.c,
 * metrics.c: their SQL beside the code reading it); @id still names it, so a
 * backend prepares it once per connection.
 */
int bci_store_query_text(struct bci_store *store, enum bci_store_statement id, const char *sql,
			 const struct bci_store_value *params, int n_params, bci_store_row_fn row,
			 void *ctx, char *err, size_t err_size);
/* Row callback keeping the first column as an integer in *(int64_t *)ctx. */
int bci_store_row_first_int(const struct bci_store_value *columns, int n, void *ctx);
/* The key of build @name in *@key: -ENOENT with a message if there is none (machines.c). */
int bci_store_build_key(struct bci_store *store, const char *name, int64_t *key, char *err,
			size_t err_size);
/* The time now, Unix seconds. */
double bci_store_now(void);

/* ---- values: bound parameters and columns read back ---- */


static inline struct bci_store_value value_text(const char *s)
{
	return (struct bci_store_value){ .type = s ? BCI_STORE_TEXT : BCI_STORE_NULL, .s = s };
}

static inline struct bci_store_value value_int(int64_t i)
{
	return (struct bci_store_value){ .type = BCI_STORE_INT, .i = i };
}

/* @unknown_below: values below it are stored as NULL (unknown). */
static inline struct bci_store_value value_real(double r, double unknown_below)
{
	if (r < unknown_below)
		return (struct bci_store_value){ .type = BCI_STORE_NULL };
	return (struct bci_store_value){ .type = BCI_STORE_REAL, .r = r };
}

static inline const char *column_text(const struct bci_store_value *v)
{
	return v->type == BCI_STORE_TEXT ? v->s : NULL;
}

static inline int64_t column_int(const struct bci_store_value *v, int64_t null_value)
{
	if (v->type == BCI_STORE_INT)
		return v->i;
	if (v->type == BCI_STORE_REAL)
		return (int64_t)v->r;
	if (v->type == BCI_STORE_TEXT && v->s)
		return strtoll(v->s, NULL, 10);
	return null_value;
}

static inline double column_real(const struct bci_store_value *v, double null_value)
{
	if (v->type == BCI_STORE_REAL)
		return v->r;
	if (v->type == BCI_STORE_INT)
		return (double)v->i;
	if (v->type == BCI_STORE_TEXT && v->s)
		return strtod(v->s, NULL);
	return null_value;
}

#endif
