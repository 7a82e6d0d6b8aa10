// SPDX-License-Identifier: MIT
/*
 * What ingest.c and ingest_verify.c share: one ingest's state, and the
 * manifest checks (an archive's files against what its manifest promises).
 */
#ifndef BOOTCI_AGGREGATOR_INGEST_INTERNAL_H
#define BOOTCI_AGGREGATOR_INGEST_INTERNAL_H

#include "ingest.h"
#include "store/cache.h"
#include "manifest.h"

#include <limits.h>
#include <stdint.h>

/* The largest small file read whole (manifest, boot records, suspend cycles). */
#define SMALL_FILE_MAX ((size_t)16 << 20)

/* What one ingest learns about the run before it writes anything. */
struct ingest {
	struct bci_store *store;
	const char *data_dir;
	const struct bci_ingest_options *options;
	char digest[BCI_SHA256_HEX_LEN + 1];
	char archive[PATH_MAX];		/* kept in DATA/archives/ */
	int archive_copied;		/* this ingest put it there */
	char cache[PATH_MAX];		/* DATA/cache/<digest> */
	int cache_made;			/* this ingest unpacked it */
	char root[PATH_MAX];		/* the run folder inside the archive, "" for its root */
	char run_dir[PATH_MAX * 2];	/* cache + root */
	struct bci_cache_files unpacked;	/* what this ingest unpacked, with digests */
	struct bci_manifest *manifest;	/* NULL: the archive has none */
	char machine[BCI_MANIFEST_WORD_MAX + 1];
	char run_id[BCI_MANIFEST_WORD_MAX + 1];
	int64_t run_key;
	int run_exists;			/* the run row was there already (another ingest won) */
	struct bci_ingest_summary counts;
	char *err;
	size_t err_size;
};

/* manifest.json of the run, if the archive has one (in->manifest stays NULL when not). */
int bci_ingest_manifest_read(struct ingest *in);
/* The unpacked run folder (an existing cache) against the manifest: listed, same size and sha256. */
int bci_ingest_manifest_verify(struct ingest *in);
/* The same promise, from the list of files this ingest unpacked and hashed as it wrote them. */
int bci_ingest_manifest_verify_unpacked(struct ingest *in);

#endif
