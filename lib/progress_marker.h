/* SPDX-License-Identifier: MIT */
/*
 * The executor's progress lines, the one place their format is written and
 * read: the executor (executor/igt/progress.c) formats them, the master
 * (aggregator/master/serve/console_log.c) finds in a machine's serial console
 * the job that was running when a boot died.
 *
 * A job's start, a kernel log record (so that it lands in the serial console,
 * in dmesg.txt and in a pstore dump, in order with the kernel's own lines):
 *
 *   [bootci] [12/340] igt@kms_flip@basic
 *   [bootci] [12/340] igt@kms_flip@basic (resumed: basic)
 *   [bootci] [13/340] igt@kms_flip@wf (resumed: wf --dynamic-subtest pipe-B)
 *   [bootci] [14/340] igt@gem_exec (3 subtests)
 *
 * A job's end, a line of the executor's console (stderr), said once the next
 * job runs (so it may come after the next start):
 *
 *   bootci: [12/340] igt@kms_flip@basic pass 1.2s (elapsed 3m02s, ETA 41m)
 *   bootci: [14/340] igt@gem_exec (3 subtests) 2 pass, 1 skip 0.8s (elapsed ..., ETA ...)
 *
 * `[N/M]`: the job's line in joblist.txt counted from 1, of M jobs (1 <= N
 * <= M). The name is the job's test (`igt@binary@subtest`, the binary alone
 * for a whole-binary job) or, for a job of several subtests, its binary and
 * how many; the first space ends it. The rest of the line is for people.
 *
 * On a serial console either line comes after the kernel's stamp
 * (`[    3.416269] `, or more with CONFIG_PRINTK_CALLER): a reader looks for
 * the prefix in a line's first BCI_PROGRESS_PREFIX_WINDOW bytes, followed at
 * once by `[N/M] `. Any other `[bootci] ` or `bootci: ` line is not a marker.
 */
#ifndef BCI_PROGRESS_MARKER_H
#define BCI_PROGRESS_MARKER_H

#include <stdbool.h>
#include <stddef.h>

struct bci_joblist_entry;

/* What every bootci kernel log record starts with (executor/kmsg.c writes it). */
#define BCI_PROGRESS_KMSG_PREFIX "[bootci] "
/* What every executor console line starts with, after its stamp (executor/console.c). */
#define BCI_PROGRESS_CONSOLE_PREFIX "bootci: "
/* How far into a line a reader looks for either prefix. */
#define BCI_PROGRESS_PREFIX_WINDOW 40
/* A job's name, as markers say it, fits in this (NUL included). */
#define BCI_PROGRESS_NAME_SIZE 512

/*
 * Job @entry's name as markers say it into @name (@size bytes, cut to fit):
 * `igt@binary@subtest`, `igt@binary@subtest@dynamic` (a joblist line naming a
 * dynamic subtest), `igt@binary (3 subtests)` or `igt@binary`.
 */
void bci_progress_job_name(const struct bci_joblist_entry *entry, char *name, size_t size);

/*
 * A start marker's text after BCI_PROGRESS_KMSG_PREFIX, newline included:
 * `[N/M] NAME\n`, or for a resumed job `[N/M] NAME (resumed: SUBTESTS)\n`, or
 * `[N/M] NAME (resumed: SUBTESTS --dynamic-subtest FILTER)\n` when
 * @dynamic_filter is not NULL. @resumed NULL: not resumed. Its length, or
 * -ENOSPC when it does not fit in @size bytes (@buf then holds as much as
 * fits), -EINVAL when @number is not 1..@total.
 */
int bci_progress_format_start(char *buf, size_t size, unsigned number, size_t total,
			      const char *name, const char *resumed, const char *dynamic_filter);

/*
 * An end line's text after BCI_PROGRESS_CONSOLE_PREFIX, no newline:
 * `[N/M] NAME RESULT 1.2s (elapsed ELAPSED, ETA ETA)`. As format_start.
 */
int bci_progress_format_end(char *buf, size_t size, unsigned number, size_t total,
			    const char *name, const char *result, double seconds,
			    const char *elapsed, const char *eta);

enum bci_progress_kind {
	BCI_PROGRESS_NONE,
	BCI_PROGRESS_START,
	BCI_PROGRESS_END,
};

struct bci_progress_marker {
	enum bci_progress_kind kind;
	unsigned number, total;		/* N/M */
	/* After `[N/M] `, up to the line's end (CR, LF or @len): NAME and what follows. */
	const char *text;
	size_t text_len;
	size_t name_len;		/* NAME's length in text (up to the first space) */
};

/*
 * What line @line (@len bytes, its start at least: NUL and the line's end
 * stop the reading) says of a job: BCI_PROGRESS_START or BCI_PROGRESS_END with
 * @out filled (pointing into @line), BCI_PROGRESS_NONE when it is no marker.
 * Any bytes are fine.
 */
enum bci_progress_kind bci_progress_parse(const char *line, size_t len,
					  struct bci_progress_marker *out);

/*
 * Whether the job a marker names (@name, @name_len bytes: NAME, as parsed)
 * runs test @test (`igt@binary@subtest[@dynamic]`): its test, or its binary
 * and one of the binary's tests.
 */
bool bci_progress_job_runs(const char *name, size_t name_len, const char *test);

#endif
