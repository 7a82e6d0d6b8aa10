/* SPDX-License-Identifier: MIT */
/*
 * Ingest: one run (a results directory in igt_runner's layout, with
 * bootci's files beside it when the executor wrote it) into the store.
 * `serve` calls bci_ingest_archive() for every upload it accepted and kept;
 * `bootci-aggregator ingest` calls either function for what is on disk.
 *
 * What is stored: the run (machine, run id, image, kernel, command line,
 * archive digest and path, state, times), every test result exactly as
 * results.json has it (the results generator reads the folder), every boot
 * (how it ended, its crash records) and every suspend cycle. Logs are not
 * copied into rows: they stay in the archive, kept in the data folder
 * (DATA/archives/<sha256>.<ext>), and bci_store_test_log_open() reads them.
 *
 * All or nothing: the rows of one run are written in one transaction, so a
 * failure anywhere (a bad file, a full disk, a lost database connection)
 * leaves the store as it was. The same run ingested again (same machine,
 * run id and archive digest) stores nothing and returns
 * BCI_INGEST_ALREADY; the same run with another digest is refused
 * (-EEXIST), as serve answers 409.
 *
 * The archive is a run archive (lib/run_archive.h), read by its one reader:
 * anything its rules refuse (a file missing from or not in its manifest, of
 * another size or sha256, a link, another tar form or compression) is
 * refused (-EINVAL) with the entry named, and nothing is stored.
 */
#ifndef BCI_AGGREGATOR_INGEST_H
#define BCI_AGGREGATOR_INGEST_H

#include <stddef.h>
#include <stdio.h>

struct bci_store;

enum bci_ingest_outcome {
	BCI_INGEST_STORED = 0,		/* the run is new and now stored */
	BCI_INGEST_ALREADY = 1,		/* the same run and digest were already stored */
};

struct bci_ingest_options {
	/*
	 * The archive's sha256 (lowercase hex) when the caller already
	 * verified it (serve); NULL: computed here. Either way the archive is
	 * hashed and a mismatch refused.
	 */
	const char *digest;
	/* A build (bci_store_build_put) the run belongs to; NULL: none. */
	const char *build;
	/* Where the results generator's warnings go; NULL: dropped. */
	FILE *warnings;
};

struct bci_ingest_summary {
	char machine[129];
	char run_id[129];
	char digest[65];
	char archive_path[4096];
	long results, boots, suspend_cycles;
};

/*
 * Stores the run in the run archive @archive_path (lib/run_archive.h: what
 * collect uploads and bci_ingest_dir() packs). An archive outside
 * @data_dir/archives/ is copied there first, named by its digest, so the
 * store never refers to a file it does not keep. @machine and @run_id: what
 * the caller knows (serve: the URL's); NULL takes the manifest's. When
 * given, they must agree with it.
 *
 * Returns BCI_INGEST_STORED, BCI_INGEST_ALREADY, or -errno with @err naming
 * the file or entry at fault. @summary (may be NULL) says what was stored.
 */
int bci_ingest_archive(struct bci_store *store, const char *data_dir, const char *archive_path,
		       const char *machine, const char *run_id,
		       const struct bci_ingest_options *options, struct bci_ingest_summary *summary,
		       char *err, size_t err_size);

/*
 * The same for a results directory on disk (a run read back by `lab read`,
 * an old igt_runner folder): it is first packed as collect would upload it
 * (lib/run_archive's writer: manifest.json, tar.zst, the same bytes for the
 * same folder) into @data_dir/archives/, then ingested as that archive. @machine is required (a run folder does not name its
 * machine); @run_id NULL: the folder's name, as the executor names it.
 */
int bci_ingest_dir(struct bci_store *store, const char *data_dir, const char *dir,
		   const char *machine, const char *run_id,
		   const struct bci_ingest_options *options, struct bci_ingest_summary *summary,
		   char *err, size_t err_size);

#endif
