// SPDX-License-Identifier: MIT
/*
 * Reading ahead of the walk. Most of a walk's time is the kernel's: each
 * job folder costs an open of the folder, an open, fstat, read and close of
 * each of its files, and a failed lookup of the files that are usually
 * absent (comms, bootci-incomplete.txt), while judging the job and writing
 * its JSON is a fraction of that. So threads open and read the next
 * folders (the window: a few chunks of jobs) while the walk judges the
 * current one: on two cores the kernel's part is shared between them.
 *
 * The threads only open, fstat and read, with gen_open_regular() (the
 * same rules as the directory source: no link followed, regular files
 * only) and never write g->err: a failure is kept with its step and the
 * walk gives the directory source's message for it when it opens that
 * file. A file over PREFETCH_FILE_MAX bytes (or that grew while read) is
 * left to the walk, which opens it ("N/name" below the top, by the same
 * rules) and reads it as the directory source does.
 */
#include "internal.h"

#include "results_dir.h"
#include "uring.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The threads take chunks of jobs, and the walk gives chunks back: one
 * hand-over (a lock, a wake-up) per chunk, not per job.
 */
#define PREFETCH_CHUNK 8
#define PREFETCH_CHUNKS 8		/* the window: PREFETCH_CHUNKS * PREFETCH_CHUNK jobs */
#define PREFETCH_FILE_MAX (256 << 10)	/* larger files are handed over open */
#define PREFETCH_THREADS_MAX 4

/* The files of a job folder that the walk opens, each read ahead. */
static const char *const prefetch_names[] = {
	BCI_RESULTS_JOB_JOURNAL, BCI_RESULTS_JOB_OUT, BCI_RESULTS_JOB_ERR, BCI_RESULTS_JOB_DMESG,
	BCI_RESULTS_JOB_COMMS, BCI_RESULTS_JOB_INCOMPLETE,
};
#define PREFETCH_FILES (sizeof(prefetch_names) / sizeof(prefetch_names[0]))

struct prefetch_file {
	int ret;			/* 0, or gen_open_regular()'s -errno */
	int stage;			/* with ret: the step that failed */
	char *data;			/* the file read whole; NULL with ret 0: the walk opens it */
	size_t len;
};

struct prefetch_slot {
	bool ready;			/* filled: holds what slot_clear() frees */
	int dir_ret;			/* the folder's open: 0, -ENOENT (none), -errno */
	struct prefetch_file files[PREFETCH_FILES];
};

struct prefetch_chunk {
	size_t number;			/* jobs number * PREFETCH_CHUNK and on */
	bool ready;			/* filled, for the walk to take */
	struct prefetch_slot jobs[PREFETCH_CHUNK];
};

struct gen_prefetch {
	const struct gen *g;		/* read only by the threads: dirfd, no_openat2 */
	pthread_mutex_t lock;
	pthread_cond_t wake_threads;	/* a chunk was given back, or stop */
	pthread_cond_t wake_walk;	/* a chunk was filled */
	size_t limit;			/* the joblist's lines: no folder past them is read */
	size_t claimed;			/* the next chunk a thread takes */
	size_t consumed;		/* chunks the walk gave back: their places are free */
	bool stop;
	bool failed;			/* a thread's ring failed: the walk reads the rest itself */
	struct prefetch_chunk chunks[PREFETCH_CHUNKS];
	size_t next;			/* the job the walk takes next */
	pthread_t threads[PREFETCH_THREADS_MAX];
	int thread_count;
	struct prefetch_slot *current;	/* the job the walk is in, or NULL */
	bool fallback;			/* the walk left the order: the directory source reads */
};

/* A buffer for a file of @size bytes and one more, or false: the walk reads it (large, no memory). */
static bool prefetch_buffer(struct prefetch_file *f, unsigned long long size)
{
	if (size > PREFETCH_FILE_MAX)
		return false;
	f->data = malloc((size_t)size + 1);
	return f->data != NULL;
}

/* The read of @size and one byte more gave @n: kept, or left to the walk (it failed, or the file grew). */
static void prefetch_read_done(struct prefetch_file *f, long n, unsigned long long size)
{
	if (n < 0 || (unsigned long long)n > size) {
		free(f->data);
		f->data = NULL;
		return;
	}
	f->len = (size_t)n;
	f->data[n] = '\0';
}

/*
 * A regular file's bytes in one read of its size and one byte more (to see
 * that it ended). Its fd (returned, or -1) stays open until the whole job
 * is read: a thread with its own fd table then closes them all at once.
 */
static int prefetch_file(const struct gen *g, int jobfd, const char *name, struct prefetch_file *f)
{
	unsigned long long size = 0;
	ssize_t n;
	int fd;

	*f = (struct prefetch_file){ 0 };
	fd = gen_open_regular(g, jobfd, name, gen_job_file_likely_absent(name), &f->stage, &size);
	if (fd < 0) {
		f->ret = fd;
		return -1;
	}
	if (!prefetch_buffer(f, size))
		return fd;
	do
		n = pread(fd, f->data, (size_t)size + 1, 0);
	while (n < 0 && errno == EINTR);
	prefetch_read_done(f, n, size);
	return fd;
}

/* The folder's name of job @index ("12") into @name; its length. */
static size_t job_name(size_t index, char name[24])
{
	size_t n = 0;

	do
		name[n++] = (char)('0' + index % 10);
	while ((index /= 10) && n < 23);
	for (size_t i = 0; i < n / 2; i++) {
		char c = name[i];

		name[i] = name[n - 1 - i];
		name[n - 1 - i] = c;
	}
	name[n] = '\0';
	return n;
}

/* Job folder @index into @s; @own_fds: the thread's fd table is its own (close_range is safe). */
static void prefetch_job(const struct gen *g, size_t index, struct prefetch_slot *s, bool own_fds)
{
	int fds[PREFETCH_FILES], jobfd, last, opened = 1;
	char name[24];
	size_t i;

	job_name(index, name);
	jobfd = gen_open_below(g, g->dirfd, name, GEN_DIR_FLAGS);
	if (jobfd == -ENOENT || jobfd == -ENOTDIR) {
		s->dir_ret = -ENOENT;	/* no folder (or not one): the job never ran */
		return;
	}
	s->dir_ret = jobfd < 0 ? jobfd : 0;
	if (jobfd < 0)
		return;
	last = jobfd;
	for (i = 0; i < PREFETCH_FILES; i++) {
		fds[i] = prefetch_file(g, jobfd, prefetch_names[i], &s->files[i]);
		last = fds[i] > last ? fds[i] : last;
		opened += fds[i] >= 0;
	}
	/*
	 * Closing is a good part of the kernel's work: one call, when the
	 * range holds only the job's fds (its own table holds only dirfd besides).
	 */
	if (own_fds && last - jobfd + 1 == opened &&
	    syscall(SYS_close_range, (unsigned int)jobfd, (unsigned int)last, 0) == 0)
		return;
	for (i = 0; i < PREFETCH_FILES; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	close(jobfd);
}

/*
 * The same reading through the thread's own io_uring (uring.h), a chunk at
 * a time, where each system call is dear: two calls instead of about 16
 * per job (open the folder, open, fstat, read and close each file, look
 * for the absent ones). The first call opens the chunk's folders and every
 * file of each ("N/name" below the top, by gen_open_below()'s rules:
 * GEN_RESOLVE); each file opened is checked on its fd with fstat, as
 * gen_open_regular() does (regular files only, its size: a system call
 * each, since the ring's statx takes no fd); the second call reads each
 * (its size and one byte more) and closes every fd opened. What each
 * step gives is kept as the other way keeps it: a folder that is absent
 * or no folder is a job that never ran, a refusal is kept with its step
 * for the walk's message, a large file is left to the walk.
 *
 * The numbers of a chunk's operations: RING_FILE(i, f) opens, then reads,
 * file f of the chunk's job i; RING_DIR(i) opens the folder; RING_CLOSE
 * plus either number closes what it opened.
 */
#define RING_ENTRIES 128
#define RING_FILE(i, f) ((unsigned)((i) * (PREFETCH_FILES + 1) + (f)))
#define RING_DIR(i) RING_FILE(i, PREFETCH_FILES)
#define RING_CLOSE 64u
#define RING_PATH_MAX 64

_Static_assert(RING_DIR(PREFETCH_CHUNK - 1) < RING_CLOSE && 2 * RING_CLOSE <= RING_ENTRIES,
	       "a chunk's operations are numbered below RING_CLOSE");
/* "N/name": a job number's 20 digits at most, '/', the longest job file's name. */
_Static_assert(20 + 1 + sizeof(BCI_RESULTS_JOB_INCOMPLETE) <= RING_PATH_MAX &&
	       sizeof(BCI_RESULTS_JOB_INCOMPLETE) >= sizeof(BCI_RESULTS_JOB_JOURNAL) &&
	       sizeof(BCI_RESULTS_JOB_INCOMPLETE) >= sizeof(BCI_RESULTS_JOB_DMESG) &&
	       sizeof(BCI_RESULTS_JOB_INCOMPLETE) >= sizeof(BCI_RESULTS_JOB_COMMS),
	       "a job file's path fits");

struct prefetch_ring {
	struct bci_uring ring;
	char paths[PREFETCH_CHUNK][PREFETCH_FILES + 1][RING_PATH_MAX];
	unsigned long long sizes[PREFETCH_CHUNK][PREFETCH_FILES];
	bool reading[PREFETCH_CHUNK][PREFETCH_FILES];
};

/* Chunks read through a ring, by every thread of the process: tests ask whether the ring ran. */
static unsigned long ring_chunks;

unsigned long gen_prefetch_ring_chunks(void)
{
	return __atomic_load_n(&ring_chunks, __ATOMIC_RELAXED);
}

static const struct open_how ring_dir_how = { .flags = GEN_DIR_FLAGS, .resolve = GEN_RESOLVE };
static const struct open_how ring_file_how = { .flags = GEN_FILE_FLAGS, .resolve = GEN_RESOLVE };

/*
 * The thread's ring, or NULL: none on one thread's wish (BCI_RESULTGEN_NO_URING
 * in the environment, so that tests cover both ways), without openat2 (the
 * ring opens with its rules), or where the kernel has no usable io_uring.
 */
static struct prefetch_ring *prefetch_ring_new(const struct gen *g)
{
	struct prefetch_ring *pr;

	if (g->no_openat2 || getenv("BCI_RESULTGEN_NO_URING"))
		return NULL;
	pr = calloc(1, sizeof(*pr));
	if (pr && bci_uring_init(&pr->ring, RING_ENTRIES) == 0)
		return pr;
	free(pr);
	return NULL;
}

static void prefetch_ring_free(struct prefetch_ring *pr)
{
	if (!pr)
		return;
	bci_uring_free(&pr->ring);
	free(pr);
}

/* Queues the opens of job @index's folder and files as the chunk's job @i. */
static void ring_queue_opens(struct prefetch_ring *pr, const struct gen *g, size_t i, size_t index)
{
	char *dir = pr->paths[i][PREFETCH_FILES];
	size_t n = job_name(index, dir);

	bci_uring_openat2(&pr->ring, RING_DIR(i), g->dirfd, dir, &ring_dir_how);
	for (size_t f = 0; f < PREFETCH_FILES; f++) {
		char *path = pr->paths[i][f];
		size_t len = strlen(prefetch_names[f]);

		/* The names are short and fixed: "N/name" always fits (asserted above). */
		memcpy(path, dir, n);
		path[n] = '/';
		memcpy(path + n + 1, prefetch_names[f], len + 1);
		bci_uring_openat2(&pr->ring, RING_FILE(i, f), g->dirfd, path, &ring_file_how);
	}
}

/* What the opens of job @i gave into @s; the reads and closes queued. */
static void ring_queue_reads(struct prefetch_ring *pr, size_t i, struct prefetch_slot *s)
{
	struct bci_uring *r = &pr->ring;
	int dirfd = bci_uring_result(r, RING_DIR(i));

	s->dir_ret = dirfd == -ENOENT || dirfd == -ENOTDIR ? -ENOENT : dirfd < 0 ? dirfd : 0;
	if (dirfd >= 0)
		bci_uring_close(r, RING_CLOSE + RING_DIR(i), dirfd);
	for (size_t f = 0; f < PREFETCH_FILES; f++) {
		struct prefetch_file *pf = &s->files[f];
		int fd = bci_uring_result(r, RING_FILE(i, f));

		*pf = (struct prefetch_file){ 0 };
		pr->reading[i][f] = false;
		if (fd < 0) {
			pf->ret = fd;
			pf->stage = GEN_OPEN_FAILED;
			continue;
		}
		/* No folder: the walk never opens its files (they were opened on a race). */
		if (s->dir_ret == 0) {
			pf->ret = gen_regular_size(fd, &pf->stage, &pr->sizes[i][f]);
			if (pf->ret == 0 && prefetch_buffer(pf, pr->sizes[i][f]))
				pr->reading[i][f] = bci_uring_read(r, RING_FILE(i, f), fd, pf->data,
								   (unsigned)pr->sizes[i][f] + 1, 0, true);
			if (pf->ret == 0 && !pr->reading[i][f])
				prefetch_read_done(pf, -1, 0);	/* left to the walk */
		}
		bci_uring_close(r, RING_CLOSE + RING_FILE(i, f), fd);
	}
}

/*
 * Forgets what the chunk's first @jobs slots were given, without freeing
 * it: after a failed run, reads may still be in flight into those buffers.
 */
static void ring_chunk_forget(struct prefetch_chunk *c, size_t jobs)
{
	for (size_t i = 0; i < jobs; i++)
		memset(&c->jobs[i], 0, sizeof(c->jobs[i]));
}

/*
 * Chunk @number's jobs below @limit into @c through the ring: 1, or 0 when
 * this file system answers the ring's reads with EAGAIN (FUSE, 9p: the
 * chunk is kept, and the ring had best not be used again), or -1 when the
 * ring itself failed (nothing of the chunk kept; what the kernel had opened
 * or was still reading when it failed is left as it is, in the thread's own
 * fd table where there is one, and the buffers are not freed).
 */
static int prefetch_chunk_ring(struct prefetch_ring *pr, const struct gen *g, size_t number,
			       struct prefetch_chunk *c, size_t limit)
{
	size_t jobs = 0;
	bool again = false;

	while (jobs < PREFETCH_CHUNK && number * PREFETCH_CHUNK + jobs < limit) {
		ring_queue_opens(pr, g, jobs, number * PREFETCH_CHUNK + jobs);
		jobs++;
	}
	if (bci_uring_run(&pr->ring) < 0)
		return -1;
	for (size_t i = 0; i < jobs; i++)
		ring_queue_reads(pr, i, &c->jobs[i]);
	if (bci_uring_run(&pr->ring) < 0) {
		ring_chunk_forget(c, jobs);
		return -1;
	}
	for (size_t i = 0; i < jobs; i++) {
		for (size_t f = 0; f < PREFETCH_FILES; f++) {
			struct prefetch_file *pf = &c->jobs[i].files[f];
			int n = bci_uring_result(&pr->ring, RING_FILE(i, f));

			if (!pr->reading[i][f])
				continue;
			/*
			 * Only the whole file, as fstat gave its size: O_NONBLOCK (for
			 * the open) lets some kernels and file systems answer a ring's
			 * read short or with EAGAIN where pread would wait. Anything
			 * else is left to the walk, which reads it with pread.
			 */
			again |= n == -EAGAIN;
			prefetch_read_done(pf, (unsigned long long)n == pr->sizes[i][f] ? n : -1,
					   pr->sizes[i][f]);
		}
	}
	for (size_t i = jobs; i < PREFETCH_CHUNK; i++)
		c->jobs[i].dir_ret = -ENOENT;	/* no such job: never entered */
	__atomic_add_fetch(&ring_chunks, 1, __ATOMIC_RELAXED);
	return again ? 0 : 1;
}

/* Frees what a filled slot holds (an empty one holds nothing). */
static void slot_clear(struct prefetch_slot *s)
{
	if (!s->ready)
		return;
	for (size_t i = 0; i < PREFETCH_FILES; i++)
		free(s->files[i].data);
	memset(s, 0, sizeof(*s));
}

/*
 * Gives the calling thread its own fd table holding only @dirfd: its fds
 * are then numbered one after another, for close_range, and the kernel
 * takes no shared table's lock for them. The copies of the process's other
 * fds are closed at once, so that none is kept open behind the caller's
 * back. Only where close_range works (Linux 5.9): false, and nothing done,
 * elsewhere.
 */
static bool prefetch_own_fds(int dirfd)
{
	/* Closes nothing (no such fd): tells whether the call exists. */
	if (syscall(SYS_close_range, ~0U, ~0U, 0) < 0 || unshare(CLONE_FILES) < 0)
		return false;
	if (dirfd > 0)
		syscall(SYS_close_range, 0U, (unsigned int)dirfd - 1, 0);
	syscall(SYS_close_range, (unsigned int)dirfd + 1, ~0U, 0);
	return true;
}

static void *prefetch_thread(void *arg)
{
	struct gen_prefetch *p = arg;
	bool own_fds = prefetch_own_fds(p->g->dirfd);
	struct prefetch_ring *pr = prefetch_ring_new(p->g);

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct prefetch_chunk *c;
		size_t number;
		int ring;

		while (!p->stop && p->claimed >= p->consumed + PREFETCH_CHUNKS)
			pthread_cond_wait(&p->wake_threads, &p->lock);
		if (p->stop || p->claimed * PREFETCH_CHUNK >= p->limit)
			break;
		number = p->claimed++;
		c = &p->chunks[number % PREFETCH_CHUNKS];
		pthread_mutex_unlock(&p->lock);
		ring = pr ? prefetch_chunk_ring(pr, p->g, number, c, p->limit) : -1;
		if (ring < 0 && pr) {
			/*
			 * The ring failed with operations perhaps in flight: this
			 * thread opens nothing more (a late close could meet a new
			 * fd with the same number), and the walk reads on itself.
			 */
			pthread_mutex_lock(&p->lock);
			p->failed = true;
			pthread_cond_broadcast(&p->wake_walk);
			break;
		}
		if (ring == 0) {
			prefetch_ring_free(pr);	/* its reads meet EAGAIN here: the other way on */
			pr = NULL;
		}
		for (size_t i = 0; i < PREFETCH_CHUNK; i++) {
			size_t index = number * PREFETCH_CHUNK + i;

			if (ring < 0 && index < p->limit)
				prefetch_job(p->g, index, &c->jobs[i], own_fds);
			else if (ring < 0)
				c->jobs[i].dir_ret = -ENOENT;	/* no such job: never entered */
			c->jobs[i].ready = true;
		}
		pthread_mutex_lock(&p->lock);
		c->number = number;
		c->ready = true;
		if (number == p->consumed)
			pthread_cond_signal(&p->wake_walk);
	}
	pthread_mutex_unlock(&p->lock);
	prefetch_ring_free(pr);
	return NULL;
}

/* How many threads: BCI_RESULTGEN_THREADS if set (0: none), else one per core, two at most. */
static int prefetch_thread_count(void)
{
	const char *env = getenv("BCI_RESULTGEN_THREADS");
	long n;

	if (env && *env) {
		n = strtol(env, NULL, 10);
		return n < 0 ? 0 : n > PREFETCH_THREADS_MAX ? PREFETCH_THREADS_MAX : (int)n;
	}
	n = sysconf(_SC_NPROCESSORS_ONLN);
	/* On one core a thread overlaps nothing. */
	return n < 2 ? 0 : 2;
}

/* ---- the walk's side: a source over the slots ---- */

/* The walk is done with job p->next (its slot @s): freed, and its chunk given back after its last. */
static void slot_release(struct gen_prefetch *p, struct prefetch_slot *s)
{
	struct prefetch_chunk *c = &p->chunks[(p->next / PREFETCH_CHUNK) % PREFETCH_CHUNKS];

	slot_clear(s);
	if (++p->next % PREFETCH_CHUNK)
		return;
	pthread_mutex_lock(&p->lock);
	c->ready = false;
	p->consumed++;
	pthread_cond_signal(&p->wake_threads);
	pthread_mutex_unlock(&p->lock);
}

static int prefetch_job_enter(struct gen *g, size_t index)
{
	struct gen_prefetch *p = g->prefetch;
	size_t number = index / PREFETCH_CHUNK;
	struct prefetch_chunk *c = &p->chunks[number % PREFETCH_CHUNKS];
	struct prefetch_slot *s = &c->jobs[index % PREFETCH_CHUNK];
	int ret;

	if (p->fallback || index != p->next) {
		/* Not the next job: the threads' order is no use any more. */
		p->fallback = true;
		return gen_dir_source.job_enter(g, index);
	}
	if (index % PREFETCH_CHUNK == 0) {
		bool ready;

		pthread_mutex_lock(&p->lock);
		while (!(ready = c->ready && c->number == number) && !p->failed)
			pthread_cond_wait(&p->wake_walk, &p->lock);
		pthread_mutex_unlock(&p->lock);
		if (!ready) {
			/* A thread's ring failed before this chunk: the directory source reads on. */
			p->fallback = true;
			return gen_dir_source.job_enter(g, index);
		}
	}
	ret = s->dir_ret;
	if (ret < 0) {
		/* process_job() does not leave a job it could not enter. */
		slot_release(p, s);
		return ret == -ENOENT ? ret : gen_open_refused_path(g, g->job_dir, ret);
	}
	p->current = s;
	return 0;
}

static void prefetch_job_leave(struct gen *g)
{
	struct gen_prefetch *p = g->prefetch;

	if (!p->current) {
		gen_dir_source.job_leave(g);
		return;
	}
	slot_release(p, p->current);
	p->current = NULL;
}

static int prefetch_open(struct gen *g, const char *rel, bool in_job, struct gen_file *f)
{
	struct gen_prefetch *p = g->prefetch;
	const char *slash = strrchr(rel, '/');
	struct prefetch_file *pf = NULL;
	unsigned long long size = 0;
	int fd, stage;

	if (!in_job || !p->current || !slash)
		return gen_dir_source.open(g, rel, in_job, f);
	for (size_t i = 0; i < PREFETCH_FILES && !pf; i++)
		if (!strcmp(slash + 1, prefetch_names[i]))
			pf = &p->current->files[i];
	if (pf && pf->ret < 0)
		return gen_open_refused(g, rel, pf->ret, pf->stage);
	if (pf && pf->data) {
		*f = (struct gen_file){ .fd = -1, .data = pf->data, .size = pf->len };
		return 0;
	}
	/* Not read ahead (large, say): opened now, "N/name" below the top, by the same rules. */
	fd = gen_open_regular(g, g->dirfd, rel, false, &stage, &size);
	if (fd < 0)
		return gen_open_refused(g, rel, fd, stage);
	*f = (struct gen_file){ .fd = fd, .size = size };
	return 0;
}

static void prefetch_close(struct gen *g, struct gen_file *f)
{
	gen_dir_source.close(g, f);
}

static const struct gen_source gen_prefetch_source = {
	.job_enter = prefetch_job_enter,
	.job_leave = prefetch_job_leave,
	.open = prefetch_open,
	.close = prefetch_close,
};

int gen_prefetch_start(struct gen *g, size_t jobs)
{
	int count = prefetch_thread_count(), ret = 0;
	sigset_t all, old;
	struct gen_prefetch *p;

	if (count == 0 || g->mem || jobs == 0)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->g = g;
	p->limit = jobs;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake_threads, NULL);
	pthread_cond_init(&p->wake_walk, NULL);
	/* The caller's signals stay with the caller's thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (; p->thread_count < count; p->thread_count++) {
		ret = -pthread_create(&p->threads[p->thread_count], NULL, prefetch_thread, p);
		if (ret < 0)
			break;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	g->prefetch = p;
	if (p->thread_count == 0) {
		/* No thread at all: the walk reads as before. */
		gen_prefetch_stop(g);
		return 0;
	}
	g->source = &gen_prefetch_source;
	return 0;
}

void gen_prefetch_stop(struct gen *g)
{
	struct gen_prefetch *p = g->prefetch;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->wake_threads);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->thread_count; i++)
		pthread_join(p->threads[i], NULL);
	p->current = NULL;
	for (size_t i = 0; i < PREFETCH_CHUNKS; i++)
		for (size_t j = 0; j < PREFETCH_CHUNK; j++)
			slot_clear(&p->chunks[i].jobs[j]);
	pthread_cond_destroy(&p->wake_walk);
	pthread_cond_destroy(&p->wake_threads);
	pthread_mutex_destroy(&p->lock);
	free(p);
	g->prefetch = NULL;
	g->source = &gen_dir_source;
}
