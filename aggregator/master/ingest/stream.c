// SPDX-License-Identifier: MIT
/*
 * Ingest reads the archive as a stream (internal.h): nothing of the run is
 * written to disk. The archive's one reader (lib/run_archive.h) hands every
 * file over and checks it as it goes (the manifest first, each listed file
 * once, its size and sha256, files only, safe paths), so a lying archive is
 * refused before any row is written: the rows are written after the scan.
 *
 * The scan keeps the run's own small files (metadata, joblist, boot
 * records...) in memory, and holds the job folders' files too (up to
 * HELD_BYTES_MAX in all, each up to JOB_FILE_MEM_MAX): collect writes files
 * in the manifest's sorted order, where the job folders ("0/", "1/", ...)
 * come before joblist.txt and metadata.txt, which every job's judgement
 * needs, so the results (results.c) are walked from memory afterwards and
 * the archive is read once. A run with more than that (its logs are large)
 * lets them go, and the results read the archive a second time, one folder
 * at a time.
 */
#include "internal.h"

#include "fsutil.h"
#include "message.h"
#include "results_dir.h"
#include "run_archive.h"
#include "strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* All of the run's own files held at once (a hostile archive could list many). */
#define KEPT_BYTES_MAX ((size_t)64 << 20)
/* The job folders' files the scan holds for the results, at most (else a second pass). */
#define HELD_BYTES_MAX ((size_t)64 << 20)

/* The run's files that ingest or the results generator read whole. */
static const char *const run_files_read[] = {
	BCI_RESULTS_METADATA, BCI_RESULTS_JOBLIST, BCI_RESULTS_UNAME,
	BCI_RESULTS_STARTTIME, BCI_RESULTS_ENDTIME, BCI_RESULTS_ABORTED,
	BCI_RESULTS_SUSPEND_SUMMARY, BCI_RESULTS_SUSPEND_CYCLES,
	BCI_RESULTS_TEST_DIR "/" BCI_RESULTS_TEST_RESULT,
};

static bool run_file_wanted(const char *rel)
{
	const char *slash = strchr(rel, '/');
	char dir[32];
	unsigned number;

	/* Most files are a job's (N/...): no run file starts with a digit. */
	if (*rel >= '0' && *rel <= '9')
		return false;
	for (size_t i = 0; i < sizeof(run_files_read) / sizeof(run_files_read[0]); i++)
		if (*rel == run_files_read[i][0] && !strcmp(rel, run_files_read[i]))
			return true;
	/* boot-NNNN/boot.txt and boot-NNNN/end.txt */
	if (!slash || strchr(slash + 1, '/') || (size_t)(slash - rel) >= sizeof(dir))
		return false;
	memcpy(dir, rel, (size_t)(slash - rel));
	dir[slash - rel] = '\0';
	return bci_results_boot_dir_parse(dir, &number) &&
	       (!strcmp(slash + 1, BCI_RESULTS_BOOT_RECORD) || !strcmp(slash + 1, BCI_RESULTS_BOOT_END));
}

bool bci_ingest_file_listed(const struct ingest *in, const char *rel)
{
	return in->manifest && bci_manifest_find(in->manifest, rel);
}

/* ---- reading members ---- */

int bci_ingest_archive_open(struct ingest *in, struct bci_run_archive **out, char *why,
			    size_t why_size)
{
	/* Limits are serve's, at upload: an archive kept or given here is read by the format's rules. */
	int ret = bci_run_archive_open(in->archive, NULL, out, why, why_size);

	if (ret < 0)
		bci_message(in->err, in->err_size, "%s: %s", in->archive, why);
	return ret;
}

static int sink_bytes(struct ingest_sink *s, const void *data, size_t n)
{
	int ret = 0;

	if (s->into && !s->over) {
		if (n > s->limit - s->into_len) {
			s->over = true;
		} else {
			memcpy(s->into + s->into_len, data, n);
			s->into_len += n;
		}
	}
	if (s->buf && !s->over) {
		if (s->buf->len + n > s->limit)
			s->over = true;
		else
			ret = bci_str_append(s->buf, data, n);
	}
	if (ret == 0 && s->fd >= 0)
		ret = bci_write_all(s->fd, data, n);
	return ret;
}

int bci_ingest_member_read(struct ingest *in, struct bci_run_archive *r, const char *path,
			   struct ingest_sink *s, bool *local)
{
	const void *block;
	size_t n;
	int ret;

	while ((ret = bci_run_archive_data(r, &block, &n)) == 1) {
		ret = sink_bytes(s, block, n);
		if (ret < 0) {
			*local = true;
			bci_message(in->err, in->err_size, "%s: %s: %s", in->archive, path,
				    strerror(-ret));
			return ret;
		}
	}
	return ret;
}

/* ---- files held in memory ---- */

struct bci_results_mem_file *bci_ingest_mem_files_slot(struct bci_results_mem_file **files,
						       size_t count, size_t *cap, size_t first)
{
	if (count == *cap) {
		size_t more = *cap ? *cap * 2 : first;
		struct bci_results_mem_file *grown = realloc(*files, more * sizeof(*grown));

		if (!grown)
			return NULL;
		*files = grown;
		*cap = more;
	}
	return &(*files)[count];
}

static void held_free(struct ingest *in)
{
	bci_arena_free(&in->held_arena);
	free(in->held);
	in->held = NULL;
	in->held_count = in->held_cap = in->held_bytes = 0;
}

/* Stops holding: what was held goes, and the results will read the archive again. */
static void held_stop(struct ingest *in)
{
	held_free(in);
	in->held_off = true;
}

/* Held: @len bytes at @data, in the held arena; @path is the manifest's (which outlives them). */
static int held_add(struct ingest *in, const char *path, const char *data, size_t len)
{
	struct bci_results_mem_file *f;

	f = bci_ingest_mem_files_slot(&in->held, in->held_count, &in->held_cap, 1024);
	if (!f)
		return -ENOMEM;
	*f = (struct bci_results_mem_file){ .path = path, .data = data, .len = len, .fd = -1 };
	in->held_count++;
	in->held_bytes += len;
	return 0;
}

/* @buf's bytes (taken) as the run file @path: 0, or -ENOMEM and nothing added. */
static int kept_add(struct ingest *in, const char *path, struct bci_str *buf)
{
	struct bci_results_mem_file *f = bci_ingest_mem_files_slot(&in->kept, in->kept_count,
								   &in->kept_cap, 32);
	size_t len = buf->len;

	if (!f)
		return -ENOMEM;
	*f = (struct bci_results_mem_file){ .path = strdup(path), .len = len, .fd = -1 };
	f->data = bci_str_steal(buf);
	if (!f->path || !f->data) {
		free((char *)f->path);
		free((char *)f->data);
		return -ENOMEM;
	}
	in->kept_count++;
	in->kept_bytes += len;
	return 0;
}

/* ---- the scan ---- */

/*
 * One file of the scan, checked by the reader as it is read; kept when it is
 * a run file read whole, held when it is a job folder's (while holding). Its
 * size, the manifest's, is the header's too: a file is read straight into
 * memory of that size (one allocation, no copy).
 */
static int file_scan(struct ingest *in, struct bci_run_archive *r,
		     const struct bci_manifest_file *file, bool *local)
{
	const char *path = file->path, *name;
	struct bci_str buf = in->scan_buf;
	bool kept = run_file_wanted(path);
	bool held = !kept && !in->held_off && bci_ingest_job_member(path, &(size_t){ 0 }, &name);
	struct ingest_sink s = { .fd = -1 };
	int ret = 0;

	if (held && (file->size > JOB_FILE_MEM_MAX || in->held_bytes + file->size > HELD_BYTES_MAX)) {
		/* Too much to hold: every job file will be read from the archive again. */
		held_stop(in);
		held = false;
	}
	if (kept && file->size > SMALL_FILE_MAX) {
		*local = true;
		bci_message(in->err, in->err_size, "%s: %s: larger than %zu bytes", in->archive, path,
			    SMALL_FILE_MAX);
		return -EFBIG;
	}
	if (kept && in->kept_bytes + file->size > KEPT_BYTES_MAX) {
		*local = true;
		bci_message(in->err, in->err_size, "%s: %s: the run's own files (boot records, joblist"
			    "...) make more than %zu bytes", in->archive, path, KEPT_BYTES_MAX);
		return -EFBIG;
	}
	if (held) {
		s.into = bci_arena_alloc(&in->held_arena, (size_t)file->size + 1);
		s.limit = (size_t)file->size;
		ret = s.into ? 0 : -ENOMEM;
	} else if (kept) {
		s.buf = &buf;
		s.limit = (size_t)file->size;
		ret = bci_str_reserve(&buf, (size_t)file->size);
	}
	if (ret == 0) {
		ret = bci_ingest_member_read(in, r, path, &s, local);
		if (ret < 0)
			goto out;
	}
	if (ret == 0 && held) {
		s.into[s.into_len] = '\0';
		ret = held_add(in, path, s.into, s.into_len);
	}
	if (ret == 0 && kept)
		ret = kept_add(in, path, &buf);
	if (ret == -ENOMEM) {
		*local = true;
		bci_message(in->err, in->err_size, "%s: %s: %s", in->archive, path, strerror(ENOMEM));
	}
out:
	/* The buffer (unless kept took it) serves the next file. */
	buf.len = 0;
	in->scan_buf = buf;
	return ret;
}

/* Room for @count items in *@array (@cap of @size bytes now): 0, or -ENOMEM and nothing changed. */
static int array_reserve(void *array_ptr, size_t *cap, size_t count, size_t size)
{
	void **array = array_ptr, *grown;

	if (count <= *cap)
		return 0;
	grown = realloc(*array, count * size);
	if (!grown)
		return -ENOMEM;
	*array = grown;
	*cap = count;
	return 0;
}

int bci_ingest_stream_scan(struct ingest *in)
{
	const struct bci_manifest_file *file;
	struct bci_run_archive *r;
	char why[1024];
	bool local = false;
	int ret;

	ret = bci_ingest_archive_open(in, &r, why, sizeof(why));
	if (ret < 0)
		return ret;
	/* The manifest lists every file: room for the held ones at once, not doubled as they come. */
	if (array_reserve(&in->held, &in->held_cap, bci_run_archive_manifest(r)->file_count + 16,
			  sizeof(*in->held)) < 0) {
		bci_message(in->err, in->err_size, "%s: %s", in->archive, strerror(ENOMEM));
		bci_run_archive_close(r);
		return -ENOMEM;
	}
	while ((ret = bci_run_archive_next(r, &file)) == 1) {
		ret = file_scan(in, r, file, &local);
		if (ret < 0)
			break;
	}
	if (ret < 0 && !local)
		bci_message(in->err, in->err_size, "%s: %s", in->archive, why);
	if (ret == 0)
		in->manifest = bci_run_archive_manifest_take(r);
	bci_run_archive_close(r);
	if (ret < 0)
		return ret;
	in->run = (struct bci_results_mem){ in->kept, in->kept_count };
	return 0;
}

int bci_ingest_run_file(struct ingest *in, const char *rel, char **text, size_t *len)
{
	*text = NULL;
	for (size_t i = 0; i < in->run.count; i++) {
		const struct bci_results_mem_file *f = &in->run.files[i];

		if (strcmp(f->path, rel))
			continue;
		*text = malloc(f->len + 1);
		if (!*text)
			return -ENOMEM;
		memcpy(*text, f->data, f->len);
		(*text)[f->len] = '\0';
		if (len)
			*len = f->len;
		return 0;
	}
	return 0;
}

void bci_ingest_stream_free(struct ingest *in)
{
	bci_str_free(&in->scan_buf);
	for (size_t i = 0; i < in->kept_count; i++) {
		free((char *)in->kept[i].path);
		free((char *)in->kept[i].data);
	}
	free(in->kept);
	held_free(in);
}

/* "N/name" with N as the generator writes a job folder (no leading zero): N and name. */
bool bci_ingest_job_member(const char *rel, size_t *index, const char **name)
{
	size_t digits = strspn(rel, "0123456789");

	if (!digits || digits > 9 || rel[digits] != '/' || (rel[0] == '0' && digits > 1) ||
	    strchr(rel + digits + 1, '/'))
		return false;
	*index = 0;
	for (size_t i = 0; i < digits; i++)
		*index = *index * 10 + (size_t)(rel[i] - '0');
	*name = rel + digits + 1;
	return true;
}
