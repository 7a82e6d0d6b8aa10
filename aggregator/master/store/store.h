/* SPDX-License-Identifier: MIT */
/*
 * The CI master's store: machines (their tags and shard group), builds,
 * runs, the boots of each run (how each ended, its crash records), test
 * results and suspend cycles. One interface, two backends:
 *
 *   sqlite:PATH                  SQLite, embedded, WAL (the default:
 *                                DATA/bootci.sqlite)
 *   postgresql://... or          PostgreSQL through libpq, for a lab that
 *   postgres://... or            outgrows one master (several masters or
 *   a conninfo ("host=... ")     report readers sharing one database)
 *
 * The schema is versioned (table bootci_schema); bci_store_open() applies
 * every missing migration, each in its own transaction, and refuses a
 * database newer than this program. Every statement is prepared once and
 * its values bound: no SQL is ever built from input.
 *
 * Logs are not rows: a run's out/err/dmesg stay in its archive in the data
 * folder, and bci_store_test_log_open() gives a test's file (see below).
 *
 * Functions return 0 (or a count) on success and -errno on failure with a
 * message in @err. Strings handed to a callback belong to the store and are
 * valid only during that call. A store is used by one thread at a time.
 */
#ifndef BCI_STORE_H
#define BCI_STORE_H

#include <stddef.h>
#include <stdint.h>

/* The schema version this program writes (migrations 1..N in database.c). */
#define BCI_STORE_SCHEMA_VERSION 13

struct bci_store;

/*
 * Opens the store at @url, creating and migrating its schema as needed.
 * @url NULL or "" means sqlite:@data_dir/bootci.sqlite (@data_dir is
 * created). A relative sqlite path is taken as given (relative to the
 * current directory).
 */
int bci_store_open(const char *url, const char *data_dir, struct bci_store **store,
		   char *err, size_t err_size);
void bci_store_close(struct bci_store *store);

/* "sqlite" or "postgresql". */
const char *bci_store_backend_name(const struct bci_store *store);
/* The schema version recorded in the database (BCI_STORE_SCHEMA_VERSION once open). */
int bci_store_schema_version(struct bci_store *store, int *version, char *err, size_t err_size);

/*
 * A write transaction. Everything between begin and commit is stored
 * together or not at all; bci_store_rollback() drops it (and is a no-op
 * outside a transaction). Transactions do not nest.
 */
int bci_store_begin(struct bci_store *store, char *err, size_t err_size);
int bci_store_commit(struct bci_store *store, char *err, size_t err_size);
void bci_store_rollback(struct bci_store *store);
/*
 * A write transaction whose commit does not wait for the store's disk: on
 * PostgreSQL its synchronous_commit is off (the commit returns before its WAL
 * is flushed; a crash of the database's host within a fraction of a second
 * may lose it, whole, never half of it); on SQLite it is bci_store_begin().
 * For writes that the next event writes again (a machine's netboot: when it
 * was last seen, a job handed out), so that they do not queue behind the
 * flushes of the ingests running beside them.
 */
int bci_store_begin_relaxed(struct bci_store *store, char *err, size_t err_size);

/* ---- machines and tags ---- */

/* The machine named @name, created if new; its key in *@id (may be NULL). */
int bci_store_machine_ensure(struct bci_store *store, const char *name, int64_t *id,
			     char *err, size_t err_size);
/* Adds @tag to @machine (created if new); a tag it already has is fine. */
int bci_store_machine_tag(struct bci_store *store, const char *machine, const char *tag,
			  char *err, size_t err_size);
int bci_store_machine_untag(struct bci_store *store, const char *machine, const char *tag,
			    char *err, size_t err_size);
/* Calls @fn for each tag of @machine, in name order; returns the count. */
int bci_store_machine_tags(struct bci_store *store, const char *machine,
			   int (*fn)(const char *tag, void *ctx), void *ctx, char *err, size_t err_size);
/* Calls @fn for each machine that has @tag (NULL: every machine), in name order. */
int bci_store_machines_each(struct bci_store *store, const char *tag,
			    int (*fn)(const char *machine, void *ctx), void *ctx,
			    char *err, size_t err_size);
/*
 * A machine's shard group: the machines of one group run the same tests
 * (machines.conf's shard-group, kept here by the scheduler; `machine group`
 * by hand), so the report reads a test's baseline on all of them.
 * @group NULL takes @machine (created if new) out of any group.
 */
int bci_store_machine_group_set(struct bci_store *store, const char *machine, const char *group,
				char *err, size_t err_size);
/*
 * @machine's shard group copied into @group (@size bytes, NUL-terminated):
 * 1, or 0 when it has none or is not in the store ("" then).
 * -ENAMETOOLONG when @size is too small.
 */
int bci_store_machine_group(struct bci_store *store, const char *machine, char *group,
			    size_t size, char *err, size_t err_size);
/* Calls @fn for each machine of shard group @group, in name order; returns the count. */
int bci_store_group_machines_each(struct bci_store *store, const char *group,
				  int (*fn)(const char *machine, void *ctx), void *ctx,
				  char *err, size_t err_size);

/* ---- builds ---- */

struct bci_store_build {
	const char *name;		/* unique: what runs refer to */
	const char *tree;		/* e.g. "drm-tip" */
	const char *commit;		/* the commit built */
	const char *tier;		/* "fast" or "full" */
	const char *base;		/* name of the build it is compared with, or NULL */
	const char *series_title;	/* a patch series' title, or NULL */
	const char *message_id;		/* its cover letter's Message-ID, or NULL */
	double registered;		/* Unix time; 0: now */
};

/*
 * Stores @build, or updates the build of the same name (its base must
 * exist). A tier other than fast/full is refused (-EINVAL).
 */
int bci_store_build_put(struct bci_store *store, const struct bci_store_build *build,
			char *err, size_t err_size);
/* Calls @fn with the build named @name; -ENOENT if there is none. */
int bci_store_build_get(struct bci_store *store, const char *name,
			int (*fn)(const struct bci_store_build *build, void *ctx), void *ctx,
			char *err, size_t err_size);
/* Every build of @tree, newest registered first (@fn may stop the walk: its error): the count. */
int bci_store_tree_builds_each(struct bci_store *store, const char *tree,
			       int (*fn)(const struct bci_store_build *build, void *ctx), void *ctx,
			       char *err, size_t err_size);
/*
 * A copy of the build named @name in *@build: one allocation holding the
 * struct and its strings, which the caller frees with free(). -ENOENT if
 * there is none.
 */
int bci_store_build_read(struct bci_store *store, const char *name,
			 struct bci_store_build **build, char *err, size_t err_size);

/* ---- runs ---- */

struct bci_store_run {
	int64_t key;			/* the store's own key (set when read back) */
	const char *machine;
	const char *run_id;		/* the executor's run id: unique per machine */
	const char *build;		/* build name, or NULL when not known */
	const char *image_id;
	const char *kernel;		/* release of the kernel under test */
	const char *cmdline;
	const char *digest;		/* sha256 (hex) of the archive */
	const char *archive_path;	/* the archive, relative to the data folder (archives/...) */
	const char *archive_root;	/* the run folder inside the archive ("" for its root) */
	const char *state;		/* done, aborted, incomplete, capped, ... */
	double started, ended;		/* Unix times; 0: unknown */
	double ingested;		/* 0 on insert: now */
};

/*
 * Adds @run (its machine is created if new). -EEXIST if the machine already
 * has a run of that id: ingest then compares digests.
 */
int bci_store_run_add(struct bci_store *store, const struct bci_store_run *run, int64_t *key,
		      char *err, size_t err_size);
/* Calls @fn with the run; -ENOENT if there is none. */
int bci_store_run_get(struct bci_store *store, const char *machine, const char *run_id,
		      int (*fn)(const struct bci_store_run *run, void *ctx), void *ctx,
		      char *err, size_t err_size);
/* Every run of @machine (NULL: all), oldest first; returns the count. */
int bci_store_runs_each(struct bci_store *store, const char *machine,
			int (*fn)(const struct bci_store_run *run, void *ctx), void *ctx,
			char *err, size_t err_size);
/*
 * The same of one machine but the runs of its confirm jobs (the reruns of
 * a build's possible new issues: a few tests each, in no baseline).
 */
int bci_store_machine_own_runs_each(struct bci_store *store, const char *machine,
				    int (*fn)(const struct bci_store_run *run, void *ctx),
				    void *ctx, char *err, size_t err_size);

/* ---- what a run holds ---- */

struct bci_store_boot {
	int index;			/* the executor's boot number in the run */
	double time;			/* Unix time it started; 0: unknown */
	const char *kernel;
	const char *cmdline;
	const char *previous;		/* how the boot before it ended, as that boot records it */
	const char *ending;		/* how this boot ended: clean: ..., kernel crash, watchdog reset, unknown */
};

struct bci_store_crash {
	int boot;			/* the boot that found it (it records the boot before) */
	const char *source;		/* "pstore" or "efi" */
	const char *name;		/* the record's file name */
	const char *path;		/* its path inside the run folder */
};

struct bci_store_result {
	int job;			/* job index (the N of N/out.txt); -1: none */
	const char *name;		/* igt@binary@subtest[@dynamic] */
	const char *result;		/* pass fail skip crash timeout incomplete abort notrun warn dmesg-warn dmesg-fail */
	double duration;		/* seconds; -1: unknown */
	int dmesg_warnings;		/* 1 when its dmesg had warnings at the run's level */
};

struct bci_store_suspend {
	int cycle;			/* numbered through the run from 1 */
	const char *state;		/* mem, freeze, mem_devices, ... */
	const char *result;		/* pass, fail, incomplete, ... */
	double wall, suspended, latency;	/* seconds; -1: unknown */
	double kernel_suspend, kernel_resume;	/* seconds; -1: unknown */
	const char *woke;		/* how it woke (rtc, watchdog, ...) */
};

int bci_store_boot_add(struct bci_store *store, int64_t run, const struct bci_store_boot *boot,
		       char *err, size_t err_size);
int bci_store_crash_add(struct bci_store *store, int64_t run, const struct bci_store_crash *crash,
			char *err, size_t err_size);
int bci_store_result_add(struct bci_store *store, int64_t run, const struct bci_store_result *result,
			 char *err, size_t err_size);
/*
 * A result is added with its duration counted in its test's mean
 * (test_durations). The rows of a whole run at once, as ingest stores them,
 * leave theirs pending: bci_store_durations_fold() counts them.
 */
int bci_store_results_add(struct bci_store *store, int64_t run,
			  const struct bci_store_result *results, size_t count, char *err,
			  size_t err_size);
int bci_store_suspend_add(struct bci_store *store, int64_t run, const struct bci_store_suspend *cycle,
			  char *err, size_t err_size);

/* Readers, in stored order (boot index, crash order, result order, cycle); each returns the count. */
int bci_store_boots_each(struct bci_store *store, int64_t run,
			 int (*fn)(const struct bci_store_boot *boot, void *ctx), void *ctx,
			 char *err, size_t err_size);
int bci_store_crashes_each(struct bci_store *store, int64_t run,
			   int (*fn)(const struct bci_store_crash *crash, void *ctx), void *ctx,
			   char *err, size_t err_size);
int bci_store_results_each(struct bci_store *store, int64_t run,
			   int (*fn)(const struct bci_store_result *result, void *ctx), void *ctx,
			   char *err, size_t err_size);
/* The same, each result's job, name and result only (duration -1, no dmesg warnings). */
int bci_store_results_each_brief(struct bci_store *store, int64_t run,
				 int (*fn)(const struct bci_store_result *result, void *ctx),
				 void *ctx, char *err, size_t err_size);
int bci_store_suspends_each(struct bci_store *store, int64_t run,
			    int (*fn)(const struct bci_store_suspend *cycle, void *ctx), void *ctx,
			    char *err, size_t err_size);

/*
 * The result @test of a run, with the run: -ENOENT when there is none. A
 * name two jobs both produced gives the first.
 */
int bci_store_result_get(struct bci_store *store, const char *machine, const char *run_id,
			 const char *test,
			 int (*fn)(const struct bci_store_run *run,
				   const struct bci_store_result *result, void *ctx),
			 void *ctx, char *err, size_t err_size);

/* ---- what the reports read across runs ---- */

/*
 * Every run of the build named @build, by machine then age, but the runs of
 * its confirm jobs (the reruns of its possible new issues: those are
 * bci_store_build_reruns_each()'s); returns the count.
 */
int bci_store_build_runs_each(struct bci_store *store, const char *build,
			      int (*fn)(const struct bci_store_run *run, void *ctx), void *ctx,
			      char *err, size_t err_size);
/*
 * A test's history: every stored result named @test with its run, on
 * @machine (NULL: every machine), oldest ingest first; returns the count.
 */
int bci_store_test_history(struct bci_store *store, const char *test, const char *machine,
			   int (*fn)(const struct bci_store_run *run,
				     const struct bci_store_result *result, void *ctx),
			   void *ctx, char *err, size_t err_size);

/* ---- a test's logs ---- */

/*
 * Opens (read-only) the out, err or dmesg file (@which: "out", "err",
 * "dmesg") of the job that ran @test in the run, and returns its fd.
 *
 * The choice: an extract-once cache keyed by the archive's digest. The
 * first call for a run unpacks its archive under @data_dir/cache/<digest>/
 * (into a temporary folder renamed when complete, so a half-unpacked run is
 * never used) and every later call opens the file there directly; ingest
 * fills the same cache, since the results generator reads a folder. A tar.zst
 * cannot be sought into, so streaming one member would decompress up to it
 * on every call, and a member index would need per-member zstd frames the
 * collectors do not write. The cache is disposable: delete any part of it
 * and the next call unpacks that run again.
 *
 * The file is the job's (N/out.txt ...): igt's jobs run one subtest each
 * unless the run used multiple mode, where the job's file holds its
 * binary's subtests in order. -ENOENT: no such run, test or file.
 */
int bci_store_test_log_open(struct bci_store *store, const char *data_dir, const char *machine,
			    const char *run_id, const char *test, const char *which,
			    char *err, size_t err_size);

/*
 * The same file when the caller has already read the run and the result
 * (bci_store_build_runs_each(), bci_store_results_each()): no query, so a
 * writer of many result pages pays one cache lookup and one open per log.
 * Uses @run's machine, run_id, digest, archive_path and archive_root, and
 * @result's job and name.
 */
int bci_store_job_log_open(const char *data_dir, const struct bci_store_run *run,
			   const struct bci_store_result *result, const char *which, char *err,
			   size_t err_size);

/*
 * Opens (read-only) the file @path of the run folder (a crash record's path
 * as bci_store_crashes_each() gives it), through the same cache. @path must
 * be relative without "." or ".." components (-EINVAL otherwise); -ENOENT:
 * no such run or file.
 */
int bci_store_run_file_open(struct bci_store *store, const char *data_dir, const char *machine,
			    const char *run_id, const char *path, char *err, size_t err_size);

/* ---- metrics over a time window (store/metrics.c) ---- */

/*
 * A build with the times of its way from the mail to the reply (Unix
 * seconds; -1: not reached, or not known). The stages the master records
 * (bci_store_build_stage_put()) and those other rows keep: the series'
 * pick-up and checks (Patchwork), the scheduler's jobs, the runs, the
 * reply in the outbox.
 */
struct bci_store_build_times {
	const char *name;
	const char *tier;
	double registered;
	double first_result;		/* the first of its runs ingested; -1: none yet */
	double last_result;		/* the last of its runs ingested; -1: none yet */
	long runs;
	long jobs;			/* the scheduler's jobs for it */
	long jobs_open;			/* of those, not done nor abandoned */
	double series;			/* BCI_STAGE_SERIES: its series complete on Patchwork; -1: not from a series */
	double noticed;			/* its series picked up by the master's poll */
	double pending;			/* bootci-fast pending posted on every patch (the last one's 201) */
	double build_started, build_ended;	/* BCI_STAGE_BUILD_STARTED, BCI_STAGE_BUILD_ENDED */
	double first_boot;		/* BCI_STAGE_FIRST_BOOT: its first job handed out */
	/* Of its runs but those of its full tier's jobs: */
	double tests_started;		/* the first one's start (the machine's clock) */
	double tests_ended;		/* the last one's end (the machine's clock) */
	double fast_last_result;	/* the last one ingested */
	double verdict;			/* the bootci-fast verdict (success, warning, fail) queued */
	double verdict_posted;		/* ... posted on every patch */
	double reply_queued;		/* its reply queued in the outbox */
	double reply_sent;		/* ... accepted by the SMTP server */
};

/* Every build registered in [@from, @to), oldest first; returns the count. */
int bci_store_metrics_builds(struct bci_store *store, double from, double to,
			     int (*fn)(const struct bci_store_build_times *build, void *ctx),
			     void *ctx, char *err, size_t err_size);
/* The build named @build: 1 with @fn called, 0 when there is none. */
int bci_store_build_times_get(struct bci_store *store, const char *build,
			      int (*fn)(const struct bci_store_build_times *build, void *ctx),
			      void *ctx, char *err, size_t err_size);

/* The stages the master records by a build's name (table build_stages). */
#define BCI_STAGE_SERIES "series"		/* its series complete on Patchwork */
#define BCI_STAGE_BUILD_STARTED "build started"	/* the build command started */
#define BCI_STAGE_BUILD_ENDED "build ended"	/* ... exited */
#define BCI_STAGE_FIRST_BOOT "first boot"	/* its first job handed out to a machine */
/*
 * Records stage @stage of build @build at @at (Unix seconds). @keep_first:
 * a time already recorded stays (the first boot of several); otherwise the
 * new one replaces it (a build run again).
 */
int bci_store_build_stage_put(struct bci_store *store, const char *build, const char *stage,
			      double at, int keep_first, char *err, size_t err_size);

/* A machine's runs that started in the window and their busy time (ended - started). */
struct bci_store_machine_busy {
	const char *machine;
	long runs;
	double busy;			/* seconds */
};

/* Per machine, by name; runs without both times are not counted. Returns the count. */
int bci_store_metrics_busy(struct bci_store *store, double from, double to,
			   int (*fn)(const struct bci_store_machine_busy *busy, void *ctx),
			   void *ctx, char *err, size_t err_size);

/* Every run ingested in [@from, @to) with its number of results, oldest first; returns the count. */
int bci_store_metrics_runs(struct bci_store *store, double from, double to,
			   int (*fn)(double ingested, long results, void *ctx), void *ctx,
			   char *err, size_t err_size);

/* ---- the scheduler (store/schedule.c; aggregator/schedule/ uses it) ---- */

/*
 * A job: one build's tier (or one shard of it) for one machine. Its run id
 * is what the executor records (bootci.run_id=) and collect uploads, so the
 * job is done once that run is in the store.
 */
struct bci_store_job {
	int64_t key;			/* set when read back */
	const char *machine;
	const char *build;
	const char *tier;		/* "fast" or "full" */
	/*
	 * NULL: the tier's own job; "confirm": a rerun of possible new issues of
	 * the build's @tier (schedule/confirm.c); "bisect": a bisection's step.
	 */
	const char *kind;
	int shard, shards;		/* 0 of 1 when not sharded */
	const char *testlist;		/* the tests, one per line */
	const char *run_id;
	const char *state;		/* queued, booted, done, abandoned */
	int boots;			/* times handed out: each netboot answer of the job */
	double queued, booted;		/* Unix times; booted 0: never */
	/* The master's verdict on the job (why it ended, what its run's boots say), or NULL. */
	const char *note;
	/* When the master ended its run (its boot cap) and sent the machine to its known-good
	 * image; 0: not ended, or that was judged since (the next netboot). */
	double ended;
	double asked;			/* when collect last asked the master about its run; 0: never */
};

/* Queues @job (state queued, its machine created if new); its key in *@key (may be NULL). */
int bci_store_job_add(struct bci_store *store, const struct bci_store_job *job, int64_t *key,
		      char *err, size_t err_size);
/*
 * The job @machine is handed next: its booted one (a run in progress), else
 * its oldest queued confirm or bisect job, else its oldest queued one: 1 with
 * @fn called, 0 when there is none.
 */
int bci_store_job_next(struct bci_store *store, const char *machine,
		       int (*fn)(const struct bci_store_job *job, void *ctx), void *ctx,
		       char *err, size_t err_size);
int bci_store_job_update(struct bci_store *store, int64_t key, const char *state, int boots,
			 double booted, char *err, size_t err_size);
/* Sets the job's state, its note (NULL: none) and when the master ended it (0: not, or judged). */
int bci_store_job_end(struct bci_store *store, int64_t key, const char *state, const char *note,
		      double ended, char *err, size_t err_size);
/* Records that the machine's collect asked about the job's run at Unix time @when. */
int bci_store_job_asked(struct bci_store *store, int64_t key, double when, char *err,
			size_t err_size);
/*
 * Hands job @key to @machine (created if new) under run id @run_id, queued
 * again: its boots, booted, ended and asked cleared, @note (may be NULL) its
 * note; its build, tier, kind, testlist and queued time kept. -EEXIST when
 * @machine has a job of that run id.
 */
int bci_store_job_move(struct bci_store *store, int64_t key, const char *machine,
		       const char *run_id, const char *note, char *err, size_t err_size);
/* Every job of @build (and @tier unless NULL), by machine then key; returns the count. */
int bci_store_jobs_each(struct bci_store *store, const char *build, const char *tier,
			int (*fn)(const struct bci_store_job *job, void *ctx), void *ctx,
			char *err, size_t err_size);
/* Every job of @machine, oldest first; returns the count. */
int bci_store_machine_jobs_each(struct bci_store *store, const char *machine,
				int (*fn)(const struct bci_store_job *job, void *ctx), void *ctx,
				char *err, size_t err_size);
/* The job of @machine with run id @run_id: 1 with @fn (may be NULL) called, 0 when there is none. */
int bci_store_machine_job_get(struct bci_store *store, const char *machine, const char *run_id,
			      int (*fn)(const struct bci_store_job *job, void *ctx), void *ctx,
			      char *err, size_t err_size);

/*
 * The confirm jobs of @build (bci_store_job.kind), by machine then key: @fn
 * with the job's machine, run id and state, and @run the key of its run in
 * the store, or -1 when none came back yet. Returns the count.
 */
int bci_store_build_reruns_each(struct bci_store *store, const char *build,
				int (*fn)(const char *machine, const char *run_id,
					  const char *state, int64_t run, void *ctx),
				void *ctx, char *err, size_t err_size);

/* A recorded split: shard @shard of @shards of a build's tier across a shard group. */
struct bci_store_split {
	const char *build, *tier, *group;
	int shard, shards;
	const char *machine;
	const char *testlist;
};
/* -EEXIST when that shard is already recorded (a split is never rewritten). */
int bci_store_split_add(struct bci_store *store, const struct bci_store_split *split,
			char *err, size_t err_size);
/* The recorded shards of (@build, @tier, @group), by shard; returns the count. */
int bci_store_splits_each(struct bci_store *store, const char *build, const char *tier,
			  const char *group,
			  int (*fn)(const struct bci_store_split *split, void *ctx), void *ctx,
			  char *err, size_t err_size);

/* What the scheduler knows of a machine's health. */
struct bci_store_machine_state {
	const char *machine;
	const char *state;		/* "ready" or "out" (taken out of the schedule) */
	double last_seen;		/* Unix time it last asked for a job (or was first known) */
	int power_cycles;		/* power cycles since it was last seen */
	double last_cycle;		/* 0: never */
	const char *note;		/* why it is out, or NULL */
};
int bci_store_machine_state_put(struct bci_store *store, const struct bci_store_machine_state *state,
				char *err, size_t err_size);
/* -ENOENT when the scheduler never recorded the machine. */
int bci_store_machine_state_get(struct bci_store *store, const char *machine,
				int (*fn)(const struct bci_store_machine_state *state, void *ctx),
				void *ctx, char *err, size_t err_size);
/*
 * Counts the durations of the runs stored since the last fold into their
 * tests' means, all in one pass. Inside the caller's transaction when one is
 * open, else in its own. PostgreSQL: ingests that would add a pending run
 * wait for the transaction to end, so none is dropped uncounted.
 */
int bci_store_durations_fold(struct bci_store *store, char *err, size_t err_size);
/*
 * The mean duration of @test over every stored result that has one, as of
 * the last bci_store_durations_fold(): 1 with *@seconds, 0 if none.
 */
int bci_store_test_duration(struct bci_store *store, const char *test, double *seconds,
			    char *err, size_t err_size);
/* When @machine's last run was ingested (Unix time), 0 when it has none. */
int bci_store_machine_last_upload(struct bci_store *store, const char *machine, double *when,
				  char *err, size_t err_size);

/* One published file of a build, kept content-addressed in the data folder. */
struct bci_store_build_file {
	const char *build;
	const char *path;		/* its name in the build (vmlinuz, initrd.img, ...) */
	const char *sha256;
	uint64_t size;
};
int bci_store_build_file_add(struct bci_store *store, const struct bci_store_build_file *file,
			     char *err, size_t err_size);
/* The files of @build, by path; returns the count. */
int bci_store_build_files_each(struct bci_store *store, const char *build,
			       int (*fn)(const struct bci_store_build_file *file, void *ctx),
			       void *ctx, char *err, size_t err_size);

/*
 * Records the decision on @build's full tier (queued, skipped: ...); once
 * only (-EEXIST). Builds with a fast tier queued and no decision yet are
 * what bci_store_builds_ungated() gives, oldest first.
 */
int bci_store_gate_put(struct bci_store *store, const char *build, const char *decision,
		       char *err, size_t err_size);
int bci_store_builds_ungated(struct bci_store *store, int (*fn)(const char *build, void *ctx),
			     void *ctx, char *err, size_t err_size);
/* The decision on @build's full tier into @decision: 1 found, 0 none yet, -errno. */
int bci_store_gate_get(struct bci_store *store, const char *build, char *decision, size_t size,
		       char *err, size_t err_size);

/*
 * The known-good image's versions: its files (disk.img, known-good.efi, ...)
 * kept like a build's. A file of a new version creates the version; the
 * files are given with .build the version's name. Readers: by path.
 */
int bci_store_known_good_file_add(struct bci_store *store, const char *version,
				  const struct bci_store_build_file *file, char *err,
				  size_t err_size);
int bci_store_known_good_files_each(struct bci_store *store, const char *version,
				    int (*fn)(const struct bci_store_build_file *file, void *ctx),
				    void *ctx, char *err, size_t err_size);
/* The version registered last, given to @fn: 1, 0 when none, -errno. */
int bci_store_known_good_latest(struct bci_store *store, int (*fn)(const char *version, void *ctx),
				void *ctx, char *err, size_t err_size);

/* ---- the mail outbox (store/outbox.c; aggregator/master/mail/ uses it) ---- */

/*
 * A message the master sends by SMTP, kept from the moment it is queued
 * until the server accepted it (250 after DATA), then marked sent; one that
 * the server refused for good (5xx) or that could not go out in time is
 * marked failed and kept. States: queued, sent, failed.
 */
struct bci_store_mail {
	int64_t key;			/* set when read back */
	const char *message_id;		/* unique: "<left@right>" as in its header */
	const char *build;		/* the build it answers, or NULL */
	const char *sender;		/* the envelope sender (MAIL FROM), an address */
	const char *recipients;		/* the envelope recipients (RCPT TO), one address a line */
	const char *message;		/* the whole message, lines ending in CRLF */
	const char *state;		/* queued, sent or failed */
	int attempts;			/* delivery attempts so far */
	double created;			/* Unix time queued; 0 on queue: now */
	double next_attempt;		/* when a queued message is due */
	double sent;			/* when the server accepted it; 0: not yet */
	const char *last_error;		/* what the last attempt ended with, or NULL */
};

/*
 * Queues @mail (its state, attempts, next_attempt and sent ignored: queued,
 * due now). 0 when queued (its key in *@key, may be NULL); 1 when a message
 * of that Message-ID is already in the outbox, whatever its state (nothing
 * changed): queueing is idempotent. One message a build: -EEXIST when the
 * outbox holds another message for @mail->build.
 */
int bci_store_mail_queue(struct bci_store *store, const struct bci_store_mail *mail, int64_t *key,
			 char *err, size_t err_size);
/* Every queued message due at @now (next_attempt <= @now), oldest first; returns the count. */
int bci_store_mail_due(struct bci_store *store, double now,
		       int (*fn)(const struct bci_store_mail *mail, void *ctx), void *ctx,
		       char *err, size_t err_size);
/*
 * Takes the queued message @key for one attempt: moves its next_attempt to
 * @until if it is still queued and due at @now. 1 when this caller has it,
 * 0 when another sender took it first (or it is no longer queued): two
 * senders on one store never send one message at once.
 */
int bci_store_mail_claim(struct bci_store *store, int64_t key, double now, double until,
			 char *err, size_t err_size);
/* The server accepted it at @when: sent, for good. */
int bci_store_mail_sent(struct bci_store *store, int64_t key, double when, int attempts,
			char *err, size_t err_size);
/* An attempt failed for now: queued again, due at @next_attempt, with @error. */
int bci_store_mail_retry(struct bci_store *store, int64_t key, int attempts, double next_attempt,
			 const char *error, char *err, size_t err_size);
/* Refused for good (or out of time): failed, kept with @error, never sent again. */
int bci_store_mail_failed(struct bci_store *store, int64_t key, int attempts, const char *error,
			  char *err, size_t err_size);
/* Every message (@build NULL) or those answering @build, oldest first; returns the count. */
int bci_store_mail_each(struct bci_store *store, const char *build,
			int (*fn)(const struct bci_store_mail *mail, void *ctx), void *ctx,
			char *err, size_t err_size);
/*
 * Every build whose reply is due, oldest first: it has a Message-ID (it
 * answers a series), jobs, all of them done or abandoned, and no message in
 * the outbox. Returns the count.
 */
int bci_store_mail_builds_final(struct bci_store *store, int (*fn)(const char *build, void *ctx),
				void *ctx, char *err, size_t err_size);
/* The message of Message-ID @message_id: 1 with @fn called, 0 when there is none. */
int bci_store_mail_get(struct bci_store *store, const char *message_id,
		       int (*fn)(const struct bci_store_mail *mail, void *ctx), void *ctx,
		       char *err, size_t err_size);
/* ---- Patchwork (patchwork.c; aggregator/master/patchwork/ follows the projects) ---- */

/*
 * Per project (the name in DATA/patchwork.conf): the watermark, the series
 * settled (each once), their patches and the checks posted on them. A
 * series' state: "picked up" (its mbox kept, a build job to run),
 * "superseded" (a newer version of it came; superseded_by says which),
 * "skipped" (no mbox, too large: the note says why).
 */
struct bci_store_pw_series {
	const char *project;
	int64_t series;
	const char *name;		/* may be NULL */
	int version;
	const char *submitter;		/* email, may be NULL */
	const char *date;		/* Patchwork's date of the series, may be NULL */
	const char *message_id;		/* may be NULL */
	int total;
	const char *state;
	const char *build;		/* the build job's name ("picked up"), else NULL */
	const char *mbox;		/* the mbox's path in the data folder, else NULL */
	int64_t superseded_by;		/* 0: none */
	double seen;			/* when the master settled it */
	const char *note;		/* may be NULL */
};

/* One check of a patch, and how far its posting went. */
struct bci_store_pw_check {
	int64_t series, patch;
	const char *context, *state, *description, *target_url;	/* the last two may be NULL */
	/*
	 * "queued"; "posting" (a poster took it at @claimed); "unknown" (sent,
	 * no clear answer: look on Patchwork first); "posted"; "refused".
	 */
	const char *status;
	int attempts;			/* times a poster took it */
	const char *note;		/* the last refusal or fault, may be NULL */
	double claimed;			/* when a poster last took it, 0: never */
};

/* Every series at or below *@series is settled (0 when none is recorded). */
int bci_store_pw_watermark_get(struct bci_store *store, const char *project, int64_t *series,
			       char *err, size_t err_size);
int bci_store_pw_watermark_put(struct bci_store *store, const char *project, int64_t series,
			       char *err, size_t err_size);
/* Records a settled series: -EEXIST when it already is. */
int bci_store_pw_series_add(struct bci_store *store, const struct bci_store_pw_series *series,
			    char *err, size_t err_size);
/* Series @series of @project to @fn: 1 found, 0 not, -errno. */
int bci_store_pw_series_get(struct bci_store *store, const char *project, int64_t series,
			    int (*fn)(const struct bci_store_pw_series *series, void *ctx), void *ctx,
			    char *err, size_t err_size);
/*
 * The project's series, by id (@name NULL), or those named @name by
 * @submitter (NULL matches a series without one): the count, or -errno.
 */
int bci_store_pw_series_each(struct bci_store *store, const char *project, const char *name,
			     const char *submitter,
			     int (*fn)(const struct bci_store_pw_series *series, void *ctx),
			     void *ctx, char *err, size_t err_size);
/* The series whose build job is @build: 1 with @fn called, 0 when none is. */
int bci_store_pw_series_by_build(struct bci_store *store, const char *build,
				 int (*fn)(const struct bci_store_pw_series *series, void *ctx),
				 void *ctx, char *err, size_t err_size);
/* Marks @series superseded by @by, with @note. */
int bci_store_pw_series_supersede(struct bci_store *store, const char *project, int64_t series,
				  int64_t by, const char *note, char *err, size_t err_size);
/* The patch @patch, number @position (from 1) of @series. */
int bci_store_pw_patch_add(struct bci_store *store, const char *project, int64_t series,
			   int position, int64_t patch, char *err, size_t err_size);
/*
 * Queues check (@context, @state) on every patch of @series that does not
 * have it yet: the number queued (0: every patch already has it).
 */
int bci_store_pw_check_queue(struct bci_store *store, const char *project, int64_t series,
			     const char *context, const char *state, const char *description,
			     const char *target_url, char *err, size_t err_size);
/* The same on one patch of @series: the one at @position (from 1). */
int bci_store_pw_check_queue_patch(struct bci_store *store, const char *project, int64_t series,
				   int position, const char *context, const char *state,
				   const char *description, const char *target_url, char *err,
				   size_t err_size);
/* The project's checks not posted yet ("queued", "posting", "unknown"), oldest first: the count. */
int bci_store_pw_checks_open(struct bci_store *store, const char *project,
			     int (*fn)(const struct bci_store_pw_check *check, void *ctx), void *ctx,
			     char *err, size_t err_size);
/* The checks of @series, by context and patch: the count. */
int bci_store_pw_checks_series(struct bci_store *store, const char *project, int64_t series,
			       int (*fn)(const struct bci_store_pw_check *check, void *ctx),
			       void *ctx, char *err, size_t err_size);
/* Sets the status and note of a check (its project, patch, context, state name it). */
int bci_store_pw_check_mark(struct bci_store *store, const char *project,
			    const struct bci_store_pw_check *check, char *err, size_t err_size);
/*
 * Takes @check to post it ("posting", attempts + 1, claimed now) only if its
 * status and attempts are still @check's: 1 taken, 0 another poster took it
 * first (another process on the same store), -errno.
 */
int bci_store_pw_check_claim(struct bci_store *store, const char *project,
			     const struct bci_store_pw_check *check, char *err, size_t err_size);

/* ---- bisections (store/bisect.c; aggregator/patchwork/bisect.c uses it) ---- */

/*
 * A bisection of a build: which change first shows its possible new issues
 * (a series' patch, a tree's commit).
 */
struct bci_store_bisect {
	const char *build;		/* the build bisected (a series': pw-NAME-ID) */
	const char *project;		/* a series' Patchwork project; a tree's: the tree */
	int64_t series;			/* a tree's: 0 */
	int patches;			/* the series' patches, the tree's commits */
	const char *tests;		/* the regressed tests, a line each */
	const char *machines;		/* where its steps run, a line each */
	const char *pairs;		/* "MACHINE TEST" a line each: where each test regressed */
	const char *state;		/* running, done, stopped */
	const char *verdict;		/* NULL while running */
	double started, ended;		/* ended 0: not yet */
	const char *commits;		/* a tree's range, oldest first, a line each; NULL: a series' */
};

/* Adds @b (state running): -EEXIST when @b->build has a bisection already. */
int bci_store_bisect_add(struct bci_store *store, const struct bci_store_bisect *b, char *err,
			 size_t err_size);
/* The bisection of @build: 1 with @fn called, 0 when it has none. */
int bci_store_bisect_get(struct bci_store *store, const char *build,
			 int (*fn)(const struct bci_store_bisect *b, void *ctx), void *ctx,
			 char *err, size_t err_size);
/* Every bisection (in @state unless NULL), oldest first: the count. */
int bci_store_bisects_each(struct bci_store *store, const char *state,
			   int (*fn)(const struct bci_store_bisect *b, void *ctx), void *ctx,
			   char *err, size_t err_size);
/* Ends @build's bisection if it runs: @state done or stopped, with @verdict, now. */
int bci_store_bisect_end(struct bci_store *store, const char *build, const char *state,
			 const char *verdict, char *err, size_t err_size);

/* One step: the first @patches changes (patches, commits), built as @candidate and judged. */
struct bci_store_bisect_step {
	const char *build;
	int step;			/* from 1 */
	int patches;
	const char *candidate;		/* its build's name */
	const char *state;		/* building, running, good, bad, skipped, flaky */
	const char *note;		/* why, or NULL */
	double started, ended;		/* ended 0: not judged yet */
};

/*
 * Adds step @s->step of @s->build (started as given, 0: now), or updates it
 * (its started kept; ended as given, 0: none).
 */
int bci_store_bisect_step_put(struct bci_store *store, const struct bci_store_bisect_step *s,
			      char *err, size_t err_size);
/* The steps of @build's bisection in order: the count. */
int bci_store_bisect_steps_each(struct bci_store *store, const char *build,
				int (*fn)(const struct bci_store_bisect_step *s, void *ctx),
				void *ctx, char *err, size_t err_size);

#endif
