// SPDX-License-Identifier: MIT
/*
 * bootci's run journal (the format is in journal.h). Appending is the
 * executor's durability rule in one place: a line is written and
 * fdatasync'ed, or the failure is said on the console and returned, for the
 * engine to stop the run before anything the line would have announced.
 */
#include "journal.h"
#include "message.h"

#include "executor.h"

#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Applies one parsed line to the state. */
static int apply_line(struct bci_journal *journal, const struct bci_run_journal_line *line)
{
	struct bci_job_state *state;
	unsigned long number;
	char **list, *end;

	switch (line->kind) {
	case BCI_RUN_JOURNAL_BOOT:
		/* Its number, when the lines of earlier boots were lost (a damaged start). */
		number = strtoul(line->rest, &end, 10);
		journal->boots = end != line->rest && number > journal->boots &&
				 number <= UINT_MAX ? (unsigned)number : journal->boots + 1;
		return 0;
	case BCI_RUN_JOURNAL_DONE:
		journal->done = true;
		return 0;
	case BCI_RUN_JOURNAL_ABORT:
		journal->aborted = true;
		return 0;
	default:
		break;
	}
	/* Every other line names a job of this run. */
	if (line->job >= journal->job_count)
		return -EINVAL;
	state = &journal->jobs[line->job];
	switch (line->kind) {
	case BCI_RUN_JOURNAL_START:
		state->starts++;
		state->incomplete = false;
		journal->in_flight = (int)line->job;
		break;
	case BCI_RUN_JOURNAL_EXIT:
	case BCI_RUN_JOURNAL_TIMEOUT:
	case BCI_RUN_JOURNAL_CAPPED:
		state->finished = true;
		state->capped = line->kind == BCI_RUN_JOURNAL_CAPPED;
		if (line->kind != BCI_RUN_JOURNAL_CAPPED) {
			journal->last_end = (long)line->job;
			journal->last_end_timeout = line->kind == BCI_RUN_JOURNAL_TIMEOUT;
			snprintf(journal->last_end_rest, sizeof(journal->last_end_rest), "%s",
				 line->rest);
		}
		if (journal->in_flight == (int)line->job)
			journal->in_flight = -1;
		break;
	case BCI_RUN_JOURNAL_INCOMPLETE:
		state->incomplete = true;
		if (journal->in_flight == (int)line->job)
			journal->in_flight = -1;
		break;
	case BCI_RUN_JOURNAL_DYNAMIC:
		list = realloc(state->dynamic, (state->dynamic_count + 2) * sizeof(char *));
		if (!list)
			return -ENOMEM;
		state->dynamic = list;
		list[state->dynamic_count] = strndup(line->rest, strcspn(line->rest, " "));
		if (!list[state->dynamic_count])
			return -ENOMEM;
		list[++state->dynamic_count] = NULL;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int bci_journal_init(struct bci_journal *journal, size_t job_count)
{
	memset(journal, 0, sizeof(*journal));
	journal->fd = -1;
	journal->end_fd = -1;
	journal->in_flight = -1;
	journal->last_end = -1;
	journal->job_count = job_count;
	journal->jobs = calloc(job_count ? job_count : 1, sizeof(*journal->jobs));
	return journal->jobs ? 0 : -ENOMEM;
}

/* Line @lineno (@n bytes at @p) cannot be replayed: counted, and described while there is room. */
static void skip_line(struct bci_journal *journal, const char *origin, unsigned lineno,
		      const char *p, size_t n)
{
	char quoted[200];

	if (journal->skipped < BCI_JOURNAL_DAMAGE_KEPT)
		snprintf(journal->damage[journal->skipped], sizeof(journal->damage[0]),
			 "%s:%u: malformed line '%s' (%zu bytes) skipped", origin, lineno,
			 bci_quote(quoted, sizeof(quoted), p, n), n);
	journal->skipped++;
}

int bci_journal_replay(struct bci_journal *journal, const char *origin, const char *text,
		       size_t len)
{
	const char *p = text, *end = text + len;
	unsigned lineno = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char line[BCI_RUN_JOURNAL_LINE_MAX];
		struct bci_run_journal_line parsed;
		size_t n;
		int ret;

		/* A torn last line (no newline: the machine died mid-write) is not replayed. */
		if (!nl) {
			journal->torn_offset = (size_t)(p - text);
			journal->torn_len = (size_t)(end - p);
			break;
		}
		n = (size_t)(nl - p);
		lineno++;
		if (n >= sizeof(line) || memchr(p, '\0', n)) {
			skip_line(journal, origin, lineno, p, n);
			p = nl + 1;
			continue;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		ret = bci_run_journal_parse_line(line, &parsed);
		if (ret == 0)
			ret = apply_line(journal, &parsed);
		if (ret == -ENOMEM)
			return ret;
		if (ret < 0)
			skip_line(journal, origin, lineno, p, n);
		p = nl + 1;
	}
	return 0;
}

/* Says @what (a repair) on the console and appends it to the repairs file @fd (-1: none). */
static void say_repair(struct bci_journal *journal, int fd, const char *what)
{
	char line[400];
	int n = snprintf(line, sizeof(line), "boot %u: %s\n", journal->boots + 1, what), ret;

	bci_warn("%s", what);
	if (fd < 0)
		return;
	if (n >= (int)sizeof(line))
		line[(n = (int)sizeof(line) - 1) - 1] = '\n';
	ret = bci_write_all(fd, line, (size_t)n);
	if (ret < 0)
		bci_warn("cannot write " BCI_RESULTS_JOURNAL_REPAIRS ": %s", strerror(-ret));
}

/*
 * Job @j started, did not finish, is not the job in flight and was not
 * marked incomplete since: only a line the journal lost can leave it so.
 */
static bool end_lost(const struct bci_journal *journal, size_t j)
{
	const struct bci_job_state *state = &journal->jobs[j];

	return state->starts && !state->finished && !state->incomplete &&
	       (int)j != journal->in_flight;
}

/*
 * Says what the replay of @path met and repaired, on the console and in the
 * repairs file beside the journal (@cut: the length of the torn line cut, 0
 * for none; @torn_text: its text, NULL when the replay did not see it), and
 * journals `incomplete` for every job whose end the journal lost (end_lost;
 * the job in flight is the IGT engine's to mark, as after any crash). 0, or
 * -errno when a line could not be journalled.
 */
static int report_repairs(struct bci_journal *journal, const char *path, const char *torn_text,
			  long long cut)
{
	char note[PATH_MAX], what[400], quoted[200];
	const char *slash = strrchr(path, '/');
	int fd = -1, ret = 0;
	bool orphans = false;

	for (size_t j = 0; j < journal->job_count; j++)
		orphans = orphans || end_lost(journal, j);
	if (!cut && !journal->skipped && !orphans)
		return 0;
	if (snprintf(note, sizeof(note), "%.*s" BCI_RESULTS_JOURNAL_REPAIRS,
		     slash ? (int)(slash - path + 1) : 0, path) < (int)sizeof(note))
		fd = open(note, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		bci_warn("cannot open %s: %s: the repairs below are said here only", note,
			 strerror(errno));
	if (cut) {
		snprintf(what, sizeof(what), "%s: cut a torn last line '%s' (%lld bytes without a "
			 "newline: the machine died writing it)", slash ? slash + 1 : path,
			 torn_text ? bci_quote(quoted, sizeof(quoted), torn_text, (size_t)cut) : "?",
			 cut);
		say_repair(journal, fd, what);
	}
	for (unsigned i = 0; i < journal->skipped && i < BCI_JOURNAL_DAMAGE_KEPT; i++)
		say_repair(journal, fd, journal->damage[i]);
	if (journal->skipped > BCI_JOURNAL_DAMAGE_KEPT) {
		snprintf(what, sizeof(what), "%s: %u more malformed lines skipped",
			 slash ? slash + 1 : path, journal->skipped - BCI_JOURNAL_DAMAGE_KEPT);
		say_repair(journal, fd, what);
	}
	if (journal->skipped)
		bci_warn("%s: %u malformed line%s skipped: the run goes on from what its valid "
			 "lines say", path, journal->skipped, journal->skipped == 1 ? "" : "s");
	for (size_t j = 0; j < journal->job_count && ret == 0; j++) {
		if (!end_lost(journal, j))
			continue;
		snprintf(what, sizeof(what), "job %zu: its end is lost from the journal: incomplete",
			 j);
		say_repair(journal, fd, what);
		ret = bci_journal_appendf(journal, BCI_RUN_JOURNAL_INCOMPLETE, j, "%u",
					  journal->boots);
	}
	if (fd >= 0 && fdatasync(fd) < 0)
		bci_warn("cannot make %s durable: %s", note, strerror(errno));
	if (fd >= 0)
		close(fd);
	return ret;
}

int bci_journal_open(struct bci_journal *journal, const char *path, size_t job_count)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char *text = NULL;
	long long cut = 0;
	size_t len = 0;
	int ret = bci_journal_init(journal, job_count);

	if (ret < 0) {
		bci_error("%s: no memory for the journal of %zu jobs", path, job_count);
		return ret;
	}
	ret = bci_read_file(path, &text, &len, 64 << 20);
	if (ret == 0) {
		ret = bci_journal_replay(journal, name, text, len);
		if (ret < 0) {
			bci_error("%s: no memory to replay it", path);
			goto fail;
		}
	} else if (ret != -ENOENT) {
		bci_error("cannot read %s: %s", path, strerror(-ret));
		goto fail;
	}
	journal->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (journal->fd < 0) {
		ret = -errno;
		bci_error("cannot open %s: %s", path, strerror(-ret));
		goto fail;
	}
	/*
	 * A torn last line is cut, not ended with a newline: ended, the fragment
	 * would be a malformed line that every later replay meets. Then the
	 * file's name durable too.
	 */
	cut = bci_cut_torn_line(journal->fd);
	ret = cut < 0 ? (int)cut : bci_fsync_parent(path);
	if (ret < 0) {
		bci_error("cannot make %s durable: %s", path, strerror(-ret));
		goto fail;
	}
	/* The text quoted is the replay's, when the file still ended as the replay saw it. */
	ret = report_repairs(journal, path,
			     text && journal->torn_len == (size_t)cut ? text + journal->torn_offset
								   : NULL, cut);
	if (ret < 0)
		goto fail;
	free(text);
	return 0;
fail:
	free(text);
	bci_journal_close(journal);
	return ret;
}

void bci_journal_close(struct bci_journal *journal)
{
	/* A job's end not made durable by a later line: the run stops here, its end is kept. */
	if (journal->fd >= 0)
		bci_journal_pay_end(journal);
	if (journal->end_fd >= 0)
		close(journal->end_fd);
	journal->end_fd = -1;
	if (journal->fd >= 0 && (journal->unsynced || journal->owes_fs) &&
	    bci_journal_barrier(journal, journal->fd, journal->owes_fs) < 0)
		bci_error("the journal's last line cannot be made durable: %s", strerror(errno));
	if (journal->fd >= 0)
		close(journal->fd);
	for (size_t i = 0; journal->jobs && i < journal->job_count; i++) {
		for (size_t j = 0; j < journal->jobs[i].dynamic_count; j++)
			free(journal->jobs[i].dynamic[j]);
		free(journal->jobs[i].dynamic);
	}
	free(journal->jobs);
	journal->jobs = NULL;
	journal->fd = -1;
}

static int journal_write(struct bci_journal *journal, enum bci_run_journal_kind kind,
			 unsigned long job, const char *rest, bool sync)
{
	struct bci_run_journal_line line = { .kind = kind, .job = job };
	char text[BCI_RUN_JOURNAL_LINE_MAX + 32];
	off_t before;
	int n, ret;

	if (rest && strlen(rest) >= sizeof(line.rest)) {
		bci_error("journal: a line of %zu bytes is over the limit of %zu", strlen(rest),
			  sizeof(line.rest) - 1);
		return -EINVAL;
	}
	snprintf(line.rest, sizeof(line.rest), "%s", rest ? rest : "");
	n = bci_run_journal_format_line(text, sizeof(text), &line);
	/* What is written must read back as the same line: the one format, both ways. */
	ret = n > 0 && n < (int)sizeof(text) ? 0 : -EINVAL;
	if (ret == 0) {
		text[n - 1] = '\0';
		ret = bci_run_journal_parse_line(text, &line);
		text[n - 1] = '\n';
	}
	if (ret == 0)
		ret = apply_line(journal, &line);
	if (ret < 0) {
		bci_error("journal: malformed line '%.*s' not written", n > 0 ? n - 1 : 0, text);
		return ret;
	}
	/* Owed: what the line must not overtake is durable first (bci_journal_owe). */
	if (sync && journal->owes_fs) {
		ret = bci_journal_barrier(journal, journal->fd, true);
		if (ret < 0) {
			bci_error("the journal cannot be made durable (line '%.*s'): %s: the run stops",
				  n - 1, text, strerror(-ret));
			return ret;
		}
		journal->owes_fs = false;
	}
	/* The owed journal.txt end is written before what the line announces begins. */
	if (sync && journal->end_fd >= 0) {
		ret = bci_journal_pay_end(journal);
		if (ret < 0)
			return ret;
	}
	before = lseek(journal->fd, 0, SEEK_END);
	ret = bci_write_all(journal->fd, text, (size_t)n);
	if ((ret == -ENOSPC || ret == -EDQUOT) && journal->full && before >= 0 &&
	    ftruncate(journal->fd, before) == 0) {
		void (*full)(void *) = journal->full;

		journal->full = NULL;
		full(journal->full_ctx);
		ret = bci_write_all(journal->fd, text, (size_t)n);
	}
	if (ret == 0 && sync)
		ret = bci_journal_barrier(journal, journal->fd, false);
	if (ret == 0)
		journal->unsynced = !sync;
	if (ret < 0)
		bci_error("the journal cannot be made durable (line '%.*s'): %s: the run stops",
			  n - 1, text, strerror(-ret));
	return ret;
}

int bci_journal_append(struct bci_journal *journal, enum bci_run_journal_kind kind,
		       unsigned long job, const char *rest)
{
	return journal_write(journal, kind, job, rest, true);
}

static int journal_vwritef(struct bci_journal *journal, enum bci_run_journal_kind kind,
			   unsigned long job, bool sync, const char *fmt, va_list ap)
{
	char rest[BCI_RUN_JOURNAL_LINE_MAX];
	int n = vsnprintf(rest, sizeof(rest), fmt, ap);

	if (n < 0 || n >= (int)sizeof(rest)) {
		bci_error("journal: a line of %d bytes is over the limit of %zu", n, sizeof(rest) - 1);
		return -EINVAL;
	}
	return journal_write(journal, kind, job, rest, sync);
}

int bci_journal_appendf(struct bci_journal *journal, enum bci_run_journal_kind kind,
			unsigned long job, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = journal_vwritef(journal, kind, job, true, fmt, ap);
	va_end(ap);
	return ret;
}

int bci_journal_writef(struct bci_journal *journal, enum bci_run_journal_kind kind,
		       unsigned long job, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = journal_vwritef(journal, kind, job, false, fmt, ap);
	va_end(ap);
	return ret;
}

int bci_journal_sync(struct bci_journal *journal, bool whole_fs)
{
	int ret = 0;

	/* What is owed covers other files: only a whole barrier pays it. */
	whole_fs = whole_fs || journal->owes_fs;
	if (whole_fs || journal->unsynced)
		ret = bci_journal_barrier(journal, journal->fd, whole_fs);
	if (ret < 0) {
		bci_error("the journal cannot be made durable: %s: the run stops", strerror(-ret));
		return ret;
	}
	journal->unsynced = false;
	journal->owes_fs = false;
	return 0;
}

void bci_journal_owe(struct bci_journal *journal)
{
	journal->owes_fs = true;
}

void bci_journal_owe_end(struct bci_journal *journal, unsigned long job, int fd, const char *line,
			 size_t len)
{
	/* One at a time: the next job's start pays the previous one before this can come. */
	bci_journal_pay_end(journal);
	journal->end_fd = fd;
	journal->end_job = job;
	journal->end_len = len < sizeof(journal->end_line) ? len : sizeof(journal->end_line);
	memcpy(journal->end_line, line, journal->end_len);
	journal->owes_fs = true;
}

int bci_journal_pay_end(struct bci_journal *journal)
{
	int fd = journal->end_fd, ret = 0;

	if (fd < 0)
		return 0;
	if (journal->owes_fs) {
		ret = bci_journal_barrier(journal, journal->fd, true);
		if (ret == 0)
			journal->owes_fs = journal->unsynced = false;
	}
	if (ret == 0)
		ret = bci_write_all(fd, journal->end_line, journal->end_len);
	if (ret == 0)
		ret = bci_journal_barrier(journal, fd, false);
	close(fd);
	journal->end_fd = -1;
	if (ret < 0)
		bci_error("job %lu: its journal.txt end cannot be made durable: %s", journal->end_job + 1,
			  strerror(-ret));
	return ret;
}

int bci_journal_barrier(const struct bci_journal *journal, int fd, bool whole_fs)
{
	if (journal->barrier)
		return journal->barrier(fd, whole_fs);
	return (whole_fs ? syncfs(fd) : fdatasync(fd)) < 0 ? -errno : 0;
}
