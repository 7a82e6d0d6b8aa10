// SPDX-License-Identifier: MIT
/*
 * The io_uring system calls and rings by hand (uring.h): setup, one shared
 * mapping of both rings (IORING_FEAT_SINGLE_MMAP, Linux 5.4), the
 * operations asked for probed once, then queue, run, read the results.
 */
#include "uring.h"

#include <errno.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_io_uring_setup
#include <asm/unistd.h>
#define SYS_io_uring_setup __NR_io_uring_setup
#define SYS_io_uring_enter __NR_io_uring_enter
#define SYS_io_uring_register __NR_io_uring_register
#endif

#define URING_BUSY_TRIES 1000

/* Kernel headers before 6.1 lack these; a kernel without them refuses them (EINVAL). */
#ifndef IORING_SETUP_SINGLE_ISSUER
#define IORING_SETUP_SINGLE_ISSUER (1U << 12)
#endif
#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN (1U << 13)
#endif

static const unsigned char uring_ops_used[] = { IORING_OP_OPENAT2, IORING_OP_READ, IORING_OP_CLOSE };

static int uring_setup(unsigned entries, struct io_uring_params *p, unsigned flags)
{
	long fd;

	memset(p, 0, sizeof(*p));
	p->flags = flags;
	fd = syscall(SYS_io_uring_setup, entries, p);
	return fd < 0 ? -errno : (int)fd;
}

/* 0 when the kernel has every operation used, -EOPNOTSUPP when not, -errno when it cannot say. */
static int uring_probe(int fd)
{
	size_t size = sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
	struct io_uring_probe *probe = calloc(1, size);
	int ret = 0;

	if (!probe)
		return -ENOMEM;
	if (syscall(SYS_io_uring_register, fd, IORING_REGISTER_PROBE, probe, 256) < 0) {
		ret = errno == EINVAL ? -EOPNOTSUPP : -errno;	/* before 5.6: no probe, no openat2 */
	} else {
		for (size_t i = 0; i < sizeof(uring_ops_used) && ret == 0; i++)
			if (uring_ops_used[i] > probe->last_op ||
			    !(probe->ops[uring_ops_used[i]].flags & IO_URING_OP_SUPPORTED))
				ret = -EOPNOTSUPP;
	}
	free(probe);
	return ret;
}

int bci_uring_init(struct bci_uring *r, unsigned entries)
{
	struct io_uring_params p;
	size_t sq_size, cq_size;
	char *ring;
	int fd, ret;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	/* One thread submits, and completions are run when it waits (Linux 6.1); else the defaults. */
	fd = uring_setup(entries, &p, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	if (fd == -EINVAL)
		fd = uring_setup(entries, &p, 0);
	if (fd < 0)
		return fd;
	r->fd = fd;
	ret = -EOPNOTSUPP;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP) || p.sq_entries != entries)
		goto fail;
	ret = uring_probe(fd);
	if (ret < 0)
		goto fail;
	sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_size = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->ring_size = sq_size > cq_size ? sq_size : cq_size;
	ring = mmap(NULL, r->ring_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		    IORING_OFF_SQ_RING);
	if (ring == MAP_FAILED) {
		ret = -errno;
		r->ring = NULL;
		goto fail;
	}
	r->ring = ring;
	r->sqes_size = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sqes = mmap(NULL, r->sqes_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		       IORING_OFF_SQES);
	if (r->sqes == MAP_FAILED) {
		ret = -errno;
		r->sqes = NULL;
		goto fail;
	}
	r->results = calloc(entries, sizeof(*r->results));
	if (!r->results) {
		ret = -ENOMEM;
		goto fail;
	}
	r->sq_head = (unsigned *)(ring + p.sq_off.head);
	r->sq_tail = (unsigned *)(ring + p.sq_off.tail);
	r->sq_mask = (unsigned *)(ring + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(ring + p.sq_off.array);
	r->cq_head = (unsigned *)(ring + p.cq_off.head);
	r->cq_tail = (unsigned *)(ring + p.cq_off.tail);
	r->cq_mask = (unsigned *)(ring + p.cq_off.ring_mask);
	r->cqes = ring + p.cq_off.cqes;
	r->entries = entries;
	return 0;
fail:
	bci_uring_free(r);
	return ret;
}

void bci_uring_free(struct bci_uring *r)
{
	if (r->sqes)
		munmap(r->sqes, r->sqes_size);
	if (r->ring)
		munmap(r->ring, r->ring_size);
	if (r->fd >= 0)
		close(r->fd);
	free(r->results);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/* The next free entry, cleared and numbered, or NULL when a run's worth is queued. */
static struct io_uring_sqe *uring_entry(struct bci_uring *r, unsigned number)
{
	unsigned tail = *r->sq_tail + r->queued, index = tail & *r->sq_mask;
	struct io_uring_sqe *sqe;

	if (r->queued >= r->entries || number >= r->entries)
		return NULL;
	sqe = (struct io_uring_sqe *)r->sqes + index;
	memset(sqe, 0, sizeof(*sqe));
	sqe->user_data = number;
	r->results[number] = BCI_URING_PENDING;
	r->sq_array[index] = index;
	r->queued++;
	return sqe;
}

bool bci_uring_openat2(struct bci_uring *r, unsigned number, int dirfd, const char *path,
		       const struct open_how *how)
{
	struct io_uring_sqe *sqe = uring_entry(r, number);

	if (!sqe)
		return false;
	sqe->opcode = IORING_OP_OPENAT2;
	sqe->fd = dirfd;
	sqe->addr = (uintptr_t)path;
	sqe->len = sizeof(*how);
	sqe->addr2 = (uintptr_t)how;
	return true;
}

bool bci_uring_read(struct bci_uring *r, unsigned number, int fd, void *buf, unsigned len,
		    uint64_t offset, bool link)
{
	struct io_uring_sqe *sqe = uring_entry(r, number);

	if (!sqe)
		return false;
	sqe->opcode = IORING_OP_READ;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)buf;
	sqe->len = len;
	sqe->off = offset;
	sqe->flags = link ? IOSQE_IO_HARDLINK : 0;
	return true;
}

bool bci_uring_close(struct bci_uring *r, unsigned number, int fd)
{
	struct io_uring_sqe *sqe = uring_entry(r, number);

	if (!sqe)
		return false;
	sqe->opcode = IORING_OP_CLOSE;
	sqe->fd = fd;
	return true;
}

/* Each completion there is: its result kept by number. How many were read. */
static unsigned uring_reap(struct bci_uring *r)
{
	unsigned head = *r->cq_head, tail = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE), n = 0;

	for (; head != tail; head++, n++) {
		const struct io_uring_cqe *cqe = (const struct io_uring_cqe *)r->cqes +
						 (head & *r->cq_mask);

		if (cqe->user_data < r->entries)
			r->results[cqe->user_data] = cqe->res;
	}
	__atomic_store_n(r->cq_head, head, __ATOMIC_RELEASE);
	return n;
}

int bci_uring_run(struct bci_uring *r)
{
	unsigned total = r->queued, submitted = 0, completed = 0, busy = 0;

	/* The entries are written: the kernel may see the new tail. */
	__atomic_store_n(r->sq_tail, *r->sq_tail + total, __ATOMIC_RELEASE);
	r->queued = 0;
	while (submitted < total || completed < total) {
		long n = syscall(SYS_io_uring_enter, r->fd, total - submitted, total - completed,
				 IORING_ENTER_GETEVENTS, NULL, 0);

		/* Interrupted: again. Short of memory or of room for completions: a while. */
		if (n < 0 && errno != EINTR &&
		    ((errno != EAGAIN && errno != EBUSY) || ++busy > URING_BUSY_TRIES))
			return -errno;
		if (n > 0)
			submitted += (unsigned)n;
		completed += uring_reap(r);
	}
	return 0;
}
