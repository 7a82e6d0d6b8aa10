/* SPDX-License-Identifier: MIT */
/*
 * The run archive: one run folder as one file, what collect uploads, serve
 * checks before keeping it, ingest reads and the master's cache unpacks.
 * This module is its only writer and its only reader, and holds the rules
 * every reader applies (lib/run_archive/: write.c, read.c, check.c).
 *
 * The format: a POSIX tar (ustar headers, pax extended headers where ustar
 * cannot hold a value) compressed as one zstd frame.
 *
 *   zstd      one frame (RFC 8878) and nothing after it; a window of at most
 *             64 MiB; its content checksum checked when it has one (the
 *             writer's has). Level 3, a 2 MiB window, written by libzstd's
 *             streaming compressor.
 *   entries   512-byte ustar headers: magic "ustar\0", version "00", numeric
 *             fields in octal, the checksum the sum of the header's bytes with
 *             its own field read as spaces. Regular files only (typeflag '0'),
 *             each followed by its bytes and zeroes to a 512-byte boundary.
 *   pax       an entry whose path does not fit ustar's name (100 bytes) and
 *             prefix (155, split at a '/'), or holds a byte that is not
 *             ASCII, or whose size does not fit 11 octal digits, is preceded
 *             by one pax extended header (typeflag 'x') with "path" and
 *             "size" records; "mtime", "atime", "ctime", "uid", "gid",
 *             "uname", "gname" and "hdrcharset" records are read and ignored
 *             (libarchive's writer adds some), any other key is refused.
 *   end       a block of zeroes (the writer writes two), then only zeroes to
 *             the end of the frame.
 *   order     manifest.json first (lib/manifest.h): what the run is and the
 *             size and sha256 of every other file; then every file it lists,
 *             once each, in any order (the writer follows the manifest's
 *             sorted order, so a folder's files follow each other).
 *   paths     relative to the run folder and spelled as the manifest spells
 *             them: no leading '/', no empty, "." or ".." component, no
 *             control character (bci_manifest_path_ok()); bytes as they are,
 *             UTF-8 expected; no folder entries (a folder is its files' paths).
 *   metadata  modes 0644, owners 0:0, each file's mtime (the manifest's: its
 *             newest file's), no names: what the writer writes, ignored when read.
 *
 * The same folder gives the same bytes (a resumed upload sends the rest of
 * the same archive). Archives written by collects before this writer, by
 * libarchive's pax_restricted writer with its zstd filter, are the same
 * format (tests/unit/data/run-archive-libarchive.tar.zst is one).
 *
 * Refused, whoever reads (serve, ingest, the cache), with the same words:
 * another compression or none, a corrupt or cut zstd frame, more than one
 * frame; a header whose checksum does not match, a GNU or pre-POSIX header, a
 * base-256 size no pax record stands for, a pax global header or an unknown
 * pax key; a folder, hard or symbolic link, device, FIFO or any other type
 * than a regular file (a link's message says whether its target leaves the
 * run); an unsafe path; a first entry that is not manifest.json, or a
 * manifest that does not parse; a file the manifest does not list, one listed
 * twice in the archive, of another size or sha256, a listed file missing;
 * and, when limits are given, more entries, unpacked bytes, or bytes in one
 * file than they allow (never a ratio: struct bci_run_archive_limits says
 * why). Every message names the entry
 * ("entry 7 '0/out.txt': ...") or says it is about the whole archive. Why
 * this strict: one reader that takes exactly what the writer writes cannot
 * disagree with another about what an archive holds, and a tar's other forms
 * (links above all) are the ways out of an unpacking folder.
 *
 * Functions return 0 (or 1, an item) or -errno: -EINVAL when the archive is
 * refused (@err says why), another -errno for a local failure (memory, a
 * read). A reader's @err must outlive it.
 */
#ifndef BCI_RUN_ARCHIVE_H
#define BCI_RUN_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

struct bci_manifest;
struct bci_manifest_file;

/* ---- the writer ---- */

struct bci_run_archive_info {
	const char *machine;
	const char *run;
	const char *bootci_version;
	/*
	 * Adds the firmware's boot entries to the manifest (collect's, on the test
	 * machine), or NULL; -ENODEV from it (no EFI variables) is no error.
	 */
	int (*efi_read)(struct bci_manifest *m);
};

/*
 * Writes @run_dir's files and their manifest as a run archive at @path,
 * atomically (a temporary name, fsync, rename). A file that changes size
 * while it is written, or anything in the folder that is not a file or a
 * folder, is an error naming it.
 */
int bci_run_archive_write(const char *run_dir, const char *path,
			  const struct bci_run_archive_info *info, char *err, size_t err_size);

/* ---- the reader and its rules ---- */

/* What one entry costs unpacked at least (its header block), for the size limits. */
#define BCI_RUN_ARCHIVE_ENTRY_COST	512
/* The largest manifest read when no limits are given. */
#define BCI_RUN_ARCHIVE_MANIFEST_MAX	(64ULL << 20)

/*
 * What an archive from elsewhere may cost (serve's, from its options). Only
 * what harms the reader counts: entries, bytes once unpacked, one file's
 * bytes, the manifest, a path. How well the archive compresses does not: a
 * job's output of one line repeated packs a thousand times smaller, and is a
 * real run all the same.
 */
struct bci_run_archive_limits {
	uint64_t max_entries;		/* entries, the manifest's included */
	uint64_t max_unpacked;		/* file bytes plus BCI_RUN_ARCHIVE_ENTRY_COST a entry */
	uint64_t max_file;		/* one entry's bytes */
	uint64_t max_manifest;		/* manifest.json's bytes */
	size_t max_path;		/* a path's bytes (BCI_MANIFEST_PATH_MAX at most) */
};

/*
 * The defaults serve documents, above what the executor writes with its own
 * defaults: a job has five files (journal.txt, out.txt, err.txt, dmesg.txt,
 * comms), out.txt, err.txt, dmesg.txt and comms' log packets each held to
 * output_limit (64 MiB, lib/executor_keys.c) and a note, and the run's own
 * files beside them are small. So a file of 4 GiB is 64 times the largest
 * one, 200000 entries hold 40000 jobs, and 64 GiB hold 256 jobs that flood
 * every stream to its cap (more than the machine's results partition holds:
 * 256 MiB in the known-good image's recipe). A lab that raises output_limit
 * or its partitions past these raises serve's options with them.
 */
#define BCI_RUN_ARCHIVE_DEFAULT_ENTRIES		200000ULL
#define BCI_RUN_ARCHIVE_DEFAULT_UNPACKED	(64ULL << 30)
#define BCI_RUN_ARCHIVE_DEFAULT_FILE		(4ULL << 30)
#define BCI_RUN_ARCHIVE_DEFAULT_MANIFEST	(64ULL << 20)
void bci_run_archive_limits_default(struct bci_run_archive_limits *limits);

struct bci_run_archive;

/*
 * Opens the archive and reads it up to its manifest, checked. @limits NULL:
 * none but the format's (paths of BCI_MANIFEST_PATH_MAX bytes, a manifest of
 * BCI_RUN_ARCHIVE_MANIFEST_MAX), for archives already accepted or the
 * operator's own. A limit crossed stops the reading there: a bomb is never
 * unpacked in full. The archive comes from the file @path, from @fd (read
 * from its offset, not closed), from
 * memory (@data outlives the reader), or, the fuzz target's and the tests'
 * way in, as the uncompressed tar in memory (_plain: everything but the
 * zstd layer). 0 and *@out, or -EINVAL / -errno.
 */
int bci_run_archive_open(const char *path, const struct bci_run_archive_limits *limits,
			 struct bci_run_archive **out, char *err, size_t err_size);
int bci_run_archive_open_fd(int fd, const struct bci_run_archive_limits *limits,
			    struct bci_run_archive **out, char *err, size_t err_size);
int bci_run_archive_open_memory(const void *data, size_t len,
				const struct bci_run_archive_limits *limits,
				struct bci_run_archive **out, char *err, size_t err_size);
int bci_run_archive_open_plain(const void *data, size_t len,
			       const struct bci_run_archive_limits *limits,
			       struct bci_run_archive **out, char *err, size_t err_size);

/* The archive's manifest, the reader's (valid until it is closed or taken). */
const struct bci_manifest *bci_run_archive_manifest(const struct bci_run_archive *r);

/*
 * The next file: 1 and *@file, its manifest entry (path, size, sha256); 0 at
 * the archive's end, every listed file seen and what follows the tar checked;
 * -EINVAL / -errno. What the caller did not read of the previous file is
 * read (and checked) first.
 */
int bci_run_archive_next(struct bci_run_archive *r, const struct bci_manifest_file **file);

/*
 * The current file's bytes, a stretch at a time (valid until the next call):
 * 1 with @data and @len; 0 at its end, once its sha256 matched; -EINVAL /
 * -errno. Bytes handed out before a refusal were not checked yet: a caller
 * that keeps them drops them when the reading fails.
 */
int bci_run_archive_data(struct bci_run_archive *r, const void **data, size_t *len);

/* The manifest handed over to the caller, once next() returned 0 (before that: NULL). */
struct bci_manifest *bci_run_archive_manifest_take(struct bci_run_archive *r);

void bci_run_archive_close(struct bci_run_archive *r);

#endif
