/* SPDX-License-Identifier: MIT */
/*
 * The results generator, lib/resultgen/: what its files share (not an API;
 * every other module includes resultgen.h only). One role per file:
 *   walk.c      the walk: one job folder after another
 *   read.c      files below the results directory, safely; the line reader;
 *               files over the limit; metadata.txt, joblist.txt
 *   prefetch.c  threads that read the next job folders ahead of the walk
 *   judge.c     the job's test table; journal, out and err rules; overrides,
 *               pruning, notrun; per-binary totals
 *   comms.c     the job judged from its socket comms dump instead
 *   dmesg.c     dmesg.txt rules and the ignore-regex translation
 *   write.c     results.json, written from the walk
 */
#ifndef BCI_RESULTGEN_INTERNAL_H
#define BCI_RESULTGEN_INTERNAL_H

#include "resultgen.h"

#include "igt_protocol.h"
#include "strv.h"

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define NAME_SIZE BCI_IGT_NAME_SIZE

enum prune_mode {
	PRUNE_KEEP_DYNAMIC = 0,
	PRUNE_KEEP_SUBTESTS = 1,
	PRUNE_KEEP_ALL = 2,
	PRUNE_KEEP_REQUESTED = 3,
};

struct test {
	char name[NAME_SIZE];
	struct bci_results_text out, err, dmesg, warnings, version;
	const char *result;	/* a static string, NULL when not set */
	bool has_time;
	double time;
	bool deleted;		/* pruned */
	bool from_comms;	/* its out and err came from a comms dump */
};

/*
 * Names to indexes, for tables that grow to any size (tests and subtests of
 * a job, dynamic subtests of a subtest, binaries of a run): open addressing
 * on the name's hash; the table owner gives the name of an index through
 * @key_of (functions below).
 */
struct name_index {
	struct name_slot { size_t hash, index; bool used; } *slots;
	size_t cap, count;
};

struct subtest {
	char *name;
	char **dynamic;			/* in first-seen order */
	size_t dynamic_count, dynamic_cap;
	struct name_index dynamic_index;
};

struct settings {
	char *name;
	int dmesg_warn_level;
	bool piglit_style_dmesg;
	bool multiple_mode;
	int prune_mode;
};

struct job {
	char *binary;
	char **requested;	/* the joblist's subtests; none: all, or no subtests */
	size_t requested_count;
};

typedef const char *name_key_fn(const void *table, size_t index);
/* The index stored for @name, or -1. */
long name_index_find(const struct name_index *ix, const char *name, name_key_fn *key_of,
		     const void *table);
/* Stores @index for @name (replacing an index stored for the same name). 0 or -ENOMEM. */
int name_index_put(struct name_index *ix, const char *name, size_t index, name_key_fn *key_of,
		   const void *table);
void name_index_release(struct name_index *ix);

/*
 * One open file of the results, from whichever source: the directory's
 * (an fd) or memory's (its bytes). @size: what fstat said at open.
 */
struct gen_file {
	int fd;				/* -1 for a memory file */
	const char *data;		/* a memory file's bytes, else NULL */
	unsigned long long size;
};

struct gen;

/*
 * Where the results' files come from. The generator opens nothing itself:
 * every file goes through these. gen_dir_source (read.c) reads
 * the results directory safely; another source fills gen_file.data.
 */
struct gen_source {
	/*
	 * Enters job folder @index (named "@index" at the top) for the in-job
	 * opens: 0, -ENOENT when there is no such folder (the job never ran),
	 * or another -errno with a message in g->err.
	 */
	int (*job_enter)(struct gen *g, size_t index);
	void (*job_leave)(struct gen *g);
	/*
	 * Opens regular file @rel (a path below the top, as messages name it;
	 * when @in_job, a file of the entered job folder, "N/name"): 0,
	 * -ENOENT (no message: the caller decides), or -errno with a message.
	 */
	int (*open)(struct gen *g, const char *rel, bool in_job, struct gen_file *f);
	void (*close)(struct gen *g, struct gen_file *f);
};

extern const struct gen_source gen_dir_source;
/* The files of a struct bci_results_mem (g->mem), while one is set. */
extern const struct gen_source gen_mem_source;

struct gen_prefetch;

/* piglit_name()'s last answers: a job asks for its few names again and again. */
struct name_cache {
	const char *binary;		/* NULL: empty */
	bool whole;			/* the binary's own name (no subtest) */
	char subtest[NAME_SIZE];
	char name[NAME_SIZE];
};

struct gen {
	struct name_cache names[2];	/* the newest first; emptied with each job */
	const char *dir;
	int dirfd;
	int jobfd;		/* gen_dir_source: the entered job folder, or -1 */
	bool no_openat2;	/* BCI_RESULTGEN_NO_OPENAT2 set: O_NOFOLLOW per component */
	bool no_totals;		/* a job reader: "totals" and "runtimes" are never handed out */
	char *dmesg_line_buf;	/* read_dmesg()'s line buffer, kept from job to job */
	char job_dir[24];	/* the job folder's name, "N", while a job is read */
	size_t job_dir_len;
	const struct gen_source *source;
	const struct bci_results_mem *mem;	/* files in memory instead of below dirfd */
	struct gen_prefetch *prefetch;	/* gen_prefetch_source's threads, while they run */
	char *err;
	size_t err_size;
	FILE *warnings;
	size_t max_file;
	struct settings settings;
	regex_t dmesg_filter;
	bool has_filter;
	bci_results_walk_fn *fn;
	void *ctx;
	struct bci_results_run run;

	struct bci_results_binary *bins;
	size_t bin_count, bin_cap;
	struct name_index bin_index;
	unsigned long all_counts[BCI_IGT_RESULT_COUNT];

	/* state of the job being processed, released by job_reset() */
	const struct job *job;
	size_t job_number;		/* joblist line, or BCI_RESULTS_NO_JOB */
	struct test **tests;
	size_t test_count, test_cap;
	/* Tests of earlier jobs kept for the next ones (a job has a few; a run 10k). */
	struct test *spare[16];
	size_t spare_count;
	struct name_index test_index;
	struct subtest *subs;
	size_t sub_count, sub_cap;
	struct name_index sub_index;
	struct name_index requested_index;	/* the job's requested subtests, built on use */
	char **blobs;		/* text the tests point into */
	size_t blob_count, blob_cap;
};

/* ---- read.c ---- */

/* Fills g->err; returns @ret. */
int gen_error(struct gen *g, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void gen_warn(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "N/@name" of the job being read into @rel (@size bytes, cut to fit). */
void gen_job_rel(const struct gen *g, const char *name, char *rel, size_t size);
/* The source files come from now: memory while g->mem is set, else g->source. */
static inline const struct gen_source *gen_source_of(const struct gen *g)
{
	return g->mem ? &gen_mem_source : g->source;
}

/*
 * How every file below the directory is opened: no symbolic link on the
 * way (openat2's rules, GEN_RESOLVE), and a FIFO must not block the open
 * (O_NONBLOCK; it changes nothing for a regular file). A job folder: GEN_DIR_FLAGS.
 */
#define GEN_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
#define GEN_FILE_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
#define GEN_DIR_FLAGS (O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOCTTY)

/* Which step of gen_open_regular() failed. */
enum { GEN_OPEN_FAILED, GEN_OPEN_STAT_FAILED, GEN_OPEN_NOT_REGULAR };
/* Opens @rel below @at following no link (openat2, else one component at a time): fd or -errno. */
int gen_open_below(const struct gen *g, int at, const char *rel, int flags);
/*
 * Opens regular file @rel below @at without a message (any thread may
 * call it): the fd and *@size, or -errno and *@stage for gen_open_refused().
 * @likely_absent: first a cheaper look whether it is there at all.
 */
int gen_open_regular(const struct gen *g, int at, const char *rel, bool likely_absent, int *stage,
		     unsigned long long *size);
/* The check of an opened @fd that gen_open_regular() makes: 0 and its *@size, or -errno and *@stage. */
int gen_regular_size(int fd, int *stage, unsigned long long *size);
/* A job file that most job folders lack (comms, bootci-incomplete.txt): looked for before opened. */
bool gen_job_file_likely_absent(const char *name);
/* The message of a failed gen_open_regular() of @rel (none for a plain -ENOENT); returns the error. */
int gen_open_refused(struct gen *g, const char *rel, int ret, int stage);
/* The message of a failed gen_open_below() of @rel; returns the error. */
int gen_open_refused_path(struct gen *g, const char *rel, int fd);

/* g->source's open and close (see struct gen_source). */
int gen_open(struct gen *g, const char *rel, bool in_job, struct gen_file *f);
void gen_close(struct gen *g, struct gen_file *f);
/* Up to @len bytes of @f at @offset: the count (0 at its end), or -errno. */
ssize_t gen_file_pread(const struct gen_file *f, char *buf, size_t len, unsigned long long offset);
/*
 * A whole file below the directory (@in_job: of the entered job folder),
 * NUL-terminated, at most @max bytes (-EFBIG over).
 */
int gen_read_file(struct gen *g, const char *rel, bool in_job, size_t max, char **text, size_t *len);
/* A small file: its first @max bytes, or *@text NULL when absent. */
int gen_read_small(struct gen *g, const char *rel, bool in_job, size_t max, char **text, size_t *len);
/* A job's out.txt or err.txt: whole up to the limit, condensed over it. -ENOENT left to the caller. */
int gen_read_job_text(struct gen *g, const char *rel, char **text, size_t *len);
/* Appends the "[bootci: N bytes left out here: ...]" line to @b. */
int gen_append_marker(struct gen *g, struct bci_str *b, const char *rel,
		      unsigned long long left_out, unsigned long long size);

/*
 * Hands out the lines of the byte range [pos, end) of a file one at a time,
 * each with its newline and NUL-terminated in place (the byte after it is
 * put back on the next call). A line longer than the buffer is handed out
 * cut to the buffer, flagged, and the rest of it skipped.
 */
struct line_reader {
	const struct gen_file *file;
	unsigned long long pos;		/* file offset of buf[0] */
	unsigned long long end;
	char *buf;
	size_t cap, start, len;		/* buf[start, len) not handed out yet */
	bool skip;			/* inside the rest of a cut line */
	bool borrowed;			/* buf is the caller's: release leaves it */
	char *saved_at, saved;
};

struct line {
	char *text;
	size_t len;
	unsigned long long offset;	/* where it starts in the file */
	bool cut;			/* longer than the reader's buffer */
};

int line_reader_init(struct line_reader *r, const struct gen_file *file, unsigned long long begin,
		     unsigned long long end, size_t longest);
/* The same over @buf, @cap bytes the caller keeps (one line at most @cap - 1 bytes). */
void line_reader_init_with(struct line_reader *r, const struct gen_file *file,
			   unsigned long long begin, unsigned long long end, char *buf, size_t cap);
void line_reader_release(struct line_reader *r);
/* 1 and the next line in @line, 0 at the end, or -errno. */
int line_reader_next(struct line_reader *r, struct line *line);

int read_settings(struct gen *g);
/* One joblist.txt line: "binary" or "binary sub1,sub2,...". */
int parse_job_line(char *line, struct job *job);
void job_free(struct job *job);

/* ---- prefetch.c ---- */

/*
 * Starts threads that open and read job folders 0, 1, 2... (up to @jobs,
 * the joblist's lines) ahead of the walk, which then takes them through
 * gen_prefetch_source (g->source is set to it). 0 when started or when
 * threads are not to be used (the walk then reads as before), -errno
 * otherwise. gen_prefetch_stop() undoes it.
 */
int gen_prefetch_start(struct gen *g, size_t jobs);
void gen_prefetch_stop(struct gen *g);
/* How many chunks of job folders the threads have read through their io_uring (for tests). */
unsigned long gen_prefetch_ring_chunks(void);

/* ---- judge.c ---- */

struct test *find_test(struct gen *g, const char *name);
struct test *get_test(struct gen *g, const char *name);
/* Hands the buffer's text over to the job (as a text) and empties the buffer. */
int str_to_text(struct gen *g, struct bci_str *b, struct bci_results_text *t);
/* The job keeps @blob (freed with the job), or frees it on -ENOMEM. */
int keep_blob(struct gen *g, char *blob);
void piglit_name(struct gen *g, const char *subtest, char name[NAME_SIZE]);
/* bci_igt_piglit_name() of @binary, through the cache when it is the job's. */
void piglit_name_of(struct gen *g, const char *binary, const char *subtest, char name[NAME_SIZE]);
void job_reset(struct gen *g);
void gen_release(struct gen *g);
int add_subtest(struct gen *g, const char *name);
/* Adds dynamic subtest @name to @sub once, in first-seen order. */
int add_dynamic(struct subtest *sub, const char *name);
/* Adds @time to the job binary's runtime ("runtimes"). */
int add_binary_runtime(struct gen *g, double time);
/* Lists the job's binary under "runtimes" even if no time comes (igt_results' {} entry). */
int list_binary_runtime(struct gen *g);

/* @rel: the journal's path in the run folder (g->dir), for messages. */
int fill_from_journal(struct gen *g, const char *rel, char *text, size_t len);
int fill_from_output(struct gen *g, const char *buf, size_t len, bool is_out);
int override_results(struct gen *g);
void prune_subtests(struct gen *g);
int add_notrun_results(struct gen *g);
/* Counts the job's results into "", "root" and "igt@binary", igt_runner's way. */
int add_to_totals(struct gen *g, const char *binary);

/* ---- comms.c ---- */

/*
 * Judges job folder @index from its comms dump: *@used true when the test
 * spoke the socket (journal, out and err are then not to be read), false
 * when there is no dump or it holds exec packets only. 0 or -errno.
 */
int fill_from_comms(struct gen *g, size_t index, bool *used);

/* ---- dmesg.c ---- */

int fill_from_dmesg(struct gen *g, const char *rel, const struct gen_file *f);
int compile_dmesg_filter(struct gen *g);

#endif
