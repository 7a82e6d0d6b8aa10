// SPDX-License-Identifier: MIT
/*
 * bootci-aggregator ingest [--store URL] [--data DIR] [--machine NAME]
 * [--run-id ID] [--build NAME] [--jobs N|auto] DIR|ARCHIVE...: runs from disk
 * into the store, through the same code serve uses (ingest.h). Several at
 * once as serve's workers ingest uploads: N threads of one process, each
 * with its own store connection, each run its own transaction: the command
 * line over archive.c (what every command shares: command.h).
 */
#include "../command.h"
#include "../commands.h"
#include "ingest.h"
#include "../serve/server.h"
#include "../names.h"
#include "../store/store.h"
#include "message.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* More threads than this only wait for the store's write lock. */
#define INGEST_JOBS_MAX 64

struct ingest_batch {
	struct bci_command_store store;
	const char *data_dir, *machine, *run_id;
	struct bci_ingest_options options;
	char *const *sources;
	size_t count;
	pthread_mutex_t lock;	/* next and failed, and each source's lines */
	size_t next;
	size_t failed;
};

/* One source into @store; what it stored (or why not) on stdout/stderr, its lines together. */
static void ingest_one(struct ingest_batch *b, struct bci_store *store, const char *source)
{
	struct bci_ingest_summary summary;
	char err[PATH_MAX + 1024] = "";
	struct stat st;
	int ret;

	if (stat(source, &st) < 0) {
		ret = -errno;
		snprintf(err, sizeof(err), "%s", strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		ret = bci_ingest_dir(store, b->data_dir, source, b->machine, b->run_id, &b->options,
				     &summary, err, sizeof(err));
	} else {
		ret = bci_ingest_archive(store, b->data_dir, source, b->machine, b->run_id,
					 &b->options, &summary, err, sizeof(err));
	}
	pthread_mutex_lock(&b->lock);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator ingest: %s: %s\n", source,
			err[0] ? err : strerror(-ret));
		b->failed++;
	} else if (ret == BCI_INGEST_ALREADY) {
		printf("%s: machine %s, run %s: already stored (sha256 %s), nothing added\n", source,
		       summary.machine, summary.run_id, summary.digest);
	} else {
		printf("%s: machine %s, run %s: stored %ld results, %ld boots, %ld suspend cycles"
		       " (archive %s)\n", source, summary.machine, summary.run_id, summary.results,
		       summary.boots, summary.suspend_cycles, summary.archive_path);
	}
	fflush(stdout);
	pthread_mutex_unlock(&b->lock);
}

struct ingest_worker {
	struct ingest_batch *batch;
	struct bci_store *store;
	pthread_t thread;
};

/* A worker: the sources nobody took yet, in the order given, into its own store. */
static void *ingest_worker(void *arg)
{
	struct ingest_worker *w = arg;
	struct ingest_batch *b = w->batch;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&b->lock);
		i = b->next < b->count ? b->next++ : b->count;
		pthread_mutex_unlock(&b->lock);
		if (i == b->count)
			break;
		ingest_one(b, w->store, b->sources[i]);
	}
	return NULL;
}

int bci_cmd_ingest(int argc, char **argv)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "machine", required_argument, NULL, 'm' },
		{ "run-id", required_argument, NULL, 'r' },
		{ "build", required_argument, NULL, 'b' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ingest_batch b = {
		.options = { .warnings = stderr },
		.lock = PTHREAD_MUTEX_INITIALIZER,
	};
	struct ingest_worker workers[INGEST_JOBS_MAX];
	unsigned long jobs = 1;
	size_t started = 0, opened = 0;
	char *end;
	int opt, ret;

	bci_command_store_init(&b.store, "ingest");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:m:r:b:j:h", options, NULL)) != -1) {
		if (bci_command_store_option(&b.store, opt, optarg))
			continue;
		switch (opt) {
		case 'm':
			b.machine = optarg;
			break;
		case 'r':
			b.run_id = optarg;
			break;
		case 'b':
			b.options.build = optarg;
			break;
		case 'j':
			/* serve's: the CPUs this process may run on, plus one (at most 16). */
			if (!strcmp(optarg, "auto")) {
				jobs = bci_serve_default_workers();
				break;
			}
			errno = 0;
			jobs = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || jobs < 1 ||
			    jobs > INGEST_JOBS_MAX) {
				fprintf(stderr, "bootci-aggregator ingest: --jobs %s: not a number from 1"
					" to %d, nor auto\n", optarg, INGEST_JOBS_MAX);
				return 2;
			}
			break;
		default:
			return bci_command_usage_exit(opt);
		}
	}
	if (optind >= argc)
		return bci_command_usage_exit('?');
	/* Refused once here, not once per source. */
	if ((b.machine && !bci_name_machine_ok(b.machine)) ||
	    (b.run_id && !bci_name_run_id_ok(b.run_id))) {
		const char *value = b.machine && !bci_name_machine_ok(b.machine) ? b.machine : b.run_id;
		char quoted[300];

		fprintf(stderr, "bootci-aggregator ingest: --%s '%s': not a word ([A-Za-z0-9._-], 1 to"
			" 128 bytes, not . or ..)\n", value == b.machine ? "machine" : "run-id",
			bci_quote(quoted, sizeof(quoted), value, strlen(value)));
		return 2;
	}
	b.sources = argv + optind;
	b.count = (size_t)(argc - optind);
	/* A run id names one run (a machine may have sent them all). */
	if (b.count > 1 && b.run_id) {
		fprintf(stderr, "bootci-aggregator ingest: --run-id names one run; %zu were given\n",
			b.count);
		return 2;
	}
	b.data_dir = bci_command_data_dir(&b.store);
	if (jobs > b.count)
		jobs = b.count;
	/* The stores one after the other (the first may create or migrate the database). */
	for (; opened < jobs; opened++) {
		workers[opened].batch = &b;
		if (bci_command_store_open(&b.store, &workers[opened].store)) {
			for (; opened; opened--)
				bci_store_close(workers[opened - 1].store);
			return 1;
		}
	}
	for (; started + 1 < jobs; started++) {
		ret = pthread_create(&workers[started + 1].thread, NULL, ingest_worker,
				     &workers[started + 1]);
		if (ret) {
			/* Fewer threads than asked still take every source. */
			fprintf(stderr, "bootci-aggregator ingest: a thread: %s\n", strerror(ret));
			break;
		}
	}
	ingest_worker(&workers[0]);
	for (; started; started--)
		pthread_join(workers[started].thread, NULL);
	for (; opened; opened--)
		bci_store_close(workers[opened - 1].store);
	return b.failed ? 1 : 0;
}
