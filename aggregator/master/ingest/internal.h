// SPDX-License-Identifier: MIT
/*
 * What archive.c, stream.c and results.c share: one ingest's state, the
 * archive read as a stream (through lib/run_archive.h's reader, which checks
 * every file against the manifest as it reads), the run's files held.
 */
#ifndef BOOTCI_AGGREGATOR_INGEST_INTERNAL_H
#define BOOTCI_AGGREGATOR_INGEST_INTERNAL_H

#include "arena.h"
#include "ingest.h"
#include "../store/cache.h"
#include "manifest.h"
#include "resultgen/resultgen.h"
#include "strv.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* The largest small file read whole (boot records, suspend cycles, the joblist). */
#define SMALL_FILE_MAX ((size_t)16 << 20)

struct bci_run_archive;

/* One result as the results generator gave it, held until the rows are written. */
struct ingest_row {
	size_t name;			/* offset in ingest.names */
	const char *result;		/* a piglit result name (static) */
	double duration;		/* seconds; -1: unknown */
	int job;			/* -1: none */
	bool dmesg_warnings;
};

/* What one ingest learns about the run before it writes anything. */
struct ingest {
	struct bci_store *store;
	const char *data_dir;
	const struct bci_ingest_options *options;
	char digest[BCI_SHA256_HEX_LEN + 1];
	char archive[PATH_MAX];		/* kept in DATA/archives/ */
	int archive_copied;		/* this ingest put it there */
	struct bci_results_mem_file *kept;	/* the run's own files, held */
	size_t kept_count, kept_cap, kept_bytes;
	struct bci_results_mem run;	/* kept, as the generator's source */
	struct bci_cache_logs *logs;	/* the run's job logs, written as the results stream */
	/* The job folders' files, held by the scan for the results (no second pass) unless off: */
	struct bci_results_mem_file *held;	/* paths: the manifest's */
	size_t held_count, held_cap, held_bytes;
	struct bci_arena held_arena;	/* the held files' bytes */
	struct bci_str scan_buf;	/* a file's bytes as the scan reads them, reused */
	bool held_off;			/* too much to hold: the results read the archive again */
	/* The results, read before the write transaction begins (archive.c): */
	bool has_start, has_end;	/* the run's times, as the generator read them */
	double start, end;
	struct ingest_row *rows;
	size_t row_count, row_cap;
	char *names;			/* the rows' names, NUL-terminated one after another */
	size_t names_len, names_cap;
	struct bci_manifest *manifest;	/* the archive's, once the scan read it whole */
	char machine[BCI_MANIFEST_WORD_MAX + 1];
	char run_id[BCI_MANIFEST_WORD_MAX + 1];
	int64_t run_key;
	int run_exists;			/* the run row was there already (another ingest won) */
	struct bci_ingest_summary counts;
	char *err;
	size_t err_size;
};

/* ---- stream.c: the archive read as a stream ---- */

/*
 * The scan: every file read and checked (lib/run_archive.h's rules), the
 * run's own small files kept (in->run), the job folders' files held while
 * they fit, the manifest taken (in->manifest). -errno with in->err.
 */
int bci_ingest_stream_scan(struct ingest *in);
/* Whether the manifest lists the file @rel (a path in the run folder). */
bool bci_ingest_file_listed(const struct ingest *in, const char *rel);
/* A kept run file, copied NUL-terminated into *@text (NULL when the run has none), its length in *@len (may be NULL). */
int bci_ingest_run_file(struct ingest *in, const char *rel, char **text, size_t *len);
/*
 * The archive opened again for a second reading: 0, or -errno with in->err.
 * Its messages go to @why (which outlives it).
 */
int bci_ingest_archive_open(struct ingest *in, struct bci_run_archive **out, char *why,
			    size_t why_size);

/* A job's file larger than this goes to a temporary file instead of memory. */
#define JOB_FILE_MEM_MAX SMALL_FILE_MAX

/* Where a member's bytes go: a buffer (up to @limit), memory placed by the caller, a file. */
struct ingest_sink {
	struct bci_str *buf;
	char *into;		/* or memory of @limit bytes the caller placed (into_len used) */
	size_t into_len;
	size_t limit;
	bool over;		/* more than @limit came: the buffer stopped */
	int fd;
};

/*
 * The reader's current file's bytes into @s. 0; the reader's refusal
 * (-EINVAL, its message in its own buffer); or a local failure (*@local
 * set, in->err naming @path).
 */
int bci_ingest_member_read(struct ingest *in, struct bci_run_archive *r, const char *path,
			   struct ingest_sink *s, bool *local);
/* A slot at the end of *@files (@count used of *@cap, grown by doubling from @first), or NULL. */
struct bci_results_mem_file *bci_ingest_mem_files_slot(struct bci_results_mem_file **files,
						       size_t count, size_t *cap, size_t first);
/* "N/name" with N as the generator writes a job folder (no leading zero): N and name. */
bool bci_ingest_job_member(const char *rel, size_t *index, const char **name);

/* ---- results.c: the results, one job folder at a time ---- */

/* The results generator over the archive, one job folder at a time in archive order. */
int bci_ingest_results_stream(struct ingest *in, const struct bci_resultgen_options *options,
			      bci_results_walk_fn *fn, void *ctx);
void bci_ingest_stream_free(struct ingest *in);

#endif
