// SPDX-License-Identifier: MIT
/* serve's seam to the store (ingest_call.h): one store, one caller at a time. */
#include "ingest_call.h"
#include "../ingest/ingest.h"
#include "../schedule/schedule.h"
#include "../store/store.h"
#include "message.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bci_ingest_call {
	/* One store per concurrent caller: a store is one connection, used by one thread at a time. */
	struct bci_store **stores;
	bool *taken;
	size_t count;
	pthread_mutex_t lock;
	pthread_cond_t freed;
	char data_dir[PATH_MAX];
	unsigned long generation;	/* runs ingested (under lock) */
};

int bci_ingest_call_open(const char *store_url, const char *data_dir, unsigned count,
			 struct bci_ingest_call **out, char *err, size_t err_size)
{
	struct bci_ingest_call *ingest = calloc(1, sizeof(*ingest));
	int ret = 0;

	if (!ingest)
		return -ENOMEM;
	snprintf(ingest->data_dir, sizeof(ingest->data_dir), "%s", data_dir);
	pthread_mutex_init(&ingest->lock, NULL);
	pthread_cond_init(&ingest->freed, NULL);
	count = count ? count : 1;
	ingest->stores = calloc(count, sizeof(*ingest->stores));
	ingest->taken = calloc(count, sizeof(*ingest->taken));
	if (!ingest->stores || !ingest->taken) {
		bci_ingest_call_free(ingest);
		return -ENOMEM;
	}
	for (; ingest->count < count; ingest->count++) {
		ret = bci_store_open(store_url, data_dir, &ingest->stores[ingest->count], err, err_size);
		if (ret < 0) {
			bci_ingest_call_free(ingest);
			return ret;
		}
	}
	*out = ingest;
	return 0;
}

void bci_ingest_call_free(struct bci_ingest_call *ingest)
{
	if (!ingest)
		return;
	for (size_t i = 0; i < ingest->count; i++)
		bci_store_close(ingest->stores[i]);
	free(ingest->stores);
	free(ingest->taken);
	pthread_cond_destroy(&ingest->freed);
	pthread_mutex_destroy(&ingest->lock);
	free(ingest);
}

/* A store no other thread uses until store_put(); waits for one when all are busy. */
static size_t store_take(struct bci_ingest_call *ingest)
{
	size_t i;

	pthread_mutex_lock(&ingest->lock);
	for (;;) {
		for (i = 0; i < ingest->count && ingest->taken[i]; i++)
			;
		if (i < ingest->count)
			break;
		pthread_cond_wait(&ingest->freed, &ingest->lock);
	}
	ingest->taken[i] = true;
	pthread_mutex_unlock(&ingest->lock);
	return i;
}

static void store_put(struct bci_ingest_call *ingest, size_t i)
{
	pthread_mutex_lock(&ingest->lock);
	ingest->taken[i] = false;
	pthread_cond_signal(&ingest->freed);
	pthread_mutex_unlock(&ingest->lock);
}

int bci_ingest_call_run(struct bci_ingest_call *ingest, const struct bci_spool *spool,
			const char *machine, const char *run_id, const char *sha256, char *err,
			size_t err_size)
{
	struct bci_ingest_options options = { .digest = sha256 };
	char archive[PATH_MAX], build[BCI_MANIFEST_WORD_MAX + 1];
	int ret;

	size_t i;

	bci_spool_archive_path(spool, sha256, archive);
	i = store_take(ingest);
	/* A run the scheduler handed out is filed under its job's build. */
	if (bci_schedule_run_build(ingest->stores[i], machine, run_id, build, sizeof(build), err,
				   err_size) == 1)
		options.build = build;
	ret = bci_ingest_archive(ingest->stores[i], ingest->data_dir, archive, machine, run_id,
				 &options, NULL, err, err_size);
	/* Its job is done; a full tier's run makes the build's tier full (the reply's subject). */
	if (ret >= 0 && options.build)
		ret = bci_schedule_run_ingested(ingest->stores[i], machine, run_id, err, err_size);
	if (ret >= 0) {
		pthread_mutex_lock(&ingest->lock);
		ingest->generation++;
		pthread_mutex_unlock(&ingest->lock);
	}
	store_put(ingest, i);
	if (ret < 0)
		return ret;
	return bci_spool_mark_ingested(spool, machine, run_id, err, err_size);
}

int bci_ingest_call_log_open(struct bci_ingest_call *ingest, const char *machine,
			     const char *run_id, const char *test, const char *stream, char *err,
			     size_t err_size)
{
	size_t i = store_take(ingest);
	int fd;

	fd = bci_store_test_log_open(ingest->stores[i], ingest->data_dir, machine, run_id, test,
				     stream, err, err_size);
	store_put(ingest, i);
	return fd;
}

int bci_ingest_call_with_store(struct bci_ingest_call *ingest,
			       int (*fn)(struct bci_store *store, const char *data_dir, void *ctx),
			       void *ctx)
{
	size_t i = store_take(ingest);
	int ret = fn(ingest->stores[i], ingest->data_dir, ctx);

	store_put(ingest, i);
	return ret;
}

unsigned long bci_ingest_call_generation(struct bci_ingest_call *ingest)
{
	unsigned long generation;

	pthread_mutex_lock(&ingest->lock);
	generation = ingest->generation;
	pthread_mutex_unlock(&ingest->lock);
	return generation;
}
