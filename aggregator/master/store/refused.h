/* SPDX-License-Identifier: MIT */
/*
 * The uploads serve refused as archives (422: the run archive's rules or
 * serve's limits did not take them), kept so that the master shows what it
 * did not take and why. The run itself stays on its machine: collect leaves
 * it on the results partition and sends it again at the next boot, so a
 * limit raised (bootci-aggregator-serve(1)) lets it in.
 *
 *   DATA/refused/<machine>/<run>.json
 *     {"machine": "m1", "run_id": "r1", "sha256": "<64 hex>", "size": 19168,
 *      "reason": "entry 3 '0/out.txt': more than ... (the limit)",
 *      "time": 1796000000, "count": 2}
 *
 * One record per run, the last refusal's: @time (Unix seconds) and @reason
 * are its, @count how many uploads of the run were refused. Written
 * atomically (a temporary name, fsync, rename); the run's acceptance later
 * removes it. This module is the format's only reader and writer.
 *
 * Functions return 0 (or a count) or -errno with @err saying why.
 */
#ifndef BCI_STORE_REFUSED_H
#define BCI_STORE_REFUSED_H

#include "manifest.h"

#include <stdint.h>
#include <stdio.h>

/* The reason's bytes kept (serve's messages are shorter). */
#define BCI_REFUSED_REASON_MAX 1000

struct bci_refused {
	char machine[BCI_MANIFEST_WORD_MAX + 1];
	char run_id[BCI_MANIFEST_WORD_MAX + 1];
	char sha256[BCI_SHA256_HEX_LEN + 1];
	uint64_t size;				/* the archive's bytes */
	char reason[BCI_REFUSED_REASON_MAX + 1];
	int64_t time;				/* the last refusal, Unix seconds */
	uint64_t count;				/* refusals of this run so far */
};

/*
 * Records the refusal @r (its count ignored: one more than the run's record
 * held, or 1) under @data_dir.
 */
int bci_refused_add(const char *data_dir, const struct bci_refused *r, char *err, size_t err_size);

/* Removes the run's record (it was accepted): 0 also when it had none. */
int bci_refused_forget(const char *data_dir, const char *machine, const char *run_id);

/*
 * Every record under @data_dir, or only @machine's (NULL: all), newest
 * first, into *@list (the caller frees it) and *@count. A record that does
 * not parse is an error naming its file; no refused/ folder is no record.
 */
int bci_refused_list(const char *data_dir, const char *machine, struct bci_refused **list,
		     size_t *count, char *err, size_t err_size);

/* {"refused": [ {record}, ... ]} on @out, the records in their order. 0 or -errno. */
int bci_refused_json(FILE *out, const struct bci_refused *list, size_t count);

#endif
