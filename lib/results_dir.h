/* SPDX-License-Identifier: MIT */
/*
 * The results directory: one run's folder, in igt_runner's layout with
 * bootci's own files beside it. Every name and every line format of it is
 * defined here; the executor writes these files (durably, with its own
 * I/O), the results generator and the aggregator read them.
 *
 * igt_runner's layout (read by the results generator, resultgen.h):
 *   metadata.txt     "key : value" settings
 *   joblist.txt      one job per line (testlist.h)
 *   uname.txt        uname -a of the test machine
 *   starttime.txt    endtime.txt: seconds since the epoch, "%.6f"
 *   aborted.txt      why the run stopped early (absent: it did not)
 *   N/               job N (0-based, joblist order), BCI_RESULTS_JOB_DIR:
 *     journal.txt    the job's journal, lines below
 *     out.txt err.txt  the test's stdout and stderr (igt_protocol.h)
 *     dmesg.txt      the kernel log during the job (kmsg_record.h)
 *     comms          igt_runner's socket dump (runner_comms.h; bootci writes it too)
 *   results.json     piglit results, made from all of the above
 *
 * journal.txt, one line per event:
 *   NAME                       a subtest started (its name)
 *   exit:CODE (SECONDSs)       the test ended with exit CODE (-signal if killed)
 *   timeout:CODE (SECONDSs)    it was killed for time
 * The time is optional; the last line may be cut short by a crash.
 *
 * bootci's files:
 *   bootci-journal.txt   the run journal, one event per line (struct
 *                        bci_run_journal_line), fields separated by spaces:
 *     boot N UNIXTIME RELEASE      a boot of the test machine began
 *     start JOB                    job JOB (0-based, joblist order) is about to run
 *     dynamic JOB SUBTEST@DYNAMIC  a dynamic subtest of that job started
 *     exit JOB STATUS SECONDS      the job ended by itself
 *     timeout JOB STATUS SECONDS   the job was killed for time
 *     incomplete JOB BOOT          the job was in flight when boot BOOT died (0: not known)
 *     capped JOB STARTS            the job took the machine down STARTS times: skipped
 *     abort REASON                 the run stops early (aborted.txt says why)
 *     done                         results are complete
 *   bootci-journal-repairs.txt  what a boot repaired in bootci-journal.txt,
 *                        one line per repair: "boot N: WHAT", WHAT being
 *                        "bootci-journal.txt:LINE: malformed line '...' skipped",
 *                        "bootci-journal.txt: cut a torn last line '...' (N bytes)",
 *                        "job J: its end is lost: incomplete" (quotes escaped)
 *   bootci-identity.txt  what makes the run what it is: "key value" lines
 *   N/bootci-incomplete.txt  present when a result file of job N could not be
 *                        written whole (a full or failing partition), one line
 *                        per such file (bci_results_incomplete_format):
 *     FILE BYTES REASON            FILE (out.txt, err.txt, dmesg.txt, journal.txt)
 *                                  stops after BYTES written; REASON (strerror) the rest
 *                        The contract with the results generator: every test of
 *                        that job gets a note saying so at the end of its out,
 *                        and a result that was pass, warn, dmesg-warn or skip
 *                        (or none) becomes incomplete; worse ones are kept.
 *   boot-NNNN/           one boot record per boot (BCI_RESULTS_BOOT_DIR):
 *     boot.txt           "key value" lines: boot, boot_id, time, kernel, ...
 *     end.txt            how the boot ended, "key value" lines
 *     test-out.txt test-err.txt  the test= program's output of a boot that died
 *                        while it ran, moved here by the next boot before it runs
 *                        the program again (test/ holds the last run's only)
 *   test/                the single test program mode's output:
 *     result.txt out.txt err.txt
 *   suspend-cycles.txt   one line per suspend cycle (struct bci_suspend_cycle_line):
 *     CYCLE RESULT WALL SUSPENDED LATENCY KERNEL_SUSPEND KERNEL_RESUME WAKE
 *     times in seconds "%.3f", an unknown kernel time "-", no wake source "-"
 *   suspend-summary.txt  "key value" lines made from suspend-cycles.txt:
 *     cycles N, pass N, fail N, suspended_seconds / latency_seconds /
 *     kernel_resume_seconds MIN/MEDIAN/MAX ("-" when there were none)
 *
 * "key value" lines: the key is the text before the first space, the value
 * the rest of the line; lines without a space or with an empty key are not
 * entries.
 */
#ifndef BCI_RESULTS_DIR_H
#define BCI_RESULTS_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* ---- names ---- */

#define BCI_RESULTS_METADATA "metadata.txt"
#define BCI_RESULTS_JOBLIST "joblist.txt"
#define BCI_RESULTS_UNAME "uname.txt"
#define BCI_RESULTS_STARTTIME "starttime.txt"
#define BCI_RESULTS_ENDTIME "endtime.txt"
#define BCI_RESULTS_ABORTED "aborted.txt"
#define BCI_RESULTS_JSON "results.json"
#define BCI_RESULTS_JOB_DIR "%u"
#define BCI_RESULTS_JOB_JOURNAL "journal.txt"
#define BCI_RESULTS_JOB_OUT "out.txt"
#define BCI_RESULTS_JOB_ERR "err.txt"
#define BCI_RESULTS_JOB_DMESG "dmesg.txt"
#define BCI_RESULTS_JOB_COMMS "comms"
#define BCI_RESULTS_JOB_INCOMPLETE "bootci-incomplete.txt"

#define BCI_RESULTS_BOOTCI_JOURNAL "bootci-journal.txt"
#define BCI_RESULTS_JOURNAL_REPAIRS "bootci-journal-repairs.txt"
#define BCI_RESULTS_IDENTITY "bootci-identity.txt"
#define BCI_RESULTS_BOOT_DIR "boot-%04u"
#define BCI_RESULTS_BOOT_RECORD "boot.txt"
#define BCI_RESULTS_BOOT_END "end.txt"
#define BCI_RESULTS_BOOT_TEST_OUT "test-out.txt"
#define BCI_RESULTS_BOOT_TEST_ERR "test-err.txt"
#define BCI_RESULTS_TEST_DIR "test"
#define BCI_RESULTS_TEST_RESULT "result.txt"
#define BCI_RESULTS_SUSPEND_CYCLES "suspend-cycles.txt"
#define BCI_RESULTS_SUSPEND_SUMMARY "suspend-summary.txt"

/* The files of a job folder, in the order the results generator reads them. */
enum bci_results_job_file {
	BCI_RESULTS_FILE_JOURNAL,
	BCI_RESULTS_FILE_OUT,
	BCI_RESULTS_FILE_ERR,
	BCI_RESULTS_FILE_DMESG,
	BCI_RESULTS_FILE_COUNT,
};
extern const char *const bci_results_job_files[BCI_RESULTS_FILE_COUNT];

/*
 * A line of N/bootci-incomplete.txt into @buf: @file stopped after @written
 * bytes for @error (-errno). The length, as snprintf.
 */
int bci_results_incomplete_format(char *buf, size_t size, const char *file,
				  unsigned long long written, int error);

/* "boot-0007" → 7: 1, or 0 when @name is not a boot record folder. */
int bci_results_boot_dir_parse(const char *name, unsigned *number);

/* ---- journal.txt ---- */

/* Pseudo exit codes of a job whose journal has no exit line. */
#define BCI_RESULTS_EXIT_INCOMPLETE (-1234)	/* the test never finished */
#define BCI_RESULTS_EXIT_GRACEFUL (-1)		/* -SIGHUP: the runner was asked to stop */

enum bci_job_journal_kind {
	BCI_JOB_JOURNAL_EMPTY,
	BCI_JOB_JOURNAL_SUBTEST,
	BCI_JOB_JOURNAL_EXIT,
	BCI_JOB_JOURNAL_TIMEOUT,
};

struct bci_job_journal_line {
	enum bci_job_journal_kind kind;
	const char *subtest;	/* SUBTEST: the caller's line */
	int code;		/* EXIT, TIMEOUT */
	double time;		/* seconds, 0 when absent */
};

/*
 * Parses one journal.txt line (NUL-terminated, without its newline).
 * @terminated false for a last line without a newline: a crash may have cut
 * it, so it is read as leniently as igt_runner reads every line. 0, or
 * -EINVAL for a malformed exit or timeout line.
 */
int bci_job_journal_parse_line(const char *line, bool terminated,
			       struct bci_job_journal_line *out);
/* "exit:CODE (SECONDSs)\n" or "timeout:...": snprintf's count. */
int bci_job_journal_format_exit(char *buf, size_t size, bool timeout, int code, double seconds);
/* The piglit result of a job's exit code, the pseudo codes included. */
const char *bci_job_journal_result(int code);

/* ---- bootci-journal.txt ---- */

enum bci_run_journal_kind {
	BCI_RUN_JOURNAL_BOOT,
	BCI_RUN_JOURNAL_START,
	BCI_RUN_JOURNAL_DYNAMIC,
	BCI_RUN_JOURNAL_EXIT,
	BCI_RUN_JOURNAL_TIMEOUT,
	BCI_RUN_JOURNAL_INCOMPLETE,
	BCI_RUN_JOURNAL_CAPPED,
	BCI_RUN_JOURNAL_ABORT,
	BCI_RUN_JOURNAL_DONE,
};

#define BCI_RUN_JOURNAL_LINE_MAX 1024

struct bci_run_journal_line {
	enum bci_run_journal_kind kind;
	unsigned long job;		/* start, dynamic, exit, timeout, incomplete, capped */
	/* What follows the word (and the job): "N UNIXTIME RELEASE" for boot,
	 * "SUBTEST@DYNAMIC" for dynamic, "STATUS SECONDS" for exit and timeout,
	 * "BOOT" for incomplete, "STARTS" for capped, the reason for abort. */
	char rest[BCI_RUN_JOURNAL_LINE_MAX];
};

/*
 * What an `exit` or `timeout` line says after its job: "STATUS SECONDS", then
 * the size each of the job's files had when the test's end was written
 * ("out=BYTES err=BYTES dmesg=BYTES comms=BYTES", only the files it had).
 * That end is made durable by the same barrier as the files (the next job's
 * start): after a cut a file shorter than its size says the barrier did not
 * complete, and the end cannot be trusted to have its outputs.
 */
enum { BCI_RUN_JOURNAL_END_COMMS = BCI_RESULTS_FILE_COUNT, BCI_RUN_JOURNAL_END_FILES };
struct bci_run_journal_end {
	int status;
	double seconds;
	long long bytes[BCI_RUN_JOURNAL_END_FILES]; /* by BCI_RESULTS_FILE_*, comms last; -1: not said */
};
/* The rest: snprintf's count. */
int bci_run_journal_end_format(char *buf, size_t size, const struct bci_run_journal_end *end);
/* 0, or -EINVAL when @rest is not "STATUS SECONDS" followed by known FILE=BYTES words
 * (bci_run_journal_parse_line refuses such an exit or timeout line). */
int bci_run_journal_end_parse(const char *rest, struct bci_run_journal_end *end);
/* The name of an end's file @i (journal.txt's is never said: its end is written after). */
const char *bci_run_journal_end_file(int i);

/*
 * Parses one line (without its newline; @line is not modified). 0, or
 * -EINVAL when it is not one of the lines above (the caller quotes the
 * whole line); the job's range is the caller's check.
 */
int bci_run_journal_parse_line(const char *line, struct bci_run_journal_line *out);
/* The line with its newline: snprintf's count (>= @size: it did not fit). */
int bci_run_journal_format_line(char *buf, size_t size, const struct bci_run_journal_line *line);

/* ---- "key value" files ---- */

/*
 * Hands out the entries of a "key value" text one at a time, cutting it in
 * place: start with *@cursor = text; returns 1 with @key and @value set
 * (NUL-terminated, into the text) or 0 at the end.
 */
int bci_results_kv_next(char **cursor, char **key, char **value);

/* ---- test/result.txt: how the test= program ended (executor/test_program.c writes it) ---- */

/*
 *   command <the test= value>
 *   state running|done|unkillable|capped
 *   boot <N>                 the run's boot that started the program (boot-NNNN)
 *   starts <K>               how many boots started it: a boot that finds `state running`
 *                            died while it ran; after boot_cap such boots the run is
 *                            `state capped` and the program does not run again
 *   exit-status <N>          or   signal <N> <name>     (state done)
 *   timeout yes              (the deadline passed and the program was killed)
 *   duration <S.mmm>
 *   incomplete FILE BYTES REASON   (out.txt or err.txt could not be written whole, a line of
 *                            bci_results_incomplete_format: the program was stopped there)
 */
enum bci_test_program_state {
	BCI_TEST_PROGRAM_RUNNING,	/* the boot ended before the program did */
	BCI_TEST_PROGRAM_DONE,
	BCI_TEST_PROGRAM_UNKILLABLE,	/* timed out and could not be killed */
	BCI_TEST_PROGRAM_CAPPED,	/* it took the machine down boot_cap times: not run again */
};

struct bci_test_program_result {
	const char *command;		/* into the parsed text */
	enum bci_test_program_state state;
	bool has_exit;			/* exit-status given */
	int exit_status;
	int signal;			/* 0: none */
	bool timed_out;
	bool output_incomplete;		/* an incomplete line: out.txt or err.txt is cut */
	double duration;		/* seconds; -1: not given */
	unsigned boot;			/* the boot that started it; 0: not given */
	unsigned starts;		/* boots that started it; 0: not given (an older executor) */
};

/*
 * Parses result.txt's @text (cut in place; @result points into it). 0, or
 * -EINVAL with @err naming the line at fault (no command, an unknown state,
 * a bad number).
 */
int bci_test_program_result_parse(char *text, struct bci_test_program_result *result, char *err,
				  size_t err_size);
/* Its piglit result: pass (exit 0), fail, timeout or incomplete (also when its output is cut,
 * when the boot died while it ran, and when it was capped). */
const char *bci_test_program_result_name(const struct bci_test_program_result *result);
/*
 * @result as result.txt's text into @buf, every line the parser reads but
 * `incomplete` (only the executor's own test program has one): its length,
 * as snprintf. The deploy's record (executor/deploy.c) is written with it.
 */
int bci_test_program_result_format(char *buf, size_t size,
				   const struct bci_test_program_result *result);

/* ---- suspend-cycles.txt ---- */

struct bci_suspend_cycle_line {
	char cycle[64];			/* "<state>[_<pm_test>]-<NNNN>" */
	char result[16];		/* a piglit result */
	double wall, suspended, latency;
	double kernel_suspend, kernel_resume;	/* < 0: unknown ("-") */
	char wake[32];			/* wake source, "pm_test", or "" ("-") */
};

/* The line, with its newline: snprintf's count. */
int bci_suspend_cycle_line_format(char *buf, size_t size, const struct bci_suspend_cycle_line *line);
/* 0, or -EINVAL when @text (one line) is not a whole cycle line (one cut by a crash). */
int bci_suspend_cycle_line_parse(const char *text, struct bci_suspend_cycle_line *line);

/* ---- suspend-summary.txt ---- */

struct bci_suspend_spread {
	size_t count;			/* 0: "-" */
	double min, median, max;
};

struct bci_suspend_summary {
	size_t cycles, pass, fail;
	struct bci_suspend_spread suspended, latency, kernel_resume;
};

/*
 * The summary of a suspend-cycles.txt text: every whole line counts; the
 * times describe the cycles that passed (a pm_test cycle never sleeps).
 * 0 or -ENOMEM.
 */
int bci_suspend_summary_compute(const char *text, size_t len, struct bci_suspend_summary *summary);
/* The suspend-summary.txt text: snprintf's count. */
int bci_suspend_summary_format(char *buf, size_t size, const struct bci_suspend_summary *summary);

/* What a summary value is: a count, a MIN/MEDIAN/MAX spread, or other text. */
enum bci_summary_value_kind { BCI_SUMMARY_COUNT, BCI_SUMMARY_SPREAD, BCI_SUMMARY_TEXT };
enum bci_summary_value_kind bci_suspend_summary_value(const char *value, long long *count,
						      struct bci_suspend_spread *spread);

#endif
