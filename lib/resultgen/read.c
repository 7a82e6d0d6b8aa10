// SPDX-License-Identifier: MIT
/*
 * The results generator's reading side: every file below the results
 * directory is opened here, without following symbolic links and only if
 * it is a regular file (or a folder), since the directory may be an
 * upload; files over the limit are condensed; metadata.txt and joblist.txt
 * lines are parsed.
 */
#include "internal.h"

#include "fsutil.h"
#include "results_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#include <asm/unistd.h>
#define SYS_openat2 __NR_openat2
#endif

#define PROTOCOL_LINE_MAX 4096	/* longer protocol lines are kept cut */
#define MARKER_SIZE 256		/* a marker line, about */

int gen_error(struct gen *g, int ret, const char *fmt, ...)
{
	va_list ap;

	if (g->err && g->err_size) {
		va_start(ap, fmt);
		vsnprintf(g->err, g->err_size, fmt, ap);
		va_end(ap);
	}
	return ret;
}

void gen_warn(struct gen *g, const char *fmt, ...)
{
	va_list ap;

	fputs("warning: ", g->warnings);
	va_start(ap, fmt);
	vfprintf(g->warnings, fmt, ap);
	va_end(ap);
	fputc('\n', g->warnings);
}

/* ---- opening below the directory ---- */

/* The kernel's way: one call that refuses any symlink on the way, and "..". */
static int open_beneath(int dirfd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (unsigned long long)flags,
		.resolve = GEN_RESOLVE,
	};
	long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* Why openat() of @part failed: a link met with O_NOFOLLOW is -ELOOP, as openat2 says it. */
static int refusal(int fd, const char *part)
{
	int ret = -errno;
	struct stat st;

	if (ret == -ENOTDIR && fstatat(fd, part, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		ret = -ELOOP;
	return ret;
}

/*
 * Without openat2 (before Linux 5.6, or a seccomp filter): O_NOFOLLOW one
 * component at a time. BCI_RESULTGEN_NO_OPENAT2 in the environment takes
 * this way on any kernel, so that tests cover it.
 */
static int open_by_component(int dirfd, const char *rel, int flags)
{
	char part[NAME_MAX + 1];
	const char *p = rel;
	int fd = dirfd, next;

	for (;;) {
		size_t n = strcspn(p, "/");
		bool last = p[n] == '\0';

		if (n == 0 || n > NAME_MAX || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.')) {
			next = -EINVAL;
		} else {
			memcpy(part, p, n);
			part[n] = '\0';
			next = openat(fd, part, last ? flags | O_NOFOLLOW
						     : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (next < 0)
				next = refusal(fd, part);
		}
		if (fd != dirfd)
			close(fd);
		if (next < 0 || last)
			return next;
		fd = next;
		p += n + 1;
	}
}

/* What a refused open says, naming @rel below the directory; -ENOENT is left to the caller. */
int gen_open_refused_path(struct gen *g, const char *rel, int fd)
{
	/* RESOLVE_NO_SYMLINKS says ELOOP; O_NOFOLLOW on the last component too. */
	if (fd == -ELOOP || fd == -EXDEV)
		return gen_error(g, -ELOOP, "%s/%s: a symbolic link on the way: refused (results "
				 "are read only from regular files inside the directory)", g->dir, rel);
	return gen_error(g, fd, "%s/%s: %s", g->dir, rel, strerror(-fd));
}

int gen_open_below(const struct gen *g, int at, const char *rel, int flags)
{
	int fd = g->no_openat2 ? -ENOSYS : open_beneath(at, rel, flags);

	if (fd == -ENOSYS || fd == -EPERM)
		fd = open_by_component(at, rel, flags);
	return fd;
}

/*
 * The job folder is opened once, and its files relative to it: one path
 * component to resolve each, not the whole path from the top.
 */
static int dir_job_enter(struct gen *g, size_t index)
{
	int fd;

	(void)index;	/* g->job_dir names it */
	fd = gen_open_below(g, g->dirfd, g->job_dir, GEN_DIR_FLAGS);
	if (fd == -ENOENT || fd == -ENOTDIR)
		return -ENOENT;	/* no folder (or not one): the job never ran */
	if (fd < 0)
		return gen_open_refused_path(g, g->job_dir, fd);
	g->jobfd = fd;
	return 0;
}

static void dir_job_leave(struct gen *g)
{
	if (g->jobfd >= 0)
		close(g->jobfd);
	g->jobfd = -1;
}

/*
 * A regular file without following a symbolic link anywhere on the way.
 * O_NONBLOCK: a FIFO must not block the open; it is refused after fstat.
 * It stays set: it changes nothing for a regular file (saves an fcntl).
 * No message here (the prefetch threads call it too): the fd, or -errno
 * with *@stage saying which step failed, for gen_open_refused().
 */
int gen_open_regular(const struct gen *g, int at, const char *rel, bool likely_absent, int *stage,
		     unsigned long long *size)
{
	int fd, ret;

	*stage = GEN_OPEN_FAILED;
	/*
	 * A failed open costs the kernel a file allocated and freed; a failed
	 * access check does not. Only its ENOENT is
	 * taken (no such entry below @at, the last component being the only
	 * one a job file has); anything else is left to the open's rules.
	 */
	if (likely_absent && !strchr(rel, '/') &&
	    faccessat(at, rel, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		return -ENOENT;
	fd = gen_open_below(g, at, rel, GEN_FILE_FLAGS);
	if (fd < 0)
		return fd;
	ret = gen_regular_size(fd, stage, size);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

int gen_regular_size(int fd, int *stage, unsigned long long *size)
{
	struct stat st;

	*stage = GEN_OPEN_STAT_FAILED;
	if (fstat(fd, &st) < 0)
		return -errno;
	*stage = GEN_OPEN_NOT_REGULAR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*size = (unsigned long long)st.st_size;
	return 0;
}

bool gen_job_file_likely_absent(const char *name)
{
	return !strcmp(name, BCI_RESULTS_JOB_COMMS) || !strcmp(name, BCI_RESULTS_JOB_INCOMPLETE);
}

int gen_open_refused(struct gen *g, const char *rel, int ret, int stage)
{
	if (ret == -ENOENT && stage == GEN_OPEN_FAILED)
		return ret;
	if (stage == GEN_OPEN_FAILED)
		return gen_open_refused_path(g, rel, ret);
	if (stage == GEN_OPEN_STAT_FAILED)
		return gen_error(g, ret, "%s/%s: %s", g->dir, rel, strerror(-ret));
	return gen_error(g, -EINVAL, "%s/%s: not a regular file: refused", g->dir, rel);
}

static int dir_open(struct gen *g, const char *rel, bool in_job, struct gen_file *f)
{
	const char *slash = in_job ? strrchr(rel, '/') : NULL;
	unsigned long long size = 0;
	int fd, stage;

	if (in_job && (g->jobfd < 0 || !slash))
		return gen_error(g, -EINVAL, "%s/%s: no job folder entered", g->dir, rel);
	fd = gen_open_regular(g, in_job ? g->jobfd : g->dirfd, in_job ? slash + 1 : rel,
			      in_job && gen_job_file_likely_absent(slash + 1), &stage, &size);
	if (fd < 0)
		return gen_open_refused(g, rel, fd, stage);
	*f = (struct gen_file){ .fd = fd, .size = size };
	return 0;
}

static void dir_close(struct gen *g, struct gen_file *f)
{
	(void)g;
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

const struct gen_source gen_dir_source = {
	.job_enter = dir_job_enter,
	.job_leave = dir_job_leave,
	.open = dir_open,
	.close = dir_close,
};

/*
 * A memory source (resultgen.h): the files an archive handed over, one job
 * folder's at a time. A file spilled to a file of the caller's is opened as
 * a dup of it (the readers use pread: the shared offset does not matter).
 */
static int mem_job_enter(struct gen *g, size_t index)
{
	(void)index;	/* g->job_dir names it */
	for (size_t i = 0; i < g->mem->count; i++) {
		const char *path = g->mem->files[i].path;

		if (!strncmp(path, g->job_dir, g->job_dir_len) && path[g->job_dir_len] == '/')
			return 0;
	}
	return -ENOENT;	/* nothing of the folder: the job never ran */
}

static void mem_job_leave(struct gen *g)
{
	(void)g;
}

static int mem_open(struct gen *g, const char *rel, bool in_job, struct gen_file *f)
{
	(void)in_job;	/* @rel is the whole "N/name" path either way */
	for (size_t i = 0; i < g->mem->count; i++) {
		const struct bci_results_mem_file *m = &g->mem->files[i];
		struct stat st;
		int fd;

		if (strcmp(m->path, rel))
			continue;
		if (m->fd < 0) {
			*f = (struct gen_file){ .fd = -1, .data = m->data ? m->data : "",
						.size = m->len };
			return 0;
		}
		fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0 || fstat(fd, &st) < 0) {
			int ret = gen_error(g, -errno, "%s/%s: %s", g->dir, rel, strerror(errno));

			if (fd >= 0)
				close(fd);
			return ret;
		}
		*f = (struct gen_file){ .fd = fd, .size = (unsigned long long)st.st_size };
		return 0;
	}
	return -ENOENT;
}

const struct gen_source gen_mem_source = {
	.job_enter = mem_job_enter,
	.job_leave = mem_job_leave,
	.open = mem_open,
	.close = dir_close,
};

void gen_job_rel(const struct gen *g, const char *name, char *rel, size_t size)
{
	size_t len = strlen(name);

	if (size == 0)
		return;
	if (g->job_dir_len + 1 + len >= size) {
		snprintf(rel, size, "%s/%s", g->job_dir, name);
		return;
	}
	memcpy(rel, g->job_dir, g->job_dir_len);
	rel[g->job_dir_len] = '/';
	memcpy(rel + g->job_dir_len + 1, name, len + 1);
}

int gen_open(struct gen *g, const char *rel, bool in_job, struct gen_file *f)
{
	*f = (struct gen_file){ .fd = -1 };
	return gen_source_of(g)->open(g, rel, in_job, f);
}

void gen_close(struct gen *g, struct gen_file *f)
{
	gen_source_of(g)->close(g, f);
}

ssize_t gen_file_pread(const struct gen_file *f, char *buf, size_t len, unsigned long long offset)
{
	ssize_t n;

	if (f->fd < 0) {
		if (offset >= f->size)
			return 0;
		if (len > f->size - offset)
			len = (size_t)(f->size - offset);
		memcpy(buf, f->data + offset, len);
		return (ssize_t)len;
	}
	do
		n = pread(f->fd, buf, len, (off_t)offset);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/*
 * Reads all of @f into a NUL-terminated buffer: -EFBIG past @max bytes.
 * The size fstat gave is asked for in one read; a read that falls short
 * of what was asked, once that size is in, is the end (a regular file's
 * read stops short only there), so a small file costs one read.
 */
static int read_whole(const struct gen_file *f, size_t max, char **text, size_t *len)
{
	struct bci_str b = { 0 };
	size_t want = f->size < max ? (size_t)f->size + 1 : max + 1;
	int ret = 0;

	for (;;) {
		ssize_t n;

		if (want > max - b.len + 1)
			want = max - b.len + 1;
		ret = bci_str_reserve(&b, b.len + want);
		if (ret < 0)
			break;
		n = gen_file_pread(f, b.data + b.len, want, b.len);
		if (n <= 0) {
			ret = (int)n;
			break;
		}
		b.len += (size_t)n;
		b.data[b.len] = '\0';
		if (b.len > max) {
			ret = -EFBIG;
			break;
		}
		if ((size_t)n < want && b.len >= f->size)
			break;
		want = b.len < (1 << 20) ? b.len + 1 : 1 << 20;
	}
	if (ret < 0) {
		bci_str_free(&b);
		return ret;
	}
	if (!b.data && bci_str_reserve(&b, 1) == 0)
		b.data[0] = '\0';
	*len = b.len;
	*text = bci_str_steal(&b);
	return *text ? 0 : -ENOMEM;
}

int gen_read_file(struct gen *g, const char *rel, bool in_job, size_t max, char **text, size_t *len)
{
	struct gen_file f;
	int ret = gen_open(g, rel, in_job, &f);

	if (ret < 0)
		return ret;
	ret = read_whole(&f, max, text, len);
	gen_close(g, &f);
	if (ret == -EFBIG)
		return gen_error(g, ret, "%s/%s: larger than %zu bytes", g->dir, rel, max);
	if (ret < 0)
		return gen_error(g, ret, "%s/%s: %s", g->dir, rel, strerror(-ret));
	return 0;
}

int gen_read_small(struct gen *g, const char *rel, bool in_job, size_t max, char **text, size_t *len)
{
	int ret;

	*text = NULL;
	ret = gen_read_file(g, rel, in_job, g->max_file, text, len);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	if (*len > max) {
		*len = max;
		(*text)[max] = '\0';
	}
	return 0;
}

/* ---- the line reader ---- */

void line_reader_init_with(struct line_reader *r, const struct gen_file *file,
			   unsigned long long begin, unsigned long long end, char *buf, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->file = file;
	r->pos = begin;
	r->end = end;
	r->cap = cap;
	r->buf = buf;
	r->borrowed = true;
}

int line_reader_init(struct line_reader *r, const struct gen_file *file, unsigned long long begin,
		     unsigned long long end, size_t longest)
{
	line_reader_init_with(r, file, begin, end, malloc(longest + 1), longest + 1);
	r->borrowed = false;
	return r->buf ? 0 : -ENOMEM;
}

void line_reader_release(struct line_reader *r)
{
	if (!r->borrowed)
		free(r->buf);
	r->buf = NULL;
}

/* Reads more after what is buffered: 1, 0 at the end of the range, or -errno. */
static int line_reader_fill(struct line_reader *r)
{
	unsigned long long at;
	size_t room;
	ssize_t n;

	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->pos += r->start;
		r->len -= r->start;
		r->start = 0;
	}
	at = r->pos + r->len;
	room = r->cap - 1 - r->len;
	if (at >= r->end)
		return 0;
	if (room > r->end - at)
		room = (size_t)(r->end - at);
	n = gen_file_pread(r->file, r->buf + r->len, room, at);
	if (n < 0)
		return (int)n;
	r->len += (size_t)n;
	return n > 0;
}

int line_reader_next(struct line_reader *r, struct line *line)
{
	bool at_end = false;

	if (r->saved_at) {
		*r->saved_at = r->saved;
		r->saved_at = NULL;
	}
	for (;;) {
		char *p = r->buf + r->start;
		size_t avail = r->len - r->start;
		char *nl = memchr(p, '\n', avail);
		size_t n;
		int ret;

		if (r->skip) {
			r->start = nl ? (size_t)(nl - r->buf) + 1 : r->len;
			r->skip = !nl;
			if (nl)
				continue;
			/* The cut line runs to the end of the range: nothing more to hand out. */
			if (at_end)
				return 0;
		} else if (nl || avail == r->cap - 1 || (at_end && avail > 0)) {
			n = nl ? (size_t)(nl - p) + 1 : avail;
			line->text = p;
			line->len = n;
			line->offset = r->pos + r->start;
			line->cut = !nl && !at_end;
			r->skip = line->cut;
			r->start += n;
			r->saved_at = p + n;
			r->saved = p[n];
			p[n] = '\0';
			return 1;
		} else if (at_end) {
			return 0;
		}
		ret = line_reader_fill(r);
		if (ret < 0)
			return ret;
		at_end = ret == 0;
	}
}

/* ---- files over the limit ---- */

static int read_exact_at(const struct gen_file *f, char *buf, size_t len, unsigned long long offset)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = gen_file_pread(f, buf + done, len - done, offset + done);
		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;	/* the file shrank under us */
		done += (size_t)n;
	}
	return 0;
}

int gen_append_marker(struct gen *g, struct bci_str *b, const char *rel,
		      unsigned long long left_out, unsigned long long size)
{
	return bci_str_appendf(b, "[bootci: %llu bytes left out here: %s is %llu bytes, over the "
				  "%zu-byte limit of results.json; the whole file is in the results "
				  "directory]\n", left_out, rel, size, g->max_file);
}

static bool is_protocol_line(const char *text, size_t len)
{
	return bci_igt_line_classify(text, len) != BCI_IGT_LINE_OTHER;
}

/* What read_condensed builds: the text kept, and where the file was last kept up to. */
struct condensed {
	struct bci_str out;
	unsigned long long kept_end;
	size_t budget;			/* bytes of middle protocol lines still kept */
	bool over_budget;
};

/*
 * The head: the first half-limit up to its last whole line. Returns 1 when
 * it holds a NUL byte (nothing after it counts), 0, or -errno; *@cut is
 * true when the head has no newline at all.
 */
static int condense_head(struct condensed *c, const struct gen_file *file, size_t half, bool *cut)
{
	char *nl;
	int ret = bci_str_reserve(&c->out, half + 1);

	if (ret == 0)
		ret = read_exact_at(file, c->out.data, half, 0);
	if (ret < 0)
		return ret;
	c->out.data[half] = '\0';
	if (memchr(c->out.data, '\0', half)) {
		c->out.len = half;
		return 1;
	}
	nl = memrchr(c->out.data, '\n', half);
	*cut = !nl;
	c->out.len = nl ? (size_t)(nl - c->out.data) + 1 : half;
	c->out.data[c->out.len] = '\0';
	c->kept_end = c->out.len;
	return *cut ? bci_str_append(&c->out, "\n", 1) : 0;
}

/*
 * The middle [kept_end, tail_start): only its protocol lines, each after a
 * marker for what was left out before it. Returns 1 when a NUL byte stopped
 * it, 0, or -errno.
 */
static int condense_middle(struct gen *g, struct condensed *c, const char *rel,
			   const struct gen_file *file, unsigned long long size, unsigned long long tail_start, bool head_cut)
{
	struct line_reader r;
	struct line line;
	bool first = true;
	int ret = line_reader_init(&r, file, c->kept_end, tail_start, PROTOCOL_LINE_MAX);

	while (ret == 0 && (ret = line_reader_next(&r, &line)) > 0) {
		/* The rest of the head's last line, when the head ended inside it. */
		bool whole = !(first && head_cut);
		size_t keep = line.len + (line.text[line.len - 1] == '\n' ? 0 : 1), before;

		first = false;
		ret = 0;
		if (memchr(line.text, '\0', line.len)) {
			ret = 1;
			break;
		}
		/* A piece without its newline that is not cut runs on into the tail. */
		if (!whole || (line.text[line.len - 1] != '\n' && !line.cut) ||
		    !is_protocol_line(line.text, line.len))
			continue;
		/* Room for the line and a marker before it, roughly. */
		if (keep + MARKER_SIZE > c->budget) {
			c->over_budget = true;
			continue;
		}
		before = c->out.len;
		if (line.offset > c->kept_end)
			ret = gen_append_marker(g, &c->out, rel, line.offset - c->kept_end, size);
		if (ret == 0)
			ret = bci_str_append(&c->out, line.text, line.len);
		if (ret == 0 && keep > line.len)
			ret = bci_str_append(&c->out, "\n", 1);
		c->budget -= c->out.len - before < c->budget ? c->out.len - before : c->budget;
		c->kept_end = line.offset + line.len;
	}
	line_reader_release(&r);
	return ret;
}

/*
 * An out.txt or err.txt over the limit, as the results are made from it:
 * its first half-limit (up to the last whole line), every protocol line of
 * the middle (so results, times and dynamic subtests stay right; a quarter
 * of the limit at most), then its last half-limit (from the first whole
 * line), with a marker line wherever bytes were left out. Left-out bytes
 * are whole non-protocol lines, so the warn override on err.txt (output
 * before a protocol line) sees what it would have seen in the whole file.
 * igt_runner stops reading at a NUL byte; so does this.
 */
static int read_condensed(struct gen *g, const char *rel, const struct gen_file *file,
			  unsigned long long size, char **text, size_t *len)
{
	size_t half = g->max_file / 2, tail_skip = 0;
	unsigned long long tail_start = size - half;
	struct condensed c = { .budget = g->max_file / 4 };
	char *tail = NULL, *nl;
	bool head_cut = false;
	int ret = condense_head(&c, file, half, &head_cut);

	if (ret != 0)
		goto done;
	tail = malloc(half + 1);
	ret = tail ? read_exact_at(file, tail, half, tail_start) : -ENOMEM;
	if (ret < 0)
		goto done;
	nl = memchr(tail, '\n', half);
	if (nl && (size_t)(nl - tail) + 1 < half)
		tail_skip = (size_t)(nl - tail) + 1;
	tail_start += tail_skip;
	ret = condense_middle(g, &c, rel, file, size, tail_start, head_cut);
	if (ret == 1) {
		/* A NUL byte: nothing after it counts, the tail neither. */
		ret = gen_append_marker(g, &c.out, rel, size - c.kept_end, size);
	} else if (ret == 0) {
		if (tail_start > c.kept_end)
			ret = gen_append_marker(g, &c.out, rel, tail_start - c.kept_end, size);
		if (ret == 0)
			ret = bci_str_append(&c.out, tail + tail_skip, half - tail_skip);
	}
	if (ret == 0 && c.over_budget)
		gen_warn(g, "%s/%s: too many protocol lines in its left-out middle; "
			 "tests there may show as incomplete", g->dir, rel);
done:
	free(tail);
	if (ret < 0) {
		bci_str_free(&c.out);
		return gen_error(g, ret, "%s/%s: %s", g->dir, rel, strerror(-ret));
	}
	gen_warn(g, "%s/%s: %llu bytes, over the %zu-byte limit: results.json keeps its first and "
		 "last %zu bytes and its protocol lines", g->dir, rel, size, g->max_file, half);
	*len = c.out.len;
	*text = bci_str_steal(&c.out);
	return *text ? 0 : gen_error(g, -ENOMEM, "%s/%s: %s", g->dir, rel, strerror(ENOMEM));
}

int gen_read_job_text(struct gen *g, const char *rel, char **text, size_t *len)
{
	struct gen_file f;
	struct stat st;
	int ret;

	ret = gen_open(g, rel, true, &f);
	if (ret < 0)
		return ret;
	ret = read_whole(&f, g->max_file, text, len);
	if (ret == 0 || ret != -EFBIG) {
		if (ret < 0)
			gen_error(g, ret, "%s/%s: %s", g->dir, rel, strerror(-ret));
		goto out;
	}
	/* Over the limit (perhaps grown since it was opened): the size is what fstat says now. */
	if (f.fd >= 0 && fstat(f.fd, &st) < 0) {
		ret = gen_error(g, -errno, "%s/%s: %s", g->dir, rel, strerror(errno));
		goto out;
	}
	if (f.fd >= 0)
		f.size = (unsigned long long)st.st_size;
	if (f.size <= g->max_file) {
		ret = gen_error(g, -EIO, "%s/%s: reads as more than its size of %llu bytes",
				g->dir, rel, f.size);
		goto out;
	}
	ret = read_condensed(g, rel, &f, f.size, text, len);
out:
	gen_close(g, &f);
	return ret;
}

/* ---- metadata.txt ---- */

static int parse_int(const char *s, int *v)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\r')
		end++;
	if (end == s || *end || errno || n < -1000000 || n > 1000000)
		return -EINVAL;
	*v = (int)n;
	return 0;
}

/* igt_runner writes "key : value", the value running to the end of the line. */
static int split_setting(struct gen *g, char *p, size_t lineno, char **key, char **value)
{
	*key = p;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	if (*p)
		*p++ = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != ':')
		return gen_error(g, -EINVAL, "%s/%s:%zu: expected 'key : value'", g->dir,
				 BCI_RESULTS_METADATA, lineno);
	p++;
	while (*p == ' ' || *p == '\t')
		p++;
	*value = p;
	if (**value == '\0')
		return gen_error(g, -EINVAL, "%s/%s:%zu: '%s' has no value", g->dir,
				 BCI_RESULTS_METADATA, lineno, *key);
	return 0;
}

/* One setting that shapes results.json; others are ignored. */
static int apply_setting(struct gen *g, const char *key, const char *value, size_t lineno,
			 bool *warn_level_set)
{
	struct settings *s = &g->settings;
	int v;

	if (!strcmp(key, "name")) {
		free(s->name);
		s->name = strdup(value);
		return s->name ? 0 : -ENOMEM;
	}
	if (strcmp(key, "dmesg_warn_level") && strcmp(key, "piglit_style_dmesg") &&
	    strcmp(key, "multiple_mode") && strcmp(key, "prune_mode"))
		return 0;
	if (parse_int(value, &v) < 0)
		return gen_error(g, -EINVAL, "%s/%s:%zu: %s: '%s' is not a number", g->dir,
				 BCI_RESULTS_METADATA, lineno, key, value);
	if (!strcmp(key, "dmesg_warn_level")) {
		s->dmesg_warn_level = v;
		*warn_level_set = v >= 0;
	} else if (!strcmp(key, "piglit_style_dmesg")) {
		s->piglit_style_dmesg = v != 0;
	} else if (!strcmp(key, "multiple_mode")) {
		s->multiple_mode = v != 0;
	} else {
		if (v < PRUNE_KEEP_DYNAMIC || v > PRUNE_KEEP_REQUESTED)
			return gen_error(g, -EINVAL, "%s/%s:%zu: prune_mode %d is not 0..3", g->dir,
					 BCI_RESULTS_METADATA, lineno, v);
		s->prune_mode = v;
	}
	return 0;
}

int read_settings(struct gen *g)
{
	char *text = NULL, *line, *next, *key = NULL, *value = NULL;
	size_t len, lineno = 0;
	bool warn_level_set = false;
	int ret;

	ret = gen_read_file(g, BCI_RESULTS_METADATA, false, g->max_file, &text, &len);
	if (ret == -ENOENT)
		return gen_error(g, -ENOENT, "%s/%s: missing (not a results directory?)", g->dir,
				 BCI_RESULTS_METADATA);
	if (ret < 0)
		return ret;
	for (line = text; line && *line; line = next) {
		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		while (*line == ' ' || *line == '\t' || *line == '\r')
			line++;
		if (*line == '\0')
			continue;
		ret = split_setting(g, line, lineno, &key, &value);
		if (ret == 0)
			ret = apply_setting(g, key, value, lineno, &warn_level_set);
		if (ret < 0)
			goto out;
	}
	/* igt_runner's defaults: warnings from KERN_WARNING up, KERN_NOTICE piglit-style. */
	if (!warn_level_set)
		g->settings.dmesg_warn_level = g->settings.piglit_style_dmesg ? 5 : 4;
out:
	free(text);
	return ret;
}

/* ---- joblist.txt ---- */

void job_free(struct job *job)
{
	size_t i;

	for (i = 0; i < job->requested_count; i++)
		free(job->requested[i]);
	free(job->requested);
	free(job->binary);
	memset(job, 0, sizeof(*job));
}

int parse_job_line(char *line, struct job *job)
{
	char *list, *comma;

	memset(job, 0, sizeof(*job));
	list = strchr(line, ' ');
	if (list)
		*list++ = '\0';
	job->binary = strdup(line);
	if (!job->binary)
		return -ENOMEM;
	while (list) {
		char **req;

		comma = strchr(list, ',');
		if (comma)
			*comma++ = '\0';
		req = realloc(job->requested, (job->requested_count + 1) * sizeof(*req));
		if (!req)
			return -ENOMEM;
		job->requested = req;
		req[job->requested_count] = strdup(list);
		if (!req[job->requested_count])
			return -ENOMEM;
		job->requested_count++;
		list = comma;
	}
	return 0;
}
