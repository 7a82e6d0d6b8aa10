// SPDX-License-Identifier: MIT
/*
 * After a boot that died: the job that was in flight is journalled
 * incomplete (igt_runner's results say so), the kernel crash that pstore
 * kept is attributed to the subtest that was running, a job that took the
 * machine down boot_cap times is not run again, and a resumed job runs only
 * what has not started yet (igt_runner's pruning, plus the dynamic subtests
 * bootci's journal knows).
 */
#include "igt.h"

#include "config.h"
#include "fsutil.h"
#include "igt_output_strings.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Did the job's journal.txt (cut into lines in place) record subtest @name[0..len) starting? */
static bool journal_started(char *text, const char *name, size_t len)
{
	char *line = text;

	while (line && *line) {
		char *nl = strchr(line, '\n');
		struct bci_job_journal_line parsed;
		bool started;
		if (nl)
			*nl = '\0';
		started = bci_job_journal_parse_line(line, nl != NULL, &parsed) == 0 &&
			  parsed.kind == BCI_JOB_JOURNAL_SUBTEST && strlen(parsed.subtest) == len &&
			  strncmp(parsed.subtest, name, len) == 0;
		if (nl)
			*nl = '\n';
		if (started)
			return true;
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

/*
 * Did the job's journal.txt (cut into lines in place) record the job's end, an
 * `exit:` or `timeout:` line? Then the job ran to its end and only bootci's
 * journal line saying so was lost (journal.txt's is written after it is durable).
 */
static bool journal_ended(char *text, struct bci_job_journal_line *end)
{
	char *line = text;

	while (line && *line) {
		char *nl = strchr(line, '\n');
		bool ended;
		if (nl)
			*nl = '\0';
		ended = bci_job_journal_parse_line(line, nl != NULL, end) == 0 &&
			(end->kind == BCI_JOB_JOURNAL_EXIT || end->kind == BCI_JOB_JOURNAL_TIMEOUT);
		if (nl)
			*nl = '\n';
		if (ended)
			return true;
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

/* What a job's folder says of it, whatever bootci's journal says. */
enum folder_record {
	FOLDER_UNTOUCHED,       /* no folder, or files no test wrote to: it never ran */
	FOLDER_STARTED,         /* its test wrote to it; journal.txt has no end */
	FOLDER_ENDED,           /* journal.txt has the job's end */
};

/*
 * What job @index's folder records (its end in *@end when it has one).
 * journal.txt's end is written only once the job's outputs are durable
 * (bci_journal_owe_end), so it is the job's end; journal.txt's subtest lines,
 * out.txt and err.txt are written only by or for a running test. A folder
 * whose files are empty was made by a start the machine died in before the
 * test ran (or ran without a word): running it then writes them once.
 */
static enum folder_record folder_record(struct bci_executor *ex, unsigned index,
					struct bci_job_journal_line *end)
{
	static const char *const written[] = { BCI_RESULTS_JOB_OUT, BCI_RESULTS_JOB_ERR };
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	struct stat st;
	bool ended;

	if (bci_igt_rundir_path(ex, path, BCI_RESULTS_JOB_DIR "/" BCI_RESULTS_JOB_JOURNAL,
				index) == 0 &&
	    bci_read_file(path, &text, &len, 1 << 20) == 0) {
		ended = journal_ended(text, end);
		free(text);
		if (ended)
			return FOLDER_ENDED;
		if (len > 0)
			return FOLDER_STARTED;
	}
	for (size_t i = 0; i < sizeof(written) / sizeof(written[0]); i++)
		if (bci_igt_rundir_path(ex, path, BCI_RESULTS_JOB_DIR "/%s", index, written[i]) == 0 &&
		    stat(path, &st) == 0 && st.st_size > 0)
			return FOLDER_STARTED;
	return FOLDER_UNTOUCHED;
}

/*
 * The subtests of job @e not yet started according to its journal.txt (a
 * resumed job); *@ended when journal.txt already has the job's end, that
 * end in *@end.
 */
static int remaining_subtests(struct bci_executor *ex, unsigned index,
			      const struct bci_joblist_entry *e, char ***out, size_t *count,
			      bool *ended, struct bci_job_journal_line *end)
{
	char path[PATH_MAX], *text = NULL;
	char **left = calloc(e->count + 1, sizeof(char *));
	size_t n = 0;

	if (!left)
		return -ENOMEM;
	if (bci_igt_rundir_path(ex, path, BCI_RESULTS_JOB_DIR "/" BCI_RESULTS_JOB_JOURNAL,
				index) < 0 ||
	    bci_read_file(path, &text, NULL, 1 << 20) < 0)
		text = NULL;
	*ended = text && journal_ended(text, end);
	for (size_t i = 0; i < e->count && !*ended; i++)
		if (!text || !journal_started(text, e->subtests[i], strcspn(e->subtests[i], "@")))
			left[n++] = e->subtests[i];
	free(text);
	*out = left;
	*count = n;
	return 0;
}

/* The name on the protocol line at @offset of @buf (a start line's), into @name. */
static void line_name(const char *buf, size_t len, size_t offset, char *name, size_t size)
{
	struct bci_igt_line line;
	size_t n;

	bci_igt_line_parse(buf + offset, len - offset, &line);
	n = line.name_len < size ? line.name_len : size - 1;
	memcpy(name, line.name ? line.name : "", line.name ? n : 0);
	name[line.name ? n : 0] = '\0';
}

/* Appends every dmesg record of the saved pstore dump to @out. */
static void append_dump(struct bci_executor *ex, int out)
{
	char dir[PATH_MAX];
	struct dirent **entries;
	int n;

	if (bci_igt_rundir_path(ex, dir, "%s", ex->crash_dump) < 0)
		return;
	n = scandir(dir, &entries, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX + 300], *text;
		size_t len;
		if (strncmp(entries[i]->d_name, "dmesg-", 6) == 0 &&
		    snprintf(path, sizeof(path), "%s/%s", dir, entries[i]->d_name) < (int)sizeof(path) &&
		    bci_read_file(path, &text, &len, 4 << 20) == 0) {
			dprintf(out, "bootci: ---- %s ----\n", entries[i]->d_name);
			bci_write_all(out, text, len);
			if (len && text[len - 1] != '\n')
				bci_write_all(out, "\n", 1);
			free(text);
		}
		free(entries[i]);
	}
	if (n >= 0)
		free(entries);
}

/*
 * The last "[IGT] <bin>: starting dynamic subtest <name>" after "starting
 * subtest <subtest>" in the saved dmesg records, when it names a dynamic
 * subtest other than @dynamic (or @dynamic had already ended: @done).
 * Records are read in name order, which is the order efi-pstore wrote them.
 */
static bool dump_last_dynamic(struct bci_executor *ex, const char *subtest, char *dynamic,
			      size_t size, bool done)
{
	static const char dyn_marker[] = BCI_IGT_STARTING_DYNAMIC_SUBTEST_DMESG;
	char dir[PATH_MAX], sub_marker[300], found[256] = "";
	struct dirent **entries;
	bool in_subtest = false;
	int n;

	if (bci_igt_rundir_path(ex, dir, "%s", ex->crash_dump) < 0)
		return false;
	snprintf(sub_marker, sizeof(sub_marker), "%s%s", BCI_IGT_STARTING_SUBTEST_DMESG, subtest);
	n = scandir(dir, &entries, NULL, alphasort);
	for (int i = n - 1; i >= 0; i--) {
		/* efi-pstore numbers parts from the end of the log: the highest part is the oldest. */
		char path[PATH_MAX + 300], *text;
		if (strncmp(entries[i]->d_name, "dmesg-", 6) == 0 &&
		    snprintf(path, sizeof(path), "%s/%s", dir, entries[i]->d_name) < (int)sizeof(path) &&
		    bci_read_file(path, &text, NULL, 4 << 20) == 0) {
			for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save)) {
				char *p = strstr(line, sub_marker);
				if (p && (p[strlen(sub_marker)] == '\0' || p[strlen(sub_marker)] == ' ')) {
					in_subtest = true;
					found[0] = '\0';
				} else if (in_subtest && (p = strstr(line, dyn_marker))) {
					snprintf(found, sizeof(found), "%s", p + strlen(dyn_marker));
					found[strcspn(found, " \r")] = '\0';
				}
			}
			free(text);
		}
		free(entries[i]);
	}
	if (n >= 0)
		free(entries);
	if (!found[0] || (strcmp(found, dynamic) == 0 && !done))
		return false;
	if (strcmp(found, dynamic) == 0 && done)
		return false;
	snprintf(dynamic, size, "%s", found);
	return true;
}

/* What was in flight in a job when the kernel died. */
struct in_flight {
	char subtest[256], dynamic[256];
	bool sub_done, dyn_done;
	bool start_missing;     /* the dynamic subtest's start is not in out.txt */
};

/* The last subtest and dynamic subtest out.txt saw start, and whether they ended. */
static void in_flight_from_out(struct bci_executor *ex, unsigned index, const char *path,
			       struct in_flight *f)
{
	struct bci_igt_output parsed;
	long last_sub = -1, last_dyn = -1;
	char *text = NULL;
	size_t len = 0;

	/* A test that spoke the socket left its protocol in comms (comms.c), not out.txt. */
	if (!bci_igt_comms_protocol_text(ex, index, &text, &len) &&
	    bci_read_file(path, &text, &len, 64 << 20) < 0)
		return;
	while (len > 0 && text[len - 1] == '\0')
		len--;
	if (bci_igt_output_parse(&parsed, text, len) < 0) {
		free(text);
		return;
	}
	for (size_t i = 0; i < parsed.mark_count; i++) {
		switch (parsed.marks[i].kind) {
		case BCI_IGT_MARK_SUBTEST_START:
			last_sub = (long)i;
			last_dyn = -1;
			f->sub_done = f->dyn_done = false;
			break;
		case BCI_IGT_MARK_SUBTEST_RESULT:
			f->sub_done = true;
			break;
		case BCI_IGT_MARK_DYNAMIC_START:
			last_dyn = (long)i;
			f->dyn_done = false;
			break;
		case BCI_IGT_MARK_DYNAMIC_RESULT:
			f->dyn_done = true;
			break;
		}
	}
	if (last_sub >= 0)
		line_name(text, len, parsed.marks[last_sub].offset, f->subtest, sizeof(f->subtest));
	if (last_dyn >= 0)
		line_name(text, len, parsed.marks[last_dyn].offset, f->dynamic, sizeof(f->dynamic));
	bci_igt_output_release(&parsed);
	free(text);
}

/* A later dynamic subtest than out.txt saw, known to bootci's journal or to the dump. */
static void in_flight_later_dynamic(struct bci_executor *ex, const struct bci_job_state *state,
				    struct in_flight *f)
{
	if (!f->subtest[0] || f->sub_done)
		return;
	if (state->dynamic_count > 0) {
		const char *last = state->dynamic[state->dynamic_count - 1];
		size_t n = strlen(f->subtest);
		if (strncmp(last, f->subtest, n) == 0 && last[n] == '@' &&
		    (f->dyn_done || strcmp(last + n + 1, f->dynamic) != 0)) {
			snprintf(f->dynamic, sizeof(f->dynamic), "%s", last + n + 1);
			f->start_missing = true;
			f->dyn_done = false;
		}
	}
	/*
	 * Neither out.txt nor the journal may have seen the last dynamic subtest
	 * start (the kernel died first), but IGT logs every start to the kernel
	 * log, and the dump holds the kernel log.
	 */
	if (dump_last_dynamic(ex, f->subtest, f->dynamic, sizeof(f->dynamic), f->dyn_done)) {
		f->start_missing = true;
		f->dyn_done = false;
	}
}

/*
 * The previous boot died in a kernel crash while job @index ran: its subtest
 * (or dynamic subtest) in flight gets igt's CRASH result line in out.txt,
 * followed by the pstore dump, so results.json shows crash and carries the
 * dump in that test's output. A dynamic subtest whose start only bootci's
 * journal knew (the kernel died before out.txt had it) gets its start line
 * too. 0, or -errno when the journal failed.
 */
static int attribute_crash(struct bci_executor *ex, unsigned index, struct bci_journal *journal)
{
	struct in_flight f = { .subtest = "" };
	char path[PATH_MAX], line[300];
	int fd, ret = 0;

	if (bci_igt_rundir_path(ex, path, BCI_RESULTS_JOB_DIR "/" BCI_RESULTS_JOB_OUT, index) < 0)
		return 0;
	in_flight_from_out(ex, index, path, &f);
	in_flight_later_dynamic(ex, &journal->jobs[index], &f);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		bci_warn("job %u: cannot attribute the crash in %s: %s", index + 1, path, strerror(errno));
		return 0;
	}
	off_t from = lseek(fd, 0, SEEK_END);
	dprintf(fd, "\nbootci: the kernel crashed during this test; the pstore dump of boot %u "
		    "follows (saved in %s/)\n", ex->boot_number - 1, ex->crash_dump);
	if (f.subtest[0] && !f.sub_done && f.dynamic[0] && !f.dyn_done) {
		if (f.start_missing) {
			bci_igt_line_format_start(line, sizeof(line), true, f.dynamic);
			dprintf(fd, "%s", line);
			/* Known now: a resume must not run it again. */
			ret = bci_journal_appendf(journal, BCI_RUN_JOURNAL_DYNAMIC, index, "%s@%s",
						  f.subtest, f.dynamic);
		}
		bci_igt_line_format_result(line, sizeof(line), true, f.dynamic, BCI_IGT_WORD_CRASH, 0);
		dprintf(fd, "%s", line);
		bci_say("job %u: %s@%s crashed the kernel", index + 1, f.subtest, f.dynamic);
	} else if (f.subtest[0] && !f.sub_done) {
		bci_igt_line_format_result(line, sizeof(line), false, f.subtest, BCI_IGT_WORD_CRASH, 0);
		dprintf(fd, "%s", line);
		bci_say("job %u: %s crashed the kernel", index + 1, f.subtest);
	}
	append_dump(ex, fd);
	fsync(fd);
	close(fd);
	/* The same in comms, which is what a socket job's results are read from. */
	bci_igt_comms_mirror(ex, index, path, from);
	return ret;
}

/* Did the job's out.txt (or comms) show dynamic subtest @dynamic of @subtest starting? */
static bool out_has_dynamic_start(struct bci_executor *ex, unsigned index, const char *path,
				  const char *subtest, const char *dynamic)
{
	char sub_line[300], dyn_line[300], *text = NULL;
	const char *from;
	size_t len = 0;
	bool found;

	if (!bci_igt_comms_protocol_text(ex, index, &text, &len) &&
	    bci_read_file(path, &text, &len, 64 << 20) < 0)
		return false;
	bci_igt_line_format_start(sub_line, sizeof(sub_line), false, subtest);
	bci_igt_line_format_start(dyn_line, sizeof(dyn_line), true, dynamic);
	/* After the subtest's last start: a resumed subtest starts again. */
	from = text;
	for (const char *p; (p = memmem(from, len - (size_t)(from - text), sub_line, strlen(sub_line)));)
		from = p + strlen(sub_line);
	found = memmem(from, len - (size_t)(from - text), dyn_line, strlen(dyn_line)) != NULL;
	free(text);
	return found;
}

/*
 * The previous boot died without a kernel crash (power cut, reset) while job
 * @index ran: its out.txt and bootci's journal must agree on which dynamic
 * subtests started, since the resume runs those the journal does not name.
 * The journal's line is durable before the output is synced, so a cut
 * between the two can leave either side without the other:
 *  - the journal has the start, out.txt lost it: not run again, and absent
 *    from results.json. Its start line is written to out.txt (and comms), so
 *    it is incomplete, as the one in flight at a cut is;
 *  - out.txt has the start, the journal not: it would run a second time into
 *    the same output. The journal gets its line.
 * 0, or -errno when the journal failed.
 */
static int reconcile_dynamic_start(struct bci_executor *ex, unsigned index,
				   struct bci_journal *journal)
{
	const struct bci_job_state *state = &journal->jobs[index];
	struct in_flight f = { .subtest = "" };
	char path[PATH_MAX], line[300], note[400], name[520];
	const char *last;
	size_t n;
	int fd;
	off_t from;

	if (bci_igt_rundir_path(ex, path, BCI_RESULTS_JOB_DIR "/" BCI_RESULTS_JOB_OUT, index) < 0)
		return 0;
	in_flight_from_out(ex, index, path, &f);
	if (!f.subtest[0] || f.sub_done)
		return 0;
	n = strlen(f.subtest);
	if (f.dynamic[0]) {
		snprintf(name, sizeof(name), "%s@%s", f.subtest, f.dynamic);
		bool journalled = false;
		for (size_t i = 0; i < state->dynamic_count && !journalled; i++)
			journalled = strcmp(state->dynamic[i], name) == 0;
		if (!journalled) {
			bci_say("job %u: %s started before the machine went down (its output says so, "
				"bootci's journal had lost it): not run again", index + 1, name);
			return bci_journal_appendf(journal, BCI_RUN_JOURNAL_DYNAMIC, index, "%s", name);
		}
	}
	last = state->dynamic_count ? state->dynamic[state->dynamic_count - 1] : NULL;
	if (!last || strncmp(last, f.subtest, n) != 0 || last[n] != '@' ||
	    out_has_dynamic_start(ex, index, path, f.subtest, last + n + 1))
		return 0;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		bci_warn("job %u: cannot restore the start of %s in %s: %s", index + 1, last, path,
			 strerror(errno));
		return 0;
	}
	from = lseek(fd, 0, SEEK_END);
	int len = snprintf(note, sizeof(note), "\nbootci: the machine went down after dynamic subtest "
			   "%s started (bootci-journal.txt has its start, this output had lost it)\n",
			   last + n + 1);
	bci_igt_line_format_start(line, sizeof(line), true, last + n + 1);
	if (bci_write_all(fd, note, (size_t)len) < 0 || bci_write_all(fd, line, strlen(line)) < 0 ||
	    fdatasync(fd) < 0)
		bci_warn("job %u: cannot restore the start of %s in %s: %s", index + 1, last, path,
			 strerror(errno));
	close(fd);
	bci_igt_comms_mirror(ex, index, path, from);
	bci_say("job %u: %s started before the machine went down: incomplete", index + 1, last);
	return 0;
}

/*
 * For a resumed job whose last subtest had started dynamic subtests: the
 * --dynamic-subtest filter running the others ("*,!a,!b", IGT's uwildmat
 * lists, last match wins), malloc'ed; NULL when there is nothing to resume.
 */
static char *dynamic_rest(const struct bci_joblist_entry *e, const struct bci_job_state *state)
{
	const char *subtest = e->subtests[e->count - 1];
	size_t len = strlen(subtest), size = 3, used;
	char *filter;

	if (strchr(subtest, '@') || state->dynamic_count == 0)
		return NULL;
	for (size_t i = 0; i < state->dynamic_count; i++)
		size += strlen(state->dynamic[i]) + 2;
	filter = malloc(size);
	if (!filter)
		return NULL;
	used = (size_t)sprintf(filter, "*");
	for (size_t i = 0; i < state->dynamic_count; i++) {
		const char *d = state->dynamic[i];
		if (strncmp(d, subtest, len) == 0 && d[len] == '@')
			used += (size_t)sprintf(filter + used, ",!%s", d + len + 1);
	}
	if (used == 1) {
		free(filter);
		return NULL;
	}
	return filter;
}

/* Said where the developer reads the test's result, not only in the journal. */
static void note_capped(struct bci_executor *ex, unsigned index, unsigned starts,
			unsigned long boot_cap)
{
	char path[PATH_MAX], note[160];
	int n = snprintf(note, sizeof(note),
			 "\nbootci: this job took the machine down %u times (boot_cap %lu): "
			 "not run again\n", starts, boot_cap);
	int fd = bci_igt_rundir_path(ex, path, BCI_RESULTS_JOB_DIR "/" BCI_RESULTS_JOB_OUT, index) < 0 ? -1 :
		 open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

	off_t from = fd < 0 ? 0 : lseek(fd, 0, SEEK_END);

	if (fd < 0 || bci_write_all(fd, note, (size_t)n) < 0 || fdatasync(fd) < 0)
		bci_warn("job %u: cannot say in out.txt that it was capped", index + 1);
	if (fd >= 0)
		close(fd);
	if (fd >= 0)
		bci_igt_comms_mirror(ex, index, path, from);
}

/* Is @subtest@@dynamic among the dynamic subtests bootci's journal has for the job? */
static bool dynamic_journalled(const struct bci_job_state *state, const char *subtest,
			       const char *dynamic)
{
	size_t n = strlen(subtest);

	for (size_t i = 0; i < state->dynamic_count; i++)
		if (strncmp(state->dynamic[i], subtest, n) == 0 && state->dynamic[i][n] == '@' &&
		    strcmp(state->dynamic[i] + n + 1, dynamic) == 0)
			return true;
	return false;
}

/*
 * Job @index's start was lost from bootci's journal, and its `dynamic` lines
 * with it: the dynamic subtests its output (or comms) shows starting in its
 * last subtest get their lines back, so that a resume does not run them
 * again. 0, or -errno (no memory, or the journal failed).
 */
static int restore_dynamic_starts(struct bci_executor *ex, unsigned index,
				  struct bci_journal *journal)
{
	struct bci_igt_output parsed;
	char path[PATH_MAX], subtest[256] = "", dynamic[256], *text = NULL;
	size_t len = 0, from = 0;
	int ret;

	if (bci_igt_rundir_path(ex, path, BCI_RESULTS_JOB_DIR "/" BCI_RESULTS_JOB_OUT, index) < 0 ||
	    (!bci_igt_comms_protocol_text(ex, index, &text, &len) &&
	     bci_read_file(path, &text, &len, 64 << 20) < 0))
		return 0;
	while (len > 0 && text[len - 1] == '\0')
		len--;
	if (bci_igt_output_parse(&parsed, text, len) < 0) {
		bci_error("job %u: no memory to read its output", index + 1);
		free(text);
		return -ENOMEM;
	}
	ret = 0;
	for (size_t i = 0; i < parsed.mark_count; i++)
		if (parsed.marks[i].kind == BCI_IGT_MARK_SUBTEST_START) {
			line_name(text, len, parsed.marks[i].offset, subtest, sizeof(subtest));
			from = i + 1;
		}
	for (size_t i = from; ret == 0 && subtest[0] && i < parsed.mark_count; i++) {
		if (parsed.marks[i].kind != BCI_IGT_MARK_DYNAMIC_START)
			continue;
		line_name(text, len, parsed.marks[i].offset, dynamic, sizeof(dynamic));
		if (!dynamic[0] || dynamic_journalled(&journal->jobs[index], subtest, dynamic))
			continue;
		bci_say("job %u: %s@%s started (its output says so, bootci's journal lost it): not "
			"run again", index + 1, subtest, dynamic);
		ret = bci_journal_appendf(journal, BCI_RUN_JOURNAL_DYNAMIC, index, "%s@%s", subtest,
					  dynamic);
	}
	bci_igt_output_release(&parsed);
	free(text);
	return ret;
}

/* The run's job folders (N/ for job N): @has[N] set for each, from one read of the folder. */
static void list_job_folders(struct bci_executor *ex, bool *has, size_t count)
{
	struct dirent *entry;
	DIR *dir = opendir(ex->run_dir);

	if (!dir) {
		bci_warn("cannot list %s: %s: the job folders cannot be checked against bootci's "
			 "journal", ex->run_dir, strerror(errno));
		return;
	}
	while ((entry = readdir(dir))) {
		const char *name = entry->d_name;
		char canonical[16];
		unsigned long j;
		char *end;

		if (name[0] < '0' || name[0] > '9' || strlen(name) >= sizeof(canonical))
			continue;
		errno = 0;
		j = strtoul(name, &end, 10);
		/* Only the name the engine gives job N (no sign, no leading zero). */
		if (errno || *end || j >= count ||
		    snprintf(canonical, sizeof(canonical), BCI_RESULTS_JOB_DIR, (unsigned)j) < 0 ||
		    strcmp(canonical, name) != 0)
			continue;
		has[j] = true;
	}
	closedir(dir);
}

/*
 * The job folders are the run's second record of what ran, beside bootci's
 * journal, whose lines a damaged disk can lose (the replay skips what it
 * cannot read). Whatever the journal says, a job its folder shows ended is
 * never run again: bootci's journal gets the end journal.txt has (as
 * igt_runner's resume trusts journal.txt). A job its folder shows started,
 * whose start the journal lost, gets it back: the last of them, when no
 * later job started and nothing is known in flight, is the job in flight when
 * the previous boot died (the IGT engine runs the jobs in order, and a boot
 * resumes at the first unfinished one); any other was in flight at an earlier
 * death and is incomplete (boot 0: which boot is not known). The dynamic
 * subtests their output shows starting get their lines back too. 0, or
 * -errno when a line could not be journalled.
 */
static int resume_from_folders(struct bci_executor *ex, struct bci_journal *journal)
{
	size_t count = journal->job_count ? journal->job_count : 1;
	bool *has = calloc(count, sizeof(*has));
	enum folder_record *record = calloc(count, sizeof(*record));
	long last_started = -1, in_flight = -1;
	struct bci_job_journal_line end;
	int ret = 0;

	if (!has || !record) {
		bci_error("no memory to check the job folders of %zu jobs", journal->job_count);
		free(has);
		free(record);
		return -ENOMEM;
	}
	list_job_folders(ex, has, journal->job_count);
	for (size_t j = 0; j < journal->job_count; j++)
		if (journal->jobs[j].starts)
			last_started = (long)j;
	for (size_t j = 0; j < journal->job_count && ret == 0; j++) {
		if (!has[j] || journal->jobs[j].finished)
			continue;
		record[j] = folder_record(ex, (unsigned)j, &end);
		if (record[j] == FOLDER_ENDED) {
			bci_say("job %zu: its journal.txt has its end and bootci's journal lacks it: "
				"not run again", j + 1);
			ret = bci_journal_appendf(journal, end.kind == BCI_JOB_JOURNAL_TIMEOUT ?
						  BCI_RUN_JOURNAL_TIMEOUT : BCI_RUN_JOURNAL_EXIT,
						  j, "%d %.3f", end.code, end.time);
		} else if (record[j] == FOLDER_STARTED && !journal->jobs[j].starts) {
			in_flight = (long)j;
		}
	}
	if (in_flight <= last_started || journal->in_flight >= 0)
		in_flight = -1;
	for (size_t j = 0; j < journal->job_count && ret == 0; j++) {
		if (record[j] != FOLDER_STARTED || journal->jobs[j].starts)
			continue;
		bci_warn("job %zu: bootci's journal lost its start, its folder shows it started: %s",
			 j + 1, (long)j == in_flight ? "it was in flight when the last boot died"
						     : "in flight at an earlier boot, incomplete");
		ret = bci_journal_append(journal, BCI_RUN_JOURNAL_START, j, NULL);
		if (ret == 0)
			ret = restore_dynamic_starts(ex, (unsigned)j, journal);
		if (ret == 0 && (long)j != in_flight)
			ret = bci_journal_append(journal, BCI_RUN_JOURNAL_INCOMPLETE, j, "0");
	}
	free(has);
	free(record);
	return ret;
}

int bci_igt_resume_abort(struct bci_executor *ex, struct bci_journal *journal)
{
	char path[PATH_MAX], *text = NULL;
	bool condition;
	int ret;

	/* A first boot has no earlier one to have died; the boot records count the boots when
	 * a damaged journal lost their lines. */
	if (journal->aborted || journal->done || (journal->boots <= 1 && ex->boot_number <= 1) ||
	    bci_igt_rundir_path(ex, path, BCI_RESULTS_ABORTED) < 0 ||
	    bci_read_file(path, &text, NULL, 1 << 16) < 0)
		return 0;
	/* bci_igt_abort_check()'s reasons: a kernel state is a condition, the rest forced. */
	condition = strstr(text, "Kernel badly tainted") || strstr(text, "Lockdep not active");
	free(text);
	bci_warn("%s was written by an earlier boot that died before its journal said abort: "
		 "the run stays aborted", BCI_RESULTS_ABORTED);
	ret = bci_journal_append(journal, BCI_RUN_JOURNAL_ABORT, 0, condition ? "condition" : "forced");
	return ret < 0 ? ret : 0;
}

int bci_igt_resume_in_flight(struct bci_executor *ex, struct bci_journal *journal,
			     const struct bci_joblist *jobs)
{
	unsigned long boot_cap = bci_config_get_number(ex->config, "boot_cap");
	unsigned j, starts;
	int ret;

	/*
	 * First what the job folders say: a job whose journal.txt has its end
	 * ended, even the one bootci's journal has in flight (it lost the line
	 * saying so: skipped by the replay, or the order of an older executor,
	 * which wrote journal.txt's first), so no incomplete line and no crash is
	 * laid on it; and a job in flight whose start the journal lost is found.
	 */
	ret = resume_from_folders(ex, journal);
	if (ret < 0 || journal->in_flight < 0)
		return ret;
	j = (unsigned)journal->in_flight;
	bci_warn("job %u (%s) was running when boot %u ended", j + 1, jobs->entries[j].binary,
		 journal->boots - 1);
	if (ex->kernel_crashed)
		ret = attribute_crash(ex, j, journal);
	else
		ret = reconcile_dynamic_start(ex, j, journal);
	if (ret == 0)
		ret = bci_journal_appendf(journal, BCI_RUN_JOURNAL_INCOMPLETE, j, "%u",
					  journal->boots - 1);
	starts = journal->jobs[j].starts;
	if (ret < 0 || starts < boot_cap)
		return ret;
	bci_error("job %u took the machine down %u times: not run again", j + 1, starts);
	ret = bci_journal_appendf(journal, BCI_RUN_JOURNAL_CAPPED, j, "%u", starts);
	if (ret == 0)
		note_capped(ex, j, starts, boot_cap);
	return ret;
}

int bci_igt_resume_select(struct bci_executor *ex, const struct bci_journal *journal,
			  unsigned index, const struct bci_joblist_entry *entry,
			  struct bci_igt_selection *what)
{
	struct bci_job_journal_line end;
	bool ended;
	int ret;

	*what = (struct bci_igt_selection){ .subtests = entry->subtests, .count = entry->count,
					    .end_status = -1 };
	if (journal->jobs[index].starts == 0)
		return 0;
	/* Resumed: run only what has not started yet, as igt_runner prunes. */
	ret = remaining_subtests(ex, index, entry, &what->left, &what->count, &ended, &end);
	if (ret < 0) {
		bci_error("job %u: no memory to resume it", index + 1);
		return ret;
	}
	what->subtests = what->left;
	if (ended) {
		/* Run again, it would append a second run and a second exit to the same files.
		 * bootci's journal gets the end the job's own journal has. */
		what->end_timed_out = end.kind == BCI_JOB_JOURNAL_TIMEOUT;
		what->end_status = end.code;
		what->end_seconds = end.time;
		bci_say("job %u: its journal.txt has its end and bootci's journal "
			"lacks it: not run again", index + 1);
		return 1;
	}
	/*
	 * A job without subtests that started is not run again into the same
	 * folder, as igt_runner does not: its journal.txt has no end, so the
	 * results say incomplete, with the output it left, once.
	 */
	if (entry->count == 0) {
		bci_say("job %u: a job without subtests that started in an earlier boot is not "
			"run again: incomplete", index + 1);
		return 1;
	}
	if (what->count > 0)
		return 0;
	/* Every subtest started. igt_runner stops here; bootci knows which dynamic subtests
	 * started and runs the rest of them. */
	what->dynamic_filter = dynamic_rest(entry, &journal->jobs[index]);
	if (!what->dynamic_filter)
		return 1;
	what->subtests = entry->subtests + entry->count - 1;
	what->count = 1;
	bci_say("job %u: resuming %s after its dynamic subtests %s", index + 1, what->subtests[0],
		what->dynamic_filter + 2);
	return 0;
}

void bci_igt_selection_release(struct bci_igt_selection *what)
{
	free(what->left);
	free(what->dynamic_filter);
	what->left = NULL;
	what->dynamic_filter = NULL;
}
