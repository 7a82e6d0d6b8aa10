// SPDX-License-Identifier: MIT
/*
 * bootci-aggregator patchwork: the Patchwork projects of DATA/patchwork.conf
 * by hand (serve polls them by itself):
 *
 *   patchwork poll [--project NAME]        one poll of each project (or NAME)
 *   patchwork check SERIES CONTEXT STATE [--description TEXT] [--url URL]
 *                  [--project NAME]         a check on every patch of SERIES
 *   patchwork series [--project NAME]      the series settled, with their checks
 *
 * What happens is said on stderr, one line each ("patchwork NAME: ...");
 * series prints on stdout.
 */
#include "../command.h"
#include "../commands.h"
#include "../store/store.h"
#include "patchwork.h"

#include "message.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_print(const struct bci_store_pw_check *check, void *ctx)
{
	(void)ctx;
	printf("  patch %lld %s %s: %s%s%s\n", (long long)check->patch, check->context, check->state,
	       check->status, check->note ? ": " : "", check->note ? check->note : "");
	return 0;
}

struct series_print_ctx {
	struct bci_store *store;
	const char *project;
};

static int series_print(const struct bci_store_pw_series *s, void *ctx)
{
	struct series_print_ctx *p = ctx;
	char err[512];

	printf("%s %lld v%d %s%s%s%s%s '%s' %s\n", s->project, (long long)s->series, s->version,
	       s->state, s->build ? " build " : "", s->build ? s->build : "",
	       s->note ? ": " : "", s->note ? s->note : "", s->name ? s->name : "",
	       s->message_id ? s->message_id : "-");
	if (bci_store_pw_checks_series(p->store, p->project, s->series, check_print, NULL, err,
				       sizeof(err)) < 0)
		fprintf(stderr, "bootci-aggregator patchwork: %s\n", err);
	return 0;
}

static int parse_series(const char *text, int64_t *series)
{
	char *end;
	long long value;

	errno = 0;
	value = strtoll(text, &end, 10);
	if (errno || end == text || *end || value <= 0)
		return -EINVAL;
	*series = value;
	return 0;
}

int bci_cmd_patchwork(int argc, char **argv)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "project", required_argument, NULL, 'p' },
		{ "description", required_argument, NULL, 'D' },
		{ "url", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bci_patchwork_config *config = NULL;
	struct bci_command_store cs;
	struct bci_store *store = NULL;
	const char *verb, *only = NULL, *description = NULL, *url = NULL, *data_dir;
	char err[PATH_MAX + 2048] = "", path[PATH_MAX];
	int64_t series = 0;
	int opt, operands, ret, status = 0;

	bci_command_store_init(&cs, "patchwork");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:h", options, NULL)) != -1) {
		if (bci_command_store_option(&cs, opt, optarg))
			continue;
		if (opt == 'p')
			only = optarg;
		else if (opt == 'D')
			description = optarg;
		else if (opt == 'u')
			url = optarg;
		else
			return bci_command_usage_exit(opt);
	}
	operands = argc - optind;
	verb = operands ? argv[optind] : "";
	if (!((!strcmp(verb, "poll") && operands == 1) ||
	      (!strcmp(verb, "series") && operands == 1) ||
	      (!strcmp(verb, "check") && operands == 4))) {
		bool known = !strcmp(verb, "poll") || !strcmp(verb, "series") || !strcmp(verb, "check");

		fprintf(stderr, "bootci-aggregator patchwork: '%.64s'%s: expected poll, series, or"
			" check SERIES CONTEXT STATE\n", verb,
			known ? " with a wrong number of operands" : "");
		return bci_command_usage_exit('?');
	}
	if ((description || url) && strcmp(verb, "check")) {
		fprintf(stderr, "bootci-aggregator patchwork: --description and --url go with check\n");
		return bci_command_usage_exit('?');
	}
	if (!strcmp(verb, "check") && parse_series(argv[optind + 1], &series) < 0) {
		fprintf(stderr, "bootci-aggregator patchwork: series '%.64s': expected a series id"
			" (a positive number)\n", argv[optind + 1]);
		return 2;
	}
	data_dir = bci_command_data_dir(&cs);
	snprintf(path, sizeof(path), "%s/%s", data_dir, BCI_PATCHWORK_CONFIG_FILE);
	ret = bci_patchwork_config_load(path, &config, err, sizeof(err));
	if (ret == -ENOENT) {
		fprintf(stderr, "bootci-aggregator patchwork: no %s: no Patchwork project is"
			" followed (bootci-patchwork.conf(5))\n", path);
		return 1;
	}
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator patchwork: %s\n", err);
		return 1;
	}
	if (only && !bci_patchwork_config_project(config, only)) {
		fprintf(stderr, "bootci-aggregator patchwork: %s has no [project %s]\n", path, only);
		bci_patchwork_config_free(config);
		return 1;
	}
	if (bci_command_store_open(&cs, &store)) {
		bci_patchwork_config_free(config);
		return 1;
	}
	for (size_t i = 0; i < config->project_count; i++) {
		const struct bci_patchwork_project *project = &config->projects[i];
		struct bci_patchwork pw;
		struct bci_patchwork_poll_counts counts;

		if (only && strcmp(only, project->name))
			continue;
		if (!strcmp(verb, "series")) {
			struct series_print_ctx p = { store, project->name };

			if ((ret = bci_store_pw_series_each(store, project->name, NULL, NULL,
							    series_print, &p, err,
							    sizeof(err))) < 0) {
				fprintf(stderr, "bootci-aggregator patchwork: %s\n", err);
				status = 1;
			}
			continue;
		}
		if (!strcmp(verb, "check") && !only && config->project_count > 1) {
			fprintf(stderr, "bootci-aggregator patchwork: check: %s follows several"
				" projects: say which with --project\n", path);
			status = 2;
			break;
		}
		if (bci_patchwork_open(&pw, project, store, data_dir, stderr, err, sizeof(err)) < 0) {
			fprintf(stderr, "bootci-aggregator patchwork: %s\n", err);
			status = 1;
			continue;
		}
		if (!strcmp(verb, "poll")) {
			ret = bci_patchwork_poll(&pw, &counts, err, sizeof(err));
			if (ret < 0)
				status = 1;
			else
				bci_patchwork_say(&pw,
						  "polled: %u new, %u picked up, %u waiting,"
						  " %u superseded, %u skipped; %u built, %u failed"
						  " to build; %u check(s) posted, %u waiting",
						  counts.seen, counts.picked, counts.waiting,
						  counts.superseded, counts.skipped, counts.built,
						  counts.build_failed, counts.checks_posted,
						  counts.checks_waiting);
		} else {
			ret = bci_patchwork_check(&pw, series, argv[optind + 2], argv[optind + 3],
						  description, url, err, sizeof(err));
			if (ret < 0) {
				fprintf(stderr, "bootci-aggregator patchwork: check: %s\n", err);
				status = ret == -EINVAL ? 2 : 1;
			}
		}
		bci_patchwork_close(&pw);
	}
	bci_store_close(store);
	bci_patchwork_config_free(config);
	return status;
}
