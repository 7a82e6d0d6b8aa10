// SPDX-License-Identifier: MIT
/*
 * Ingest's second role (stream.c is the first, the scan): the results
 * generator over the archive, one job folder at a time in archive order.
 * Each folder's files are handed to the generator's memory source: the ones
 * the scan held (borrowed, nothing copied), or, when the scan could not hold
 * them all, read from the archive again by its reader (a member over
 * JOB_FILE_MEM_MAX spilled to an unnamed temporary file). Each job's out,
 * err and dmesg also go into the run's log file for the result pages.
 */
#include "internal.h"

#include "fsutil.h"
#include "message.h"
#include "resultgen/resultgen.h"
#include "strv.h"

#include "run_archive.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The job folder being gathered: its files in memory (or spilled). */
struct job_folder {
	size_t index;
	bool open;
	bool borrowed;		/* the files are the scan's held ones: nothing to free */
	struct bci_results_mem_file *files;
	size_t count, cap;
};

static void folder_clear(struct job_folder *f)
{
	for (size_t i = 0; i < f->count && !f->borrowed; i++) {
		free((char *)f->files[i].path);
		free((char *)f->files[i].data);
		if (f->files[i].fd >= 0)
			close(f->files[i].fd);
	}
	f->count = 0;
	f->open = false;
}

struct results_walk {
	struct ingest *in;
	struct bci_results_job_reader *reader;
	bci_results_walk_fn *fn;
	void *ctx;
	char name[PATH_MAX * 2];	/* the run folder in messages */
	char tmp_dir[PATH_MAX];
	bool *walked;
	size_t jobs;
	struct job_folder folder;
};

static int folder_walk(struct results_walk *w)
{
	struct bci_results_mem files = { w->folder.files, w->folder.count };
	int ret;

	if (!w->folder.open)
		return 0;
	w->walked[w->folder.index] = true;
	ret = bci_results_job_walk_mem(w->reader, w->folder.index, &files, NULL, w->fn, w->ctx,
				       w->in->err, w->in->err_size);
	/* Its logs into the run's log file, for the result pages. */
	for (size_t i = 0; i < files.count && ret == 0 && w->in->logs; i++) {
		static const char *const logs[] = { "out", "err", "dmesg" };
		const struct bci_results_mem_file *f = &files.files[i];
		const char *name = strchr(f->path, '/'), *which = NULL;

		/* N/out.txt, N/err.txt, N/dmesg.txt. */
		for (size_t k = 0; name && !which && k < sizeof(logs) / sizeof(logs[0]); k++) {
			size_t len = strlen(logs[k]);

			if (!strncmp(name + 1, logs[k], len) && !strcmp(name + 1 + len, ".txt"))
				which = logs[k];
		}
		if (!which)
			continue;
		ret = bci_cache_logs_add(w->in->logs, (unsigned)w->folder.index, which, f->data, f->len,
					 f->fd, w->in->err, w->in->err_size);
	}
	folder_clear(&w->folder);
	return ret;
}

/* A job file too large to hold: an unnamed file in DATA/tmp, gone when closed. */
static int spill_open(struct results_walk *w, const char *path)
{
	int fd, ret;

	if (!w->tmp_dir[0]) {
		snprintf(w->tmp_dir, sizeof(w->tmp_dir), "%s/tmp", w->in->data_dir);
		ret = bci_mkdir_p(w->tmp_dir, 0755);
		if (ret < 0) {
			bci_message(w->in->err, w->in->err_size, "%s: %s", w->tmp_dir, strerror(-ret));
			w->tmp_dir[0] = '\0';
			return ret;
		}
	}
	fd = open(w->tmp_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		bci_message(w->in->err, w->in->err_size, "%s: a temporary file for %s: %s", w->tmp_dir,
			    path, strerror(errno));
		return ret;
	}
	return fd;
}

/* The reader's current file into the open folder: in memory, or spilled when large. */
static int folder_add(struct results_walk *w, struct bci_run_archive *r,
		      const struct bci_manifest_file *file, bool *local)
{
	struct job_folder *f = &w->folder;
	struct bci_results_mem_file *mem;
	struct bci_str buf = { 0 };
	struct ingest_sink s = { .buf = &buf, .limit = (size_t)-1, .fd = -1 };
	int ret = 0;

	if (!bci_ingest_mem_files_slot(&f->files, f->count, &f->cap, 8)) {
		*local = true;
		return -ENOMEM;
	}
	if (file->size > JOB_FILE_MEM_MAX) {
		s.buf = NULL;
		s.fd = spill_open(w, file->path);
		if (s.fd < 0) {
			*local = true;
			return s.fd;
		}
	}
	ret = bci_ingest_member_read(w->in, r, file->path, &s, local);
	mem = &f->files[f->count];
	*mem = (struct bci_results_mem_file){ .path = strdup(file->path), .len = buf.len, .fd = s.fd };
	if (s.buf)
		mem->data = bci_str_steal(&buf);
	if (ret == 0 && (!mem->path || (s.buf && !mem->data))) {
		*local = true;
		ret = -ENOMEM;
	}
	f->count++;	/* folder_clear() frees it, whole or not */
	bci_str_free(&buf);
	return ret;
}

/*
 * Where the file @path of the run goes: 1 when it is a job folder's file the
 * generator reads, the folder it belongs to now open (the one before
 * walked); 0 when it is not.
 */
static int results_place(struct results_walk *w, const char *path)
{
	size_t index;
	const char *name;
	int ret;

	if (!bci_ingest_job_member(path, &index, &name) || index >= w->jobs)
		return 0;	/* not a job's file the generator reads */
	if (!w->folder.open || w->folder.index != index) {
		ret = folder_walk(w);
		if (ret < 0)
			return ret;
		if (w->walked[index]) {
			bci_message(w->in->err, w->in->err_size,
				    "%s: %s: job folder %zu's files do not follow each other in the"
				    " archive (read one folder at a time)", w->in->archive, path, index);
			return -EINVAL;
		}
		w->folder.open = true;
		w->folder.index = index;
	}
	return 1;
}

/* A file the scan held: its bytes handed over to the open folder. */
static int results_held(struct results_walk *w, struct bci_results_mem_file *h)
{
	struct job_folder *f = &w->folder;
	int ret = results_place(w, h->path);

	if (ret <= 0)
		return ret;
	if (!bci_ingest_mem_files_slot(&f->files, f->count, &f->cap, 8))
		return -ENOMEM;
	/* Borrowed: the held arena outlives the walk. */
	f->files[f->count++] = (struct bci_results_mem_file){
		.path = h->path, .data = h->data, .len = h->len, .fd = -1,
	};
	return 0;
}

int bci_ingest_results_stream(struct ingest *in, const struct bci_resultgen_options *options,
			      bci_results_walk_fn *fn, void *ctx)
{
	struct results_walk *w = calloc(1, sizeof(*w));
	struct bci_run_archive *r = NULL;
	int ret;

	if (!w)
		return -ENOMEM;
	*w = (struct results_walk){ .in = in, .fn = fn, .ctx = ctx };
	snprintf(w->name, sizeof(w->name), "%s", in->archive);
	ret = bci_results_job_reader_new_mem(w->name, &in->run, options, &w->reader, in->err,
					     in->err_size);
	if (ret < 0)
		goto out;
	ret = fn(BCI_RESULTS_RUN_BEGIN, bci_results_job_reader_run(w->reader), NULL, ctx);
	if (ret < 0)
		goto out;
	w->jobs = bci_results_job_reader_count(w->reader);
	w->walked = calloc(w->jobs ? w->jobs : 1, sizeof(*w->walked));
	if (!w->walked) {
		ret = -ENOMEM;
		goto out;
	}
	if (!in->held_off) {
		/* The scan held every job file: walked from memory, in the archive's order. */
		w->folder.borrowed = true;
		for (size_t i = 0; i < in->held_count; i++) {
			ret = results_held(w, &in->held[i]);
			if (ret < 0)
				goto out;
		}
	} else {
		/* The second reading: the archive again, checked again, one job folder at a time. */
		const struct bci_manifest_file *file;
		char why[1024];
		bool local = false;

		ret = bci_ingest_archive_open(in, &r, why, sizeof(why));
		while (ret == 0 && (ret = bci_run_archive_next(r, &file)) == 1) {
			ret = results_place(w, file->path);
			if (ret < 0)
				local = true;	/* its message said */
			else if (ret == 1)
				ret = folder_add(w, r, file, &local);
		}
		if (ret < 0 && r && !local)
			bci_message(in->err, in->err_size, "%s: %s", in->archive, why);
		else if (ret < 0 && !in->err[0])
			bci_message(in->err, in->err_size, "%s: %s", in->archive, strerror(-ret));
		if (ret < 0)
			goto out;
	}
	ret = folder_walk(w);
	/* A job without its folder: the generator says "notrun", as for a folder on disk. */
	for (size_t j = 0; j < w->jobs && ret == 0; j++)
		if (!w->walked[j])
			ret = bci_results_job_walk_mem(w->reader, j, NULL, NULL, fn, ctx, in->err,
						       in->err_size);
	if (ret == 0)
		ret = bci_results_aborted_walk_mem(w->reader, &in->run, fn, ctx, in->err, in->err_size);
out:
	folder_clear(&w->folder);
	free(w->folder.files);
	bci_run_archive_close(r);
	bci_results_job_reader_free(w->reader);
	free(w->walked);
	free(w);
	return ret;
}
