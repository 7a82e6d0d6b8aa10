// SPDX-License-Identifier: MIT
/*
 * The lab's day against serve (tests/bench/lab-day.sh drives it): many
 * machines netbooting for their next job and uploading their runs, in one
 * process on libcurl's multi interface, so that the client costs little of the
 * cores serve runs on.
 *
 *   lab-day pack RUN-DIR OUT-DIR RUN MACHINE...
 *       writes OUT-DIR/RUN/MACHINE.tar.zst, the archive collect would upload
 *       of RUN-DIR as MACHINE's run RUN (lib/run_archive.h's writer, collect's
 *       own), and its sha256 beside it (.sha256).
 *   lab-day load BASE MACHINES-FILE ARCHIVE-DIR [options]
 *       MACHINES-FILE: "NAME MAC TOKEN" a line. Each machine, at a random
 *       time in the first quarter of its first slot, netboots
 *       (GET /api/v1/boot/MAC): a job's answer names its run; the machine
 *       fetches the job's initrd, "runs" for a random 20% to 75% of a slot
 *       (the day divided by --runs), one run in --crash-every netbooting once
 *       more in the middle (a crashed boot: the same job must come back);
 *       then, as collect does, says hello, asks what the master holds of the
 *       run and uploads ARCHIVE-DIR/RUN/NAME.tar.zst. One upload in
 *       --cut-every is cut at a random byte (the connection dropped) and
 *       resumed from what the master says it holds. After an upload it
 *       netboots again at once; an `exit` answer (nothing queued) makes it
 *       netboot again --poll seconds later, until every run is in.
 *       Before that (--baseline N), N netboots one at a time against the idle
 *       serve: the peer of the exit answers timed under load.
 *       Then every run uploaded is asked for (GET .../runs/RUN): stored, with
 *       the archive's digest. Prints the latencies, errors, serve's CPU and
 *       memory (--serve-pid) and PostgreSQL's CPU (--pg-pid, its postmaster);
 *       exit status 0 when every run is stored once and nothing failed.
 */
#include "run_archive.h"
#include "sha256.h"
#include "version.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

/* ---- pack ---- */

/* What the writer (lib/run_archive/write.c) gives libzstd: the same frame's parameters. */
#define PACK_LEVEL	3
#define PACK_WINDOW_LOG	21
#define PACK_CHUNK	((size_t)256 << 10)
#define TAR_BLOCK	512

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static int buf_put(struct buf *b, const void *data, size_t len)
{
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 20;
		unsigned char *p;

		while (cap < b->len + len)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

static int read_file(const char *path, struct buf *b)
{
	unsigned char chunk[1 << 16];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	b->len = 0;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if ((ret = buf_put(b, chunk, (size_t)n)) < 0)
			break;
	if (n < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* @zst (one zstd frame) decompressed into @tar. */
static int unzstd(const struct buf *zst, struct buf *tar)
{
	ZSTD_DStream *d = ZSTD_createDStream();
	ZSTD_inBuffer in = { zst->p, zst->len, 0 };
	unsigned char chunk[1 << 17];
	int ret = 0;

	tar->len = 0;
	if (!d)
		return -ENOMEM;
	while (in.pos < in.size) {
		ZSTD_outBuffer out = { chunk, sizeof(chunk), 0 };
		size_t left = ZSTD_decompressStream(d, &out, &in);

		if (ZSTD_isError(left)) {
			ret = -EINVAL;
			break;
		}
		if ((ret = buf_put(tar, chunk, out.pos)) < 0)
			break;
	}
	ZSTD_freeDStream(d);
	return ret;
}

/* @tar compressed as the writer compresses it: its level, window and checksum, in its chunks. */
static int zstd_like_writer(ZSTD_CCtx *z, const struct buf *tar, struct buf *zst)
{
	unsigned char chunk[1 << 17];
	size_t at = 0;

	zst->len = 0;
	ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
	if (ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, PACK_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_windowLog, PACK_WINDOW_LOG)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1)))
		return -EINVAL;
	for (;;) {
		size_t len = tar->len - at < PACK_CHUNK ? tar->len - at : PACK_CHUNK;
		ZSTD_EndDirective mode = at + len == tar->len ? ZSTD_e_end : ZSTD_e_continue;
		ZSTD_inBuffer in = { tar->p + at, len, 0 };
		size_t left;

		do {
			ZSTD_outBuffer out = { chunk, sizeof(chunk), 0 };

			left = ZSTD_compressStream2(z, &out, &in, mode);
			if (ZSTD_isError(left) || buf_put(zst, chunk, out.pos) < 0)
				return -EIO;
		} while (mode == ZSTD_e_end ? left != 0 : in.pos < in.size);
		at += len;
		if (mode == ZSTD_e_end)
			return 0;
	}
}

/*
 * @tpl's tar (the writer's archive of the run for machine @first) made @machine's: its
 * manifest.json's "machine" replaced, the entry's size and checksum set again, the rest
 * (every file, in the writer's order) as it is.
 */
static int tar_for(const struct buf *tpl, const char *first, const char *machine, struct buf *out)
{
	char old[200], new[200], size[16], *json, *at;
	unsigned char header[TAR_BLOCK];
	size_t json_len, rest, new_len;
	unsigned sum = 0;
	static const unsigned char zeros[TAR_BLOCK];

	if (tpl->len < TAR_BLOCK || memcmp(tpl->p, "manifest.json", 14))
		return -EINVAL;
	json_len = (size_t)strtoull((const char *)tpl->p + 124, NULL, 8);
	rest = TAR_BLOCK + (json_len + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
	if (rest > tpl->len)
		return -EINVAL;
	json = strndup((const char *)tpl->p + TAR_BLOCK, json_len);
	snprintf(old, sizeof(old), "\n \"machine\": \"%s\",\n", first);
	snprintf(new, sizeof(new), "\n \"machine\": \"%s\",\n", machine);
	at = json ? strstr(json, old) : NULL;
	if (!at) {
		free(json);
		return -EINVAL;
	}
	new_len = json_len - strlen(old) + strlen(new);
	memcpy(header, tpl->p, TAR_BLOCK);
	snprintf(size, sizeof(size), "%011zo", new_len);
	memcpy(header + 124, size, 11);
	memset(header + 148, ' ', 8);
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += header[i];
	snprintf(size, sizeof(size), "%06o", sum);
	memcpy(header + 148, size, 7);
	out->len = 0;
	if (buf_put(out, header, TAR_BLOCK) < 0 || buf_put(out, json, (size_t)(at - json)) < 0 ||
	    buf_put(out, new, strlen(new)) < 0 ||
	    buf_put(out, at + strlen(old), json_len - (size_t)(at - json) - strlen(old)) < 0 ||
	    buf_put(out, zeros, (TAR_BLOCK - new_len % TAR_BLOCK) % TAR_BLOCK) < 0 ||
	    buf_put(out, tpl->p + rest, tpl->len - rest) < 0) {
		free(json);
		return -ENOMEM;
	}
	free(json);
	return 0;
}

static int write_out(const char *dir, const char *machine, const struct buf *zst)
{
	char path[PATH_MAX], hex[BCI_SHA256_HEX_LEN + 1];
	struct bci_sha256 ctx;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s.tar.zst", dir, machine) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "w");
	if (!f || fwrite(zst->p, 1, zst->len, f) != zst->len || fclose(f) != 0)
		return -EIO;
	bci_sha256_init(&ctx);
	bci_sha256_update(&ctx, zst->p, zst->len);
	bci_sha256_final_hex(&ctx, hex);
	snprintf(path, sizeof(path), "%s/%s.sha256", dir, machine);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%s\n", hex) < 0 || fclose(f) != 0)
		return -EIO;
	return 0;
}

/*
 * The first machine's archive by the writer itself (collect's), the others made from its tar
 * with their own manifest and compressed as the writer compresses (packing a 10,000-job
 * folder 400 times is most of a second each, its 50,000 files read again and again); the
 * second machine's is also written by the writer and must unpack to the same tar.
 */
static int cmd_pack(int argc, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX], err[512];
	struct buf zst = { 0 }, tpl = { 0 }, tar = { 0 }, check = { 0 };
	ZSTD_CCtx *z = ZSTD_createCCtx();
	int ret = 0;

	if (argc < 6) {
		fprintf(stderr, "usage: lab-day pack RUN-DIR OUT-DIR RUN MACHINE...\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/%s", argv[3], argv[4]);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "lab-day: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	for (int i = 5; i < argc && i < 7; i++) {
		struct bci_run_archive_info info = {
			.machine = argv[i], .run = argv[4], .bootci_version = BCI_VERSION,
		};

		if (snprintf(path, sizeof(path), "%s/%s.tar.zst", dir, argv[i]) >= (int)sizeof(path)) {
			fprintf(stderr, "lab-day: %s/%s: too long a path\n", dir, argv[i]);
			return 1;
		}
		ret = bci_run_archive_write(argv[2], path, &info, err, sizeof(err));
		if (ret < 0) {
			fprintf(stderr, "lab-day: %s\n", err);
			return 1;
		}
		if ((ret = read_file(path, &zst)) < 0 || (ret = unzstd(&zst, i == 5 ? &tpl : &check)) < 0 ||
		    (ret = write_out(dir, argv[i], &zst)) < 0) {
			fprintf(stderr, "lab-day: %s: %s\n", path, strerror(-ret));
			return 1;
		}
	}
	for (int i = 6; i < argc; i++) {
		if ((ret = tar_for(&tpl, argv[5], argv[i], &tar)) < 0 ||
		    (ret = zstd_like_writer(z, &tar, &zst)) < 0) {
			fprintf(stderr, "lab-day: %s's archive: %s\n", argv[i], strerror(-ret));
			return 1;
		}
		if (i == 6) {
			if (tar.len != check.len || memcmp(tar.p, check.p, tar.len)) {
				fprintf(stderr, "lab-day: %s's tar made from %s's is not the writer's\n",
					argv[i], argv[5]);
				return 1;
			}
			continue;
		}
		if ((ret = write_out(dir, argv[i], &zst)) < 0) {
			fprintf(stderr, "lab-day: %s/%s: %s\n", dir, argv[i], strerror(-ret));
			return 1;
		}
	}
	ZSTD_freeCCtx(z);
	free(zst.p);
	free(tpl.p);
	free(tar.p);
	free(check.p);
	return 0;
}

/* ---- load ---- */

enum step {
	STEP_BOOT,	/* due: netboot */
	STEP_INITRD,	/* due: fetch the job's initrd */
	STEP_RUNNING,	/* running its job until next_at (a crash boot first, maybe) */
	STEP_HELLO,	/* due: collect's hello */
	STEP_QUERY,	/* due: what the master holds of the run */
	STEP_PUT,	/* due: the upload (from resume_from) */
	STEP_DONE,	/* no more netboots */
};

struct samples {
	double *v;
	size_t n, cap;
};

struct machine {
	char name[64], mac[32], token[160];
	enum step step;
	double next_at;
	bool busy;
	/* the run in hand */
	char run[160];
	char initrd_url[512];
	double run_end, crash_at;
	bool cut, was_cut;
	unsigned attempt;		/* retries of this upload so far */
	unsigned char *archive;
	size_t size, sent, cut_at, resume_from;
	char sha[65];
	unsigned runs_done;
	char (*uploaded)[160];
	/* the request in flight */
	CURL *easy;
	struct curl_slist *headers;
	char *body;
	size_t body_len, body_cap;
	double t0;
};

struct load {
	const char *base, *archive_dir;
	struct machine *m;
	size_t count;
	unsigned runs;
	double day, slot, poll;
	unsigned cut_every, crash_every;
	CURLM *multi;
	size_t expected, uploaded, in_flight;
	unsigned cuts, crash_boots, retries, errors;
	struct samples boot_job, boot_exit, boot_idle, upload, resume, initrd, hello, query;
	pid_t serve_pid, pg_pid;
	long rss_peak_kib;
	uint64_t rng;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64*: reproducible from the seed, the same day every run */
static double uniform(struct load *l, double lo, double hi)
{
	l->rng ^= l->rng >> 12;
	l->rng ^= l->rng << 25;
	l->rng ^= l->rng >> 27;
	return lo + (hi - lo) * ((l->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static void add(struct samples *s, double v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v) {
			perror("lab-day");
			exit(1);
		}
	}
	s->v[s->n++] = v;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double percentile(struct samples *s, double p)
{
	size_t i;

	if (!s->n)
		return NAN;
	qsort(s->v, s->n, sizeof(*s->v), by_value);
	i = (size_t)llround(p / 100.0 * (double)(s->n - 1));
	return s->v[i];
}

static void failure(struct load *l, struct machine *m, const char *fmt, ...)
{
	va_list ap;

	l->errors++;
	if (l->errors > 20)
		return;
	fprintf(stderr, "lab-day: %s: ", m->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* utime + stime of @pid, in seconds; with its reaped children's when @children. */
static double proc_cpu(pid_t pid, bool children)
{
	char path[64], buf[2048], *p;
	unsigned long long v[4];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			 &v[0], &v[1], &v[2], &v[3]) != 4)
		return 0;
	return (double)(v[0] + v[1] + (children ? v[2] + v[3] : 0)) / sysconf(_SC_CLK_TCK);
}

static pid_t proc_ppid(pid_t pid)
{
	char path[64], buf[1024], *p;
	int ppid = -1;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

/* PostgreSQL's CPU: the postmaster's (its exited backends' included) and its live children's. */
static double pg_cpu(pid_t postmaster)
{
	double total;
	struct dirent *e;
	DIR *d;

	if (postmaster <= 0)
		return 0;
	total = proc_cpu(postmaster, true);
	d = opendir("/proc");
	while (d && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (proc_ppid((pid_t)pid) == postmaster)
			total += proc_cpu((pid_t)pid, false);
	}
	if (d)
		closedir(d);
	return total;
}

/* A line "KEY: N kB" of /proc/PID/status, in KiB; -1 when absent. */
static long proc_status_kib(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long value = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			value = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return value;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *user)
{
	struct machine *m = user;
	size_t n = size * nmemb;

	if (m->body_len + n + 1 > m->body_cap) {
		size_t cap = m->body_cap ? m->body_cap : 1024;
		char *b;

		while (cap < m->body_len + n + 1)
			cap *= 2;
		b = realloc(m->body, cap);
		if (!b)
			return 0;
		m->body = b;
		m->body_cap = cap;
	}
	memcpy(m->body + m->body_len, data, n);
	m->body_len += n;
	m->body[m->body_len] = '\0';
	return n;
}

/* The upload's body from the archive, from m->sent; cut at m->cut_at when the upload is cut. */
static size_t on_read(char *buffer, size_t size, size_t nitems, void *user)
{
	struct machine *m = user;
	size_t n = size * nitems, left = m->size - m->sent;

	if (m->cut && m->sent >= m->cut_at)
		return CURL_READFUNC_ABORT;
	if (m->cut && m->cut_at - m->sent < left)
		left = m->cut_at - m->sent;
	if (n > left)
		n = left;
	memcpy(buffer, m->archive + m->sent, n);
	m->sent += n;
	return n;
}

static void request(struct load *l, struct machine *m, const char *url, bool token)
{
	char auth[200];

	if (!m->easy)
		m->easy = curl_easy_init();
	else
		curl_easy_reset(m->easy);
	m->body_len = 0;
	if (m->body)
		m->body[0] = '\0';
	curl_slist_free_all(m->headers);
	m->headers = curl_slist_append(NULL, "Expect:");
	if (token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", m->token);
		m->headers = curl_slist_append(m->headers, auth);
	}
	curl_easy_setopt(m->easy, CURLOPT_URL, url);
	curl_easy_setopt(m->easy, CURLOPT_PRIVATE, m);
	curl_easy_setopt(m->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(m->easy, CURLOPT_WRITEDATA, m);
	/* Each machine is a host of its own: no connection shared between requests. */
	curl_easy_setopt(m->easy, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(m->easy, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(m->easy, CURLOPT_TIMEOUT, 600L);
	curl_easy_setopt(m->easy, CURLOPT_NOSIGNAL, 1L);
	(void)l;
}

static void start(struct load *l, struct machine *m)
{
	m->busy = true;
	m->t0 = now();
	curl_easy_setopt(m->easy, CURLOPT_HTTPHEADER, m->headers);
	curl_multi_add_handle(l->multi, m->easy);
	l->in_flight++;
}

static void start_boot(struct load *l, struct machine *m)
{
	char url[512];

	snprintf(url, sizeof(url), "%s/api/v1/boot/%s", l->base, m->mac);
	request(l, m, url, false);
	start(l, m);
}

static void start_run_request(struct load *l, struct machine *m, const char *suffix, bool put)
{
	char url[512];

	snprintf(url, sizeof(url), "%s/api/v1/machines/%s%s", l->base, m->name, suffix);
	request(l, m, url, true);
	if (put) {
		curl_easy_setopt(m->easy, CURLOPT_CUSTOMREQUEST, "PUT");
		curl_easy_setopt(m->easy, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(m->easy, CURLOPT_POSTFIELDSIZE, 0L);
	}
	start(l, m);
}

static int archive_open(struct load *l, struct machine *m)
{
	char path[PATH_MAX];
	struct stat st;
	FILE *f;
	int fd;

	if (m->archive)
		munmap(m->archive, m->size);
	m->archive = NULL;
	snprintf(path, sizeof(path), "%s/%s/%s.sha256", l->archive_dir, m->run, m->name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%64s", m->sha) != 1) {
		if (f)
			fclose(f);
		return -ENOENT;
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s/%s.tar.zst", l->archive_dir, m->run, m->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -errno;
	}
	m->size = (size_t)st.st_size;
	m->archive = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m->archive == MAP_FAILED) {
		m->archive = NULL;
		return -errno;
	}
	return 0;
}

static void start_put(struct load *l, struct machine *m)
{
	char url[512], range[128];

	snprintf(url, sizeof(url), "%s/api/v1/machines/%s/runs/%s", l->base, m->name, m->run);
	request(l, m, url, true);
	snprintf(range, sizeof(range), "X-Bootci-Sha256: %s", m->sha);
	m->headers = curl_slist_append(m->headers, range);
	if (m->resume_from) {
		snprintf(range, sizeof(range), "Content-Range: bytes %zu-%zu/%zu", m->resume_from,
			 m->size - 1, m->size);
		m->headers = curl_slist_append(m->headers, range);
	}
	m->sent = m->resume_from;
	curl_easy_setopt(m->easy, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(m->easy, CURLOPT_INFILESIZE_LARGE, (curl_off_t)(m->size - m->resume_from));
	curl_easy_setopt(m->easy, CURLOPT_READFUNCTION, on_read);
	curl_easy_setopt(m->easy, CURLOPT_READDATA, m);
	start(l, m);
}

/* Where the value of "KEY" begins in a JSON answer (serve's flat objects), or NULL. */
static const char *json_value(const char *body, const char *key)
{
	char pattern[64];
	const char *p;

	snprintf(pattern, sizeof(pattern), "\"%s\"", key);
	p = body ? strstr(body, pattern) : NULL;
	if (!p)
		return NULL;
	p += strlen(pattern);
	p += strspn(p, " ");
	if (*p != ':')
		return NULL;
	return p + 1 + strspn(p + 1, " ");
}

/* The value of "KEY": N, or -1. */
static long long json_number(const char *body, const char *key)
{
	const char *p = json_value(body, key);

	return p ? strtoll(p, NULL, 10) : -1;
}

/* "KEY": VALUE, VALUE as written (a string with its quotes, true, a number). */
static bool json_is(const char *body, const char *key, const char *value)
{
	const char *p = json_value(body, key);

	return p && !strncmp(p, value, strlen(value));
}

static bool json_has(const char *body, const char *text)
{
	return body && strstr(body, text);
}

/* A job's answer: "# bootci: NAME runs RUN (build ..." and its initrd's URL. */
static bool parse_job(struct machine *m, char *run, size_t run_size)
{
	char pattern[128];
	const char *p, *q;
	size_t n;

	snprintf(pattern, sizeof(pattern), "# bootci: %s runs ", m->name);
	p = m->body ? strstr(m->body, pattern) : NULL;
	if (!p)
		return false;
	p += strlen(pattern);
	q = strchr(p, ' ');
	n = q ? (size_t)(q - p) : 0;
	if (!n || n >= run_size)
		return false;
	memcpy(run, p, n);
	run[n] = '\0';
	p = strstr(m->body, "initrd --name job.img ");
	m->initrd_url[0] = '\0';
	if (p) {
		p += strlen("initrd --name job.img ");
		n = strcspn(p, "\n");
		if (n < sizeof(m->initrd_url)) {
			memcpy(m->initrd_url, p, n);
			m->initrd_url[n] = '\0';
		}
	}
	return true;
}

static void after_boot(struct load *l, struct machine *m, long status, double took, bool idle)
{
	char run[sizeof(m->run)];
	double t = now();

	if (status != 200) {
		failure(l, m, "boot answer HTTP %ld: %.200s", status, m->body ? m->body : "");
		m->step = STEP_BOOT;
		m->next_at = t + l->poll;
		return;
	}
	if (idle) {
		add(&l->boot_idle, took);
		return;
	}
	if (!parse_job(m, run, sizeof(run))) {
		if (!json_has(m->body, "\nexit\n")) {
			failure(l, m, "a boot answer neither a job nor exit: %.200s", m->body);
		}
		add(&l->boot_exit, took);
		m->step = l->uploaded == l->expected ? STEP_DONE : STEP_BOOT;
		m->next_at = t + l->poll;
		return;
	}
	add(&l->boot_job, took);
	if (m->step == STEP_RUNNING) {
		/* the crashed boot's netboot: the same job again */
		if (strcmp(run, m->run))
			failure(l, m, "after a crash, run %s handed out, not %s", run, m->run);
		m->next_at = m->run_end;
		return;
	}
	snprintf(m->run, sizeof(m->run), "%s", run);
	if (archive_open(l, m) < 0) {
		failure(l, m, "no archive %s/%s/%s.tar.zst for the job handed out", l->archive_dir,
			m->run, m->name);
		m->step = STEP_DONE;
		return;
	}
	m->run_end = t + uniform(l, 0.2, 0.75) * l->slot;
	m->crash_at = l->crash_every && uniform(l, 0, 1) * l->crash_every < 1 ?
			      t + uniform(l, 0.2, 0.8) * (m->run_end - t) : 0;
	m->cut = l->cut_every && uniform(l, 0, 1) * l->cut_every < 1;
	m->cut_at = (size_t)(uniform(l, 0.1, 0.9) * (double)m->size);
	m->was_cut = m->cut;
	m->attempt = 0;
	m->resume_from = 0;
	m->step = m->initrd_url[0] ? STEP_INITRD : STEP_RUNNING;
	m->next_at = m->step == STEP_INITRD ? t : m->crash_at ? m->crash_at : m->run_end;
}

static void after_put(struct load *l, struct machine *m, long status, CURLcode code, double took)
{
	double t = now();

	if (m->cut && code != CURLE_OK) {
		/* cut as planned: the machine asks what the master holds, then resumes */
		m->cut = false;
		l->cuts++;
		m->step = STEP_QUERY;
		m->next_at = t + 0.05;
		return;
	}
	if (status == 503 || status == 429) {
		/*
		 * The cut upload not yet closed on serve's side, or the machine's quota: later,
		 * with collect's backoff (aggregator/collect/upload.c: full jitter from 0.5 s).
		 */
		double ceiling = 0.5 * (1u << (m->attempt < 7 ? m->attempt : 7));

		l->retries++;
		m->attempt++;
		m->step = STEP_QUERY;
		m->next_at = t + uniform(l, 0.25, ceiling > 60 ? 60 : ceiling);
		return;
	}
	if ((status != 201 && status != 200) || !json_has(m->body, m->sha) ||
	    !json_is(m->body, "ingested", "true")) {
		failure(l, m, "upload of %s: HTTP %ld (%s): %.300s", m->run, status,
			curl_easy_strerror(code), m->body ? m->body : "");
		m->step = STEP_BOOT;
		m->next_at = t + l->poll;
		return;
	}
	add(m->resume_from ? &l->resume : &l->upload, took);
	snprintf(m->uploaded[m->runs_done], sizeof(m->uploaded[0]), "%s", m->run);
	m->runs_done++;
	l->uploaded++;
	m->run[0] = '\0';
	m->step = STEP_BOOT;
	m->next_at = t;
}

static void finished(struct load *l, struct machine *m, CURLcode code)
{
	long status = 0;
	double took = now() - m->t0;
	long long received;

	curl_easy_getinfo(m->easy, CURLINFO_RESPONSE_CODE, &status);
	curl_multi_remove_handle(l->multi, m->easy);
	m->busy = false;
	l->in_flight--;
	if (code != CURLE_OK && !(m->step == STEP_PUT && m->cut)) {
		failure(l, m, "step %d: %s", (int)m->step, curl_easy_strerror(code));
		m->step = m->step == STEP_PUT ? STEP_QUERY : m->step;
		m->next_at = now() + 1;
		return;
	}
	switch (m->step) {
	case STEP_BOOT:
	case STEP_RUNNING:
		after_boot(l, m, status, took, false);
		return;
	case STEP_INITRD:
		add(&l->initrd, took);
		if (status != 200)
			failure(l, m, "job initrd HTTP %ld", status);
		m->step = STEP_RUNNING;
		m->next_at = m->crash_at ? m->crash_at : m->run_end;
		return;
	case STEP_HELLO:
		add(&l->hello, took);
		if (status != 200)
			failure(l, m, "hello HTTP %ld: %.200s", status, m->body ? m->body : "");
		m->step = STEP_QUERY;
		m->next_at = now();
		return;
	case STEP_QUERY:
		add(&l->query, took);
		received = json_number(m->body, "received");
		if (status == 200 && json_is(m->body, "state", "\"stored\"")) {
			failure(l, m, "run %s stored before its upload ended", m->run);
			received = 0;
		} else if (status == 200 && json_is(m->body, "state", "\"partial\"") &&
			   json_has(m->body, m->sha) && received > 0) {
			m->resume_from = (size_t)received;
		} else if (status == 404 || status == 200) {
			m->resume_from = 0;
		} else {
			failure(l, m, "query of %s: HTTP %ld: %.200s", m->run, status, m->body);
			m->resume_from = 0;
		}
		m->step = STEP_PUT;
		m->next_at = now();
		return;
	case STEP_PUT:
		after_put(l, m, status, code, took);
		return;
	case STEP_DONE:
		return;
	}
}

static void due(struct load *l, struct machine *m, double t)
{
	char suffix[256];

	switch (m->step) {
	case STEP_BOOT:
		start_boot(l, m);
		return;
	case STEP_INITRD:
		request(l, m, m->initrd_url, false);
		start(l, m);
		return;
	case STEP_RUNNING:
		if (m->crash_at && t >= m->crash_at) {
			m->crash_at = 0;
			l->crash_boots++;
			start_boot(l, m);
			return;
		}
		m->step = STEP_HELLO;
		start_run_request(l, m, "/hello", true);
		return;
	case STEP_HELLO:
		start_run_request(l, m, "/hello", true);
		return;
	case STEP_QUERY:
		snprintf(suffix, sizeof(suffix), "/runs/%s", m->run);
		start_run_request(l, m, suffix, false);
		return;
	case STEP_PUT:
		start_put(l, m);
		return;
	case STEP_DONE:
		return;
	}
}

/* "NAME MAC TOKEN" lines of @path into *@list, room for @runs runs' ids each. */
static int read_machines(const char *path, unsigned runs, struct machine **list, size_t *count)
{
	char line[512];
	size_t cap = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct machine *m;

		if (*count == cap) {
			cap = cap ? 2 * cap : 512;
			*list = realloc(*list, cap * sizeof(**list));
			if (!*list) {
				fclose(f);
				return -ENOMEM;
			}
		}
		m = &(*list)[*count];
		*m = (struct machine){ .step = STEP_BOOT };
		if (sscanf(line, "%63s %31s %159s", m->name, m->mac, m->token) != 3)
			continue;
		m->uploaded = calloc(runs + 1, sizeof(*m->uploaded));
		if (!m->uploaded) {
			fclose(f);
			return -ENOMEM;
		}
		(*count)++;
	}
	fclose(f);
	return 0;
}

static void drive(struct load *l, double deadline)
{
	double t;

	while ((t = now()) < deadline) {
		double next = t + 0.1;
		int running, queued, wait_ms;
		CURLMsg *msg;
		bool idle_all = true;

		for (size_t i = 0; i < l->count; i++) {
			struct machine *m = &l->m[i];

			if (m->busy) {
				idle_all = false;
				continue;
			}
			if (m->step == STEP_DONE)
				continue;
			if (l->uploaded == l->expected && (m->step == STEP_BOOT)) {
				m->step = STEP_DONE;
				continue;
			}
			idle_all = false;
			if (m->next_at <= t)
				due(l, m, t);
			else if (m->next_at < next)
				next = m->next_at;
		}
		if (idle_all && l->uploaded == l->expected)
			return;
		curl_multi_perform(l->multi, &running);
		while ((msg = curl_multi_info_read(l->multi, &queued)))
			if (msg->msg == CURLMSG_DONE) {
				struct machine *m;

				curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&m);
				finished(l, m, msg->data.result);
			}
		wait_ms = (int)((next - now()) * 1000);
		if (wait_ms > 0)
			curl_multi_poll(l->multi, NULL, 0, wait_ms > 100 ? 100 : wait_ms, NULL);
	}
}

/* --baseline N: netboots one at a time against the idle serve, machines of @list in turn. */
static void baseline(struct load *l, struct machine *list, size_t machines, unsigned count)
{
	for (unsigned k = 0; k < count; k++) {
		struct machine *m = &list[k % machines];
		CURLMsg *msg;
		int running, queued;
		bool done = false;

		start_boot(l, m);
		while (!done) {
			curl_multi_perform(l->multi, &running);
			while ((msg = curl_multi_info_read(l->multi, &queued)))
				if (msg->msg == CURLMSG_DONE) {
					long status = 0;

					curl_easy_getinfo(m->easy, CURLINFO_RESPONSE_CODE, &status);
					curl_multi_remove_handle(l->multi, m->easy);
					m->busy = false;
					l->in_flight--;
					after_boot(l, m, status, now() - m->t0, true);
					done = true;
				}
			if (!done)
				curl_multi_poll(l->multi, NULL, 0, 100, NULL);
		}
	}
}

/* Every run uploaded, asked for: stored, under its archive's digest. */
static unsigned verify(struct load *l)
{
	unsigned bad = 0;

	for (size_t i = 0; i < l->count; i++) {
		struct machine *m = &l->m[i];

		for (unsigned k = 0; k < m->runs_done; k++) {
			char url[512], path[PATH_MAX], sha[65] = "";
			long status = 0;
			FILE *f;

			snprintf(m->run, sizeof(m->run), "%s", m->uploaded[k]);
			snprintf(url, sizeof(url), "%s/api/v1/machines/%s/runs/%s", l->base, m->name, m->run);
			request(l, m, url, true);
			curl_easy_setopt(m->easy, CURLOPT_HTTPHEADER, m->headers);
			if (curl_easy_perform(m->easy) == CURLE_OK)
				curl_easy_getinfo(m->easy, CURLINFO_RESPONSE_CODE, &status);
			snprintf(path, sizeof(path), "%s/%s/%s.sha256", l->archive_dir, m->run, m->name);
			f = fopen(path, "r");
			if (f) {
				if (fscanf(f, "%64s", sha) != 1)
					sha[0] = '\0';
				fclose(f);
			}
			if (status != 200 || !json_is(m->body, "state", "\"stored\"") || !sha[0] ||
			    !json_has(m->body, sha)) {
				bad++;
				failure(l, m, "run %s after the day: HTTP %ld %.200s", m->run, status, m->body);
			}
		}
	}
	return bad;
}

/* @a's samples and @b's together (the caller frees .v). */
static struct samples merged(const struct samples *a, const struct samples *b)
{
	struct samples all = { 0 };

	for (size_t i = 0; i < a->n; i++)
		add(&all, a->v[i]);
	for (size_t i = 0; i < b->n; i++)
		add(&all, b->v[i]);
	return all;
}

static void print_latency(const char *what, struct samples *s)
{
	qsort(s->v, s->n, sizeof(*s->v), by_value);
	printf("%-44s %7zu  p50 %8.1f ms  p99 %8.1f ms  max %8.1f ms\n", what, s->n,
	       1e3 * percentile(s, 50), 1e3 * percentile(s, 99), s->n ? 1e3 * s->v[s->n - 1] : NAN);
}

static int cmd_load(int argc, char **argv)
{
	static const struct option options[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "day", required_argument, NULL, 'd' },
		{ "poll", required_argument, NULL, 'p' },
		{ "cut-every", required_argument, NULL, 'c' },
		{ "crash-every", required_argument, NULL, 'k' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "serve-pid", required_argument, NULL, 's' },
		{ "pg-pid", required_argument, NULL, 'g' },
		{ "results-per-run", required_argument, NULL, 'n' },
		{ "idle-machines", required_argument, NULL, 'i' },
		{ 0 },
	};
	struct load l = { .runs = 1, .day = 180, .poll = 5, .cut_every = 10, .crash_every = 8,
			  .rng = 0x9e3779b97f4a7c15ULL };
	unsigned baseline_count = 0, results_per_run = 10000, bad;
	const char *idle_path = NULL;
	struct machine *idle = NULL;
	size_t idle_count = 0;
	double t0, t1, cpu0, cpu1, pg0, pg1, deadline, last_sample = 0;
	long rss0, hwm;
	struct rusage self;
	int c, ret;

	optind = 2;
	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (c) {
		case 'r': l.runs = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'd': l.day = strtod(optarg, NULL); break;
		case 'p': l.poll = strtod(optarg, NULL); break;
		case 'c': l.cut_every = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'k': l.crash_every = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'b': baseline_count = (unsigned)strtoul(optarg, NULL, 10); break;
		case 's': l.serve_pid = (pid_t)strtol(optarg, NULL, 10); break;
		case 'g': l.pg_pid = (pid_t)strtol(optarg, NULL, 10); break;
		case 'n': results_per_run = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'i': idle_path = optarg; break;
		default: return 2;
		}
	}
	if (argc - optind != 3 || !l.runs || l.day <= 0 || l.poll <= 0) {
		fprintf(stderr, "usage: lab-day load BASE MACHINES-FILE ARCHIVE-DIR [--runs N] [--day S] "
				"[--poll S] [--cut-every N] [--crash-every N] [--baseline N] [--serve-pid PID] "
				"[--pg-pid PID] [--results-per-run N]\n");
		return 2;
	}
	l.base = argv[optind];
	l.archive_dir = argv[optind + 2];
	ret = read_machines(argv[optind + 1], l.runs, &l.m, &l.count);
	if (ret < 0 || !l.count) {
		fprintf(stderr, "lab-day: %s: %s\n", argv[optind + 1], ret < 0 ? strerror(-ret) : "no machine");
		return 1;
	}
	/* The peer's netboots: machines with nothing queued (--idle-machines), else the lab's own. */
	ret = idle_path ? read_machines(idle_path, 0, &idle, &idle_count) : 0;
	if (ret < 0 || (idle_path && !idle_count)) {
		fprintf(stderr, "lab-day: %s: %s\n", idle_path, ret < 0 ? strerror(-ret) : "no machine");
		return 1;
	}
	l.slot = l.day / l.runs;
	l.expected = l.count * l.runs;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	l.multi = curl_multi_init();
	curl_multi_setopt(l.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, 0L);

	if (baseline_count)
		baseline(&l, idle ? idle : l.m, idle ? idle_count : l.count, baseline_count);
	/* First netboots spread over the first quarter of the first slot. */
	t0 = now();
	for (size_t i = 0; i < l.count; i++)
		l.m[i].next_at = t0 + uniform(&l, 0, 0.25) * l.slot;
	rss0 = l.serve_pid ? proc_status_kib(l.serve_pid, "VmRSS") : -1;
	cpu0 = l.serve_pid ? proc_cpu(l.serve_pid, true) : 0;
	pg0 = pg_cpu(l.pg_pid);
	deadline = t0 + 3 * l.day + 300;
	while (now() < deadline && !(l.uploaded == l.expected && !l.in_flight)) {
		drive(&l, now() + 1);
		if (l.serve_pid && now() - last_sample >= 0.5) {
			long rss = proc_status_kib(l.serve_pid, "VmRSS");

			if (rss > l.rss_peak_kib)
				l.rss_peak_kib = rss;
			last_sample = now();
		}
	}
	t1 = now();
	cpu1 = l.serve_pid ? proc_cpu(l.serve_pid, true) : 0;
	pg1 = pg_cpu(l.pg_pid);
	hwm = l.serve_pid ? proc_status_kib(l.serve_pid, "VmHWM") : -1;
	getrusage(RUSAGE_SELF, &self);
	bad = verify(&l);

	double results = (double)l.uploaded * results_per_run, per100k = results / 1e5;
	printf("%zu machines, %u run(s) each of %u results, a day compressed to %.0f s: "
	       "%zu of %zu runs stored (%.0f results) in %.1f s\n",
	       l.count, l.runs, results_per_run, l.day, l.uploaded, l.expected, results, t1 - t0);
	printf("uploads cut and resumed: %u; crashed boots (the same job netbooted again): %u; "
	       "uploads retried (503/429): %u\n", l.cuts, l.crash_boots, l.retries);
	print_latency("boot answer, idle serve (the peer)", &l.boot_idle);
	print_latency("boot answer under load: exit", &l.boot_exit);
	print_latency("boot answer under load: a job", &l.boot_job);
	{
		struct samples all = merged(&l.boot_exit, &l.boot_job);

		print_latency("boot answer under load: all", &all);
		if (l.boot_idle.n)
			printf("boot answer under load / idle (exit answers): p50 x%.2f, p99 x%.2f\n",
			       percentile(&l.boot_exit, 50) / percentile(&l.boot_idle, 50),
			       percentile(&l.boot_exit, 99) / percentile(&l.boot_idle, 99));
		printf("target: boot answer p99 under 50 ms: %s (%.1f ms)\n",
		       percentile(&all, 99) < 0.050 ? "met" : "NOT met", 1e3 * percentile(&all, 99));
		free(all.v);
	}
	print_latency("job initrd", &l.initrd);
	print_latency("hello", &l.hello);
	print_latency("query (GET .../runs/RUN)", &l.query);
	print_latency("upload acknowledged (201), whole", &l.upload);
	print_latency("upload acknowledged (201), resumed", &l.resume);
	{
		struct samples all = merged(&l.upload, &l.resume);

		print_latency("upload acknowledged (201), all", &all);
		printf("target: upload acknowledgement p99 under 1 s: %s (%.0f ms)\n",
		       percentile(&all, 99) < 1.0 ? "met" : "NOT met", 1e3 * percentile(&all, 99));
		free(all.v);
	}
	if (l.serve_pid)
		printf("serve: CPU %.1f s over the day (%.2f cores), %.2f CPU s per 100k results; "
		       "RSS %ld MiB before, peak %ld MiB during (%.1f MiB per 100k results of growth), "
		       "high-water mark %ld MiB\n",
		       cpu1 - cpu0, (cpu1 - cpu0) / (t1 - t0), (cpu1 - cpu0) / per100k, rss0 / 1024,
		       l.rss_peak_kib / 1024, (double)(l.rss_peak_kib - rss0) / 1024 / per100k, hwm / 1024);
	if (l.pg_pid)
		printf("PostgreSQL: CPU %.1f s over the day, %.2f CPU s per 100k results\n", pg1 - pg0,
		       (pg1 - pg0) / per100k);
	printf("the load generator: CPU %.1f s\n",
	       self.ru_utime.tv_sec + self.ru_utime.tv_usec / 1e6 + self.ru_stime.tv_sec +
		       self.ru_stime.tv_usec / 1e6);
	printf("every run asked for after the day: %s (%u not stored as uploaded); errors: %u\n",
	       bad ? "NOT all stored" : "stored, each under its archive's digest", bad, l.errors);
	curl_multi_cleanup(l.multi);
	curl_global_cleanup();
	return bad || l.errors || l.uploaded != l.expected ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "pack"))
		return cmd_pack(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "load"))
		return cmd_load(argc, argv);
	fprintf(stderr, "usage: lab-day pack RUN-DIR OUT-DIR RUN MACHINE...\n"
			"       lab-day load BASE MACHINES-FILE ARCHIVE-DIR [options]\n");
	return 2;
}
