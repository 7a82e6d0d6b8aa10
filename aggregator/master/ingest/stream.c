// SPDX-License-Identifier: MIT
/*
 * Ingest reads the archive as a stream (ingest_internal.h): nothing of the
 * run is written to disk. Two passes over the kept archive, both one
 * member after another:
 *
 *   the scan: every entry checked as the cache's unpacking checks it (no
 *   absolute path, no "..", regular files and folders only, no path twice),
 *   every file hashed and listed for the manifest check, and the run's own
 *   small files (metadata, joblist, boot records...) kept in memory;
 *
 *   the results (ingest_results.c): each job folder's files gathered in
 *   memory (a member over JOB_FILE_MEM_MAX spilled to an unnamed temporary
 *   file) and handed to the results generator's memory source, one folder at
 *   a time.
 *
 * Why two: collect writes members in the manifest's sorted order, where the
 * job folders ("0/", "1/", ...) come before joblist.txt and metadata.txt,
 * which every job's judgement needs. So the scan also holds the job folders'
 * files (up to HELD_BYTES_MAX in all, each up to JOB_FILE_MEM_MAX), and the
 * results are walked from memory: the archive is read once. A run with more
 * than that (its logs are large) lets them go, and the results read the
 * archive a second time, one folder at a time. Either way a lying archive is
 * refused before any row is written: the rows are written after both.
 *
 * The scan reads collect's own form (pax tar, zstd) without libarchive
 * (tar_read.h); any other archive, or anything odd in one, is scanned again
 * from the start through libarchive, which says what is wrong with it. The
 * second pass, rare, is libarchive's.
 */
#include "internal.h"

#include "fsutil.h"
#include "message.h"
#include "results_dir.h"
#include "resultgen.h"
#include "sort.h"
#include "strv.h"
#include "tar_read.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* All of the run's own files held at once (a hostile archive could list many). */
#define KEPT_BYTES_MAX ((size_t)64 << 20)
/* The job folders' files the scan holds for the results, at most (else a second pass). */
#define HELD_BYTES_MAX ((size_t)64 << 20)
/* The archive is read in blocks of this size. */
#define ARCHIVE_BLOCK (256 * 1024)

/* The run's files that ingest or the results generator read whole. */
static const char *const run_files_read[] = {
	BCI_MANIFEST_NAME, BCI_RESULTS_METADATA, BCI_RESULTS_JOBLIST, BCI_RESULTS_UNAME,
	BCI_RESULTS_STARTTIME, BCI_RESULTS_ENDTIME, BCI_RESULTS_ABORTED,
	BCI_RESULTS_SUSPEND_SUMMARY, BCI_RESULTS_SUSPEND_CYCLES,
	BCI_RESULTS_TEST_DIR "/" BCI_RESULTS_TEST_RESULT,
};

static bool run_file_wanted(const char *rel)
{
	const char *slash = strchr(rel, '/');
	char dir[32];
	unsigned number;

	/* Most files are a job's (N/...): no run file starts with a digit. */
	if (*rel >= '0' && *rel <= '9')
		return false;
	for (size_t i = 0; i < sizeof(run_files_read) / sizeof(run_files_read[0]); i++)
		if (*rel == run_files_read[i][0] && !strcmp(rel, run_files_read[i]))
			return true;
	/* boot-NNNN/boot.txt and boot-NNNN/end.txt */
	if (!slash || strchr(slash + 1, '/') || (size_t)(slash - rel) >= sizeof(dir))
		return false;
	memcpy(dir, rel, (size_t)(slash - rel));
	dir[slash - rel] = '\0';
	return bci_results_boot_dir_parse(dir, &number) &&
	       (!strcmp(slash + 1, BCI_RESULTS_BOOT_RECORD) || !strcmp(slash + 1, BCI_RESULTS_BOOT_END));
}

/* Kept in the scan: the root is not known yet, so a run file at the top or one folder down. */
static bool kept_wanted(const char *path)
{
	const char *slash = strchr(path, '/');

	return run_file_wanted(path) || (slash && run_file_wanted(slash + 1));
}

/* ---- entries: the archive's paths, in component order ---- */

/* Byte order with '/' lowest, so that a folder's entries follow it ("a" < "a/b" < "a-b"). */
static int path_compare(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned char x = *a == '/' ? 1 : (unsigned char)*a;
		unsigned char y = *b == '/' ? 1 : (unsigned char)*b;

		if (x != y || !x)
			return x < y ? -1 : x > y;
	}
}

static int entry_compare(const void *a, const void *b)
{
	return path_compare(((const struct ingest_entry *)a)->path,
			    ((const struct ingest_entry *)b)->path);
}

/* @path listed; *@kept: its copy in the entry arena, which the file's other lists share. */
static int entry_add(struct ingest *in, const char *path, bool dir, const char **kept)
{
	if (in->entry_count == in->entry_cap) {
		size_t cap = in->entry_cap ? in->entry_cap * 2 : 256;
		struct ingest_entry *grown = realloc(in->entries, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		in->entries = grown;
		in->entry_cap = cap;
	}
	in->entries[in->entry_count].path = bci_arena_strdup(&in->entry_arena, path);
	if (!in->entries[in->entry_count].path)
		return -ENOMEM;
	*kept = in->entries[in->entry_count].path;
	in->entries[in->entry_count].seq = in->entry_count;
	in->entries[in->entry_count++].dir = dir;
	return 0;
}

const struct ingest_entry *bci_ingest_entry_find(const struct ingest *in, const char *rel)
{
	char path[PATH_MAX * 2];
	struct ingest_entry key = { .path = path };

	if (!in->entry_count || (size_t)snprintf(path, sizeof(path), "%s%s%s", in->root,
						       *in->root ? "/" : "", rel) >= sizeof(path))
		return NULL;
	return bsearch(&key, in->entries, in->entry_count, sizeof(key), entry_compare);
}

/*
 * A path twice, or a file that is also a folder: the unpacking refused both,
 * naming the later entry as it met it (a file where a folder was made is
 * there twice; a path below a file is not in a folder).
 */
static int entries_check(struct ingest *in)
{
	if (in->entry_count)
		bci_sort(in->entries, in->entry_count, sizeof(*in->entries), entry_compare);
	for (size_t i = 0; i + 1 < in->entry_count; i++) {
		const struct ingest_entry *e = &in->entries[i], *next = e + 1;
		size_t len = strlen(e->path);
		bool same = !strcmp(e->path, next->path), below;

		below = !e->dir && !strncmp(e->path, next->path, len) && next->path[len] == '/';
		if ((same && (!e->dir || !next->dir)) || (below && e->seq > next->seq)) {
			bci_message(in->err, in->err_size, "%s: entry '%s': %s (the archive holds it twice)",
				    in->archive, e->path, strerror(EEXIST));
			return -EEXIST;
		}
		if (below) {
			bci_message(in->err, in->err_size, "%s: entry '%s': %s", in->archive, next->path,
				    strerror(ENOTDIR));
			return -ENOTDIR;
		}
	}
	return 0;
}

/* The run folder: the archive's root, or the one folder at its root. */
static int root_find(struct ingest *in)
{
	const char *first;
	size_t len;
	bool folder = false;

	in->root[0] = '\0';
	if (bci_ingest_entry_find(in, BCI_MANIFEST_NAME) || bci_ingest_entry_find(in, BCI_RESULTS_JOBLIST))
		return 0;
	if (!in->entry_count)
		goto refused;
	first = in->entries[0].path;
	len = strcspn(first, "/");
	for (size_t i = 0; i < in->entry_count; i++) {
		const struct ingest_entry *e = &in->entries[i];

		if (strncmp(e->path, first, len) || (e->path[len] && e->path[len] != '/'))
			goto refused;
		folder |= e->path[len] == '/' || e->dir;
	}
	if (!folder || len >= sizeof(in->root))
		goto refused;
	memcpy(in->root, first, len);
	in->root[len] = '\0';
	return 0;
refused:
	bci_message(in->err, in->err_size,
		    "%s: neither a run folder (manifest.json or joblist.txt) at its root nor"
		    " one folder holding it", in->archive);
	return -EINVAL;
}

/* ---- reading members ---- */

int bci_ingest_archive_open(struct ingest *in, struct archive **out)
{
	struct archive *a = archive_read_new();

	*out = NULL;
	if (!a)
		return -ENOMEM;
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, in->archive, ARCHIVE_BLOCK) != ARCHIVE_OK) {
		bci_message(in->err, in->err_size, "%s: %s", in->archive, archive_error_string(a));
		archive_read_free(a);
		return -EIO;
	}
	*out = a;
	return 0;
}

/*
 * The entry's type and path, checked as the cache's unpacking checks them
 * (store/cache.c, with its messages). 1: a file or folder, its path cleaned
 * into @path; 0: "./" itself; -EINVAL: refused.
 */
static int entry_check_raw(struct ingest *in, const char *raw, mode_t type, bool link, char *path,
			   size_t size)
{
	if (bci_cache_entry_clean(raw, path, size) < 0) {
		bci_message(in->err, in->err_size, "%s: entry '%s': an absolute path or '..' is refused",
			    in->archive, raw ? raw : "");
		return -EINVAL;
	}
	if (link || (type != AE_IFREG && type != AE_IFDIR)) {
		bci_message(in->err, in->err_size,
			    "%s: entry '%s': only regular files and folders are accepted (no links,"
			    " devices or FIFOs)", in->archive, raw);
		return -EINVAL;
	}
	return *path ? 1 : 0;
}

int bci_ingest_entry_check(struct ingest *in, struct archive_entry *entry, char *path, size_t size)
{
	return entry_check_raw(in, archive_entry_pathname(entry), archive_entry_filetype(entry),
			       archive_entry_hardlink(entry) != NULL, path, size);
}

static int sink_bytes(struct ingest_sink *s, const void *data, size_t n)
{
	int ret = 0;

	if (s->hash)
		bci_sha256_update(s->hash, data, n);
	if (s->into && !s->over) {
		if (n > s->limit - s->into_len) {
			s->over = true;
		} else {
			memcpy(s->into + s->into_len, data, n);
			s->into_len += n;
		}
	}
	if (s->buf && !s->over) {
		if (s->buf->len + n > s->limit)
			s->over = true;
		else
			ret = bci_str_append(s->buf, data, n);
	}
	if (ret == 0 && s->fd >= 0)
		ret = bci_write_all(s->fd, data, n);
	return ret;
}

/* A sparse entry's hole reads back as zeroes. */
static int sink_zeros(struct ingest_sink *s, unsigned long long count)
{
	static const char zeros[4096];
	int ret = 0;

	while (count && ret == 0) {
		size_t n = count < sizeof(zeros) ? (size_t)count : sizeof(zeros);

		ret = sink_bytes(s, zeros, n);
		count -= n;
	}
	return ret;
}

/* The current entry's bytes into @s; *@size: how many. 0 or -errno, the entry named. */
int bci_ingest_member_read(struct ingest *in, struct archive *a, const char *path,
			   struct ingest_sink *s,
		       uint64_t *size)
{
	const void *block;
	size_t n;
	la_int64_t offset = 0, written = 0;
	int rc, ret = 0;

	while ((rc = archive_read_data_block(a, &block, &n, &offset)) == ARCHIVE_OK) {
		if (offset > written)
			ret = sink_zeros(s, (unsigned long long)(offset - written));
		if (ret == 0)
			ret = sink_bytes(s, block, n);
		if (ret < 0)
			break;
		written = offset + (la_int64_t)n;
	}
	if (ret == 0 && rc != ARCHIVE_EOF) {
		bci_message(in->err, in->err_size, "%s: entry '%s': %s", in->archive, path,
			    archive_error_string(a));
		return -EIO;
	}
	/* A hole at the end: the size is the last offset, past the data. */
	if (ret == 0 && offset > written) {
		ret = sink_zeros(s, (unsigned long long)(offset - written));
		written = offset;
	}
	if (ret < 0) {
		bci_message(in->err, in->err_size, "%s: entry '%s': %s", in->archive, path,
			    strerror(-ret));
		return ret;
	}
	*size = (uint64_t)written;
	return 0;
}

/* Where the scan reads members: libarchive, or collect's own form read directly (tar_read.h). */
struct scan_src {
	struct archive *a;
	struct bci_tar_read *t;
};

/* bci_ingest_member_read() from the plain reader: -EPROTO (no message) sends the scan to libarchive. */
static int member_read_plain(struct ingest *in, struct bci_tar_read *t, const char *path,
			     struct ingest_sink *s, uint64_t *size)
{
	const void *block;
	uint64_t written = 0;
	size_t n;
	int rc, ret;

	while ((rc = bci_tar_read_data(t, &block, &n)) == 1) {
		ret = sink_bytes(s, block, n);
		if (ret < 0) {
			bci_message(in->err, in->err_size, "%s: entry '%s': %s", in->archive, path,
				    strerror(-ret));
			return ret;
		}
		written += n;
	}
	if (rc < 0)
		return rc;
	*size = written;
	return 0;
}

/* ---- files held in memory ---- */

/* A slot at the end of *@files (@count used of *@cap, grown by doubling from @first), or NULL. */
struct bci_results_mem_file *bci_ingest_mem_files_slot(struct bci_results_mem_file **files,
						   size_t count, size_t *cap, size_t first)
{
	if (count == *cap) {
		size_t more = *cap ? *cap * 2 : first;
		struct bci_results_mem_file *grown = realloc(*files, more * sizeof(*grown));

		if (!grown)
			return NULL;
		*files = grown;
		*cap = more;
	}
	return &(*files)[count];
}

/* @buf's bytes (taken) as the file @path at the end of *@files: 0, or -ENOMEM and nothing added. */
static int mem_files_add(struct bci_results_mem_file **files, size_t *count, size_t *cap,
			 size_t first, const char *path, struct bci_str *buf)
{
	struct bci_results_mem_file *f = bci_ingest_mem_files_slot(files, *count, cap, first);

	if (!f)
		return -ENOMEM;
	*f = (struct bci_results_mem_file){ .path = strdup(path), .len = buf->len, .fd = -1 };
	f->data = bci_str_steal(buf);
	if (!f->path || !f->data) {
		free((char *)f->path);
		free((char *)f->data);
		return -ENOMEM;
	}
	(*count)++;
	return 0;
}

/* ---- the scan ---- */

bool bci_ingest_job_member(const char *rel, size_t *index, const char **name);

/* A job folder's file, the root not known yet: at the top or one folder down. */
static bool held_wanted(const char *path)
{
	const char *slash = strchr(path, '/'), *name;
	size_t index;

	return bci_ingest_job_member(path, &index, &name) || (slash && bci_ingest_job_member(slash + 1, &index, &name));
}

static void held_free(struct ingest *in)
{
	bci_arena_free(&in->held_arena);
	free(in->held);
	in->held = NULL;
	in->held_count = in->held_cap = in->held_bytes = 0;
}

/* Stops holding: what was held goes, and the results will read the archive again. */
static void held_stop(struct ingest *in)
{
	held_free(in);
	in->held_off = true;
}

/*
 * Held: @len bytes at @data, already in the held arena (@placed) or copied
 * there from the scan's buffer. @path is the entry's (the entry arena
 * outlives the held files).
 */
static int held_add(struct ingest *in, const char *path, const char *data, size_t len, bool placed)
{
	struct bci_results_mem_file *f;

	if (in->held_bytes + len > HELD_BYTES_MAX) {
		held_stop(in);
		return 0;
	}
	f = bci_ingest_mem_files_slot(&in->held, in->held_count, &in->held_cap, 1024);
	if (!f)
		return -ENOMEM;
	*f = (struct bci_results_mem_file){
		.path = path,
		.data = placed ? data : bci_arena_memdup0(&in->held_arena, data, len),
		.len = len, .fd = -1,
	};
	if (!f->data)
		return -ENOMEM;
	in->held_count++;
	in->held_bytes += len;
	return 0;
}

/*
 * Room in the held arena for a job file of @size bytes (the tar header's)
 * and its NUL, for the member to be read straight there; NULL when it is
 * not to be held that way (size unknown, too large: the usual way decides).
 */
static char *held_place(struct ingest *in, uint64_t size)
{
	if (size > JOB_FILE_MEM_MAX || in->held_bytes + size > HELD_BYTES_MAX)
		return NULL;
	return bci_arena_alloc(&in->held_arena, (size_t)size + 1);
}

static int kept_add(struct ingest *in, const char *path, struct bci_str *buf)
{
	size_t len = buf->len;
	int ret = mem_files_add(&in->kept, &in->kept_count, &in->kept_cap, 32, path, buf);

	if (ret == 0)
		in->kept_bytes += len;
	return ret;
}

/* Room for @count items in *@array (@cap of @size bytes now): 0, or -ENOMEM and nothing changed. */
static int array_reserve(void *array_ptr, size_t *cap, size_t count, size_t size)
{
	void **array = array_ptr, *grown;

	if (count <= *cap)
		return 0;
	grown = realloc(*array, count * size);
	if (!grown)
		return -ENOMEM;
	*array = grown;
	*cap = count;
	return 0;
}

/* A hint past which the lists grow as they go (a manifest's text can claim anything). */
#define SCAN_HINT_MAX ((size_t)1 << 18)

/*
 * The manifest, the archive's first member as collect writes it, lists every
 * file: the lists of the scan get room for that many at once, instead of
 * doubling (and copying) 40k entries' worth as the scan goes. A hint only:
 * the files are counted as they come, and checked against it afterwards.
 */
static int scan_reserve(struct ingest *in, const char *manifest, size_t len)
{
	const char *at = manifest, *end = manifest + len;
	size_t files = 0;

	/* Each file is an object: its '{' counted (a few other objects count too). */
	while (files < SCAN_HINT_MAX && (at = memchr(at, '{', (size_t)(end - at)))) {
		files++;
		at++;
	}
	/* Each file, and about one folder for every four (a job's four files). */
	if (array_reserve(&in->entries, &in->entry_cap, files + files / 4 + 16,
			  sizeof(*in->entries)) < 0 ||
	    array_reserve(&in->unpacked.files, &in->unpacked.cap, files + 16,
			  sizeof(*in->unpacked.files)) < 0 ||
	    (!in->held_off && array_reserve(&in->held, &in->held_cap, files + 16,
					    sizeof(*in->held)) < 0))
		return -ENOMEM;
	return 0;
}

/*
 * One regular file of the scan: hashed and listed; kept when it is a run file
 * read whole, held when it is a job folder's (while holding). @size: the
 * size its header gives, or UINT64_MAX when the reader does not say before
 * the bytes come; a known size is read straight into memory of that size
 * (one allocation, no copy), the bytes still counted as they come.
 */
static int file_scan(struct ingest *in, const struct scan_src *src, const char *path,
		     uint64_t size)
{
	struct bci_str buf = in->scan_buf;
	bool kept = kept_wanted(path), held = !kept && !in->held_off && held_wanted(path);
	char *placed = held ? held_place(in, size) : NULL;
	struct ingest_sink s = { .buf = (kept || held) && !placed ? &buf : NULL,
			  .limit = held ? JOB_FILE_MEM_MAX : SMALL_FILE_MAX, .fd = -1 };
	unsigned char digest[BCI_SHA256_SIZE] = { 0 };
	struct bci_sha256 hash;
	/*
	 * The manifest at the top is not hashed: it cannot list itself, and
	 * the check passes over it (a run's is megabytes, half of all hashing).
	 */
	bool hashed = strcmp(path, BCI_MANIFEST_NAME) != 0;
	int ret = 0;

	if (placed) {
		s.into = placed;
		s.limit = (size_t)size;
	} else if (kept && size <= SMALL_FILE_MAX) {
		ret = bci_str_reserve(&buf, (size_t)size);
	}
	bci_sha256_init(&hash);
	s.hash = hashed ? &hash : NULL;
	if (ret == 0)
		ret = src->t ? member_read_plain(in, src->t, path, &s, &size) :
			       bci_ingest_member_read(in, src->a, path, &s, &size);
	if (hashed)
		bci_sha256_final(&hash, digest);
	if (ret == 0 && placed && s.over) {
		/* More bytes than the header said (the plain reader never gives them). */
		bci_message(in->err, in->err_size, "%s: entry '%s': more bytes than its header's %zu",
			    in->archive, path, s.limit);
		ret = -EBADMSG;
	} else if (ret == 0 && placed) {
		placed[s.into_len] = '\0';
		ret = held_add(in, path, placed, s.into_len, true);
	} else if (ret == 0 && held) {
		/* Too large to hold: every job file will be read from the archive again. */
		if (s.over)
			held_stop(in);
		else
			ret = held_add(in, path, buf.data, buf.len, false);
		s.buf = NULL;
	}
	if (ret == 0 && s.buf && s.over) {
		bci_message(in->err, in->err_size, "%s: %s: larger than %zu bytes", in->archive, path,
			    SMALL_FILE_MAX);
		ret = -EFBIG;
	} else if (ret == 0 && s.buf && in->kept_bytes + buf.len > KEPT_BYTES_MAX) {
		bci_message(in->err, in->err_size, "%s: %s: the run's own files (boot records, joblist"
			    "...) make more than %zu bytes", in->archive, path, KEPT_BYTES_MAX);
		ret = -EFBIG;
	}
	if (ret == 0 && s.buf && in->entry_count == 1 && !strcmp(path, BCI_MANIFEST_NAME))
		ret = scan_reserve(in, buf.data ? buf.data : "", buf.len);
	if (ret == 0)
		ret = bci_cache_files_add(&in->unpacked, path, size, digest);
	if (ret == 0 && s.buf)
		ret = kept_add(in, path, &buf);
	if (ret == -ENOMEM)
		bci_message(in->err, in->err_size, "%s: %s: %s", in->archive, path, strerror(ENOMEM));
	/* The buffer (unless kept took it) serves the next file. */
	buf.len = 0;
	in->scan_buf = buf;
	return ret;
}

/* What the scan gathered, let go, for a second start with libarchive. */
static void scan_reset(struct ingest *in)
{
	bci_arena_free(&in->entry_arena);
	in->entry_count = 0;
	for (size_t i = 0; i < in->kept_count; i++) {
		free((char *)in->kept[i].path);
		free((char *)in->kept[i].data);
	}
	in->kept_count = in->kept_bytes = 0;
	held_free(in);
	in->held_off = false;
	bci_cache_files_free(&in->unpacked);
	in->err[0] = '\0';
}

/* One entry of either reader: checked, listed, and a file read. */
static int scan_entry(struct ingest *in, const struct scan_src *src, const char *raw, mode_t type,
		      bool link, uint64_t size)
{
	char path[PATH_MAX];
	const char *kept;
	bool dir = type == AE_IFDIR;
	int ret = entry_check_raw(in, raw, type, link, path, sizeof(path));

	if (ret <= 0)
		return ret;
	ret = entry_add(in, path, dir, &kept);
	if (ret == 0 && !dir)
		ret = file_scan(in, src, kept, size);
	return ret;
}

/* The archive in collect's form: 0, -EPROTO when it is not (for libarchive), or refused. */
static int scan_plain(struct ingest *in)
{
	struct scan_src src = { 0 };
	const char *raw;
	uint64_t size;
	bool dir;
	int ret;

	if (bci_tar_read_open(in->archive, &src.t) < 0)
		return -EPROTO;
	while ((ret = bci_tar_read_next(src.t, &raw, &dir, &size)) == 1) {
		ret = scan_entry(in, &src, raw, dir ? AE_IFDIR : AE_IFREG, false, size);
		if (ret < 0)
			break;
	}
	bci_tar_read_close(src.t);
	return ret;
}

static int scan_libarchive(struct ingest *in)
{
	struct scan_src src = { 0 };
	struct archive_entry *entry;
	int ret, rc;

	ret = bci_ingest_archive_open(in, &src.a);
	if (ret < 0)
		return ret;
	while ((rc = archive_read_next_header(src.a, &entry)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
		ret = scan_entry(in, &src, archive_entry_pathname(entry),
				 archive_entry_filetype(entry), archive_entry_hardlink(entry) != NULL,
				 UINT64_MAX);
		if (ret < 0)
			goto out;
	}
	ret = 0;
	if (rc != ARCHIVE_EOF) {
		bci_message(in->err, in->err_size, "%s: %s", in->archive, archive_error_string(src.a));
		ret = -EBADMSG;
	}
out:
	archive_read_free(src.a);
	return ret;
}

int bci_ingest_stream_scan(struct ingest *in)
{
	size_t root_len;
	int ret;

	/* Collect's form read directly; anything else, or anything odd, by libarchive from the start. */
	ret = scan_plain(in);
	if (ret == -EPROTO) {
		scan_reset(in);
		ret = scan_libarchive(in);
	}
	if (ret < 0)
		return ret;
	ret = entries_check(in);
	if (ret == 0)
		ret = root_find(in);
	if (ret < 0)
		return ret;
	/* The run's own files as the generator names them: below the root. */
	root_len = strlen(in->root);
	in->run_files = calloc(in->kept_count ? in->kept_count : 1, sizeof(*in->run_files));
	if (!in->run_files)
		return -ENOMEM;
	for (size_t i = 0; i < in->kept_count; i++) {
		const char *p = in->kept[i].path;

		if (root_len && (strncmp(p, in->root, root_len) || p[root_len] != '/'))
			continue;
		in->run_files[in->run.count] = in->kept[i];
		in->run_files[in->run.count++].path = p + (root_len ? root_len + 1 : 0);
	}
	in->run.files = in->run_files;
	return 0;
}

const struct bci_results_mem_file *bci_ingest_run_file_find(const struct ingest *in, const char *rel)
{
	for (size_t i = 0; i < in->run.count; i++)
		if (!strcmp(in->run_files[i].path, rel))
			return &in->run_files[i];
	return NULL;
}

void bci_ingest_run_file_drop(struct ingest *in, const char *rel)
{
	for (size_t i = 0; i < in->run.count; i++) {
		struct bci_results_mem_file *f = &in->run_files[i];

		if (strcmp(f->path, rel))
			continue;
		for (size_t k = 0; k < in->kept_count; k++)
			if (in->kept[k].data == f->data) {
				in->kept_bytes -= in->kept[k].len;
				in->kept[k].data = NULL;
				in->kept[k].len = 0;
			}
		free((char *)f->data);
		f->data = NULL;
		f->len = 0;
	}
}

int bci_ingest_run_file(struct ingest *in, const char *rel, char **text, size_t *len)
{
	*text = NULL;
	for (size_t i = 0; i < in->run.count; i++) {
		const struct bci_results_mem_file *f = &in->run.files[i];

		if (strcmp(f->path, rel))
			continue;
		*text = malloc(f->len + 1);
		if (!*text)
			return -ENOMEM;
		memcpy(*text, f->data, f->len);
		(*text)[f->len] = '\0';
		if (len)
			*len = f->len;
		return 0;
	}
	return 0;
}

void bci_ingest_stream_free(struct ingest *in)
{
	bci_arena_free(&in->entry_arena);
	bci_str_free(&in->scan_buf);
	free(in->entries);
	for (size_t i = 0; i < in->kept_count; i++) {
		free((char *)in->kept[i].path);
		free((char *)in->kept[i].data);
	}
	free(in->kept);
	free(in->run_files);
	held_free(in);
}

/* "N/name" with N as the generator writes a job folder (no leading zero): N and name. */
bool bci_ingest_job_member(const char *rel, size_t *index, const char **name)
{
	size_t digits = strspn(rel, "0123456789");

	if (!digits || digits > 9 || rel[digits] != '/' || (rel[0] == '0' && digits > 1) ||
	    strchr(rel + digits + 1, '/'))
		return false;
	*index = 0;
	for (size_t i = 0; i < digits; i++)
		*index = *index * 10 + (size_t)(rel[i] - '0');
	*name = rel + digits + 1;
	return true;
}
