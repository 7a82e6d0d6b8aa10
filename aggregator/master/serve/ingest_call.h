/* SPDX-License-Identifier: MIT */
/*
 * The one place serve meets the store: an accepted run goes in with one call,
 * and a test's log comes out with another. The store is used by one thread at
 * a time (store.h), so calls are serialised here; uploads are received and
 * validated in parallel, only their ingest waits its turn.
 */
#ifndef BCI_SERVE_INGEST_CALL_H
#define BCI_SERVE_INGEST_CALL_H

#include "spool.h"

#include <stddef.h>

struct bci_ingest_call;

/* Opens @count stores (at least 1) at @store_url (NULL: SQLite in @data_dir). */
int bci_ingest_call_open(const char *store_url, const char *data_dir, unsigned count,
			 struct bci_ingest_call **out, char *err, size_t err_size);
void bci_ingest_call_free(struct bci_ingest_call *ingest);

/*
 * Ingests the accepted run (its archive in the spool, digest @sha256) and
 * marks it ingested in the spool. The same run ingested before is no error.
 */
int bci_ingest_call_run(struct bci_ingest_call *ingest, const struct bci_spool *spool,
			const char *machine, const char *run_id, const char *sha256, char *err,
			size_t err_size);

/* An fd on one test's out, err or dmesg (@stream) of a stored run; -ENOENT when none. */
int bci_ingest_call_log_open(struct bci_ingest_call *ingest, const char *machine,
			     const char *run_id, const char *test, const char *stream, char *err,
			     size_t err_size);

struct bci_store;

/* Calls @fn with a store no other thread uses meanwhile, and the data folder; returns its return. */
int bci_ingest_call_with_store(struct bci_ingest_call *ingest,
			       int (*fn)(struct bci_store *store, const char *data_dir, void *ctx),
			       void *ctx);

/* Runs ingested through these stores so far: what was rendered before a change is stale. */
unsigned long bci_ingest_call_generation(struct bci_ingest_call *ingest);

#endif
