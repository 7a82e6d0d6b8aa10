/* SPDX-License-Identifier: MIT */
/*
 * Reports on a build (the CI master's side): every result of the build
 * compared with its baseline, each change classified, noise kept apart from
 * what may be new, and the reply mailed to the patch series.
 *
 *   status.c           the piglit statuses, every transition, the verdicts' names
 *   filters.c          known-issue filters (the file DATA/known-issues.txt)
 *   regress.c          a build's report: its machines read then judged, on two threads
 *   baseline.c         a machine's results in the build and in its baseline, read
 *   judge.c            each change classified: known issue, flaky, possible new issue
 *   latency.c          suspend+resume latency against the baseline's spread
 *                      (compare.h: what these four share)
 *   name_numbers.c     names numbered as first seen (the tests of regress.c and matrix.c)
 *   mbox.c             the reply, one RFC 5322 / MIME message in an mbox
 *   links.c            the addresses of serve's pages the reply and the exports give
 *   export.c           JUnit XML of a run, KCIDB v4.2 JSON of a build
 *   html.c             what every page shares: the escaper, the style, a log
 *   matrix.c           a build's results as tests x machines (matrix.h)
 *   matrix_html.c      the matrix page
 *   html_write.c       a build's static pages: the matrix and a page per result
 *   pages.c            the pages serve renders on request
 *   machine_pages.c    a machine's page and a run's, HTML and JSON (machine_pages.h)
 *   metrics.c          the CI's metrics over a time window
 *   stages.c           a build's way from the mail to the reply: its stages
 *   command.c          `bootci-aggregator report`
 *   build_command.c    `build`, `machine`: what a person registers
 *   export_command.c   `export`
 *   metrics_command.c  `metrics`
 *
 * The baseline of a build B on machine M: the runs on M of builds whose tree
 * is B's base tree (the tree of B's base build; B's own tree when B has no
 * base), B itself and builds registered after B excluded, the last @window
 * of them (ingest order); and when M is in a shard group (the store's, kept
 * from machines.conf), the same runs of every other machine of the group,
 * the last @window of each: the machines of a group run the same tests, and
 * a flaky test that happened to pass on M in its window has failed on
 * another. The result a change is measured from is the latest of M's runs
 * that has the test (the group's when M has none); a test whose status
 * differed between any of those runs (notrun aside: it says nothing of a
 * test's state) is flaky, and its failures there are counted.
 *
 * Functions return 0 (or a count) and -errno with a message in @err.
 */
#ifndef BCI_REPORT_H
#define BCI_REPORT_H

#include <stdbool.h>
#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

struct bci_store;

/* ---- statuses and transitions (status.c) ---- */

enum bci_status {
	BCI_STATUS_PASS,
	BCI_STATUS_DMESG_WARN,
	BCI_STATUS_WARN,
	BCI_STATUS_DMESG_FAIL,
	BCI_STATUS_FAIL,
	BCI_STATUS_CRASH,
	BCI_STATUS_TIMEOUT,
	BCI_STATUS_ABORT,
	BCI_STATUS_INCOMPLETE,
	BCI_STATUS_SKIP,
	BCI_STATUS_NOTRUN,
	BCI_STATUS_COUNT,
};

/*
 * What a transition from one status to another means:
 *   UNCHANGED   the same status;
 *   REGRESSION  pass or skip to anything failing, pass to skip, notrun to
 *               anything failing (a new test that fails);
 *   FIXED       anything failing, or skip, to pass;
 *   WARNING     between two failing statuses, or failing to skip: a change
 *               a developer may want to see, never a regression;
 *   NEW_TEST    notrun to pass or skip;
 *   NOT_RUN     anything to notrun (the incomplete that caused it is
 *               reported on its own test).
 * "Failing": warn, dmesg-warn, fail, dmesg-fail, crash, timeout, abort,
 * incomplete.
 */
enum bci_change {
	BCI_CHANGE_UNCHANGED,
	BCI_CHANGE_REGRESSION,
	BCI_CHANGE_FIXED,
	BCI_CHANGE_WARNING,
	BCI_CHANGE_NEW_TEST,
	BCI_CHANGE_NOT_RUN,
	BCI_CHANGE_COUNT,
};

/* The status named @name (results.json's names: "pass", "dmesg-warn" ...); -EINVAL if unknown. */
int bci_status_parse(const char *name);
/* "pass", "dmesg-warn" ... */
const char *bci_status_name(enum bci_status status);
/* "PASS", "DMESG-WARN" ...: as the reply writes them. */
const char *bci_status_label(enum bci_status status);
enum bci_change bci_status_change(enum bci_status from, enum bci_status to);
const char *bci_change_name(enum bci_change change);

/* ---- known-issue filters (filters.c) ---- */

struct bci_filters;

/*
 * Reads the filters of @path (format in filters.c and bootci-known-issues(5)).
 * -ENOENT if the file does not exist, -EINVAL with "PATH:LINE: why" in @err
 * for anything wrong in it.
 */
int bci_filters_load(const char *path, struct bci_filters **filters, char *err, size_t err_size);
/* The same from @len bytes of @text (@name is used in messages). */
int bci_filters_parse(const char *name, const char *text, size_t len, struct bci_filters **filters,
		      char *err, size_t err_size);
void bci_filters_free(struct bci_filters *filters);
int bci_filters_count(const struct bci_filters *filters);

/* What a filter is matched against. */
struct bci_filter_subject {
	const char *test;
	const char *machine;
	const char *const *tags;	/* the machine's tags, NULL-terminated (may be NULL) */
	enum bci_status status;		/* the build's status */
	/* Returns the test's out/err/dmesg (@which) as NUL-terminated text, or NULL; owned by the caller's ctx. */
	const char *(*log)(const char *which, void *ctx);
	void *log_ctx;
};

/* The bug URL of the first filter matching @subject, or NULL (the filters own the string). */
const char *bci_filters_match(const struct bci_filters *filters,
			      const struct bci_filter_subject *subject);

/* ---- the report of a build (regress.c, compare.h) ---- */

/* Where a change of the build lands in the report. */
enum bci_verdict {
	BCI_VERDICT_NEW,		/* a regression nothing explains: "possible new issue" */
	BCI_VERDICT_KNOWN,		/* a regression or warning a known-issue filter matched */
	BCI_VERDICT_FLAKY,		/* a regression of a test that changed inside the baseline */
	BCI_VERDICT_FIXED,
	BCI_VERDICT_WARNING,
	BCI_VERDICT_NEW_TEST,
	BCI_VERDICT_NOT_RUN,
};

struct bci_report_change {
	char *test;
	char *machine;
	char *run_id;			/* the build's run that holds the result */
	enum bci_status from, to;	/* from: the baseline's (notrun when it has none) */
	enum bci_change change;
	enum bci_verdict verdict;
	const char *bug;		/* KNOWN: the filter's URL (owned by the filters) */
	char *group;			/* the machine's shard group, NULL: it has none */
	/*
	 * The test in the baseline, on the machine and the others of @group:
	 * the runs that ran it (notrun aside) and how many of those failed it
	 * (a failing status: FLAKY's observed rate).
	 */
	unsigned baseline_runs, baseline_failed;
	/*
	 * A possible new issue's reruns (the build's confirm jobs, schedule.h)
	 * on the machine and the others of @group that ran the test, and how
	 * many of those failed it. FLAKY with rerun_runs set: a rerun passed.
	 */
	unsigned rerun_runs, rerun_failed;
};

struct bci_report_suspend {
	char *machine;
	int cycles;			/* the build's cycles with a latency */
	double median;			/* their median latency, seconds */
	int baseline_cycles;
	double baseline_min, baseline_max;	/* the baseline's spread */
	int regression;			/* median beyond baseline_max */
};

struct bci_report {
	char *build, *tree, *commit, *tier, *base, *base_tree, *series_title, *message_id;
	int window;
	int machines;			/* machines that ran the build */
	int grouped;			/* those of them in a shard group */
	long results;			/* results compared */
	long counts[BCI_VERDICT_NOT_RUN + 1];
	struct bci_report_change *changes;	/* sorted by verdict, test, machine */
	size_t n_changes;
	struct bci_report_suspend *suspend;	/* by machine */
	size_t n_suspend;
	/* The build's reruns of its possible new issues: queued, and those whose runs came back. */
	int reruns, reruns_back;
};

/* One result of the build as the report compared it (bci_report_options.seen). */
struct bci_report_seen {
	int64_t run;			/* the run's store key */
	const char *test;
	int status;			/* enum bci_status */
	int job;
};

struct bci_report_options {
	const char *data_dir;		/* where the run archives are, for the filters' log regexes */
	const struct bci_filters *filters;	/* may be NULL */
	int window;			/* the baseline window in runs (>= 1) */
	/*
	 * 2: the second half of the machines is compared on a thread with a
	 * connection of its own, bci_store_open(@store_url, @data_dir); the
	 * report is the same. 0 or 1: one thread.
	 */
	int threads;
	const char *store_url;
	/*
	 * When set, each machine's results in the build, as the report
	 * compared them (a later run of the machine replacing an earlier
	 * one's), are handed to @seen once the machine is compared: a matrix
	 * is then made without reading the build's results a second time. It
	 * is called from the report's threads, one machine at a time each:
	 * @seen serializes what it shares. Its rows live for the call only; a
	 * negative return (-errno, its message in @err) stops the report.
	 */
	int (*seen)(void *ctx, const struct bci_report_seen *rows, size_t n, char *err,
		    size_t err_size);
	void *seen_ctx;
};

/* "possible new issue", "known issue" ...: as the pages name a verdict (status.c). */
const char *bci_verdict_name(enum bci_verdict verdict);

/* The report of the build named @build. -ENOENT if there is no such build or it has no run. */
int bci_report_build(struct bci_store *store, const char *build,
		     const struct bci_report_options *options, struct bci_report **report,
		     char *err, size_t err_size);
void bci_report_free(struct bci_report *report);
/* Whether the build fails (a possible new issue or a suspend regression). */
int bci_report_failed(const struct bci_report *report);

/* ---- the reply (mbox.c) ---- */

/* More tests of one binary with the same changes than this are one item of the reply. */
#define BCI_MBOX_FOLD_AFTER 3

struct bci_mbox_options {
	const char *from;		/* the From: address ("bootci <bootci@localhost>" when NULL) */
	const char *to;			/* the To: address(es), or NULL */
	/*
	 * serve's address (http://master:8080): the reply links to its pages
	 * (links.c), the build's matrix and each change's result ("" / NULL:
	 * no links).
	 */
	const char *matrix_url;
	time_t date;			/* the Date: (and the mbox From_ line) */
	/* Tests of one binary with the same changes listed one by one (0: BCI_MBOX_FOLD_AFTER). */
	int fold_after;
	/* The message alone, as a mail transfer agent takes it: no From_ line, no >From quoting. */
	bool bare;
};

/*
 * Writes the reply to the series as one mbox message (a "From " line, the
 * RFC 5322 headers, the plain text body, a blank line) to @out, or with
 * @options->bare the message alone. In each section a test is listed once,
 * its machines beneath, those with the same transition on one line; more
 * than @options->fold_after tests of one binary with the same lines are
 * one item "igt@binary@* (N subtests)" linked to the matrix showing them.
 * -EINVAL if the build's Message-ID or an address holds a line break or
 * cannot be a msg-id.
 */
int bci_mbox_write(FILE *out, const struct bci_report *report, const struct bci_mbox_options *options,
		   char *err, size_t err_size);

/* ---- serve's page addresses (links.c) ---- */

struct bci_str;

/*
 * Each appends to @b one address under @base, serve's address
 * (http://master:8080): 0, or -ENOMEM. The build's matrix,
 * @base/builds/BUILD.
 */
int bci_link_build(struct bci_str *b, const char *base, const char *build);
/*
 * The build's matrix showing the tests whose names start with
 * @test_prefix (@whole: the tests named @test_prefix), only those a change
 * marks when @changed: @base/builds/BUILD?test=REGEX[&status=changed].
 */
int bci_link_build_tests(struct bci_str *b, const char *base, const char *build,
			 const char *test_prefix, bool whole, bool changed);
/* A result's page with its logs, @base/machines/M/runs/R/results/T. */
int bci_link_result(struct bci_str *b, const char *base, const char *machine, const char *run_id,
		    const char *test);

/* ---- what every page shares (html.c) ---- */

/*
 * The one escaper of text into HTML (text and attribute values): every byte
 * from a test or the store goes through it (see html.c).
 */
void bci_html_escape(struct bci_str *b, const char *text, size_t len);
void bci_html_escape_str(struct bci_str *b, const char *s);
/* @s percent-encoded as one URL path segment (or query value): [A-Za-z0-9-._~@] kept. 0 or -ENOMEM. */
int bci_html_url_escape(struct bci_str *b, const char *s);
/* The pages' <style> element. */
extern const char bci_html_style[];
/* A section titled @title holding the text of @fd (closed here), or "not available: @why" when @fd < 0. */
void bci_html_file_section(struct bci_str *b, const char *title, int fd, const char *why);
/* The section of a result's out, err or dmesg (@which). */
void bci_html_log_section(struct bci_str *b, struct bci_store *store, const char *data_dir,
			  const char *machine, const char *run_id, const char *test, const char *which);

/* ---- a build's matrix (matrix.c) ---- */

struct bci_matrix;

/* A build's results as a matrix, read once from the store (the view owns it). */
/*
 * The rows of a served matrix (serve's /builds/BUILD?test=&status=&page=&per_page=):
 * the tests a regex and a status select, the changed ones first (by their
 * most telling verdict: possible new issue, known, flaky, fixed, warning,
 * new test, not run), by name within each, one page of them. A matrix of
 * 40 machines x 10k tests is tens of megabytes that a browser takes a
 * minute to lay out; a page of rows opens at once, and the whole matrix is
 * still one link away (per_page=all).
 */
#define BCI_MATRIX_PER_PAGE 200
#define BCI_MATRIX_PER_PAGE_MAX 100000
struct bci_matrix_query {
	char *test;		/* the regex as given ("" any), owned */
	regex_t test_regex;	/* POSIX extended, compiled when test is not "" */
	int status;		/* a status, BCI_MATRIX_CHANGED (a cell a change marks), or -1 any */
	size_t page;		/* 1-based; past the last: the last */
	size_t per_page;	/* 0: every row on one page */
};
#define BCI_MATRIX_CHANGED BCI_STATUS_COUNT
/*
 * The query from a URL's (decoded) values, each NULL when absent:
 * @test a POSIX extended regex (at most 256 bytes and 8 '+', no {m,n},
 * no back-reference: what a reader may have the server compile), @status
 * a status name or "changed",
 * @page from 1, @per_page 1 to BCI_MATRIX_PER_PAGE_MAX or "all". 0, or
 * -EINVAL with @err naming the bad value (a 400). Released by
 * bci_matrix_query_release() either way.
 */
int bci_matrix_query_parse(const char *test, const char *status, const char *page,
			   const char *per_page, struct bci_matrix_query *query, char *err,
			   size_t err_size);
void bci_matrix_query_release(struct bci_matrix_query *query);

struct bci_matrix_view {
	struct bci_matrix *matrix;
	size_t tests, machines;
	/* Set by the caller: one page of the rows it selects (served pages); NULL: every row. */
	const struct bci_matrix_query *query;
	/* Set by the caller: result cells link to serve's pages under this URL (any links mode). */
	const char *results_url;
	/*
	 * Set by the caller: the page goes to this stream as it is made, the
	 * string holding a few rows at a time (a 400k-cell matrix is tens of
	 * megabytes).
	 */
	FILE *stream;
	/* Set by the caller: the build's stages, shown above the matrix (served pages); or NULL. */
	const struct bci_stages *stages;
};

int bci_matrix_read(struct bci_store *store, const struct bci_report *report,
		    struct bci_matrix_view *view, char *err, size_t err_size);
/*
 * The two halves of bci_matrix_read(): the build's runs and results (no
 * report needed, so it can be read beside the report's own reading, on
 * another connection), then the report's changes marked in it.
 */
int bci_matrix_load(struct bci_store *store, const char *build, struct bci_matrix_view *view,
		    char *err, size_t err_size);
void bci_matrix_mark(const struct bci_report *report, struct bci_matrix_view *view);
/*
 * The matrix from the report's own reading of the build's results, which
 * then are read once: begin reads the build's runs; bci_matrix_seen is the
 * report's bci_report_options.seen (its ctx: the view); end, after the
 * report, makes the cells and marks the report's changes in them.
 */
int bci_matrix_begin(struct bci_store *store, const char *build, struct bci_matrix_view *view,
		     char *err, size_t err_size);
int bci_matrix_seen(void *ctx, const struct bci_report_seen *rows, size_t n, char *err,
		    size_t err_size);
int bci_matrix_end(const struct bci_report *report, struct bci_matrix_view *view, char *err,
		   size_t err_size);
/*
 * The three above: the report of @build with @options (its seen hook set
 * here) into *@report and its matrix into @view, read again (up to three
 * times) when a run is stored meanwhile. *@report is NULL or a report the
 * caller frees; @view is released by the caller either way.
 */
int bci_matrix_report(struct bci_store *store, const char *build,
		      const struct bci_report_options *options, struct bci_report **report,
		      struct bci_matrix_view *view, char *err, size_t err_size);
void bci_matrix_release(struct bci_matrix_view *view);

/* ---- the matrix page (matrix_html.c) ---- */

/* Where a matrix's links go: the static files, or serve's routes. */
enum bci_html_links {
	BCI_HTML_STATIC,	/* MACHINE/N.html */
	BCI_HTML_SERVED,	/* /machines/M/runs/R/results/T, /tests/T, /machines/M/suspend */
};

/* The matrix page (with its filters) appended to @b; -ENOMEM. */
int bci_html_matrix(const struct bci_report *report, const struct bci_matrix_view *view,
		    enum bci_html_links links, struct bci_str *b);

/* ---- the static pages (html_write.c) ---- */

/*
 * Writes @dir/BUILD/index.html (the matrix of @report's build) and a page
 * per result, @dir/BUILD/MACHINE/N.html, with its logs read through the
 * store (@data_dir). Folder names are the names' bci_name_folder() (names.h).
 * With @results_url (serve's address, e.g. http://master:8080), no result
 * page is written: each cell links to serve's page of that result,
 * @results_url/machines/M/runs/R/results/T (the page's <base> is
 * @results_url/, its links machines/M/runs/R/results/T).
 */
int bci_html_write(struct bci_store *store, const char *data_dir, const struct bci_report *report,
		   const char *dir, const char *results_url, char *err, size_t err_size);
/* bci_html_write() from a matrix loaded and marked already (taken: released here). */
int bci_html_write_view(const char *data_dir, const struct bci_report *report,
			struct bci_matrix_view *loaded, const char *dir,
			const char *results_url, char *err, size_t err_size);

/* ---- the pages serve renders (pages.c) ---- */

/* Each appends one whole page to @b; -ENOENT (@err) when what it shows is not stored. */
/* The builds, and above them the newest uploads refused (store/refused.h) under @data_dir. */
int bci_pages_index(struct bci_store *store, const char *data_dir, struct bci_str *b, char *err,
		    size_t err_size);
/* Every upload refused under @data_dir, newest first: machine, run, digest, reason, time. */
int bci_pages_refused(const char *data_dir, struct bci_str *b, char *err, size_t err_size);
/* The matrix of @build, the rows @query selects (bci_matrix_query_parse()). */
int bci_pages_matrix(struct bci_store *store, const char *build,
		     const struct bci_report_options *options, const struct bci_matrix_query *query,
		     struct bci_str *b, char *err, size_t err_size);
/* A result with its out/err/dmesg and, when its boot died, its run's crash records. */
int bci_pages_result(struct bci_store *store, const char *data_dir, const char *machine,
		     const char *run_id, const char *test, struct bci_str *b, char *err,
		     size_t err_size);
/* A bisection's page (GET /bisects/BUILD): its verdict, its steps; -ENOENT when @build has none. */
int bci_pages_bisect(struct bci_store *store, const char *build, struct bci_str *b, char *err,
		     size_t err_size);
int bci_pages_history(struct bci_store *store, const char *test, struct bci_str *b, char *err,
		      size_t err_size);
int bci_pages_suspend(struct bci_store *store, const char *machine, struct bci_str *b, char *err,
		      size_t err_size);

struct bci_latency_point {
	const char *label;		/* build, run, cycles: the point's tooltip */
	double latency;			/* seconds, >= 0 */
};

/*
 * An inline <svg> plot of @n latencies, in order, titled with @machine:
 * axes, a gridline per round step of seconds, a circle per point. -EINVAL
 * for a negative or non-finite latency.
 */
int bci_svg_latency(struct bci_str *b, const char *machine, const struct bci_latency_point *points,
		    size_t n);

/* ---- a build's way from the mail to the reply (stages.c) ---- */

struct bci_store_build_times;

/*
 * The stages of a build, in the order they come. A build from a Patchwork
 * series has them all; one published by hand starts at BCI_AT_REGISTERED.
 * The last-result stages are the fast tier's (its runs, not the full
 * tier's jobs'), known once the build's jobs have all ended.
 */
enum bci_stage {
	BCI_AT_SERIES,		/* the series complete on Patchwork: its last patch's date */
	BCI_AT_NOTICED,		/* picked up by the master's poll */
	BCI_AT_PENDING,		/* bootci-fast pending posted on every patch */
	BCI_AT_BUILD_STARTED,
	BCI_AT_BUILD_ENDED,
	BCI_AT_REGISTERED,	/* registered: its fast tier queued */
	BCI_AT_FIRST_BOOT,	/* its first job handed out */
	BCI_AT_TESTS_STARTED,	/* the first fast run's start (the machine's clock) */
	BCI_AT_TESTS_ENDED,	/* the last fast run's end (the machine's clock) */
	BCI_AT_LAST_RESULT,	/* the last fast run uploaded */
	BCI_AT_VERDICT,		/* the bootci-fast verdict queued: the fast report final */
	BCI_AT_VERDICT_POSTED,	/* ... posted on every patch */
	BCI_AT_REPLY_QUEUED,	/* the reply queued (every tier's jobs ended) */
	BCI_AT_REPLY_SENT,	/* ... accepted by the SMTP server */
	BCI_STAGE_COUNT
};

struct bci_stages {
	double at[BCI_STAGE_COUNT];	/* Unix seconds; -1: not reached (or not known) */
};

/* "series", "noticed", ...: a stage's name in JSON. */
const char *bci_stage_key(enum bci_stage stage);
/* What the stage is, for the pages. */
const char *bci_stage_label(enum bci_stage stage);
/* What the time before the stage went to: "waiting for Patchwork's poll", ... */
const char *bci_stage_took_label(enum bci_stage stage);
/*
 * The stages from the store's times. A series whose date is after its
 * pick-up (its sender's clock ahead of the master's) is taken as complete
 * at its pick-up.
 */
void bci_stages_from_times(const struct bci_store_build_times *times, struct bci_stages *stages);
/* Whether the build came from a Patchwork series (its clock starts at the series). */
int bci_stages_from_series(const struct bci_stages *stages);
/* Where the objectives' clock starts: the series complete, or else the registration. */
double bci_stages_start(const struct bci_stages *stages);
/*
 * The time reaching @stage took, from the last stage before it that was
 * reached: *@known false (and 0) when @stage or every stage before it was
 * not reached. Negative when two clocks disagree (a machine's and the
 * master's).
 */
double bci_stages_took(const struct bci_stages *stages, enum bci_stage stage, bool *known);
/* The stages reached as a table (the build's matrix page), @objective the fast tier's. */
int bci_stages_html(struct bci_str *b, const struct bci_stages *stages, double objective);
/* Seconds as a person reads them: whole seconds, then whole minutes, then hours to a tenth. */
void bci_duration_text(struct bci_str *b, double seconds);

/* ---- metrics over a time window (metrics.c) ---- */

struct bci_metrics_build {
	char *name, *tier;
	double registered;
	struct bci_stages stages;
	double start;			/* where its clock starts (bci_stages_start()) */
	double objective;		/* seconds: the tier's */
	double to_first;		/* the start to its first result, seconds; -1: none yet */
	double to_complete;		/* the start to its complete report; -1: not complete */
	int met;			/* 1 met, 0 missed, -1 not known yet (waiting, within it) */
	long runs;
	long regressions;		/* its report's possible new issues + suspend regressions */
};

struct bci_metrics_machine {
	char *name;
	long runs;
	double busy;			/* seconds */
};

struct bci_metrics_day {
	long day;			/* days since 1970-01-01 (UTC) */
	long runs, results;
};

struct bci_metrics {
	double from, to;
	struct bci_metrics_build *builds;	/* by registration */
	size_t n_builds;
	struct bci_metrics_machine *machines;	/* by name */
	size_t n_machines;
	struct bci_metrics_day *days;
	size_t n_days;
	long results, regressions;
	struct { long builds, judged, met; } tier[2];	/* [0] fast, [1] full */
	/* Per stage, over the builds that reached it: the time it took (bci_stages_took()). */
	struct {
		long builds;
		double median, max;	/* seconds (0 when no build reached it) */
	} took[BCI_STAGE_COUNT];
};

struct bci_metrics_options {
	double from, to;		/* the window, Unix seconds: [from, to) */
	double now;			/* 0: the clock's */
	struct bci_report_options report;	/* how the builds' regressions are counted */
};

/* The objective of tier @tier in seconds: 6 h for "full", 30 min otherwise. */
double bci_metrics_objective(const char *tier);
/*
 * The window from the texts @from and @to (Unix seconds; NULL or "": the
 * last 7 days before @now). -EINVAL (@err) for a text that is not a
 * non-negative integer or a start after the end.
 */
int bci_metrics_window_parse(const char *from, const char *to, double now, double *from_out,
			     double *to_out, char *err, size_t err_size);
int bci_metrics_compute(struct bci_store *store, const struct bci_metrics_options *options,
			struct bci_metrics **metrics, char *err, size_t err_size);
void bci_metrics_free(struct bci_metrics *metrics);
/* The metrics as one JSON object (bootci-aggregator-metrics(1), /api/v1/metrics). */
void bci_metrics_json(FILE *out, const struct bci_metrics *metrics);
/* The metrics page. */
int bci_metrics_html(struct bci_str *b, const struct bci_metrics *metrics);

/* ---- exports (export.c) ---- */

/* The KCIDB status of piglit result @result ("dmesg-warn" -> "PASS" ...), NULL if unknown. */
const char *bci_export_kcidb_status(const char *result);
/*
 * The build named @build as one KCIDB I/O v4.2 document on @out: a checkout
 * and a build (ids "@origin:@build"), a test per result of each of its runs.
 * @origin: the CI system's name, [a-z0-9_]+. With @url (serve's address,
 * or NULL), each test's log_url is its result's page there (links.c).
 */
int bci_export_kcidb(struct bci_store *store, const char *build, const char *origin,
		     const char *url, FILE *out, char *err, size_t err_size);
/*
 * A run as one JUnit XML document (a testsuite, a testcase per result) on
 * @out. With @url (serve's address, or NULL), each testcase's system-out
 * (and a failure's text) gives its result's page there: "result page: URL".
 */
int bci_export_junit(struct bci_store *store, const char *data_dir, const char *machine,
		     const char *run_id, const char *url, FILE *out, char *err, size_t err_size);

#endif
