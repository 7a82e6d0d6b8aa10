// SPDX-License-Identifier: MIT
/* serve's seam to the store (ingest_call.h): one store, one caller at a time. */
#include "ingest_call.h"
#include "../ingest.h"
#include "../store/store.h"
#include "message.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bci_ingest_call {
	struct bci_store *store;
	pthread_mutex_t lock;		/* the store is used by one thread at a time */
	char data_dir[PATH_MAX];
};

int bci_ingest_call_open(const char *store_url, const char *data_dir,
			 struct bci_ingest_call **out, char *err, size_t err_size)
{
	struct bci_ingest_call *ingest = calloc(1, sizeof(*ingest));
	int ret;

	if (!ingest)
		return -ENOMEM;
	snprintf(ingest->data_dir, sizeof(ingest->data_dir), "%s", data_dir);
	ret = bci_store_open(store_url, data_dir, &ingest->store, err, err_size);
	if (ret < 0) {
		free(ingest);
		return ret;
	}
	pthread_mutex_init(&ingest->lock, NULL);
	*out = ingest;
	return 0;
}

void bci_ingest_call_free(struct bci_ingest_call *ingest)
{
	if (!ingest)
		return;
	bci_store_close(ingest->store);
	pthread_mutex_destroy(&ingest->lock);
	free(ingest);
}

int bci_ingest_call_run(struct bci_ingest_call *ingest, const struct bci_spool *spool,
			const char *machine, const char *run_id, const char *sha256, char *err,
			size_t err_size)
{
	struct bci_ingest_options options = { .digest = sha256 };
	char archive[PATH_MAX];
	int ret;

	bci_spool_archive_path(spool, sha256, archive);
	pthread_mutex_lock(&ingest->lock);
	ret = bci_ingest_archive(ingest->store, ingest->data_dir, archive, machine, run_id, &options,
				 NULL, err, err_size);
	pthread_mutex_unlock(&ingest->lock);
	if (ret < 0)
		return ret;
	return bci_spool_mark_ingested(spool, machine, run_id, err, err_size);
}

int bci_ingest_call_log_open(struct bci_ingest_call *ingest, const char *machine,
			     const char *run_id, const char *test, const char *stream, char *err,
			     size_t err_size)
{
	int fd;

	pthread_mutex_lock(&ingest->lock);
	fd = bci_store_test_log_open(ingest->store, ingest->data_dir, machine, run_id, test, stream,
				     err, err_size);
	pthread_mutex_unlock(&ingest->lock);
	return fd;
}
