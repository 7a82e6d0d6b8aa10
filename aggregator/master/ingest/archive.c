// SPDX-License-Identifier: MIT
/*
 * Ingest (ingest.h): an archive is hashed, kept in the data folder under its
 * digest, read as a stream (stream.c: nothing unpacked to disk) by the run
 * archive's reader, which checks it against its manifest as it reads, and
 * its rows written in one transaction.
 * The results come from lib's results generator (its per-job walk over a
 * memory source), boots and suspend cycles from lib's results_dir formats:
 * ingest parses none of the run's files itself. The log cache
 * (store/cache.h) is left to the first log fetch that needs it.
 */
#include "ingest.h"
#include "internal.h"

#include "run_archive.h"
#include "version.h"
#include "../store/cache.h"
#include "../names.h"
#include "../store/store.h"

#include "fsutil.h"
#include "manifest.h"
#include "message.h"
#include "results_dir.h"
#include "resultgen/resultgen.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the archive: digest, kept copy, cache ---- */

static int archive_digest(struct ingest *in, const char *path)
{
	uint64_t size;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		bci_message(in->err, in->err_size, "%s: %s", path, strerror(errno));
		return ret;
	}
	ret = bci_sha256_fd(fd, in->digest, &size);
	close(fd);
	if (ret < 0) {
		bci_message(in->err, in->err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (in->options && in->options->digest && strcmp(in->options->digest, in->digest)) {
		bci_message(in->err, in->err_size, "%s: its sha256 is %s, not %s as given", path,
			    in->digest, in->options->digest);
		return -EBADMSG;
	}
	return 0;
}

/* 1 when @path is a file directly inside the folder @dir (both resolved). */
static int path_in_dir(const char *path, const char *dir)
{
	char real_path[PATH_MAX], real_dir[PATH_MAX];
	size_t len;

	if (!realpath(path, real_path) || !realpath(dir, real_dir))
		return 0;
	len = strlen(real_dir);
	return !strncmp(real_path, real_dir, len) && real_path[len] == '/' &&
	       !strchr(real_path + len + 1, '/');
}

/*
 * Keeps the archive in DATA/archives/: one already there (serve's) stays
 * where it is; another is copied (moved when @move: ingest's own packing)
 * to <digest><its .tar... suffix>.
 */
static int archive_keep(struct ingest *in, const char *path, int move)
{
	const char *base = strrchr(path, '/'), *suffix;
	char dir[PATH_MAX], tmp[PATH_MAX + 32];
	const char *failed = NULL;
	struct stat st;
	int ret;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/archives", in->data_dir) >= sizeof(dir))
		return -ENAMETOOLONG;
	ret = bci_mkdir_p(dir, 0755);
	if (ret < 0) {
		bci_message(in->err, in->err_size, "%s: %s", dir, strerror(-ret));
		return ret;
	}
	if (path_in_dir(path, dir)) {
		snprintf(in->archive, sizeof(in->archive), "%s", path);
		return 0;
	}
	base = base ? base + 1 : path;
	suffix = strstr(base, ".tar");
	if (!suffix || strlen(suffix) > 16 || strspn(suffix, ".abcdefghijklmnopqrstuvwxyz0123456789") !=
	    strlen(suffix))
		suffix = ".tar";
	if ((size_t)snprintf(in->archive, sizeof(in->archive), "%s/%s%s", dir, in->digest, suffix) >=
	    sizeof(in->archive))
		return -ENAMETOOLONG;
	if (stat(in->archive, &st) == 0)
		return 0;	/* the same bytes are kept already */
	/*
	 * link() creates the name only if it is free: when another ingest of
	 * the same bytes got there first, that copy is kept and this one is
	 * not ours to remove on failure.
	 */
	if (move && link(path, in->archive) == 0) {
		unlink(path);
		in->archive_copied = 1;
		return bci_fsync_dir(dir);
	}
	/* Unique per thread: serve's threads may keep the same archive at once. */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%ld", in->archive, (long)getpid(), (long)gettid());
	unlink(tmp);
	ret = bci_copy_file(path, tmp, 0644, 1, &failed);
	if (ret == 0 && link(tmp, in->archive) == 0)
		in->archive_copied = 1;
	else if (ret == 0 && errno != EEXIST)
		ret = -errno;
	unlink(tmp);
	if (ret == 0)
		ret = bci_fsync_dir(dir);
	if (ret < 0) {
		bci_message(in->err, in->err_size, "%s: cannot keep a copy in %s: %s",
			    failed ? failed : path, dir, strerror(-ret));
		return ret;
	}
	return 0;
}

/* The machine and run id: what the caller says and what the manifest says must agree. */
static int identity_decide(struct ingest *in, const char *machine, const char *run_id)
{
	const char *m_machine = in->manifest->machine, *m_run = in->manifest->run_id;

	if (machine && strcmp(machine, m_machine)) {
		bci_message(in->err, in->err_size, "%s: its manifest is machine %s's, not %s's",
			    in->archive, m_machine, machine);
		return -EPERM;
	}
	if (run_id && strcmp(run_id, m_run)) {
		bci_message(in->err, in->err_size, "%s: its manifest is run %s, not %s", in->archive,
			    m_run, run_id);
		return -EINVAL;
	}
	/* The manifest's are words (its reader checked them): they fit. */
	memcpy(in->machine, m_machine, strlen(m_machine) + 1);
	memcpy(in->run_id, m_run, strlen(m_run) + 1);
	return 0;
}

/* ---- what the run folder says: times, state, boots, crash records, suspend cycles ---- */

/* Reads @name in the run folder into *@text (NULL when it is not there): the scan kept it. */
static int run_file_read(struct ingest *in, const char *name, char **text)
{
	int ret = bci_ingest_run_file(in, name, text, NULL);

	if (ret < 0)
		bci_message(in->err, in->err_size, "%s: %s: %s", in->archive, name, strerror(-ret));
	return ret;
}

/*
 * The names directly inside folder @dir of the run (files and folders),
 * sorted, each once; *@names freed with names_free(). The manifest's files
 * are sorted by path, so the ones below @dir are one stretch.
 */
static int names_below(struct ingest *in, const char *dir, char ***names, size_t *count)
{
	const struct bci_manifest *m = in->manifest;
	char prefix[PATH_MAX];
	size_t len, cap = 0, low = 0, high = m->file_count;

	*names = NULL;
	*count = 0;
	len = (size_t)snprintf(prefix, sizeof(prefix), "%s%s", dir, *dir ? "/" : "");
	if (len >= sizeof(prefix))
		return -ENAMETOOLONG;
	/* The first path not below @prefix in byte order, then the stretch from it. */
	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (strcmp(m->files[mid].path, prefix) < 0)
			low = mid + 1;
		else
			high = mid;
	}
	for (size_t i = low; i < m->file_count; i++) {
		const char *p = m->files[i].path, *name;
		size_t n;

		if (strncmp(p, prefix, len))
			break;
		name = p + len;
		n = strcspn(name, "/");
		if (*count && !strncmp((*names)[*count - 1], name, n) && !(*names)[*count - 1][n])
			continue;	/* the same child again (a folder's files) */
		if (*count == cap) {
			char **grown;

			cap = cap ? cap * 2 : 8;
			grown = realloc(*names, cap * sizeof(**names));
			if (!grown)
				return -ENOMEM;
			*names = grown;
		}
		(*names)[*count] = strndup(name, n);
		if (!(*names)[*count])
			return -ENOMEM;
		(*count)++;
	}
	return 0;
}

static void names_free(char **names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
}

static int name_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct boot_record {
	unsigned number;
	char *text;		/* boot.txt, cut in place by the "key value" reader */
	char *end;		/* end.txt's first line, or NULL */
	struct bci_store_boot row;
};

static int boot_compare(const void *a, const void *b)
{
	const struct boot_record *x = a, *y = b;

	return x->number < y->number ? -1 : x->number > y->number;
}

/* The crash records saved at the start of boot @number (pstore/ and efi/ of its folder). */
static int boot_crashes_store(struct ingest *in, unsigned number)
{
	static const char *const sources[] = { "pstore", "efi" };
	char folder[64], dir_path[PATH_MAX * 3], rel[PATH_MAX];
	int ret = 0;

	snprintf(folder, sizeof(folder), BCI_RESULTS_BOOT_DIR, number);
	for (size_t s = 0; s < 2 && ret == 0; s++) {
		char **names = NULL;
		size_t n = 0;

		snprintf(dir_path, sizeof(dir_path), "%s/%s", folder, sources[s]);
		ret = names_below(in, dir_path, &names, &n);
		if (ret == 0 && n)
			qsort(names, n, sizeof(*names), name_compare);
		for (size_t i = 0; i < n && ret == 0; i++) {
			struct bci_store_crash crash = {
				.boot = (int)number, .source = sources[s], .name = names[i],
				.path = rel,
			};

			if (names[i][0] == '.')
				continue;
			snprintf(rel, sizeof(rel), "%s/%s/%s", folder, sources[s], names[i]);
			ret = bci_store_crash_add(in->store, in->run_key, &crash, in->err, in->err_size);
		}
		names_free(names, n);
	}
	return ret;
}

/*
 * Every boot-NNNN/ folder: boot.txt's time, kernel, command line and what it
 * says of the boot before; how each boot ended (its end.txt, else what the
 * next boot found, else unknown); the crash records each found.
 */
static int boots_store(struct ingest *in)
{
	struct boot_record *boots = NULL;
	size_t count = 0, cap = 0, top_count = 0;
	char **top = NULL;
	int ret;

	ret = names_below(in, "", &top, &top_count);
	if (ret < 0) {
		bci_message(in->err, in->err_size, "%s: %s", in->archive, strerror(-ret));
		goto out;
	}
	for (size_t t = 0; t < top_count; t++) {
		unsigned number;

		if (!bci_results_boot_dir_parse(top[t], &number))
			continue;
		if (count == cap) {
			struct boot_record *grown;

			cap = cap ? cap * 2 : 16;
			grown = realloc(boots, cap * sizeof(*boots));
			if (!grown) {
				ret = -ENOMEM;
				goto out;
			}
			boots = grown;
		}
		boots[count++] = (struct boot_record){ .number = number };
	}
	if (count)
		qsort(boots, count, sizeof(*boots), boot_compare);
	for (size_t i = 0; i < count; i++) {
		char name[64], *cursor, *key, *value;

		snprintf(name, sizeof(name), BCI_RESULTS_BOOT_DIR "/" BCI_RESULTS_BOOT_RECORD,
			 boots[i].number);
		ret = run_file_read(in, name, &boots[i].text);
		if (ret < 0)
			goto out;
		snprintf(name, sizeof(name), BCI_RESULTS_BOOT_DIR "/" BCI_RESULTS_BOOT_END,
			 boots[i].number);
		ret = run_file_read(in, name, &boots[i].end);
		if (ret < 0)
			goto out;
		boots[i].row.index = (int)boots[i].number;
		for (cursor = boots[i].text; cursor && bci_results_kv_next(&cursor, &key, &value);) {
			if (!strcmp(key, "time"))
				boots[i].row.time = strtod(value, NULL);
			else if (!strcmp(key, "kernel"))
				boots[i].row.kernel = value;
			else if (!strcmp(key, "cmdline"))
				boots[i].row.cmdline = value;
			else if (!strcmp(key, "previous"))
				boots[i].row.previous = value;
		}
	}
	for (size_t i = 0; i < count; i++) {
		char ending[512];

		if (boots[i].end) {
			boots[i].end[strcspn(boots[i].end, "\n")] = '\0';
			snprintf(ending, sizeof(ending), "clean: %s", boots[i].end);
		} else if (i + 1 < count && boots[i + 1].row.previous &&
			   boots[i + 1].number == boots[i].number + 1) {
			snprintf(ending, sizeof(ending), "%s", boots[i + 1].row.previous);
		} else {
			snprintf(ending, sizeof(ending), "unknown: no end record and no later boot");
		}
		boots[i].row.ending = ending;
		ret = bci_store_boot_add(in->store, in->run_key, &boots[i].row, in->err, in->err_size);
		if (ret == 0)
			ret = boot_crashes_store(in, boots[i].number);
		if (ret < 0)
			goto out;
		in->counts.boots++;
	}
out:
	names_free(top, top_count);
	for (size_t i = 0; i < count; i++) {
		free(boots[i].text);
		free(boots[i].end);
	}
	free(boots);
	return ret;
}

/* suspend-cycles.txt: one row per whole line ("<state>[_<pm_test>]-<NNNN>" names the cycle). */
static int suspend_store(struct ingest *in)
{
	char *text, *line, *next;
	int ret;

	ret = run_file_read(in, BCI_RESULTS_SUSPEND_CYCLES, &text);
	if (ret < 0 || !text)
		return ret;
	for (line = text; *line; line = next) {
		struct bci_suspend_cycle_line parsed;
		struct bci_store_suspend cycle;
		char *dash;

		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		/* A line a crash cut short is not a cycle, as the summary counts it. */
		if (!*line || bci_suspend_cycle_line_parse(line, &parsed) < 0)
			continue;
		dash = strrchr(parsed.cycle, '-');
		if (!dash || dash == parsed.cycle || !dash[1])
			continue;
		*dash = '\0';
		cycle = (struct bci_store_suspend){
			.cycle = atoi(dash + 1), .state = parsed.cycle, .result = parsed.result,
			.wall = parsed.wall, .suspended = parsed.suspended, .latency = parsed.latency,
			.kernel_suspend = parsed.kernel_suspend, .kernel_resume = parsed.kernel_resume,
			.woke = parsed.wake[0] ? parsed.wake : NULL,
		};
		ret = bci_store_suspend_add(in->store, in->run_key, &cycle, in->err, in->err_size);
		if (ret < 0) {
			char inner[512];

			snprintf(inner, sizeof(inner), "%s", in->err);
			bci_message(in->err, in->err_size, "%s: %s: %s", in->archive,
				    BCI_RESULTS_SUSPEND_CYCLES, inner);
			break;
		}
		in->counts.suspend_cycles++;
	}
	free(text);
	return ret;
}

/*
 * The run's row, when the walk begins: identity from the manifest (else its
 * first boot record), times from the results generator, the state from
 * igt_runner's own signs (aborted.txt when it stopped early, endtime.txt
 * when it finished).
 */
static int run_store(struct ingest *in, const struct bci_results_run *facts, const char *state)
{
	const struct bci_manifest *m = in->manifest;
	const char *base = strrchr(in->archive, '/');
	char archive[PATH_MAX + 16];
	struct bci_store_run run = {
		.machine = in->machine, .run_id = in->run_id,
		.build = in->options ? in->options->build : NULL,
		.digest = in->digest, .archive_path = archive, .archive_root = "",
		.started = facts->has_start ? facts->start : 0,
		.ended = facts->has_end ? facts->end : 0,
	};
	char *aborted = NULL, *boot = NULL, *cursor, *key, *value;
	char name[64];
	int ret;

	/* Relative to the data folder, so the folder can move (archive_keep() put it there). */
	snprintf(archive, sizeof(archive), "archives/%s", base ? base + 1 : in->archive);
	ret = run_file_read(in, BCI_RESULTS_ABORTED, &aborted);
	snprintf(name, sizeof(name), BCI_RESULTS_BOOT_DIR "/" BCI_RESULTS_BOOT_RECORD, 1u);
	if (ret == 0)
		ret = run_file_read(in, name, &boot);
	if (ret < 0)
		goto out;
	run.state = state ? state : aborted ? "aborted" : facts->has_end ? "done" : "incomplete";
	if (m) {
		run.image_id = m->image_id[0] ? m->image_id : NULL;
		run.kernel = m->kernel[0] ? m->kernel : NULL;
		run.cmdline = m->cmdline[0] ? m->cmdline : NULL;
	}
	for (cursor = boot; cursor && bci_results_kv_next(&cursor, &key, &value);) {
		if (!strcmp(key, "kernel") && !run.kernel)
			run.kernel = value;
		else if (!strcmp(key, "cmdline") && !run.cmdline)
			run.cmdline = value;
	}
	ret = bci_store_run_add(in->store, &run, &in->run_key, in->err, in->err_size);
	if (ret == -EEXIST)
		in->run_exists = 1;
out:
	free(aborted);
	free(boot);
	return ret;
}

/* The result @test, held until the transaction: its name copied, the rest as it is. */
static int row_hold(struct ingest *in, const struct bci_results_test *test)
{
	size_t len = strlen(test->name) + 1;

	if (in->row_count == in->row_cap) {
		size_t cap = in->row_cap ? in->row_cap * 2 : 1024;
		struct ingest_row *grown = realloc(in->rows, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		in->rows = grown;
		in->row_cap = cap;
	}
	if (in->names_cap - in->names_len < len) {
		size_t cap = in->names_cap ? in->names_cap : 64 * 1024;
		char *grown;

		while (cap - in->names_len < len)
			cap *= 2;
		grown = realloc(in->names, cap);
		if (!grown)
			return -ENOMEM;
		in->names = grown;
		in->names_cap = cap;
	}
	memcpy(in->names + in->names_len, test->name, len);
	in->rows[in->row_count++] = (struct ingest_row){
		.name = in->names_len,
		.result = test->result,
		.duration = test->has_time ? test->time_end - test->time_start : -1,
		.job = test->job == BCI_RESULTS_NO_JOB ? -1 : (int)test->job,
		.dmesg_warnings = test->dmesg_warnings.ptr && test->dmesg_warnings.len > 0,
	};
	in->names_len += len;
	return 0;
}

/*
 * The results generator's walk: the run's times when it begins, then each
 * test exactly as results.json has it, held in memory (about 60 bytes a
 * result) so that the write transaction holds no reading or judging: the
 * store's write lock is then as short as the inserts, and serve's workers
 * ingest two runs at once instead of one after the other.
 */
static int walk_visit(enum bci_results_event event, const struct bci_results_run *run,
		      const struct bci_results_test *test, void *ctx)
{
	struct ingest *in = ctx;

	if (event == BCI_RESULTS_RUN_BEGIN) {
		in->has_start = run->has_start;
		in->start = run->start;
		in->has_end = run->has_end;
		in->end = run->end;
		return 0;
	}
	return event == BCI_RESULTS_TEST ? row_hold(in, test) : 0;
}

/* The results, read from the archive before anything is written (walk_visit). */
static int results_read(struct ingest *in)
{
	struct bci_resultgen_options options = { .warnings = NULL };
	FILE *discard = NULL;
	int ret;

	if (in->options && in->options->warnings) {
		options.warnings = in->options->warnings;
	} else {
		/* The library prints nothing unless the caller asked for warnings. */
		discard = fopen("/dev/null", "w");
		if (!discard)
			return -errno;
		options.warnings = discard;
	}
	in->err[0] = '\0';
	ret = bci_cache_logs_begin(in->data_dir, in->digest, &in->logs, in->err, in->err_size);
	if (ret == 0)
		ret = bci_ingest_results_stream(in, &options, walk_visit, in);
	if (discard)
		fclose(discard);
	return ret;
}

/* The run row and the held results (inside the transaction). */
static int results_store(struct ingest *in)
{
	struct bci_results_run facts = {
		.name = "", .has_start = in->has_start, .start = in->start,
		.has_end = in->has_end, .end = in->end,
	};
	struct bci_store_result *rows = calloc(in->row_count ? in->row_count : 1, sizeof(*rows));
	int ret = rows ? run_store(in, &facts, NULL) : -ENOMEM;

	for (size_t i = 0; ret == 0 && i < in->row_count; i++) {
		const struct ingest_row *held = &in->rows[i];

		rows[i] = (struct bci_store_result){
			.job = held->job,
			.name = in->names + held->name,
			.result = held->result,
			.duration = held->duration,
			.dmesg_warnings = held->dmesg_warnings,
		};
	}
	if (ret == 0)
		ret = bci_store_results_add(in->store, in->run_key, rows, in->row_count, in->err,
					    in->err_size);
	if (ret == 0)
		in->counts.results += (long)in->row_count;
	free(rows);
	return ret;
}

/*
 * A run of the executor's test= program: no igt_runner files, only
 * test/result.txt. The run row and one result, bootci@program@<name of the
 * program>, judged from how the program ended.
 */
static int program_store(struct ingest *in)
{
	struct bci_results_run facts = { .name = "" };
	struct bci_test_program_result program;
	char *text = NULL, name[256];
	const char *base;
	size_t len;
	int ret;

	ret = run_file_read(in, BCI_RESULTS_TEST_DIR "/" BCI_RESULTS_TEST_RESULT, &text);
	if (ret == 0 && !text)
		ret = -ENOENT; /* gone since program_run() saw it */
	if (ret < 0)
		goto out;
	ret = bci_test_program_result_parse(text, &program, in->err, in->err_size);
	if (ret < 0)
		goto out;
	/* The program's own name: the command's first word without its folder. */
	len = strcspn(program.command, " \t");
	base = memrchr(program.command, '/', len);
	base = base ? base + 1 : program.command;
	len -= (size_t)(base - program.command);
	if (!len) {
		bci_message(in->err, in->err_size, "%s: command '%s' names no program",
			    BCI_RESULTS_TEST_DIR "/" BCI_RESULTS_TEST_RESULT, program.command);
		ret = -EINVAL;
		goto out;
	}
	snprintf(name, sizeof(name), "bootci@program@%.*s", (int)len, base);
	ret = run_store(in, &facts,
			program.state == BCI_TEST_PROGRAM_RUNNING ||
					program.state == BCI_TEST_PROGRAM_CAPPED ? "incomplete" : "done");
	if (ret < 0)
		goto out;
	struct bci_store_result row = {
		.job = -1,
		.name = name,
		.result = bci_test_program_result_name(&program),
		.duration = program.duration,
	};
	ret = bci_store_result_add(in->store, in->run_key, &row, in->err, in->err_size);
	if (ret == 0)
		in->counts.results++;
out:
	free(text);
	return ret;
}

/* A test program's run folder: test/result.txt and no metadata.txt. */
static bool program_run(const struct ingest *in)
{
	return !bci_ingest_file_listed(in, BCI_RESULTS_METADATA) &&
	       bci_ingest_file_listed(in, BCI_RESULTS_TEST_DIR "/" BCI_RESULTS_TEST_RESULT);
}

/*
 * A run folder whose run never began: no joblist.txt and no test/result.txt
 * (a boot that ended before its plan was written, a planning boot the
 * executor kept aside as <run>.superseded-N). Its boots and crash records
 * are what it has: stored with the run, as a run with no results
 * ("incomplete"), instead of an ingest that fails the same way at every
 * restart of serve.
 */
static bool unbegun_run(const struct ingest *in)
{
	return !bci_ingest_file_listed(in, BCI_RESULTS_JOBLIST) &&
	       !bci_ingest_file_listed(in, BCI_RESULTS_TEST_DIR "/" BCI_RESULTS_TEST_RESULT);
}

static int unbegun_store(struct ingest *in)
{
	struct bci_results_run facts = { .name = "" };

	return run_store(in, &facts, "incomplete");
}

/* ---- one run, all or nothing ---- */

struct existing {
	char digest[BCI_SHA256_HEX_LEN + 1];
};

static int existing_copy(const struct bci_store_run *run, void *ctx)
{
	struct existing *e = ctx;

	snprintf(e->digest, sizeof(e->digest), "%s", run->digest ? run->digest : "");
	return 0;
}

/* BCI_INGEST_ALREADY when the run is stored with our digest, -EEXIST with another, 0 if not stored. */
static int existing_check(struct ingest *in)
{
	struct existing e = { "" };
	int ret;

	ret = bci_store_run_get(in->store, in->machine, in->run_id, existing_copy, &e, in->err,
				in->err_size);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	if (!strcmp(e.digest, in->digest))
		return BCI_INGEST_ALREADY;
	bci_message(in->err, in->err_size,
		    "machine %s already has a run '%s' from another archive (sha256 %s, this one %s)",
		    in->machine, in->run_id, e.digest, in->digest);
	return -EEXIST;
}

/* Returns 1 when another ingest stored the same run first (its run row exists). */
static int rows_write(struct ingest *in)
{
	int ret;

	ret = bci_store_begin(in->store, in->err, in->err_size);
	if (ret < 0)
		return ret;
	ret = program_run(in) ? program_store(in) : unbegun_run(in) ? unbegun_store(in) :
	      results_store(in);
	if (ret < 0 && in->run_exists) {
		bci_store_rollback(in->store);
		return 1;
	}
	if (ret == 0)
		ret = boots_store(in);
	if (ret == 0)
		ret = suspend_store(in);
	if (ret == 0)
		ret = bci_store_commit(in->store, in->err, in->err_size);
	else
		bci_store_rollback(in->store);
	/*
	 * The log file is named once the rows are in; failing to name it loses
	 * nothing (logs then come from the archive), so it only warns.
	 */
	if (ret == 0 && in->logs) {
		char why[512];

		if (bci_cache_logs_commit(in->logs, why, sizeof(why)) < 0 && in->options &&
		    in->options->warnings)
			fprintf(in->options->warnings, "warning: %s: the run's log file: %s\n",
				in->archive, why);
		in->logs = NULL;
	}
	return ret;
}

static int ingest_archive(struct bci_store *store, const char *data_dir, const char *archive_path,
			  int move, const char *machine, const char *run_id,
			  const struct bci_ingest_options *options, struct bci_ingest_summary *summary,
			  char *err, size_t err_size)
{
	struct ingest *in;
	int ret;

	err[0] = '\0';
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	*in = (struct ingest){
		.store = store, .data_dir = data_dir, .options = options, .err = err,
		.err_size = err_size, .run_key = -1,
	};
	ret = archive_digest(in, archive_path);
	if (ret == 0)
		ret = archive_keep(in, archive_path, move);
	if (ret < 0)
		goto out;
	/* Every file is checked against the manifest as the scan reads it. */
	ret = bci_ingest_stream_scan(in);
	if (ret < 0)
		goto out;
	ret = identity_decide(in, machine, run_id);
	if (ret == 0)
		ret = existing_check(in);
	if (ret == 0 && !program_run(in) && !unbegun_run(in))
		ret = results_read(in);
	if (ret != 0)
		goto out;
	/* The log file's writes go to the disk while the rows are written. */
	if (in->logs) {
		char why[512];

		if (bci_cache_logs_finish(in->logs, why, sizeof(why)) < 0) {
			if (in->options && in->options->warnings)
				fprintf(in->options->warnings, "warning: %s: the run's log file: %s\n",
					in->archive, why);
			in->logs = NULL;
		}
	}
	ret = rows_write(in);
	/* Another ingest of the same run committed first: same digest, nothing to do. */
	if (ret == 1)
		ret = existing_check(in);
out:
	if (ret < 0) {
		if (in->archive_copied)
			unlink(in->archive);
	} else if (summary) {
		*summary = in->counts;
		snprintf(summary->machine, sizeof(summary->machine), "%s", in->machine);
		snprintf(summary->run_id, sizeof(summary->run_id), "%s", in->run_id);
		snprintf(summary->digest, sizeof(summary->digest), "%s", in->digest);
		snprintf(summary->archive_path, sizeof(summary->archive_path), "%s", in->archive);
	}
	bci_manifest_free(in->manifest);
	bci_cache_logs_abort(in->logs);
	bci_ingest_stream_free(in);
	free(in->rows);
	free(in->names);
	free(in);
	return ret;
}

int bci_ingest_archive(struct bci_store *store, const char *data_dir, const char *archive_path,
		       const char *machine, const char *run_id,
		       const struct bci_ingest_options *options, struct bci_ingest_summary *summary,
		       char *err, size_t err_size)
{
	return ingest_archive(store, data_dir, archive_path, 0, machine, run_id, options, summary,
			      err, err_size);
}

/* Folders packed by this process (bci_ingest_dir), for the packs' names. */
static unsigned long pack_seq;

int bci_ingest_dir(struct bci_store *store, const char *data_dir, const char *dir,
		   const char *machine, const char *run_id,
		   const struct bci_ingest_options *options, struct bci_ingest_summary *summary,
		   char *err, size_t err_size)
{
	struct bci_run_archive_info info = {
		.machine = machine, .bootci_version = BCI_VERSION,
	};
	char name[NAME_MAX + 1], tmp_dir[PATH_MAX], packed[PATH_MAX + 64];
	size_t len;
	int ret;

	err[0] = '\0';
	/* The run id the executor gives a run is its folder's name. */
	len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	{
		const char *start = dir + len;

		while (start > dir && start[-1] != '/')
			start--;
		snprintf(name, sizeof(name), "%.*s", (int)(dir + len - start), start);
	}
	info.run = run_id ? run_id : name;
	/* The caller names @dir before this message: it is not repeated. */
	if (!machine) {
		bci_message(err, err_size, "a results folder does not name its machine: give one"
			    " (--machine NAME)");
		return -EINVAL;
	}
	if (!bci_name_machine_ok(machine)) {
		char quoted[300];

		bci_message(err, err_size, "machine '%s' is not a word ([A-Za-z0-9._-], 1 to 128"
			    " bytes, not . or ..)", bci_quote(quoted, sizeof(quoted), machine,
							      strlen(machine)));
		return -EINVAL;
	}
	if (!bci_name_run_id_ok(info.run)) {
		bci_message(err, err_size, "run id '%s' is not a word ([A-Za-z0-9._-], 1 to 128)",
			    info.run);
		return -EINVAL;
	}
	if ((size_t)snprintf(tmp_dir, sizeof(tmp_dir), "%s/tmp", data_dir) >= sizeof(tmp_dir))
		return -ENAMETOOLONG;
	ret = bci_mkdir_p(tmp_dir, 0755);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", tmp_dir, strerror(-ret));
		return ret;
	}
	/* Its own name: other processes, and other threads of this one (ingest --jobs). */
	snprintf(packed, sizeof(packed), "%s/pack-%ld-%lu-%s.tar.zst", tmp_dir, (long)getpid(),
		 __atomic_fetch_add(&pack_seq, 1, __ATOMIC_RELAXED), info.run);
	ret = bci_run_archive_write(dir, packed, &info, err, err_size);
	if (ret < 0)
		return ret;
	ret = ingest_archive(store, data_dir, packed, 1, machine, info.run, options, summary, err,
			     err_size);
	unlink(packed);	/* still there when the same bytes were kept already */
	return ret;
}

