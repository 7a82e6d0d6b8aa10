// SPDX-License-Identifier: MIT
/*
 * A build's static pages (report.h): DIR/BUILD/index.html, the matrix
 * (matrix_html.c), and one page per result, DIR/BUILD/MACHINE/N.html (N:
 * the test's row), with its out/err/dmesg; unless the cells link to serve's
 * result pages instead (a results URL: 400k results a day are 400k files,
 * whose writing alone costs more than the whole report, while serve renders
 * one on request). Every file is written to a temporary and renamed.
 */
#include "matrix.h"
#include "../names.h"
#include "../store/store.h"
#include "fsutil.h"
#include "strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * A result page: written under a temporary name and renamed, so it is never
 * seen half-written, but not fsynced one by one (a build has a page per
 * result, 400k a day, and a page's fsync costs more than writing it):
 * bci_html_write() syncs them all at once before the matrix that links them
 * replaces the old one.
 */
static int result_page_write(const char *path, struct bci_str *b, char *err, size_t err_size)
{
	char tmp[PATH_MAX];
	int fd, ret;

	if (!b->data)
		return -ENOMEM;
	fd = bci_atomic_open(path, tmp, 0644);
	ret = fd < 0 ? fd : bci_write_all(fd, b->data, b->len);
	if (fd >= 0 && ret < 0) {
		bci_atomic_abort(fd, tmp);
	} else if (fd >= 0 && (close(fd) < 0 || rename(tmp, path) < 0)) {
		ret = -errno;
		unlink(tmp);
	}
	if (ret < 0)
		snprintf(err, err_size, "%s: %s", path, strerror(-ret));
	return ret;
}

/* One syncfs for every result page of @dir (see result_page_write()). */
static int pages_sync(const char *dir, char *err, size_t err_size)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;

	if (fd < 0 || syncfs(fd) < 0)
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (ret < 0)
		snprintf(err, err_size, "%s: %s", dir, strerror(-ret));
	return ret;
}

static int result_page(const char *data_dir, const struct bci_report *r,
		       const struct bci_matrix *m, size_t t, size_t j, const char *path, char *err,
		       size_t err_size)
{
	const struct bci_matrix_cell *c = &m->cells[t * m->n_machines + j];
	const struct bci_matrix_run *mr = &m->runs[c->run];
	/* What the store gave when the matrix was read: no query per page. */
	const struct bci_store_run run = {
		.machine = mr->machine, .run_id = mr->run_id, .digest = mr->digest,
		.archive_path = mr->archive_path, .archive_root = mr->archive_root,
	};
	const struct bci_store_result result = { .job = c->job, .name = m->tests[t] };
	struct bci_str b = { 0 };
	int ret;

	bci_str_appendf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
	bci_html_escape_str(&b, m->tests[t]);
	bci_str_appendf(&b, "</title>\n%s</head><body>\n<p><a href=\"../index.html\">matrix</a></p>\n<h1>", bci_html_style);
	bci_html_escape_str(&b, m->tests[t]);
	bci_str_appendf(&b, "</h1>\n<p>machine ");
	bci_html_escape_str(&b, m->machines[j]);
	bci_str_appendf(&b, ", run ");
	bci_html_escape_str(&b, m->runs[c->run].run_id);
	bci_str_appendf(&b, ": <span class=\"%s\">%s</span>", bci_status_name(c->status),
			   bci_status_label(c->status));
	if (c->change >= 0) {
		const struct bci_report_change *ch = &r->changes[c->change];

		bci_str_appendf(&b, " (baseline %s: %s", bci_status_label(ch->from),
				   bci_verdict_name(ch->verdict));
		if (ch->bug) {
			bci_str_appendf(&b, ", <a href=\"");
			bci_html_escape_str(&b, ch->bug);
			bci_str_appendf(&b, "\">");
			bci_html_escape_str(&b, ch->bug);
			bci_str_appendf(&b, "</a>");
		}
		bci_str_appendf(&b, ")");
	}
	bci_str_appendf(&b, "</p>\n");
	for (size_t i = 0; i < 3; i++) {
		static const char *const logs[] = { "out", "err", "dmesg" };
		char why[512] = "";
		int fd = bci_store_job_log_open(data_dir, &run, &result, logs[i], why, sizeof(why));

		bci_html_file_section(&b, logs[i], fd, why);
	}
	bci_str_appendf(&b, "</body></html>\n");
	ret = result_page_write(path, &b, err, err_size);
	bci_str_free(&b);
	return ret;
}

struct matrix_job {
	const struct bci_report *report;
	struct bci_matrix_view *view;
};

static int matrix_stream(FILE *out, const void *ctx, char *err, size_t err_size)
{
	const struct matrix_job *job = ctx;
	struct bci_str b = { 0 };
	int ret;

	job->view->stream = out;
	ret = bci_html_matrix(job->report, job->view, BCI_HTML_STATIC, &b);
	job->view->stream = NULL;
	bci_str_free(&b);
	if (ret < 0)
		snprintf(err, err_size, "the matrix: %s", strerror(-ret));
	return ret;
}

int bci_html_write(struct bci_store *store, const char *data_dir, const struct bci_report *r,
		   const char *dir, const char *results_url, char *err, size_t err_size)
{
	struct bci_matrix_view view = { 0 };
	int ret = bci_matrix_read(store, r, &view, err, err_size);

	if (ret < 0) {
		bci_matrix_release(&view);
		return ret;
	}
	return bci_html_write_view(data_dir, r, &view, dir, results_url, err, err_size);
}

int bci_html_write_view(const char *data_dir, const struct bci_report *r,
			struct bci_matrix_view *loaded, const char *dir,
			const char *results_url, char *err, size_t err_size)
{
	struct bci_matrix_view view = *loaded;
	struct bci_matrix *m = view.matrix;
	char build_dir[PATH_MAX], path[2 * PATH_MAX], name[256];
	int ret;

	loaded->matrix = NULL;
	view.results_url = results_url;
	bci_name_folder(r->build, name, sizeof(name));
	snprintf(build_dir, sizeof(build_dir), "%s/%s", dir, name);
	ret = bci_mkdir_p(build_dir, 0755);
	for (size_t j = 0; j < m->n_machines && ret >= 0 && !results_url; j++) {
		char machine[256];

		bci_name_folder(m->machines[j], machine, sizeof(machine));
		snprintf(path, sizeof(path), "%s/%s", build_dir, machine);
		ret = bci_mkdir_p(path, 0755);
	}
	if (ret < 0) {
		snprintf(err, err_size, "%s: %s", build_dir, strerror(-ret));
		goto out;
	}
	for (size_t t = 0; t < m->n_tests && ret >= 0 && !results_url; t++)
		for (size_t j = 0; j < m->n_machines && ret >= 0; j++) {
			char machine[256];

			if (m->cells[t * m->n_machines + j].status < 0)
				continue;
			bci_name_folder(m->machines[j], machine, sizeof(machine));
			snprintf(path, sizeof(path), "%s/%s/%zu.html", build_dir, machine, t);
			ret = result_page(data_dir, r, m, t, j, path, err, err_size);
		}
	if (ret >= 0 && !results_url)
		ret = pages_sync(build_dir, err, err_size);
	if (ret >= 0) {
		struct matrix_job job = { .report = r, .view = &view };

		snprintf(path, sizeof(path), "%s/index.html", build_dir);
		ret = bci_atomic_write_stream(path, 0644, matrix_stream, &job, err, err_size);
	}
out:
	bci_matrix_release(&view);
	return ret;
}
