// SPDX-License-Identifier: MIT
/*
 * The runs on the results partition as collect sees them: over or not,
 * uploaded or not, and which uploaded ones the retention setting keeps.
 *
 * A run is over when the executor said so: its journal's `done` or `abort`
 * line (IGT engine; executor/journal.h: only those two words are looked at,
 * until the run journal's reader moves into lib/), or its test program's
 * result.txt past `state running`
 * (single test program: done, unkillable, or capped after boot_cap crashed
 * boots); a folder the executor kept aside as `<run>.superseded-N` is over by
 * definition, and so is a run the master ended (bootci-ended.txt, written by
 * command.c when the master's answer says so). A folder where the run never
 * began (neither a journal nor result.txt: its boots ended before the plan)
 * is over once a later run booted on the machine: the master hands a job out
 * again only until it is done or abandoned, so nothing resumes it any more.
 * Anything else may still be resumed by the next netboot, so it is left alone.
 *
 * A run leaves the partition whole or not at all: retention renames it to a
 * hidden name (`.deleting-<run>`, which no listing shows) before removing its
 * files, and removes what an interrupted deletion left at the next start.
 */
#include "collect.h"

#include "message.h"

#include "fsutil.h"
#include "manifest.h"
#include "results_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEST_RESULT_FILE BCI_RESULTS_TEST_DIR "/" BCI_RESULTS_TEST_RESULT
/* What a run being deleted is renamed to first (hidden: no listing shows it). */
#define DELETING_PREFIX ".deleting-"

const char *bci_collect_run_state_name(enum bci_collect_run_state state)
{
	switch (state) {
	case BCI_RUN_FINISHED:
		return "finished";
	case BCI_RUN_SUPERSEDED:
		return "superseded";
	case BCI_RUN_LEFT_BEHIND:
		return "never began, a later run booted";
	case BCI_RUN_ENDED:
		return "ended by the master, incomplete";
	case BCI_RUN_IN_PROGRESS:
		break;
	}
	return "in progress";
}

/* True when a line of @text is @word alone or @word followed by a space. */
static bool has_line(const char *text, const char *word)
{
	size_t n = strlen(word);

	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, word, n) && (line[n] == '\n' || line[n] == ' ' || line[n] == '\0'))
			return true;
	return false;
}

/* *@began: the run has a journal or a result.txt (its engine started). */
static enum bci_collect_run_state run_state(const char *dir, const char *name, bool *began)
{
	char path[PATH_MAX], *text = NULL;
	bool over = false;

	*began = true;
	if (strstr(name, ".superseded-"))
		return BCI_RUN_SUPERSEDED;
	if (bci_collect_path(path, sizeof(path), "%s/" BCI_COLLECT_ENDED_FILE, dir) == 0 &&
	    access(path, F_OK) == 0)
		return BCI_RUN_ENDED;
	if (bci_collect_path(path, sizeof(path), "%s/" BCI_RESULTS_BOOTCI_JOURNAL, dir) == 0 &&
	    bci_read_file(path, &text, NULL, 64 << 20) == 0) {
		over = has_line(text, "done") || has_line(text, "abort");
		free(text);
		return over ? BCI_RUN_FINISHED : BCI_RUN_IN_PROGRESS;
	}
	if (bci_collect_path(path, sizeof(path), "%s/" TEST_RESULT_FILE, dir) == 0 &&
	    bci_read_file(path, &text, NULL, 64 * 1024) == 0) {
		char *cursor = text, *key, *value;

		while (bci_results_kv_next(&cursor, &key, &value))
			if (!strcmp(key, "state"))
				over = strcmp(value, "running") != 0;
		free(text);
		return over ? BCI_RUN_FINISHED : BCI_RUN_IN_PROGRESS;
	}
	*began = false;
	return BCI_RUN_IN_PROGRESS;
}

/*
 * When the run last booted: the newest modification of its boot-NNNN/
 * folders (a boot makes its folder and writes its records there; collect
 * never touches them), 0 when it has none.
 */
static long long last_boot(const char *dir)
{
	long long newest = 0;
	struct dirent *entry;
	struct stat st;
	unsigned number;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((entry = readdir(d)))
		if (bci_results_boot_dir_parse(entry->d_name, &number) &&
		    fstatat(dirfd(d), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode) && (long long)st.st_mtime > newest)
			newest = (long long)st.st_mtime;
	closedir(d);
	return newest;
}

static bool read_uploaded(const char *dir, long long *when)
{
	char path[PATH_MAX], *text = NULL, *line;
	bool ok = false;

	if (bci_collect_path(path, sizeof(path), "%s/" BCI_COLLECT_UPLOADED_FILE, dir) < 0 ||
	    bci_read_file(path, &text, NULL, 4096) < 0)
		return false;
	*when = 0;
	for (line = text; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (!strncmp(line, "sha256 ", 7))
			ok = true;
		else if (!strncmp(line, "time ", 5))
			*when = strtoll(line + 5, NULL, 10);
	}
	free(text);
	return ok;
}

static bool exists_in(const char *dir, const char *name)
{
	char path[PATH_MAX];

	return bci_collect_path(path, sizeof(path), "%s/%s", dir, name) == 0 &&
	       access(path, F_OK) == 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct bci_collect_run *)a)->name,
		      ((const struct bci_collect_run *)b)->name);
}

int bci_collect_runs_list(const char *runs_dir, struct bci_collect_run **runs, size_t *count,
			  char *err, size_t err_size)
{
	struct bci_collect_run *list = NULL, *grown;
	size_t n = 0, cap = 0;
	struct dirent *entry;
	DIR *dir;
	int ret = 0;

	*runs = NULL;
	*count = 0;
	dir = opendir(runs_dir);
	if (!dir) {
		if (errno == ENOENT)
			return 0;
		ret = -errno;
		bci_message(err, err_size, "%s: %s", runs_dir, strerror(errno));
		return ret;
	}
	while ((entry = readdir(dir))) {
		char path[PATH_MAX];
		struct stat st;

		if (entry->d_name[0] == '.' || strlen(entry->d_name) >= sizeof(list->name))
			continue;
		if (bci_collect_path(path, sizeof(path), "%s/%s", runs_dir, entry->d_name) < 0 ||
		    lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			grown = realloc(list, cap * sizeof(*list));
			if (!grown) {
				ret = -ENOMEM;
				goto out;
			}
			list = grown;
		}
		memset(&list[n], 0, sizeof(list[n]));
		snprintf(list[n].name, sizeof(list[n].name), "%s", entry->d_name);
		list[n].state = run_state(path, entry->d_name, &list[n].began);
		list[n].uploaded = read_uploaded(path, &list[n].uploaded_at);
		list[n].refused = exists_in(path, BCI_COLLECT_REFUSED_FILE);
		list[n].last_boot = last_boot(path);
		n++;
	}
	if (n > 1)
		qsort(list, n, sizeof(*list), by_name);
out:
	closedir(dir);
	if (ret < 0) {
		free(list);
		bci_message(err, err_size, "%s: %s", runs_dir, strerror(-ret));
		return ret;
	}
	*runs = list;
	*count = n;
	return 0;
}

int bci_collect_run_recognise(const struct bci_manifest *held, const struct bci_manifest *local,
			      char *why, size_t why_size)
{
	if (strcmp(held->machine, local->machine) || strcmp(held->run_id, local->run_id)) {
		bci_message(why, why_size, "the master's copy is %s's run %s, this is %s's run %s",
			    held->machine, held->run_id, local->machine, local->run_id);
		return 0;
	}
	for (size_t i = 0; i < local->file_count; i++) {
		const struct bci_manifest_file *here = &local->files[i];
		const struct bci_manifest_file *there = bci_manifest_find(held, here->path);

		if (!there) {
			bci_message(why, why_size, "%s is not in the master's copy", here->path);
			return 0;
		}
		if (there->size != here->size || strcmp(there->sha256, here->sha256)) {
			bci_message(why, why_size, "%s differs from the master's copy (%" PRIu64
				    " bytes here, %" PRIu64 " there)", here->path, here->size,
				    there->size);
			return 0;
		}
	}
	return 1;
}

void bci_collect_runs_settle(struct bci_collect_run *runs, size_t count,
			     bool (*ignored)(const char *name, void *ctx), void *ctx)
{
	long long latest = 0;

	for (size_t i = 0; i < count; i++)
		if (!ignored(runs[i].name, ctx) && runs[i].last_boot > latest)
			latest = runs[i].last_boot;
	for (size_t i = 0; i < count; i++)
		if (runs[i].state == BCI_RUN_IN_PROGRESS && !runs[i].began &&
		    runs[i].last_boot < latest)
			runs[i].state = BCI_RUN_LEFT_BEHIND;
}

int bci_collect_run_mark_refused(const char *run_dir, const char *why, const char *sha256,
				 const char *master_sha256, long long now)
{
	char path[PATH_MAX], reason[1024], text[1400];
	int len;

	if (bci_collect_path(path, sizeof(path), "%s/" BCI_COLLECT_REFUSED_FILE, run_dir) < 0)
		return -ENAMETOOLONG;
	/* One line: the message's line breaks become spaces. */
	snprintf(reason, sizeof(reason), "%s", why);
	for (char *c = reason; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	len = snprintf(text, sizeof(text), "sha256 %s\nmaster_sha256 %s\ntime %lld\nreason %s\n",
		       sha256, master_sha256, now, reason);
	return bci_write_file_atomic(path, text, (size_t)len, 0644);
}

int bci_collect_run_mark_ended(const char *run_dir, int boots, const char *note)
{
	char path[PATH_MAX], text[1024];
	int len;

	if (bci_collect_path(path, sizeof(path), "%s/" BCI_COLLECT_ENDED_FILE, run_dir) < 0)
		return -ENAMETOOLONG;
	/* One line each: the note is the master's text, its line breaks are not ours to keep. */
	len = snprintf(text, sizeof(text), "ended-by master\nboots %d\nnote ", boots);
	for (const char *p = note; *p && len < (int)sizeof(text) - 2; p++)
		text[len++] = *p == '\n' || *p == '\r' ? ' ' : *p;
	text[len++] = '\n';
	return bci_write_file_atomic(path, text, (size_t)len, 0644);
}

int bci_collect_run_mark_uploaded(const char *run_dir, const char *sha256, uint64_t size,
				  long long now)
{
	char path[PATH_MAX], text[256];
	int len;

	if (bci_collect_path(path, sizeof(path), "%s/" BCI_COLLECT_UPLOADED_FILE, run_dir) < 0)
		return -ENAMETOOLONG;
	len = snprintf(text, sizeof(text), "sha256 %s\nsize %" PRIu64 "\ntime %lld\n", sha256, size,
		       now);
	return bci_write_file_atomic(path, text, (size_t)len, 0644);
}

/* Newest upload first; the name breaks ties so the order is stable. */
static int by_upload_time_desc(const void *a, const void *b)
{
	const struct bci_collect_run *x = a, *y = b;

	if (x->uploaded_at != y->uploaded_at)
		return x->uploaded_at < y->uploaded_at ? 1 : -1;
	return -strcmp(x->name, y->name);
}

/*
 * Deletes run folder @name whole: renamed to its hidden name first (durably),
 * so that an interruption leaves no run that looks like one with files
 * missing, then its files removed.
 */
static int run_delete(const char *runs_dir, const char *name)
{
	char path[PATH_MAX], hidden[PATH_MAX];
	int ret;

	if (bci_collect_path(path, sizeof(path), "%s/%s", runs_dir, name) < 0 ||
	    bci_collect_path(hidden, sizeof(hidden), "%s/" DELETING_PREFIX "%s", runs_dir, name) < 0)
		return -ENAMETOOLONG;
	/* A leftover of the same name from an earlier interruption goes first. */
	ret = bci_remove_tree(hidden);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	if (rename(path, hidden) < 0)
		return -errno;
	ret = bci_fsync_dir(runs_dir);
	if (ret == 0)
		ret = bci_remove_tree(hidden);
	if (ret == 0)
		ret = bci_fsync_dir(runs_dir);
	return ret;
}

/* What an interrupted deletion left (DELETING_PREFIX folders): removed now. */
static void deleting_finish(const char *runs_dir, FILE *log)
{
	struct dirent *entry;
	DIR *dir = opendir(runs_dir);
	int ret, removed = 0;

	if (!dir)
		return;
	while ((entry = readdir(dir))) {
		char path[PATH_MAX];

		if (strncmp(entry->d_name, DELETING_PREFIX, strlen(DELETING_PREFIX)) ||
		    bci_collect_path(path, sizeof(path), "%s/%s", runs_dir, entry->d_name) < 0)
			continue;
		ret = bci_remove_tree(path);
		if (ret < 0 && ret != -ENOENT) {
			fprintf(log, "collect: cannot finish deleting %s: %s\n", path, strerror(-ret));
			continue;
		}
		fprintf(log, "collect: run %s: its interrupted deletion finished\n",
			entry->d_name + strlen(DELETING_PREFIX));
		removed++;
	}
	closedir(dir);
	if (removed)
		bci_fsync_dir(runs_dir);
}

int bci_collect_runs_retain(const char *runs_dir, unsigned long keep, FILE *log)
{
	struct bci_collect_run *runs = NULL;
	size_t count = 0, uploaded = 0;
	char err[512];
	int ret, deleted = 0;

	deleting_finish(runs_dir, log);
	ret = bci_collect_runs_list(runs_dir, &runs, &count, err, sizeof(err));
	if (ret < 0) {
		fprintf(log, "collect: %s\n", err);
		return ret;
	}
	for (size_t i = 0; i < count; i++)
		if (runs[i].uploaded)
			runs[uploaded++] = runs[i];
	qsort(runs, uploaded, sizeof(*runs), by_upload_time_desc);
	for (size_t i = keep; i < uploaded; i++) {
		ret = run_delete(runs_dir, runs[i].name);
		if (ret < 0) {
			fprintf(log, "collect: cannot delete the uploaded run %s/%s: %s\n", runs_dir,
				runs[i].name, strerror(-ret));
			break;
		}
		fprintf(log, "collect: run %s deleted from the partition (uploaded; keep=%lu)\n",
			runs[i].name, keep);
		deleted++;
	}
	free(runs);
	return ret < 0 ? ret : deleted;
}
