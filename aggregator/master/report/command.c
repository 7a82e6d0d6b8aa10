// SPDX-License-Identifier: MIT
/*
 * report --build NAME [--mbox FILE|-] [--send --to ADDR] [--html DIR] ...:
 * a build's report (regress.c) as a reply to its series (mbox.c), mailed
 * through `sendmail -t` (the message alone: an mbox's From_ line is no
 * header), and as static pages (html_write.c).
 */
#include "../command.h"
#include "../commands.h"
#include "fsutil.h"
#include "report.h"
#include "../store/store.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Pipes the message in @path to `sendmail -t` (found in PATH), which takes the recipients from its headers. */
static int mail_send(const char *path)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		if (!freopen(path, "r", stdin))
			_exit(126);
		execlp("sendmail", "sendmail", "-t", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return -ENOENT;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

struct report_args {
	struct bci_command_store store;
	const char *build, *filters, *mbox, *from, *to, *matrix_url, *html;
	const char *results_url;
	int window, fold_after, send;
	time_t date;
};

static int number_parse(const char *s, long min, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return end == s || *end || errno || *out < min ? -EINVAL : 0;
}

static int report_args_parse(int argc, char **argv, struct report_args *a)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "build", required_argument, NULL, 'b' },
		{ "filters", required_argument, NULL, 'f' },
		{ "window", required_argument, NULL, 'w' },
		{ "mbox", required_argument, NULL, 'o' },
		{ "send", no_argument, NULL, 'S' },
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 't' },
		{ "url", required_argument, NULL, 'u' },
		{ "fold", required_argument, NULL, 'n' },
		{ "date", required_argument, NULL, 'D' },
		{ "html", required_argument, NULL, 'H' },
		{ "results-url", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long n;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:b:f:w:o:SF:t:u:n:D:H:R:h", options, NULL)) != -1) {
		if (bci_command_store_option(&a->store, opt, optarg))
			continue;
		switch (opt) {
		case 'b': a->build = optarg; break;
		case 'f': a->filters = optarg; break;
		case 'o': a->mbox = optarg; break;
		case 'S': a->send = 1; break;
		case 'F': a->from = optarg; break;
		case 't': a->to = optarg; break;
		case 'u': a->matrix_url = optarg; break;
		case 'H': a->html = optarg; break;
		case 'R': a->results_url = optarg; break;
		case 'w':
		case 'n':
		case 'D':
			if (number_parse(optarg, opt == 'D' ? 0 : 1, &n) < 0 || n > INT_MAX) {
				fprintf(stderr, "bootci-aggregator report: '%s': not a number%s\n", optarg,
					opt == 'D' ? "" : " of at least 1");
				return 2;
			}
			if (opt == 'w')
				a->window = (int)n;
			else if (opt == 'n')
				a->fold_after = (int)n;
			else
				a->date = (time_t)n;
			break;
		default:
			return bci_command_usage_exit(opt);
		}
	}
	if (optind != argc || !a->build)
		return bci_command_usage_exit('?');
	if (a->send && !a->to) {
		fprintf(stderr, "bootci-aggregator report: --send needs --to (sendmail -t reads the recipients from the headers)\n");
		return 2;
	}
	return -1;
}

struct mbox_job {
	const struct bci_report *report;
	const struct bci_mbox_options *mbox;
};

static int mbox_stream(FILE *out, const void *ctx, char *err, size_t err_size)
{
	const struct mbox_job *job = ctx;

	return bci_mbox_write(out, job->report, job->mbox, err, err_size);
}

/* Writes the reply to @path (replaced atomically) or standard output ("-"). */
static int mbox_save(const char *path, const struct bci_report *report,
		     const struct bci_mbox_options *mbox, char *err, size_t err_size)
{
	struct mbox_job job = { .report = report, .mbox = mbox };

	if (!strcmp(path, "-"))
		return bci_mbox_write(stdout, report, mbox, err, err_size);
	return bci_atomic_write_stream(path, 0644, mbox_stream, &job, err, err_size);
}

int bci_cmd_report(int argc, char **argv)
{
	struct report_args a = { .window = 5, .fold_after = BCI_MBOX_FOLD_AFTER, .date = time(NULL) };
	char err[PATH_MAX + 1024] = "", filters_path[PATH_MAX], send_path[PATH_MAX] = "";
	struct bci_filters *filters = NULL;
	struct bci_report *report = NULL;
	struct bci_store *store = NULL;
	struct bci_matrix_view view = { 0 };
	const char *data_dir;
	int ret, status = 1;

	bci_command_store_init(&a.store, "report");
	ret = report_args_parse(argc, argv, &a);
	if (ret >= 0)
		return ret;
	data_dir = bci_command_data_dir(&a.store);
	/* The data folder's filter file is optional; one named on the command line is not. */
	snprintf(filters_path, sizeof(filters_path), "%s", a.filters ? a.filters : "");
	if (!a.filters)
		snprintf(filters_path, sizeof(filters_path), "%s/known-issues.txt", data_dir);
	ret = bci_filters_load(filters_path, &filters, err, sizeof(err));
	if (ret < 0 && !(ret == -ENOENT && !a.filters)) {
		fprintf(stderr, "bootci-aggregator report: filters: %s\n", err);
		return 1;
	}
	if (bci_command_store_open(&a.store, &store))
		goto out;
	struct bci_report_options options = { .data_dir = data_dir, .filters = filters,
					      .window = a.window, .threads = 2,
					      .store_url = a.store.url };
	/* With --html the matrix takes each machine's results from the report's reading of them. */
	if (a.html)
		ret = bci_matrix_report(store, a.build, &options, &report, &view, err,
					sizeof(err));
	else
		ret = bci_report_build(store, a.build, &options, &report, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator report: %s\n", err[0] ? err : strerror(-ret));
		goto out;
	}
	struct bci_mbox_options mbox = { .from = a.from, .to = a.to, .matrix_url = a.matrix_url,
					 .date = a.date, .fold_after = a.fold_after };
	if (a.send) {
		const char *tmpdir = getenv("TMPDIR");

		snprintf(send_path, sizeof(send_path), "%s/reply-XXXXXX",
			 tmpdir && *tmpdir ? tmpdir : P_tmpdir);
		int fd = mkstemp(send_path);

		if (fd < 0) {
			fprintf(stderr, "bootci-aggregator report: %s: %s\n", send_path, strerror(errno));
			send_path[0] = '\0';
			goto out;
		}
		close(fd);
	}
	if (a.html) {
		ret = bci_html_write_view(data_dir, report, &view, a.html, a.results_url, err,
					  sizeof(err));
		if (ret < 0) {
			fprintf(stderr, "bootci-aggregator report: html: %s\n",
				err[0] ? err : strerror(-ret));
			goto out;
		}
	}
	if (a.mbox) {
		ret = mbox_save(a.mbox, report, &mbox, err, sizeof(err));
		if (ret < 0) {
			fprintf(stderr, "bootci-aggregator report: %s\n", err[0] ? err : strerror(-ret));
			goto out;
		}
	}
	if (a.send) {
		/* What a mail transfer agent takes: the message, without the mbox's framing. */
		mbox.bare = true;
		ret = mbox_save(send_path, report, &mbox, err, sizeof(err));
		if (ret < 0) {
			fprintf(stderr, "bootci-aggregator report: %s\n", err[0] ? err : strerror(-ret));
			goto out;
		}
		ret = mail_send(send_path);
		if (ret < 0) {
			fprintf(stderr, "bootci-aggregator report: sendmail -t: %s\n",
				ret == -ENOENT ? "not found in PATH" : "failed");
			goto out;
		}
	}
	printf("build %s: %s: %ld possible new issues, %ld known, %ld flaky, %ld fixed,"
	       " %ld warnings; %ld results on %d machines\n", report->build,
	       bci_report_failed(report) ? "FAILURE" : "SUCCESS", report->counts[BCI_VERDICT_NEW],
	       report->counts[BCI_VERDICT_KNOWN], report->counts[BCI_VERDICT_FLAKY],
	       report->counts[BCI_VERDICT_FIXED], report->counts[BCI_VERDICT_WARNING],
	       report->results, report->machines);
	status = 0;
out:
	bci_matrix_release(&view);
	if (send_path[0])
		unlink(send_path);
	bci_report_free(report);
	bci_filters_free(filters);
	bci_store_close(store);
	return status;
}
