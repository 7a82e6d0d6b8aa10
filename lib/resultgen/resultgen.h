/* SPDX-License-Identifier: MIT */
/*
 * The results generator: reads a results directory in igt_runner's layout
 * (results_dir.h) and judges its tests with the same tests, results,
 * overrides, totals and runtimes igt_runner's resultgen.c produces from it.
 * Two ways out, the same judgement: results.json in piglit format,
 * results_version 10 (bci_resultgen_write), or one callback per test
 * (bci_results_walk) for a reader that stores the results elsewhere.
 *
 * Memory stays bounded whatever the size of the run: job folders are read
 * one at a time and their tests handed out before the next is opened;
 * what is kept across jobs is one small counter set per test binary (for
 * "totals" and "runtimes"). An out.txt or err.txt up to the file limit
 * (BCI_RESULTGEN_MAX_FILE) is read whole; dmesg.txt is read a line at a
 * time. A file over the limit never fails the run: every line of it still
 * decides results (protocol lines of out/err, subtest starts, ignore regexes
 * and warnings of dmesg), but the texts handed out only keep its first and
 * last half-limit, with a marker line saying how many bytes were left out
 * where, and a warning names the file. What one job holds is then at most
 * a few times the limit, plus a little per test.
 *
 * The directory may come from outside (an upload on the CI master): every
 * file below it is opened without following a symbolic link (openat2
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, or O_NOFOLLOW per path component
 * where the kernel has no openat2), and only regular files and directories
 * are read; anything else is refused with an error naming it. The
 * directory given itself may be reached through links.
 *
 * A job whose `comms` dump shows the test spoke igt_runner's socket protocol
 * is judged from that dump as igt_results does (comms.c), else
 * from its journal, out and err.
 *
 * Deliberate differences from igt_runner, all on input igt_runner itself
 * never writes: a malformed metadata.txt, joblist.txt or journal.txt line is
 * an error (igt_runner guesses); a NUL byte in a string is written as
 * \u0000 (igt_runner emits invalid UTF-8); attachments/ folders are not listed; a
 * test name that two jobs both produce appears twice instead of merged; a
 * job folder without journal.txt is read as one with an empty journal
 * (igt_runner refuses the whole directory); a test that nothing gave a
 * result (a subtest only the kernel log names) is "incomplete", with a
 * warning, so that every test has a result.
 */
#ifndef BCI_RESULTGEN_H
#define BCI_RESULTGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "igt_protocol.h"

#define BCI_RESULTGEN_MAX_FILE ((size_t)64 << 20)

struct bci_resultgen_options {
	FILE *warnings;		/* where warnings go; NULL: stderr */
	size_t max_file;	/* the file limit; 0: BCI_RESULTGEN_MAX_FILE */
};

/*
 * Writes the results.json of @results_dir to @out. Returns 0, or -errno
 * with a message naming the file (and line) in @err. On error the output
 * written so far is incomplete: callers write to a temporary and drop it.
 */
int bci_resultgen_write(const char *results_dir, FILE *out, char *err, size_t err_size);
/* The same with @options (NULL: the defaults). Warnings are "warning: ..." lines. */
int bci_resultgen_write_options(const char *results_dir, FILE *out,
				const struct bci_resultgen_options *options,
				char *err, size_t err_size);

/* ---- the per-test walk ---- */

/* Bytes of a results file as they are (any byte may occur); ptr NULL: absent. */
struct bci_results_text {
	const char *ptr;
	size_t len;
};

#define BCI_RESULTS_NO_JOB ((size_t)-1)

/* One test, as results.json has it under "tests". */
struct bci_results_test {
	const char *name;		/* piglit name: igt@binary[@subtest[@dynamic]] */
	const char *result;		/* a piglit result (bci_igt_result_names); never NULL */
	bool has_time;
	double time_start, time_end;	/* seconds; start is always 0, as in igt_runner */
	size_t job;			/* joblist.txt line, 0-based; BCI_RESULTS_NO_JOB
					 * for igt@runner@aborted */
	const char *binary;		/* the job's test binary ("runner" for aborted) */
	struct bci_results_text out, err, dmesg, dmesg_warnings, igt_version;
	bool from_comms;		/* judged from a comms dump (comms.c) */
};

/* Counters of one piglit binary name ("igt@kms_flip", "bootci@suspend"). */
struct bci_results_binary {
	char name[BCI_IGT_NAME_SIZE];
	bool in_totals;			/* listed under "totals" */
	unsigned long counts[BCI_IGT_RESULT_COUNT];	/* indexed as bci_igt_result_names */
	bool has_runtime;		/* listed under "runtimes" with a time */
	double runtime;
	bool runtime_listed;		/* listed under "runtimes" even without a time
					 * (a job with a comms dump, as igt_results does) */
};

/* What the run as a whole says. */
struct bci_results_run {
	const char *name;		/* metadata.txt's name, or "" */
	struct bci_results_text uname;	/* uname.txt's first 128 bytes, newline cut */
	bool has_start, has_end;	/* starttime.txt, endtime.txt */
	double start, end;
	/* Known at BCI_RESULTS_RUN_END only: */
	bool aborted;			/* aborted.txt: igt@runner@aborted was handed out */
	bool any_totals;		/* any job was counted */
	const unsigned long *totals;	/* [BCI_IGT_RESULT_COUNT]: all tests */
	const struct bci_results_binary *binaries;	/* first-seen order */
	size_t binary_count;
	struct bci_results_text suspend_summary;	/* suspend-summary.txt (results_dir.h) */
};

enum bci_results_event {
	BCI_RESULTS_RUN_BEGIN,		/* once, before any test */
	BCI_RESULTS_TEST,		/* per test, in results.json's order */
	BCI_RESULTS_RUN_END,		/* once, after the last test */
};

/*
 * The callback: @test is set for BCI_RESULTS_TEST only. Everything it is
 * handed lives until it returns (copy what you keep). A negative return
 * stops the walk, which returns it.
 */
typedef int bci_results_walk_fn(enum bci_results_event event, const struct bci_results_run *run,
				const struct bci_results_test *test, void *ctx);

/*
 * Walks @results_dir as bci_resultgen_write() does, handing every test and
 * the run's facts to @fn with @ctx. @options as above (NULL: defaults).
 * Returns 0, @fn's negative return, or -errno with a message naming the
 * file (and line) in @err.
 */
int bci_results_walk(const char *results_dir, const struct bci_resultgen_options *options,
		     bci_results_walk_fn *fn, void *ctx, char *err, size_t err_size);

/*
 * One job folder at a time, while the run is still being written: the
 * judgement bci_results_walk() gives the same folder, for a reader that
 * reports each job as it ends (the executor's console line). The reader
 * reads metadata.txt and joblist.txt once (neither changes during a run);
 * each walk then reads only job folder @job (0-based joblist line) and hands
 * its tests to @fn as BCI_RESULTS_TEST events, exactly as the whole walk
 * would. Warnings of that job go to @warnings (NULL: the reader's options).
 * Both return 0, @fn's negative return, or -errno with a message naming the
 * file in @err. The reader is owned by the caller: bci_results_job_reader_free().
 */
struct bci_results_job_reader;

int bci_results_job_reader_new(const char *results_dir, const struct bci_resultgen_options *options,
			       struct bci_results_job_reader **reader, char *err, size_t err_size);
int bci_results_job_walk(struct bci_results_job_reader *reader, size_t job, FILE *warnings,
			 bci_results_walk_fn *fn, void *ctx, char *err, size_t err_size);
void bci_results_job_reader_free(struct bci_results_job_reader *reader);

/*
 * The same reader over files held in memory instead of a folder (ingest
 * streams an archive: nothing is written to disk). A file is its path in
 * the run folder ("metadata.txt", "12/out.txt") and its bytes: @data/@len,
 * or when @fd >= 0 the whole file @fd (a member too large to hold, spilled
 * by the caller; read from offset 0, the fd stays the caller's). A folder
 * is there when a file below it is. @name stands for the folder in
 * messages (kept: it lives as long as the reader). Every file is copied as
 * it is read: the sources need only live through the call given them.
 *
 * bci_results_job_reader_new_mem() reads metadata.txt and joblist.txt, and
 * the facts of BCI_RESULTS_RUN_BEGIN (bci_results_job_reader_run()) from
 * @run; bci_results_job_walk_mem() walks job folder @job from @files (a
 * job absent from them is "notrun", as a missing folder);
 * bci_results_aborted_walk_mem() hands out igt@runner@aborted when @run
 * has aborted.txt, as the end of bci_results_walk() does.
 */
struct bci_results_mem_file {
	const char *path;
	const char *data;
	size_t len;
	int fd;
};

struct bci_results_mem {
	const struct bci_results_mem_file *files;
	size_t count;
};

int bci_results_job_reader_new_mem(const char *name, const struct bci_results_mem *run,
				   const struct bci_resultgen_options *options,
				   struct bci_results_job_reader **reader, char *err, size_t err_size);
/* The number of joblist.txt lines: the jobs a walk may name. */
size_t bci_results_job_reader_count(const struct bci_results_job_reader *reader);
/* The run's name, uname and times as BCI_RESULTS_RUN_BEGIN hands them; lives with the reader. */
const struct bci_results_run *bci_results_job_reader_run(const struct bci_results_job_reader *reader);
int bci_results_job_walk_mem(struct bci_results_job_reader *reader, size_t job,
			     const struct bci_results_mem *files, FILE *warnings,
			     bci_results_walk_fn *fn, void *ctx, char *err, size_t err_size);
int bci_results_aborted_walk_mem(struct bci_results_job_reader *reader,
				 const struct bci_results_mem *run, bci_results_walk_fn *fn,
				 void *ctx, char *err, size_t err_size);

#endif
