// SPDX-License-Identifier: MIT
/*
 * igt_runner-compatible results generator (see resultgen.h).
 *
 * The order of the steps for one job folder follows igt_runner's, because
 * each step only fills what earlier ones left empty: the journal first
 * (timeouts, aborts, exit codes), then out.txt and err.txt (subtest results
 * and times), then dmesg.txt, then the overrides (warn, dmesg-warn,
 * dmesg-fail, incomplete when nothing was written at all), then pruning of
 * dynamic subtests, then the totals.
 */
#include "resultgen.h"

#include "fsutil.h"

#include <limits.h>
#include "igt_protocol.h"
#include "kmsg_record.h"
#include "results_dir.h"
#include "strbuf.h"
#include "jsonw.h"

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME_SIZE 256		/* igt_runner's piglit name buffers */

enum prune_mode {
	PRUNE_KEEP_DYNAMIC = 0,
	PRUNE_KEEP_SUBTESTS = 1,
	PRUNE_KEEP_ALL = 2,
	PRUNE_KEEP_REQUESTED = 3,
};

#define RESULT_COUNT BCI_IGT_RESULT_COUNT
#define result_names bci_igt_result_names

/*
 * The kernel messages at warning level or above that do not make a result
 * dmesg-warn/dmesg-fail: igt_runner's list, as POSIX extended regexes.
 */
static const char dmesg_allowlist[] =
	"ACPI: button: The lid device is not compliant to SW_LID"
	"|ACPI: .*: Unable to dock!"
	"|IRQ [0-9]+: no longer affine to CPU[0-9]+"
	"|IRQ fixup: irq [0-9]+ move in progress, old vector [0-9]+"
	"|Setting dangerous option [a-z_]+ - tainting kernel"
	"|Suspending console\\(s\\) \\(use no_console_suspend to debug\\)"
	"|atkbd serio[0-9]+: Failed to (deactivate|enable) keyboard on isa[0-9]+/serio[0-9]+"
	"|cache: parent cpu[0-9]+ should not be sleeping"
	"|hpet[0-9]+: lost [0-9]+ rtc interrupts"
	"|i915: probe of [0-9a-fA-F:.]+ failed with error -25"
	"|mock: DMA: Out of SW-IOMMU space for [0-9]+ bytes"
	"|usb usb[0-9]+: root hub lost power or was reset";
/* With piglit-style dmesg handling only driver messages count, the reverse. */
static const char dmesg_piglit_blocklist[] = "(\\[drm:|drm_|intel_|i915_|\\[drm\\])";

static const char STARTING_SUBTEST_DMESG[] = BCI_IGT_DMESG_STARTING_SUBTEST;
static const char STARTING_DYNAMIC_DMESG[] = BCI_IGT_DMESG_STARTING_DYNAMIC;
static const char ADD_IGNORED_REGEX_DMESG[] = BCI_IGT_DMESG_ADD_IGNORED_REGEX;
static const char NO_OUTPUT_TEXT[] =
	"This test didn't produce any output. The machine probably rebooted ungracefully.\n";

struct text {
	const char *ptr;	/* NULL: the field is absent */
	size_t len;
};

struct test {
	char name[NAME_SIZE];
	struct text out, err, dmesg, warnings, version;
	const char *result;	/* a static string, NULL when not set */
	bool has_time;
	double time;
	bool deleted;		/* pruned */
};

struct subtest {
	char *name;
	char **dynamic;
	size_t dynamic_count;
};

struct binary_stats {
	char name[NAME_SIZE];	/* "igt@binary" */
	bool in_totals;
	unsigned long counts[RESULT_COUNT];
	bool has_runtime;
	double runtime;
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


struct gen {
	const char *dir;
	char *err;
	size_t err_size;
	FILE *warnings;
	size_t max_file;
	struct settings settings;
	struct bci_jsonw w;
	regex_t dmesg_filter;

	struct binary_stats *bins;
	size_t bin_count;
	bool any_totals;
	unsigned long all_counts[RESULT_COUNT];

	/* state of the job being processed, released by job_reset() */
	const struct job *job;
	struct test **tests;
	size_t test_count, test_cap;
	struct subtest *subs;
	size_t sub_count;
	char **blobs;		/* text the tests point into */
	size_t blob_count, blob_cap;
};

/* ---- small helpers ---- */

__attribute__((format(printf, 3, 4)))
static int gen_error(struct gen *g, int ret, const char *fmt, ...)
{
	va_list ap;

	if (g->err && g->err_size) {
		va_start(ap, fmt);
		vsnprintf(g->err, g->err_size, fmt, ap);
		va_end(ap);
	}
	return ret;
}

__attribute__((format(printf, 2, 3)))
static void gen_warn(struct gen *g, const char *fmt, ...)
{
	va_list ap;

	fputs("warning: ", g->warnings);
	va_start(ap, fmt);
	vfprintf(g->warnings, fmt, ap);
	va_end(ap);
	fputc('\n', g->warnings);
}

static char *path_join(const char *a, const char *b)
{
	char *p;

	if (asprintf(&p, "%s/%s", a, b) < 0)
		return NULL;
	return p;
}

static int keep_blob(struct gen *g, char *blob)
{
	if (g->blob_count == g->blob_cap) {
		size_t cap = g->blob_cap ? g->blob_cap * 2 : 16;
		char **blobs = realloc(g->blobs, cap * sizeof(*blobs));

		if (!blobs) {
			free(blob);
			return -ENOMEM;
		}
		g->blobs = blobs;
		g->blob_cap = cap;
	}
	g->blobs[g->blob_count++] = blob;
	return 0;
}

/* Hands the buffer's text over to the job (as a text) and empties the buffer. */
static int strbuf_to_text(struct gen *g, struct bci_strbuf *b, struct text *t)
{
	int ret;

	if (!b->p) {
		t->ptr = "";
		t->len = 0;
		return 0;
	}
	t->ptr = b->p;
	t->len = b->len;
	ret = keep_blob(g, b->p);
	memset(b, 0, sizeof(*b));
	return ret;
}

/* Reads a whole file of the results directory; -ENOENT is left to the caller. */
static int read_text(struct gen *g, const char *path, char **buf, size_t *len)
{
	int ret = bci_read_file(path, buf, len, g->max_file);

	if (ret == -EFBIG)
		return gen_error(g, ret, "%s: larger than %zu bytes", path, g->max_file);
	if (ret < 0 && ret != -ENOENT)
		return gen_error(g, ret, "%s: %s", path, strerror(-ret));
	return ret;
}

/* ---- files over the limit ---- */

/*
 * Hands out the lines of the byte range [pos, end) of a file one at a time,
 * each with its newline and NUL-terminated in place (the byte after it is
 * put back on the next call). A line longer than the buffer is handed out
 * cut to the buffer, flagged, and the rest of it skipped.
 */
struct line_reader {
	int fd;
	unsigned long long pos;		/* file offset of buf[0] */
	unsigned long long end;
	char *buf;
	size_t cap, start, len;		/* buf[start, len) not handed out yet */
	bool skip;			/* inside the rest of a cut line */
	char *saved_at, saved;
};

struct line {
	char *text;
	size_t len;
	unsigned long long offset;	/* where it starts in the file */
	bool cut;			/* longer than the reader's buffer */
};

static int line_reader_init(struct line_reader *r, int fd, unsigned long long begin,
			    unsigned long long end, size_t longest)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->pos = begin;
	r->end = end;
	r->cap = longest + 1;
	r->buf = malloc(r->cap);
	return r->buf ? 0 : -ENOMEM;
}

static void line_reader_release(struct line_reader *r)
{
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
	do
		n = pread(r->fd, r->buf + r->len, room, (off_t)at);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	r->len += (size_t)n;
	return n > 0;
}

/* 1 and the next line in @line, 0 at the end, or -errno. */
static int line_reader_next(struct line_reader *r, struct line *line)
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

static int read_exact_at(int fd, char *buf, size_t len, unsigned long long offset)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, buf + done, len - done, (off_t)(offset + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;	/* the file shrank under us */
		done += (size_t)n;
	}
	return 0;
}

/* "3/out.txt": how markers and warnings name a job file. */
static const char *job_file_name(struct gen *g, const char *path)
{
	size_t n = strlen(g->dir);

	if (!strncmp(path, g->dir, n) && path[n] == '/')
		return path + n + 1;
	return path;
}

static int append_marker(struct gen *g, struct bci_strbuf *b, const char *path,
			 unsigned long long left_out, unsigned long long size)
{
	char text[PATH_MAX + 256];
	int n;

	n = snprintf(text, sizeof(text),
		     "[bootci: %llu bytes left out here: %s is %llu bytes, over the %zu-byte "
		     "limit of results.json; the whole file is in the results directory]\n",
		     left_out, job_file_name(g, path), size, g->max_file);
	if (n < 0)
		return -EINVAL;
	return bci_strbuf_append(b, text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

static bool is_protocol_line(const char *text, size_t len)
{
	return bci_igt_line_classify(text, len) != BCI_IGT_LINE_OTHER;
}

#define PROTOCOL_LINE_MAX 4096	/* longer protocol lines are kept cut */
#define MARKER_SIZE 256		/* a marker line, about */
#define DMESG_LINE_MAX 65536	/* kmsg records are far shorter */

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
static int read_condensed(struct gen *g, const char *path, int fd, unsigned long long size,
			  char **text, size_t *len)
{
	size_t half = g->max_file / 2, budget = g->max_file / 4, head_len, tail_skip = 0, before;
	unsigned long long tail_start = size - half, kept_end;
	struct bci_strbuf out = { 0 };
	struct line_reader r;
	struct line line;
	char *tail = NULL, *nl;
	bool over_budget = false, stopped = false, first = true, head_cut;
	int ret;

	ret = bci_strbuf_append(&out, "", 0);
	if (ret < 0)
		return ret;
	if (out.cap < half + 1) {
		char *p = realloc(out.p, half + 1);

		if (!p) {
			ret = -ENOMEM;
			goto fail;
		}
		out.p = p;
		out.cap = half + 1;
	}
	ret = read_exact_at(fd, out.p, half, 0);
	if (ret < 0)
		goto fail;
	out.p[half] = '\0';
	if (memchr(out.p, '\0', half)) {
		/* Nothing after the NUL counts: the head is all there is. */
		out.len = half;
		goto done;
	}
	nl = memrchr(out.p, '\n', half);
	head_cut = !nl;
	head_len = nl ? (size_t)(nl - out.p) + 1 : half;
	out.len = head_len;
	out.p[head_len] = '\0';
	if (head_cut)
		ret = bci_strbuf_append(&out, "\n", 1);
	if (ret < 0)
		goto fail;
	kept_end = head_len;

	tail = malloc(half + 1);
	if (!tail) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = read_exact_at(fd, tail, half, tail_start);
	if (ret < 0)
		goto fail;
	nl = memchr(tail, '\n', half);
	if (nl && (size_t)(nl - tail) + 1 < half)
		tail_skip = (size_t)(nl - tail) + 1;
	tail_start += tail_skip;

	ret = line_reader_init(&r, fd, head_len, tail_start, PROTOCOL_LINE_MAX);
	if (ret < 0)
		goto fail;
	while (ret == 0 && (ret = line_reader_next(&r, &line)) > 0) {
		/* The rest of the head's last line, when the head ended inside it. */
		bool whole = !(first && head_cut);
		size_t keep = line.len + (line.text[line.len - 1] == '\n' ? 0 : 1);

		first = false;
		ret = 0;
		if (memchr(line.text, '\0', line.len)) {
			stopped = true;
			break;
		}
		/* A piece without its newline that is not cut runs on into the tail. */
		if (!whole || (line.text[line.len - 1] != '\n' && !line.cut) ||
		    !is_protocol_line(line.text, line.len))
			continue;
		/* Room for the line and a marker before it, roughly. */
		if (keep + MARKER_SIZE > budget) {
			over_budget = true;
			continue;
		}
		before = out.len;
		if (line.offset > kept_end)
			ret = append_marker(g, &out, path, line.offset - kept_end, size);
		if (ret == 0)
			ret = bci_strbuf_append(&out, line.text, line.len);
		if (ret == 0 && keep > line.len)
			ret = bci_strbuf_append(&out, "\n", 1);
		budget -= out.len - before < budget ? out.len - before : budget;
		kept_end = line.offset + line.len;
	}
	line_reader_release(&r);
	if (ret < 0)
		goto fail;
	if (stopped) {
		ret = append_marker(g, &out, path, size - kept_end, size);
		goto done_warn;
	}
	if (tail_start > kept_end)
		ret = append_marker(g, &out, path, tail_start - kept_end, size);
	if (ret == 0)
		ret = bci_strbuf_append(&out, tail + tail_skip, half - tail_skip);
done_warn:
	if (ret < 0)
		goto fail;
	if (over_budget)
		gen_warn(g, "%s: too many protocol lines in its left-out middle; "
			 "tests there may show as incomplete", path);
done:
	gen_warn(g, "%s: %llu bytes, over the %zu-byte limit: results.json keeps its first and "
		 "last %zu bytes and its protocol lines", path, size, g->max_file, half);
	free(tail);
	*text = out.p;
	*len = out.len;
	return 0;
fail:
	free(tail);
	free(out.p);
	return gen_error(g, ret, "%s: %s", path, strerror(-ret));
}

/*
 * An out.txt or err.txt: whole up to the limit, condensed over it (see
 * read_condensed). -ENOENT is left to the caller.
 */
static int read_job_text(struct gen *g, const char *path, char **text, size_t *len)
{
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : gen_error(g, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		ret = gen_error(g, -errno, "%s: %s", path, strerror(errno));
		goto out_fd;
	}
	if ((unsigned long long)st.st_size <= g->max_file) {
		ret = bci_read_file(path, text, len, g->max_file);
		if (ret != -EFBIG) {
			if (ret < 0)
				ret = gen_error(g, ret, "%s: %s", path, strerror(-ret));
			goto out_fd;
		}
		/* It grew since: condense it after all. */
		if (fstat(fd, &st) < 0) {
			ret = gen_error(g, -errno, "%s: %s", path, strerror(errno));
			goto out_fd;
		}
	}
	ret = read_condensed(g, path, fd, (unsigned long long)st.st_size, text, len);
out_fd:
	close(fd);
	return ret;
}

/* ---- the per-job test table ---- */

static struct test *find_test(struct gen *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->test_count; i++)
		if (!g->tests[i]->deleted && !strcmp(g->tests[i]->name, name))
			return g->tests[i];
	return NULL;
}

static struct test *get_test(struct gen *g, const char *name)
{
	struct test *t = find_test(g, name);

	if (t)
		return t;
	if (g->test_count == g->test_cap) {
		size_t cap = g->test_cap ? g->test_cap * 2 : 16;
		struct test **tests = realloc(g->tests, cap * sizeof(*tests));

		if (!tests)
			return NULL;
		g->tests = tests;
		g->test_cap = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	snprintf(t->name, sizeof(t->name), "%s", name);
	g->tests[g->test_count++] = t;
	return t;
}

static void add_runtime(struct test *t, double time)
{
	t->time = t->has_time ? t->time + time : time;
	t->has_time = true;
}

static void set_runtime(struct test *t, double time)
{
	t->time = time;
	t->has_time = true;
}

static struct subtest *find_subtest(struct gen *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->sub_count; i++)
		if (!strcmp(g->subs[i].name, name))
			return &g->subs[i];
	return NULL;
}

/* Adds a subtest once, in first-seen order, as igt_runner's list does. */
static int add_subtest(struct gen *g, const char *name)
{
	struct subtest *subs;

	if (name[0] == '\0' || find_subtest(g, name))
		return 0;
	subs = realloc(g->subs, (g->sub_count + 1) * sizeof(*subs));
	if (!subs)
		return -ENOMEM;
	g->subs = subs;
	memset(&subs[g->sub_count], 0, sizeof(*subs));
	subs[g->sub_count].name = strdup(name);
	if (!subs[g->sub_count].name)
		return -ENOMEM;
	g->sub_count++;
	return 0;
}

static int add_dynamic(struct subtest *sub, const char *name)
{
	char **dyn;
	size_t i;

	for (i = 0; i < sub->dynamic_count; i++)
		if (!strcmp(sub->dynamic[i], name))
			return 0;
	dyn = realloc(sub->dynamic, (sub->dynamic_count + 1) * sizeof(*dyn));
	if (!dyn)
		return -ENOMEM;
	sub->dynamic = dyn;
	dyn[sub->dynamic_count] = strdup(name);
	if (!dyn[sub->dynamic_count])
		return -ENOMEM;
	sub->dynamic_count++;
	return 0;
}

static void job_reset(struct gen *g)
{
	size_t i, k;

	for (i = 0; i < g->test_count; i++)
		free(g->tests[i]);
	free(g->tests);
	g->tests = NULL;
	g->test_count = g->test_cap = 0;
	for (i = 0; i < g->sub_count; i++) {
		for (k = 0; k < g->subs[i].dynamic_count; k++)
			free(g->subs[i].dynamic[k]);
		free(g->subs[i].dynamic);
		free(g->subs[i].name);
	}
	free(g->subs);
	g->subs = NULL;
	g->sub_count = 0;
	for (i = 0; i < g->blob_count; i++)
		free(g->blobs[i]);
	free(g->blobs);
	g->blobs = NULL;
	g->blob_count = g->blob_cap = 0;
}

static void piglit_name(struct gen *g, const char *subtest, char name[NAME_SIZE])
{
	bci_igt_piglit_name(g->job->binary, subtest, name, NAME_SIZE);
}

/* ---- per-binary counters for "totals" and "runtimes" ---- */

static struct binary_stats *get_binary(struct gen *g, const char *name)
{
	struct binary_stats *bins;
	size_t i;

	for (i = 0; i < g->bin_count; i++)
		if (!strcmp(g->bins[i].name, name))
			return &g->bins[i];
	bins = realloc(g->bins, (g->bin_count + 1) * sizeof(*bins));
	if (!bins)
		return NULL;
	g->bins = bins;
	memset(&bins[g->bin_count], 0, sizeof(*bins));
	snprintf(bins[g->bin_count].name, NAME_SIZE, "%s", name);
	return &bins[g->bin_count++];
}

static int add_binary_runtime(struct gen *g, double time)
{
	char name[NAME_SIZE];
	struct binary_stats *b;

	piglit_name(g, NULL, name);
	b = get_binary(g, name);
	if (!b)
		return -ENOMEM;
	b->runtime = b->has_runtime ? b->runtime + time : time;
	b->has_runtime = true;
	return 0;
}

static void count_result(struct binary_stats *b, struct gen *g, const char *result)
{
	int idx = bci_igt_result_index(result);

	/* igt_runner only warns about a result it has no counter for. */
	if (idx < 0)
		return;
	b->counts[idx]++;
	g->all_counts[idx]++;
}

/* Counts the job's results into "", "root" and "igt@binary", igt_runner's way. */
static int add_to_totals(struct gen *g, const char *binary)
{
	char name[NAME_SIZE], dyn_name[NAME_SIZE];
	struct binary_stats *b;
	struct test *t;
	size_t i, k;

	bci_igt_piglit_name(binary, NULL, name, NAME_SIZE);
	b = get_binary(g, name);
	if (!b)
		return -ENOMEM;
	g->any_totals = true;
	b->in_totals = true;

	if (g->sub_count == 0) {
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		if (t->result)
			count_result(b, g, t->result);
		return 0;
	}
	for (i = 0; i < g->sub_count; i++) {
		bci_igt_piglit_name(binary, g->subs[i].name, name, NAME_SIZE);
		t = find_test(g, name);
		if (t) {
			/* igt_runner stops counting this job at a test without a result. */
			if (!t->result)
				return 0;
			count_result(b, g, t->result);
		}
		for (k = 0; k < g->subs[i].dynamic_count; k++) {
			bci_igt_piglit_name_dynamic(name, g->subs[i].dynamic[k], dyn_name, NAME_SIZE);
			t = find_test(g, dyn_name);
			if (!t)
				continue;
			if (!t->result)
				return 0;
			count_result(b, g, t->result);
		}
	}
	return 0;
}

/* ---- metadata.txt and joblist.txt ---- */

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

static int read_settings(struct gen *g)
{
	struct settings *s = &g->settings;
	char *path, *text = NULL, *line, *next;
	size_t len, lineno = 0;
	bool warn_level_set = false;
	int ret, v;

	path = path_join(g->dir, BCI_RESULTS_METADATA);
	if (!path)
		return -ENOMEM;
	ret = read_text(g, path, &text, &len);
	if (ret == -ENOENT)
		ret = gen_error(g, -ENOENT, "%s: missing (not a results directory?)", path);
	if (ret < 0)
		goto out_path;

	for (line = text; line && *line; line = next) {
		char *key, *value, *p;

		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		p = line;
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (*p == '\0')
			continue;
		/* igt_runner writes "key : value", the value running to the end of the line. */
		key = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ':') {
			ret = gen_error(g, -EINVAL, "%s:%zu: expected 'key : value'", path, lineno);
			goto out_text;
		}
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		value = p;
		if (*value == '\0') {
			ret = gen_error(g, -EINVAL, "%s:%zu: '%s' has no value", path, lineno, key);
			goto out_text;
		}

		if (!strcmp(key, "name")) {
			free(s->name);
			s->name = strdup(value);
			if (!s->name) {
				ret = -ENOMEM;
				goto out_text;
			}
			continue;
		}
		if (strcmp(key, "dmesg_warn_level") && strcmp(key, "piglit_style_dmesg") &&
		    strcmp(key, "multiple_mode") && strcmp(key, "prune_mode"))
			continue;	/* settings that do not shape results.json */
		if (parse_int(value, &v) < 0) {
			ret = gen_error(g, -EINVAL, "%s:%zu: %s: '%s' is not a number",
					path, lineno, key, value);
			goto out_text;
		}
		if (!strcmp(key, "dmesg_warn_level")) {
			s->dmesg_warn_level = v;
			warn_level_set = v >= 0;
		} else if (!strcmp(key, "piglit_style_dmesg")) {
			s->piglit_style_dmesg = v != 0;
		} else if (!strcmp(key, "multiple_mode")) {
			s->multiple_mode = v != 0;
		} else {
			if (v < PRUNE_KEEP_DYNAMIC || v > PRUNE_KEEP_REQUESTED) {
				ret = gen_error(g, -EINVAL, "%s:%zu: prune_mode %d is not 0..3",
						path, lineno, v);
				goto out_text;
			}
			s->prune_mode = v;
		}
	}
	/* igt_runner's defaults: warnings from KERN_WARNING up, KERN_NOTICE piglit-style. */
	if (!warn_level_set)
		s->dmesg_warn_level = s->piglit_style_dmesg ? 5 : 4;
	ret = 0;
out_text:
	free(text);
out_path:
	free(path);
	return ret;
}

static void job_free(struct job *job)
{
	size_t i;

	for (i = 0; i < job->requested_count; i++)
		free(job->requested[i]);
	free(job->requested);
	free(job->binary);
	memset(job, 0, sizeof(*job));
}

/* One joblist.txt line: "binary" or "binary sub1,sub2,...". */
static int parse_job_line(char *line, struct job *job)
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

/* ---- journal.txt ---- */

/* "exit:": the binary's runtime, and the test's when it has no subtests. */
static int journal_exit(struct gen *g, const struct bci_job_journal_line *entry)
{
	char name[NAME_SIZE];
	struct test *t;
	int ret = add_binary_runtime(g, entry->time);

	if (ret < 0)
		return ret;
	if (g->sub_count == 0 && g->job->requested_count == 0) {
		piglit_name(g, NULL, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		add_runtime(t, entry->time);
	}
	return 0;
}

/* "timeout:": it belongs to the subtest that was running. */
static int journal_timeout(struct gen *g, const struct bci_job_journal_line *entry)
{
	char name[NAME_SIZE];
	struct test *t;

	if (g->sub_count == 0)
		return 0;
	piglit_name(g, g->subs[g->sub_count - 1].name, name);
	t = get_test(g, name);
	if (!t)
		return -ENOMEM;
	t->result = "timeout";
	add_runtime(t, entry->time);
	return add_binary_runtime(g, entry->time);
}

static int fill_from_journal(struct gen *g, const char *path, char *text, size_t len)
{
	const struct job *job = g->job;
	int exitcode = BCI_RESULTS_EXIT_INCOMPLETE;
	bool has_timeout = false;
	char name[NAME_SIZE];
	size_t lineno = 0;
	char *line = text, *end = text + len;
	struct test *t;
	int ret;

	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		bool terminated = nl != NULL;
		struct bci_job_journal_line entry;

		lineno++;
		if (!nl)
			nl = end;
		*nl = '\0';
		if (strlen(line) != (size_t)(nl - line))
			return gen_error(g, -EINVAL, "%s:%zu: NUL byte in line", path, lineno);

		ret = bci_job_journal_parse_line(line, terminated, &entry);
		if (ret < 0)
			return gen_error(g, -EINVAL, "%s:%zu: malformed %s line '%s'", path, lineno,
					 entry.kind == BCI_JOB_JOURNAL_EXIT ? "exit" : "timeout", line);
		switch (entry.kind) {
		case BCI_JOB_JOURNAL_EXIT:
			ret = journal_exit(g, &entry);
			exitcode = entry.code;
			break;
		case BCI_JOB_JOURNAL_TIMEOUT:
			has_timeout = true;
			ret = journal_timeout(g, &entry);
			break;
		case BCI_JOB_JOURNAL_EMPTY:
			if (terminated)
				return gen_error(g, -EINVAL, "%s:%zu: empty line", path, lineno);
			break;
		case BCI_JOB_JOURNAL_SUBTEST:
			ret = add_subtest(g, line);
			break;
		}
		if (ret < 0)
			return ret;
		line = nl + 1;
	}

	if (g->sub_count && (exitcode == BCI_IGT_EXIT_ABORT || exitcode == BCI_RESULTS_EXIT_GRACEFUL)) {
		piglit_name(g, g->subs[g->sub_count - 1].name, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		t->result = exitcode == BCI_IGT_EXIT_ABORT ? "abort" : "notrun";
	}

	if (g->sub_count == 0) {
		const char *result = has_timeout ? "timeout" : bci_job_journal_result(exitcode);
		const char *subtest = NULL;

		/*
		 * Killed before it announced a subtest: had the joblist asked for
		 * one, the result is that subtest's, not the binary's.
		 */
		if (job->requested_count > 0) {
			subtest = job->requested[0];
			ret = add_subtest(g, subtest);
			if (ret < 0)
				return ret;
		}
		piglit_name(g, subtest, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		t->result = result;
	}
	return 0;
}

/* ---- out.txt, err.txt ---- */

static struct text slice(const char *buf, size_t begin, size_t end)
{
	struct text t = { buf + begin, end - begin };

	return t;
}

static void set_stream(struct test *t, bool is_out, struct text text)
{
	if (is_out)
		t->out = text;
	else
		t->err = text;
}

static int fill_from_output(struct gen *g, const char *buf, size_t len, bool is_out)
{
	struct bci_igt_output parsed;
	struct text version = { NULL, 0 };
	char name[NAME_SIZE], dyn_name[NAME_SIZE], dynamic[NAME_SIZE];
	struct test *t, *d;
	size_t i;
	int ret;

	ret = bci_igt_output_parse(&parsed, buf, len);
	if (ret < 0)
		return ret;
	if (parsed.has_version)
		version = slice(buf, parsed.version_offset,
				parsed.version_offset + parsed.version_len);

	if (g->sub_count == 0) {
		piglit_name(g, NULL, name);
		t = get_test(g, name);
		if (!t) {
			ret = -ENOMEM;
			goto out_parsed;
		}
		set_stream(t, is_out, slice(buf, 0, parsed.len));
		if (version.ptr)
			t->version = version;
		goto out_parsed;
	}

	for (i = 0; i < g->sub_count; i++) {
		struct subtest *sub = &g->subs[i];
		struct bci_igt_span span, dspan;
		size_t cursor = 0;

		piglit_name(g, sub->name, name);
		t = get_test(g, name);
		if (!t) {
			ret = -ENOMEM;
			goto out_parsed;
		}
		bci_igt_output_subtest(&parsed, sub->name, &span);
		set_stream(t, is_out, slice(buf, span.begin, span.end));
		if (version.ptr)
			t->version = version;
		if (!t->result) {
			t->result = span.result;
			set_runtime(t, span.time);
		}

		while (bci_igt_output_next_dynamic(&parsed, &span, &cursor, dynamic, sizeof(dynamic), &dspan)) {
			bci_igt_piglit_name_dynamic(name, dynamic, dyn_name, NAME_SIZE);
			ret = add_dynamic(sub, dynamic);
			if (ret < 0)
				goto out_parsed;
			d = get_test(g, dyn_name);
			if (!d) {
				ret = -ENOMEM;
				goto out_parsed;
			}
			set_stream(d, is_out, slice(buf, dspan.begin, dspan.end));
			if (version.ptr)
				d->version = version;
			if (!d->result) {
				const char *result = dspan.result;

				/* An unfinished dynamic subtest shares its parent's abort or notrun. */
				if (!strcmp(result, "incomplete") && t->result &&
				    (!strcmp(t->result, "abort") || !strcmp(t->result, "notrun")))
					result = t->result;
				d->result = result;
				set_runtime(d, dspan.time);
			}
		}
	}
	ret = 0;
out_parsed:
	bci_igt_output_release(&parsed);
	return ret;
}

/* ---- dmesg.txt ---- */

/*
 * Test-provided regexes are PCRE (igt compiles them with GLib); POSIX
 * extended regexes get the common escapes spelled out: \d \D \s \S \w \W
 * as classes, \t \n \r \f \v \e and \xHH as the character, an escaped
 * character that is special in ERE stays escaped and any other escaped
 * punctuation becomes itself (PCRE's \< is a '<', ERE's is a word start).
 * "(?:" groups are plain groups, lazy quantifiers greedy (whether a line
 * matches does not change). \b and \B have no POSIX spelling: \b becomes
 * glibc's and musl's \b extension, and \B an empty pattern, so that a
 * word-boundary regex still matches (it may then ignore slightly more).
 * What is left (lookarounds, \A, \z, ...) fails to compile: the caller warns.
 */
static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static const char ERE_SPECIAL[] = ".[]{}()*+?|^$\\";

static int translate_escape(struct bci_strbuf *ere, char c, const char *rest, bool in_bracket,
			    size_t *used)
{
	static const struct { char c; const char *out, *in_bracket; } classes[] = {
		{ 'd', "[0-9]", "0-9" }, { 'D', "[^0-9]", NULL },
		{ 's', "[[:space:]]", "[:space:]" }, { 'S', "[^[:space:]]", NULL },
		{ 'w', "[[:alnum:]_]", "[:alnum:]_" }, { 'W', "[^[:alnum:]_]", NULL },
	};
	static const char controls[] = "t\tn\nr\rf\fv\ve\033";
	const char *ctl;
	char ch;
	size_t i;

	*used = 0;
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		if (classes[i].c != c)
			continue;
		/* A negated class inside brackets has no ERE spelling. */
		if (in_bracket && !classes[i].in_bracket)
			return -EINVAL;
		ctl = in_bracket ? classes[i].in_bracket : classes[i].out;
		return bci_strbuf_append(ere, ctl, strlen(ctl));
	}
	if (c == 'b' && !in_bracket)
		return bci_strbuf_append(ere, "\\b", 2);
	if (c == 'B' && !in_bracket)
		return 0;
	if (c == 'x' && hex_value(rest[0]) >= 0 && hex_value(rest[1]) >= 0) {
		ch = (char)(hex_value(rest[0]) * 16 + hex_value(rest[1]));
		*used = 2;
		if (!in_bracket && strchr(ERE_SPECIAL, ch) && ch)
			return bci_strbuf_append(ere, (char[]){ '\\', ch }, 2);
		return ch ? bci_strbuf_append(ere, &ch, 1) : -EINVAL;
	}
	for (ctl = controls; *ctl; ctl += 2)
		if (ctl[0] == c)
			return bci_strbuf_append(ere, ctl + 1, 1);
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return -EINVAL;	/* \A \z \1 ...: no translation */
	if (!in_bracket && strchr(ERE_SPECIAL, c))
		return bci_strbuf_append(ere, (char[]){ '\\', c }, 2);
	return bci_strbuf_append(ere, &c, 1);
}

/* 0, or -EINVAL with what was tried in @ere (NUL-terminated, caller frees ere->p). */
static int compile_ignore_regex(regex_t *re, const char *pcre, struct bci_strbuf *ere)
{
	bool in_bracket = false;
	size_t i, used;
	int ret = bci_strbuf_append(ere, "", 0);

	for (i = 0; pcre[i] && ret == 0; i++) {
		char c = pcre[i];

		if (c == '\\' && pcre[i + 1]) {
			ret = translate_escape(ere, pcre[i + 1], pcre + i + 2, in_bracket, &used);
			i += 1 + used;
			continue;
		}
		if (!in_bracket && c == '(' && pcre[i + 1] == '?' && pcre[i + 2] == ':') {
			ret = bci_strbuf_append(ere, "(", 1);
			i += 2;
			continue;
		}
		if (!in_bracket && (c == '*' || c == '+' || c == '?' || c == '}') && pcre[i + 1] == '?') {
			ret = bci_strbuf_append(ere, &c, 1);
			i++;
			continue;
		}
		if (c == '[' && !in_bracket) {
			in_bracket = true;
			ret = bci_strbuf_append(ere, &c, 1);
			/* "[]...]" and "[^]...]": that first ']' is a member. */
			if (ret == 0 && pcre[i + 1] == '^')
				ret = bci_strbuf_append(ere, &pcre[++i], 1);
			if (ret == 0 && pcre[i + 1] == ']')
				ret = bci_strbuf_append(ere, &pcre[++i], 1);
			continue;
		}
		if (c == ']' && in_bracket)
			in_bracket = false;
		ret = bci_strbuf_append(ere, &c, 1);
	}
	if (ret == 0)
		ret = regcomp(re, ere->p, REG_EXTENDED | REG_NOSUB | REG_NEWLINE) ? -EINVAL : 0;
	return ret;
}

/* Kernel log gathered for a test; lines not embedded are counted for a marker. */
struct logbuf {
	struct bci_strbuf text;
	unsigned long long left_out;	/* bytes of dmesg.txt since the last embedded line */
};

struct dmesg_state {
	struct logbuf dmesg, warnings, dyn_dmesg, dyn_warnings;
	struct test *test, *dynamic;
	char test_name[NAME_SIZE];
	regex_t ignore;
	bool has_ignore;
	const char *path;		/* dmesg.txt, for markers */
	unsigned long long size;
	size_t warning_budget;		/* bytes of left-out warnings still embedded */
};

static void drop_ignore(struct dmesg_state *st)
{
	if (st->has_ignore)
		regfree(&st->ignore);
	st->has_ignore = false;
}

static void logbuf_clear(struct logbuf *lb)
{
	bci_strbuf_release(&lb->text);
	lb->left_out = 0;
}

/* Puts the marker for the lines left out since the last one embedded. */
static int logbuf_flush(struct gen *g, struct dmesg_state *st, struct logbuf *lb)
{
	int ret = 0;

	if (lb->left_out)
		ret = append_marker(g, &lb->text, st->path, lb->left_out, st->size);
	lb->left_out = 0;
	return ret;
}

static int logbuf_add(struct gen *g, struct dmesg_state *st, struct logbuf *lb,
		      const struct bci_strbuf *line, size_t raw_len, bool embed)
{
	int ret;

	if (!embed) {
		lb->left_out += raw_len;
		return 0;
	}
	ret = logbuf_flush(g, st, lb);
	return ret ? ret : bci_strbuf_append(&lb->text, line->p, line->len);
}

/* Gives a test the kernel log gathered for it; warnings only if there were any. */
static int file_dmesg(struct gen *g, struct dmesg_state *st, struct test *t,
		      struct logbuf *dmesg, struct logbuf *warnings)
{
	int ret = logbuf_flush(g, st, dmesg);

	if (ret == 0)
		ret = strbuf_to_text(g, &dmesg->text, &t->dmesg);
	if (ret == 0 && warnings)
		ret = logbuf_flush(g, st, warnings);
	if (ret == 0 && warnings && warnings->text.p)
		ret = strbuf_to_text(g, &warnings->text, &t->warnings);
	return ret;
}

/*
 * One dmesg.txt line of @raw_len bytes. Every line moves the state and
 * decides warnings; only @embed lines go into the texts, and of the others
 * only warnings, while the warning budget lasts.
 */
static int dmesg_line(struct gen *g, struct dmesg_state *st, const char *line, size_t raw_len,
		      bool embed, struct bci_strbuf *formatted)
{
	struct bci_kmsg_record rec;
	const char *message, *p;
	char name[NAME_SIZE];
	bool warning;
	int ret;

	/* Continuation lines (" KEY=value") and junk are skipped, as in igt. */
	if (!bci_kmsg_record_parse(line, raw_len, &rec))
		return 0;
	message = rec.text;
	ret = bci_kmsg_record_format_readable(formatted, &rec);
	if (ret < 0)
		return ret;

	if ((p = strstr(message, STARTING_SUBTEST_DMESG))) {
		if (st->test) {
			ret = file_dmesg(g, st, st->test, &st->dmesg, &st->warnings);
			logbuf_clear(&st->warnings);
			if (ret == 0 && st->dynamic)
				ret = file_dmesg(g, st, st->dynamic, &st->dyn_dmesg, &st->dyn_warnings);
			logbuf_clear(&st->dyn_dmesg);
			logbuf_clear(&st->dyn_warnings);
			st->dynamic = NULL;
			if (ret < 0)
				return ret;
		}
		piglit_name(g, p + strlen(STARTING_SUBTEST_DMESG), st->test_name);
		st->test = get_test(g, st->test_name);
		if (!st->test)
			return -ENOMEM;
		drop_ignore(st);
	}
	if (st->test && (p = strstr(message, STARTING_DYNAMIC_DMESG))) {
		if (st->dynamic) {
			ret = file_dmesg(g, st, st->dynamic, &st->dyn_dmesg, &st->dyn_warnings);
			logbuf_clear(&st->dyn_warnings);
			if (ret < 0)
				return ret;
		}
		bci_igt_piglit_name_dynamic(st->test_name, p + strlen(STARTING_DYNAMIC_DMESG),
					       name, NAME_SIZE);
		st->dynamic = get_test(g, name);
		if (!st->dynamic)
			return -ENOMEM;
		drop_ignore(st);
	}
	if ((p = strstr(message, ADD_IGNORED_REGEX_DMESG))) {
		char *regex = strdup(p + strlen(ADD_IGNORED_REGEX_DMESG));
		struct bci_strbuf ere = { 0 };

		if (!regex)
			return -ENOMEM;
		regex[strcspn(regex, "\n")] = '\0';
		drop_ignore(st);
		ret = compile_ignore_regex(&st->ignore, regex, &ere);
		st->has_ignore = ret == 0;
		/* A regex that does not compile ignores nothing, as in igt; but say so. */
		if (ret == -EINVAL)
			gen_warn(g, "%s: 'add ignored dmesg regex: %s' does not translate to a POSIX "
				 "regex (tried '%s'): it ignores nothing", st->path, regex,
				 ere.p ? ere.p : "");
		free(ere.p);
		free(regex);
		if (ret == -ENOMEM)
			return ret;
	}

	warning = bci_kmsg_record_level(&rec) <= g->settings.dmesg_warn_level && rec.flags != 'c';
	if (warning) {
		bool listed = regexec(&g->dmesg_filter, message, 0, NULL, 0) == 0;

		warning = g->settings.piglit_style_dmesg ? listed : !listed;
	}
	if (warning && st->has_ignore && regexec(&st->ignore, message, 0, NULL, 0) == 0)
		warning = false;
	if (warning) {
		bool embed_warning = embed || formatted->len <= st->warning_budget;

		if (!embed && embed_warning)
			st->warning_budget -= formatted->len;
		ret = logbuf_add(g, st, &st->warnings, formatted, raw_len, embed_warning);
		if (ret == 0 && st->test)
			ret = logbuf_add(g, st, &st->dyn_warnings, formatted, raw_len, embed_warning);
		if (ret < 0)
			return ret;
	}
	ret = logbuf_add(g, st, &st->dmesg, formatted, raw_len, embed);
	if (ret == 0)
		ret = logbuf_add(g, st, &st->dyn_dmesg, formatted, raw_len, embed);
	return ret;
}

/*
 * dmesg.txt, a line at a time. Over the limit, only lines starting in its
 * first or last half-limit are embedded; all of them still count.
 */
static int fill_from_dmesg(struct gen *g, const char *path, int fd)
{
	struct dmesg_state st;
	struct bci_strbuf formatted = { 0 };
	char name[NAME_SIZE], dyn_name[NAME_SIZE];
	struct line_reader reader;
	struct line line;
	struct text shared;
	struct stat sb;
	size_t i, k, half = g->max_file / 2;
	bool over;
	int ret = 0;

	memset(&st, 0, sizeof(st));
	if (fstat(fd, &sb) < 0)
		return gen_error(g, -errno, "%s: %s", path, strerror(errno));
	st.path = path;
	st.size = (unsigned long long)sb.st_size;
	st.warning_budget = g->max_file / 8;
	over = st.size > g->max_file;
	if (over)
		gen_warn(g, "%s: %llu bytes, over the %zu-byte limit: results.json keeps the kernel "
			 "log of its first and last %zu bytes, and warnings from all of it",
			 path, st.size, g->max_file, half);

	ret = line_reader_init(&reader, fd, 0, st.size, DMESG_LINE_MAX);
	if (ret < 0)
		return ret;
	/* Lines keep their newline, as getline() hands them to igt. */
	while ((ret = line_reader_next(&reader, &line)) > 0) {
		bool embed = !over || line.offset < half || line.offset >= st.size - half;

		ret = dmesg_line(g, &st, line.text, line.len, embed, &formatted);
		if (ret < 0)
			break;
	}
	line_reader_release(&reader);
	if (ret < 0) {
		if (ret != -ENOMEM)
			gen_error(g, ret, "%s: %s", path, strerror(-ret));
		goto out;
	}

	if (st.test) {
		ret = file_dmesg(g, &st, st.test, &st.dmesg, &st.warnings);
		if (ret == 0 && st.dynamic)
			ret = file_dmesg(g, &st, st.dynamic, &st.dyn_dmesg, &st.dyn_warnings);
		if (ret < 0)
			goto out;
	} else {
		/*
		 * No subtest announced itself in the kernel log: every subtest
		 * gets all of it, without warnings (their results are skips).
		 */
		ret = logbuf_flush(g, &st, &st.dmesg);
		if (ret == 0)
			ret = logbuf_flush(g, &st, &st.warnings);
		if (ret == 0)
			ret = strbuf_to_text(g, &st.dmesg.text, &shared);
		if (ret < 0)
			goto out;
		for (i = 0; i < g->sub_count; i++) {
			struct test *t;

			piglit_name(g, g->subs[i].name, name);
			t = get_test(g, name);
			if (!t) {
				ret = -ENOMEM;
				goto out;
			}
			t->dmesg = shared;
		}
		if (g->sub_count == 0) {
			struct test *t;

			piglit_name(g, NULL, name);
			t = get_test(g, name);
			if (!t) {
				ret = -ENOMEM;
				goto out;
			}
			t->dmesg = shared;
			if (st.warnings.text.p)
				ret = strbuf_to_text(g, &st.warnings.text, &t->warnings);
			if (ret < 0)
				goto out;
		}
	}

	/* Every subtest and dynamic subtest has a "dmesg", empty if need be. */
	for (i = 0; i < g->sub_count; i++) {
		struct test *t;

		piglit_name(g, g->subs[i].name, name);
		t = get_test(g, name);
		if (!t) {
			ret = -ENOMEM;
			goto out;
		}
		if (!t->dmesg.ptr)
			t->dmesg = (struct text){ "", 0 };
		for (k = 0; k < g->subs[i].dynamic_count; k++) {
			bci_igt_piglit_name_dynamic(name, g->subs[i].dynamic[k], dyn_name, NAME_SIZE);
			t = get_test(g, dyn_name);
			if (!t) {
				ret = -ENOMEM;
				goto out;
			}
			if (!t->dmesg.ptr)
				t->dmesg = (struct text){ "", 0 };
		}
	}
out:
	logbuf_clear(&st.dmesg);
	logbuf_clear(&st.warnings);
	logbuf_clear(&st.dyn_dmesg);
	logbuf_clear(&st.dyn_warnings);
	bci_strbuf_release(&formatted);
	drop_ignore(&st);
	return ret;
}

/* ---- overrides, pruning ---- */

static bool has_data(const struct text *t)
{
	return t->ptr && t->len > 0;
}

static void override_one(struct test *t)
{
	const char *result = t->result ? t->result : "";

	if (!strcmp(result, "pass") && t->err.ptr &&
	    bci_igt_err_has_warnings(t->err.ptr, t->err.len)) {
		t->result = "warn";
		result = "warn";
	}
	if (t->warnings.ptr) {
		if (!strcmp(result, "pass") || !strcmp(result, "warn"))
			t->result = "dmesg-warn";
		else if (!strcmp(result, "fail"))
			t->result = "dmesg-fail";
	}
	/* Nothing at all written: the machine went down under the test. */
	if (!has_data(&t->out) && !has_data(&t->err) && !has_data(&t->dmesg)) {
		t->out = (struct text){ NO_OUTPUT_TEXT, sizeof(NO_OUTPUT_TEXT) - 1 };
		t->result = "incomplete";
	}
}

static int override_results(struct gen *g)
{
	char name[NAME_SIZE], dyn_name[NAME_SIZE];
	struct test *t;
	size_t i, k;

	if (g->sub_count == 0) {
		piglit_name(g, NULL, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		override_one(t);
		return 0;
	}
	for (i = 0; i < g->sub_count; i++) {
		piglit_name(g, g->subs[i].name, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		override_one(t);
		for (k = 0; k < g->subs[i].dynamic_count; k++) {
			bci_igt_piglit_name_dynamic(name, g->subs[i].dynamic[k], dyn_name, NAME_SIZE);
			t = get_test(g, dyn_name);
			if (!t)
				return -ENOMEM;
			override_one(t);
		}
	}
	return 0;
}

static bool is_requested(const struct job *job, const char *subtest, const char *dynamic)
{
	char want[512];
	size_t i;

	if (dynamic)
		snprintf(want, sizeof(want), "%s@%s", subtest, dynamic);
	else
		snprintf(want, sizeof(want), "%s", subtest);
	for (i = 0; i < job->requested_count; i++)
		if (!strcmp(job->requested[i], want))
			return true;
	return false;
}

static void delete_test(struct gen *g, const char *name)
{
	struct test *t = find_test(g, name);

	if (t)
		t->deleted = true;
}

static void prune_subtests(struct gen *g)
{
	int mode = g->settings.prune_mode;
	char name[NAME_SIZE], dyn_name[NAME_SIZE];
	size_t i, k;

	if (mode == PRUNE_KEEP_ALL)
		return;
	for (i = 0; i < g->sub_count; i++) {
		struct subtest *sub = &g->subs[i];

		piglit_name(g, sub->name, name);
		if (mode == PRUNE_KEEP_DYNAMIC) {
			/* A subtest with dynamic subtests is only their container. */
			if (sub->dynamic_count)
				delete_test(g, name);
			continue;
		}
		if (mode == PRUNE_KEEP_REQUESTED && !is_requested(g->job, sub->name, NULL))
			delete_test(g, name);
		for (k = 0; k < sub->dynamic_count; k++) {
			if (mode == PRUNE_KEEP_REQUESTED &&
			    is_requested(g->job, sub->name, sub->dynamic[k]))
				continue;
			bci_igt_piglit_name_dynamic(name, sub->dynamic[k], dyn_name, NAME_SIZE);
			delete_test(g, dyn_name);
		}
	}
}

/* ---- writing ---- */

static void write_text(struct gen *g, const char *key, const struct text *t)
{
	if (!t->ptr)
		return;
	bci_jsonw_key(&g->w, key);
	bci_jsonw_string_n(&g->w, t->ptr, t->len, BCI_JSONW_LATIN1);
}

static void write_time(struct bci_jsonw *w, double end)
{
	bci_jsonw_key(w, "time");
	bci_jsonw_object_begin(w);
	bci_jsonw_key(w, "__type__");
	bci_jsonw_string(w, "TimeAttribute");
	bci_jsonw_key(w, "start");
	bci_jsonw_double(w, 0.0);
	bci_jsonw_key(w, "end");
	bci_jsonw_double(w, end);
	bci_jsonw_object_end(w);
}

static int write_tests(struct gen *g)
{
	size_t i;

	for (i = 0; i < g->test_count; i++) {
		const struct test *t = g->tests[i];

		if (t->deleted)
			continue;
		bci_jsonw_key_n(&g->w, t->name, strlen(t->name), BCI_JSONW_LATIN1);
		bci_jsonw_object_begin(&g->w);
		write_text(g, "out", &t->out);
		write_text(g, "igt-version", &t->version);
		if (t->result) {
			bci_jsonw_key(&g->w, "result");
			bci_jsonw_string(&g->w, t->result);
		}
		if (t->has_time)
			write_time(&g->w, t->time);
		write_text(g, "err", &t->err);
		write_text(g, "dmesg", &t->dmesg);
		write_text(g, "dmesg-warnings", &t->warnings);
		bci_jsonw_object_end(&g->w);
	}
	return g->w.error;
}

/* ---- one job folder ---- */

/* The joblist's tests, never started: igt_runner lists them as notrun. */
static int add_notrun_results(struct gen *g)
{
	const struct job *job = g->job;
	char name[NAME_SIZE];
	struct test *t;
	size_t i;
	int ret;

	if (job->requested_count == 0) {
		/* In multiple mode "no subtests" and "all subtests" look the same. */
		if (g->settings.multiple_mode)
			return 0;
		piglit_name(g, NULL, name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		t->out = t->err = t->dmesg = (struct text){ "", 0 };
		t->result = "notrun";
	}
	for (i = 0; i < job->requested_count; i++) {
		piglit_name(g, job->requested[i], name);
		t = get_test(g, name);
		if (!t)
			return -ENOMEM;
		t->out = t->err = t->dmesg = (struct text){ "", 0 };
		t->result = "notrun";
		ret = add_subtest(g, job->requested[i]);
		if (ret < 0)
			return ret;
	}
	return add_to_totals(g, job->binary);
}

enum { F_JOURNAL, F_OUT, F_ERR, F_DMESG, F_COUNT };
#define job_files bci_results_job_files

static int process_job(struct gen *g, size_t index)
{
	char dirname[32], *jobdir, *comms = NULL;
	char *paths[F_COUNT] = { 0 }, *texts[F_COUNT] = { 0 };
	size_t lens[F_COUNT] = { 0 };
	struct stat st;
	bool missing = false;
	int ret, i, dmesg_fd = -1;

	snprintf(dirname, sizeof(dirname), "%zu", index);
	jobdir = path_join(g->dir, dirname);
	if (!jobdir)
		return -ENOMEM;
	if (stat(jobdir, &st) < 0) {
		if (errno != ENOENT && errno != ENOTDIR) {
			ret = gen_error(g, -errno, "%s: %s", jobdir, strerror(errno));
			goto out_jobdir;
		}
		ret = add_notrun_results(g);
		goto out_jobdir;
	}
	if (!S_ISDIR(st.st_mode)) {
		ret = add_notrun_results(g);
		goto out_jobdir;
	}

	/* bootci's executor writes text; a binary comms dump would need its own parser. */
	comms = path_join(jobdir, BCI_RESULTS_JOB_COMMS);
	if (!comms) {
		ret = -ENOMEM;
		goto out_jobdir;
	}
	if (stat(comms, &st) == 0 && st.st_size > 0) {
		ret = gen_error(g, -ENOTSUP, "%s: socket comms dumps are not supported", comms);
		goto out_comms;
	}

	for (i = 0; i < F_COUNT; i++) {
		paths[i] = path_join(jobdir, job_files[i]);
		if (!paths[i]) {
			ret = -ENOMEM;
			goto out_files;
		}
		if (i == F_JOURNAL) {
			ret = read_text(g, paths[i], &texts[i], &lens[i]);
		} else if (i != F_DMESG) {
			ret = read_job_text(g, paths[i], &texts[i], &lens[i]);
		} else {
			/* Streamed later, however large. */
			dmesg_fd = open(paths[i], O_RDONLY | O_CLOEXEC);
			ret = dmesg_fd < 0 ? -errno : 0;
			if (ret < 0 && ret != -ENOENT)
				ret = gen_error(g, ret, "%s: %s", paths[i], strerror(-ret));
		}
		if (ret == -ENOENT) {
			/* No journal is survivable; no out/err/dmesg means it never ran. */
			if (i != F_JOURNAL)
				missing = true;
			continue;
		}
		if (ret < 0)
			goto out_files;
	}
	if (missing) {
		ret = add_notrun_results(g);
		goto out_files;
	}

	if (texts[F_JOURNAL]) {
		ret = fill_from_journal(g, paths[F_JOURNAL], texts[F_JOURNAL], lens[F_JOURNAL]);
		if (ret < 0)
			goto out_files;
	}
	ret = fill_from_output(g, texts[F_OUT], lens[F_OUT], true);
	if (ret == 0)
		ret = fill_from_output(g, texts[F_ERR], lens[F_ERR], false);
	if (ret == 0)
		ret = fill_from_dmesg(g, paths[F_DMESG], dmesg_fd);
	if (ret == 0)
		ret = override_results(g);
	if (ret < 0)
		goto out_files;
	prune_subtests(g);
	ret = add_to_totals(g, g->job->binary);

out_files:
	/* The tests point into these texts until the job is written. */
	for (i = 0; i < F_COUNT; i++) {
		if (texts[i] && keep_blob(g, texts[i]) < 0 && ret == 0)
			ret = -ENOMEM;
		free(paths[i]);
	}
	if (dmesg_fd >= 0)
		close(dmesg_fd);
out_comms:
	free(comms);
out_jobdir:
	free(jobdir);
	return ret;
}

static int write_job(struct gen *g, size_t index, const struct job *job)
{
	int ret;

	g->job = job;
	ret = process_job(g, index);
	if (ret == 0)
		ret = write_tests(g);
	job_reset(g);
	g->job = NULL;
	return ret;
}

static int write_jobs(struct gen *g)
{
	char *path, *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	FILE *f;
	int ret = 0;

	path = path_join(g->dir, BCI_RESULTS_JOBLIST);
	if (!path)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f) {
		ret = gen_error(g, -errno, "%s: %s", path, strerror(errno));
		goto out_path;
	}
	/* One job at a time: the joblist is read as the results are written. */
	while ((n = getline(&line, &cap, f)) > 0) {
		struct job job;

		lineno++;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if ((size_t)n != strlen(line)) {
			ret = gen_error(g, -EINVAL, "%s:%zu: NUL byte in line", path, lineno);
			break;
		}
		if (n == 0 || line[0] == ' ') {
			ret = gen_error(g, -EINVAL, "%s:%zu: no test binary named", path, lineno);
			break;
		}
		ret = parse_job_line(line, &job);
		if (ret == 0)
			ret = write_job(g, lineno - 1, &job);
		job_free(&job);
		if (ret < 0)
			break;
	}
	if (ret == 0 && ferror(f))
		ret = gen_error(g, -EIO, "%s: read error", path);
	free(line);
	fclose(f);
out_path:
	free(path);
	return ret;
}

/* aborted.txt: the runner stopped the run; igt_runner reports it as a test. */
static int write_aborted(struct gen *g)
{
	static const struct job runner = { (char *)"runner", NULL, 0 };
	char *path, *text = NULL;
	size_t len;
	struct test *t;
	int ret;

	path = path_join(g->dir, BCI_RESULTS_ABORTED);
	if (!path)
		return -ENOMEM;
	ret = read_text(g, path, &text, &len);
	if (ret == -ENOENT) {
		ret = 0;
		goto out_path;
	}
	if (ret < 0)
		goto out_path;
	g->job = &runner;
	ret = add_subtest(g, "aborted");
	t = ret == 0 ? get_test(g, "igt@runner@aborted") : NULL;
	if (!t) {
		ret = ret < 0 ? ret : -ENOMEM;
		goto out_job;
	}
	/* igt_runner reads one 4 KiB block of it. */
	t->out = (struct text){ text, len < 4096 ? len : 4096 };
	t->err = t->dmesg = (struct text){ "", 0 };
	t->result = "fail";
	ret = add_to_totals(g, "runner");
	if (ret == 0)
		ret = write_tests(g);
out_job:
	job_reset(g);
	g->job = NULL;
	free(text);
out_path:
	free(path);
	return ret;
}

/* A small top-level file: first @max bytes, or absent. */
static int read_small(struct gen *g, const char *name, size_t max, char **text, size_t *len)
{
	char *path = path_join(g->dir, name);
	int ret;

	if (!path)
		return -ENOMEM;
	*text = NULL;
	ret = read_text(g, path, text, len);
	free(path);
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

static int write_header(struct gen *g)
{
	struct bci_jsonw *w = &g->w;
	char *text;
	size_t len;
	int ret;

	bci_jsonw_key(w, "__type__");
	bci_jsonw_string(w, "TestrunResult");
	bci_jsonw_key(w, "results_version");
	bci_jsonw_int(w, 10);
	bci_jsonw_key(w, "name");
	if (g->settings.name)
		bci_jsonw_string_n(w, g->settings.name, strlen(g->settings.name), BCI_JSONW_LATIN1);
	else
		bci_jsonw_string(w, "");

	ret = read_small(g, BCI_RESULTS_UNAME, 128, &text, &len);
	if (ret < 0)
		return ret;
	if (text) {
		if (len > 0 && text[len - 1] == '\n')
			len--;
		bci_jsonw_key(w, "uname");
		bci_jsonw_string_n(w, text, len, BCI_JSONW_LATIN1);
		free(text);
	}
	/* Settings read back from a results directory carry no command line. */
	bci_jsonw_key(w, "cmdline");
	bci_jsonw_array_begin(w);
	bci_jsonw_array_end(w);

	bci_jsonw_key(w, "time_elapsed");
	bci_jsonw_object_begin(w);
	bci_jsonw_key(w, "__type__");
	bci_jsonw_string(w, "TimeAttribute");
	ret = read_small(g, BCI_RESULTS_STARTTIME, 127, &text, &len);
	if (ret < 0)
		return ret;
	if (text) {
		bci_jsonw_key(w, "start");
		bci_jsonw_double(w, atof(text));
		free(text);
	}
	ret = read_small(g, BCI_RESULTS_ENDTIME, 127, &text, &len);
	if (ret < 0)
		return ret;
	if (text) {
		bci_jsonw_key(w, "end");
		bci_jsonw_double(w, atof(text));
		free(text);
	}
	bci_jsonw_object_end(w);
	return w->error;
}

static void write_counts(struct bci_jsonw *w, const char *key, const unsigned long *counts)
{
	size_t i;

	bci_jsonw_key_n(w, key, strlen(key), BCI_JSONW_LATIN1);
	bci_jsonw_object_begin(w);
	for (i = 0; i < RESULT_COUNT; i++) {
		bci_jsonw_key(w, result_names[i]);
		bci_jsonw_int(w, (long long)counts[i]);
	}
	bci_jsonw_object_end(w);
}

static int write_totals_and_runtimes(struct gen *g)
{
	struct bci_jsonw *w = &g->w;
	size_t i;

	bci_jsonw_key(w, "totals");
	bci_jsonw_object_begin(w);
	if (g->any_totals) {
		write_counts(w, "", g->all_counts);
		write_counts(w, "root", g->all_counts);
	}
	for (i = 0; i < g->bin_count; i++)
		if (g->bins[i].in_totals)
			write_counts(w, g->bins[i].name, g->bins[i].counts);
	bci_jsonw_object_end(w);

	bci_jsonw_key(w, "runtimes");
	bci_jsonw_object_begin(w);
	for (i = 0; i < g->bin_count; i++) {
		if (!g->bins[i].has_runtime)
			continue;
		bci_jsonw_key_n(w, g->bins[i].name, strlen(g->bins[i].name), BCI_JSONW_LATIN1);
		bci_jsonw_object_begin(w);
		write_time(w, g->bins[i].runtime);
		bci_jsonw_object_end(w);
	}
	bci_jsonw_object_end(w);
	return w->error;
}

/*
 * bootci's suspend cycles: suspend-summary.txt ("key value" lines: counts,
 * and min/median/max as "a/b/c") beside the results becomes a top-level
 * "bootci_suspend_summary" object, which piglit readers ignore. Absent file,
 * absent key: igt_runner's own results stay exactly as igt writes them.
 */
static int write_suspend_summary(struct gen *g)
{
	char path[PATH_MAX], *text = NULL;
	struct bci_jsonw *w = &g->w;
	int ret;

	const struct binary_stats *cycles = NULL;

	/* The cycles' results as results.json judged them, those that never ended included. */
	for (size_t i = 0; i < g->bin_count && !cycles; i++)
		if (strcmp(g->bins[i].name, "bootci@suspend") == 0)
			cycles = &g->bins[i];
	if (snprintf(path, sizeof(path), "%s/" BCI_RESULTS_SUSPEND_SUMMARY, g->dir) >= (int)sizeof(path))
		return 0;
	ret = bci_read_file(path, &text, NULL, 1 << 16);
	if (ret == -ENOENT && !cycles)
		return 0;
	if (ret < 0 && ret != -ENOENT)
		return gen_error(g, ret, "%s: %s", path, strerror(-ret));
	bci_jsonw_key(w, "bootci_suspend_summary");
	bci_jsonw_object_begin(w);
	if (cycles)
		write_counts(w, "results", cycles->counts);
	for (char *cursor = text, *key, *value; bci_results_kv_next(&cursor, &key, &value);) {
		struct bci_suspend_spread spread;
		long long count;

		bci_jsonw_key(w, key);
		switch (bci_suspend_summary_value(value, &count, &spread)) {
		case BCI_SUMMARY_COUNT:
			bci_jsonw_int(w, count);
			break;
		case BCI_SUMMARY_SPREAD:
			bci_jsonw_object_begin(w);
			bci_jsonw_key(w, "min");
			bci_jsonw_double(w, spread.min);
			bci_jsonw_key(w, "median");
			bci_jsonw_double(w, spread.median);
			bci_jsonw_key(w, "max");
			bci_jsonw_double(w, spread.max);
			bci_jsonw_object_end(w);
			break;
		case BCI_SUMMARY_TEXT:
			bci_jsonw_string(w, value);
			break;
		}
	}
	free(text);
	return bci_jsonw_object_end(w);
}

int bci_resultgen_write(const char *results_dir, FILE *out, char *err, size_t err_size)
{
	return bci_resultgen_write_options(results_dir, out, NULL, err, err_size);
}

int bci_resultgen_write_options(const char *results_dir, FILE *out,
				const struct bci_resultgen_options *options,
				char *err, size_t err_size)
{
	struct gen g;
	struct stat st;
	int ret;

	memset(&g, 0, sizeof(g));
	g.dir = results_dir;
	g.err = err;
	g.err_size = err_size;
	g.warnings = options && options->warnings ? options->warnings : stderr;
	/* Head and tail are half the limit each; below 2 bytes there is nothing to split. */
	g.max_file = options && options->max_file >= 2 ? options->max_file : BCI_RESULTGEN_MAX_FILE;
	if (err && err_size)
		err[0] = '\0';

	if (stat(results_dir, &st) < 0)
		return gen_error(&g, -errno, "%s: %s", results_dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return gen_error(&g, -ENOTDIR, "%s: not a directory", results_dir);

	ret = read_settings(&g);
	if (ret < 0)
		goto out_settings;
	if (regcomp(&g.dmesg_filter,
		    g.settings.piglit_style_dmesg ? dmesg_piglit_blocklist : dmesg_allowlist,
		    REG_EXTENDED | REG_NOSUB | REG_NEWLINE)) {
		ret = gen_error(&g, -EINVAL, "cannot compile the dmesg filter regex");
		goto out_settings;
	}

	bci_jsonw_init(&g.w, out, 2);
	bci_jsonw_object_begin(&g.w);
	ret = write_header(&g);
	if (ret < 0)
		goto out_filter;
	bci_jsonw_key(&g.w, "tests");
	bci_jsonw_object_begin(&g.w);
	ret = write_jobs(&g);
	if (ret == 0)
		ret = write_aborted(&g);
	if (ret < 0)
		goto out_filter;
	bci_jsonw_object_end(&g.w);
	ret = write_totals_and_runtimes(&g);
	if (ret == 0)
		ret = write_suspend_summary(&g);
	if (ret == 0) {
		bci_jsonw_object_end(&g.w);
		ret = bci_jsonw_finish(&g.w);
	}
	if (ret < 0 && !(err && err[0]))
		gen_error(&g, ret, "writing results.json: %s", strerror(-ret));

out_filter:
	if (ret < 0 && err && err_size && !err[0])
		gen_error(&g, ret, "%s: %s", results_dir, strerror(-ret));
	regfree(&g.dmesg_filter);
out_settings:
	job_reset(&g);
	free(g.bins);
	free(g.settings.name);
	return ret;
}
