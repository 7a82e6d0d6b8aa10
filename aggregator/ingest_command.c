// SPDX-License-Identifier: MIT
/*
 * bootci-aggregator ingest [--store URL] [--data DIR] [--machine NAME]
 * [--run-id ID] [--build NAME] DIR|ARCHIVE: one run from disk into the
 * store, through the same code serve uses (ingest.h). Apart from ingest.c
 * because only the program links main.c's usage text.
 */
#include "commands.h"
#include "ingest.h"
#include "store/store.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int bci_cmd_ingest(int argc, char **argv)
{
	static const struct option options[] = {
		{ "store", required_argument, NULL, 's' },
		{ "data", required_argument, NULL, 'd' },
		{ "machine", required_argument, NULL, 'm' },
		{ "run-id", required_argument, NULL, 'r' },
		{ "build", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bci_ingest_options ingest = { .warnings = stderr };
	const char *url = getenv("BOOTCI_STORE"), *data_dir = getenv("BOOTCI_DATA");
	const char *machine = NULL, *run_id = NULL, *source;
	struct bci_ingest_summary summary;
	struct bci_store *store = NULL;
	char err[PATH_MAX + 1024] = "";
	struct stat st;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:m:r:b:h", options, NULL)) != -1) {
		switch (opt) {
		case 's':
			url = optarg;
			break;
		case 'd':
			data_dir = optarg;
			break;
		case 'm':
			machine = optarg;
			break;
		case 'r':
			run_id = optarg;
			break;
		case 'b':
			ingest.build = optarg;
			break;
		default:
			return bci_aggregator_usage_exit(opt);
		}
	}
	if (optind != argc - 1)
		return bci_aggregator_usage_exit('?');
	source = argv[optind];
	if (!data_dir || !*data_dir)
		data_dir = BCI_INGEST_DEFAULT_DATA;
	if (stat(source, &st) < 0) {
		fprintf(stderr, "bootci-aggregator ingest: %s: %s\n", source, strerror(errno));
		return 1;
	}
	ret = bci_store_open(url, data_dir, &store, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator ingest: store: %s\n", err);
		return 1;
	}
	if (S_ISDIR(st.st_mode))
		ret = bci_ingest_dir(store, data_dir, source, machine, run_id, &ingest, &summary, err,
				     sizeof(err));
	else
		ret = bci_ingest_archive(store, data_dir, source, machine, run_id, &ingest, &summary,
					 err, sizeof(err));
	bci_store_close(store);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator ingest: %s: %s\n", source,
			err[0] ? err : strerror(-ret));
		return 1;
	}
	if (ret == BCI_INGEST_ALREADY)
		printf("%s: machine %s, run %s: already stored (sha256 %s), nothing added\n", source,
		       summary.machine, summary.run_id, summary.digest);
	else
		printf("%s: machine %s, run %s: stored %ld results, %ld boots, %ld suspend cycles"
		       " (archive %s)\n", source, summary.machine, summary.run_id, summary.results,
		       summary.boots, summary.suspend_cycles, summary.archive_path);
	return 0;
}
