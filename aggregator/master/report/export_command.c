// SPDX-License-Identifier: MIT
/*
 * export kcidb --build NAME [--origin NAME] [--url BASE] [-o OUT]
 * export junit --machine NAME --run-id ID [--url BASE] [-o OUT]
 *
 * A build as KCIDB I/O JSON, a run as JUnit XML (export.c), to standard
 * output or to OUT, replaced atomically; with --url each result links to
 * its page on serve at BASE.
 */
#include "../command.h"
#include "../commands.h"
#include "fsutil.h"
#include "report.h"
#include "../store/store.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

struct export_args {
	struct bci_store *store;
	const char *kind, *build, *origin, *machine, *run_id;
	const char *url;		/* serve's address: each result's page */
	const char *data_dir;		/* junit: the logs its failures carry */
};

static int export_write(FILE *out, const struct export_args *a, char *err, size_t err_size)
{
	if (!strcmp(a->kind, "kcidb"))
		return bci_export_kcidb(a->store, a->build, a->origin, a->url, out, err, err_size);
	return bci_export_junit(a->store, a->data_dir, a->machine, a->run_id, a->url, out, err,
				err_size);
}

static int export_stream(FILE *out, const void *ctx, char *err, size_t err_size)
{
	return export_write(out, ctx, err, err_size);
}

/* To @path (replaced atomically) or standard output ("-" or NULL). */
static int export_save(const char *path, const struct export_args *a, char *err, size_t err_size)
{
	if (!path || !strcmp(path, "-"))
		return export_write(stdout, a, err, err_size);
	return bci_atomic_write_stream(path, 0644, export_stream, a, err, err_size);
}

int bci_cmd_export(int argc, char **argv)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "build", required_argument, NULL, 'b' },
		{ "origin", required_argument, NULL, 'O' },
		{ "machine", required_argument, NULL, 'm' },
		{ "run-id", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "url", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct export_args a = { .origin = "bootci" };
	char err[PATH_MAX + 1024] = "";
	struct bci_command_store cs;
	const char *output = NULL;
	int opt, ret;

	bci_command_store_init(&cs, "export");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:b:O:m:r:o:u:h", options, NULL)) != -1) {
		if (bci_command_store_option(&cs, opt, optarg))
			continue;
		switch (opt) {
		case 'b': a.build = optarg; break;
		case 'O': a.origin = optarg; break;
		case 'm': a.machine = optarg; break;
		case 'r': a.run_id = optarg; break;
		case 'o': output = optarg; break;
		case 'u': a.url = optarg; break;
		default:
			return bci_command_usage_exit(opt);
		}
	}
	if (optind != argc - 1)
		return bci_command_usage_exit('?');
	a.kind = argv[optind];
	if (!(!strcmp(a.kind, "kcidb") && a.build) &&
	    !(!strcmp(a.kind, "junit") && a.machine && a.run_id)) {
		fprintf(stderr, "bootci-aggregator export: 'kcidb --build NAME' or 'junit --machine NAME --run-id ID'\n");
		return 2;
	}
	if (bci_command_store_open(&cs, &a.store))
		return 1;
	a.data_dir = bci_command_data_dir(&cs);
	ret = export_save(output, &a, err, sizeof(err));
	bci_store_close(a.store);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator export: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	return 0;
}
