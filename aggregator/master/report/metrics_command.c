// SPDX-License-Identifier: MIT
/*
 * `bootci-aggregator metrics [--from UNIX] [--to UNIX] [--html FILE]`: the
 * metrics of a time window (metrics.c) as JSON on stdout, or as the page
 * serve shows at /metrics written to FILE.
 */
#include "../command.h"
#include "../commands.h"
#include "fsutil.h"
#include "report.h"
#include "../store/store.h"
#include "strv.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct metrics_args {
	struct bci_command_store store;
	const char *from, *to, *html, *now;
	int window;
};

static int metrics_args_parse(int argc, char **argv, struct metrics_args *a)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 't' },
		{ "now", required_argument, NULL, 'n' },
		{ "window", required_argument, NULL, 'w' },
		{ "html", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		if (bci_command_store_option(&a->store, opt, optarg))
			continue;
		switch (opt) {
		case 'F': a->from = optarg; break;
		case 't': a->to = optarg; break;
		case 'n': a->now = optarg; break;
		case 'H': a->html = optarg; break;
		case 'w': {
			char *end;
			long n;

			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || n < 1 || n > 1000) {
				fprintf(stderr, "bootci-aggregator metrics: --window '%s': a number of runs, 1 to 1000\n",
					optarg);
				return 2;
			}
			a->window = (int)n;
			break;
		}
		case 'h':
			printf("usage: bootci-aggregator metrics [--from UNIX] [--to UNIX] [--store URL]"
			       " [--data DIR] [--window N] [--html FILE]\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bootci-aggregator metrics: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return -1;
}

int bci_cmd_metrics(int argc, char **argv)
{
	struct metrics_args a = { .window = 5 };
	char err[PATH_MAX + 1024] = "", filters_path[PATH_MAX];
	struct bci_metrics_options options = { 0 };
	struct bci_filters *filters = NULL;
	struct bci_metrics *m = NULL;
	struct bci_store *store = NULL;
	struct bci_str page = { 0 };
	double now = (double)time(NULL);
	const char *data_dir;
	int ret, status = 1;

	bci_command_store_init(&a.store, "metrics");
	ret = metrics_args_parse(argc, argv, &a);
	if (ret >= 0)
		return ret;
	data_dir = bci_command_data_dir(&a.store);
	if (a.now && bci_metrics_window_parse(a.now, a.now, 0, &now, &now, err, sizeof(err)) < 0) {
		fprintf(stderr, "bootci-aggregator metrics: --now: %s\n", err);
		return 2;
	}
	if (bci_metrics_window_parse(a.from, a.to, now, &options.from, &options.to, err,
				     sizeof(err)) < 0) {
		fprintf(stderr, "bootci-aggregator metrics: %s\n", err);
		return 2;
	}
	options.now = now;
	snprintf(filters_path, sizeof(filters_path), "%s/known-issues.txt", data_dir);
	ret = bci_filters_load(filters_path, &filters, err, sizeof(err));
	if (ret < 0 && ret != -ENOENT) {
		fprintf(stderr, "bootci-aggregator metrics: filters: %s\n", err);
		return 1;
	}
	options.report = (struct bci_report_options){ .data_dir = data_dir, .filters = filters,
						      .window = a.window };
	if (bci_command_store_open(&a.store, &store))
		goto out;
	ret = bci_metrics_compute(store, &options, &m, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator metrics: %s\n", err[0] ? err : strerror(-ret));
		goto out;
	}
	if (!a.html) {
		bci_metrics_json(stdout, m);
		status = fflush(stdout) || ferror(stdout) ? 1 : 0;
		goto out;
	}
	ret = bci_metrics_html(&page, m);
	if (ret >= 0)
		ret = bci_write_file_atomic(a.html, page.data, page.len, 0644);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator metrics: %s: %s\n", a.html, strerror(-ret));
		goto out;
	}
	status = 0;
out:
	bci_str_free(&page);
	bci_metrics_free(m);
	bci_store_close(store);
	bci_filters_free(filters);
	return status;
}
