// SPDX-License-Identifier: MIT
/*
 * What ingest.c, ingest_verify.c, ingest_stream.c and ingest_results.c share:
 * one ingest's state, the archive's readers, and the manifest checks (an
 * archive's files against what its manifest promises).
 */
#ifndef BOOTCI_AGGREGATOR_INGEST_INTERNAL_H
#define BOOTCI_AGGREGATOR_INGEST_INTERNAL_H

#include "arena.h"
#include "ingest.h"
#include "../store/cache.h"
#include "manifest.h"
#include "resultgen.h"
#include "strv.h"


#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* The largest small file read whole (manifest, boot records, suspend cycles). */
#define SMALL_FILE_MAX ((size_t)16 << 20)

struct archive;
struct archive_entry;

/* One entry of the archive, its path cleaned (no "./", no repeated slash). */
struct ingest_entry {
	char *path;
	bool dir;
	size_t seq;		/* its place in the archive */
};

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
	char root[PATH_MAX];		/* the run folder inside the archive, "" for its root */
	struct bci_cache_files unpacked;	/* the archive's files, with sizes and digests */
	struct ingest_entry *entries;	/* every file and folder, sorted (ingest_stream.c) */
	size_t entry_count, entry_cap;
	struct bci_results_mem_file *kept;	/* the run's own files, held (archive paths) */
	size_t kept_count, kept_cap, kept_bytes;
	struct bci_results_mem_file *run_files;	/* the same below the root */
	struct bci_results_mem run;	/* run_files as the generator's source */
	struct bci_cache_logs *logs;	/* the run's job logs, written as the results stream */
	/* The job folders' files, held by the scan for the results (no second pass) unless off: */
	struct bci_results_mem_file *held;	/* paths as the archive has them */
	size_t held_count, held_cap, held_bytes;
	struct bci_arena held_arena;	/* the held files' bytes (their paths are the entries') */
	struct bci_arena entry_arena;	/* the entries' paths, shared by held[] and unpacked */
	struct bci_str scan_buf;	/* a file's bytes as the scan reads them, reused */
	bool held_off;			/* too much to hold: the results read the archive again */
	/* The results, read before the write transaction begins (ingest.c): */
	bool has_start, has_end;	/* the run's times, as the generator read them */
	double start, end;
	struct ingest_row *rows;
	size_t row_count, row_cap;
	char *names;			/* the rows' names, NUL-terminated one after another */
	size_t names_len, names_cap;
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
/* The archive's files, hashed as the scan read them, against the manifest: listed, same size and sha256. */
int bci_ingest_manifest_verify_unpacked(struct ingest *in);

/* ---- ingest_stream.c: the archive read as a stream ---- */

/*
 * The scan: every entry checked, every file hashed into in->unpacked, the
 * run's own small files kept (in->run), the root found. -errno with in->err.
 */
int bci_ingest_stream_scan(struct ingest *in);
/* The entry @rel of the run folder (below the root), or NULL. */
const struct ingest_entry *bci_ingest_entry_find(const struct ingest *in, const char *rel);
/* A kept run file as it is held, or NULL. */
const struct bci_results_mem_file *bci_ingest_run_file_find(const struct ingest *in, const char *rel);
/* Lets a kept run file's bytes go (the manifest, once parsed): it reads as empty after. */
void bci_ingest_run_file_drop(struct ingest *in, const char *rel);
/* A kept run file, copied NUL-terminated into *@text (NULL when the run has none), its length in *@len (may be NULL). */
int bci_ingest_run_file(struct ingest *in, const char *rel, char **text, size_t *len);
/* libarchive on the archive, any compression, tar formats: 0 or -errno with in->err. */
int bci_ingest_archive_open(struct ingest *in, struct archive **out);
/* The checks every entry passes (bci_cache_entry_clean, its type): 1 and @path, 0 to skip, or -errno. */
int bci_ingest_entry_check(struct ingest *in, struct archive_entry *entry, char *path, size_t size);

/* A job's file larger than this goes to a temporary file instead of memory. */
#define JOB_FILE_MEM_MAX SMALL_FILE_MAX

/* Where a member's bytes go: a digest, a buffer (up to @limit), a file. */
struct ingest_sink {
	struct bci_sha256 *hash;	/* nettle's, on the caller's stack: no allocation per member */
	struct bci_str *buf;
	char *into;		/* or memory of @limit bytes the caller placed (into_len used) */
	size_t into_len;
	size_t limit;
	bool over;		/* more than @limit came: the buffer stopped */
	int fd;
};

/* libarchive's current entry's bytes into @s; *@size: how many. 0 or -errno, the entry named. */
int bci_ingest_member_read(struct ingest *in, struct archive *a, const char *path,
			   struct ingest_sink *s, uint64_t *size);
/* A slot at the end of *@files (@count used of *@cap, grown by doubling from @first), or NULL. */
struct bci_results_mem_file *bci_ingest_mem_files_slot(struct bci_results_mem_file **files,
						       size_t count, size_t *cap, size_t first);
/* "N/name" with N as the generator writes a job folder (no leading zero): N and name. */
bool bci_ingest_job_member(const char *rel, size_t *index, const char **name);

/* ---- ingest_results.c: the results, one job folder at a time ---- */

/* The results generator over the archive, one job folder at a time in archive order. */
int bci_ingest_results_stream(struct ingest *in, const struct bci_resultgen_options *options,
			      bci_results_walk_fn *fn, void *ctx);
void bci_ingest_stream_free(struct ingest *in);

#endif
