/* SPDX-License-Identifier: MIT */
/*
 * A small io_uring of one thread's own: many file operations handed to the
 * kernel in one system call. Where each system call is dear (a virtual
 * machine's exits, mitigations), the results generator's read-ahead threads
 * open and read a chunk of job folders with two calls instead of a hundred
 * (lib/resultgen/prefetch.c). Raw system calls, no liburing: the same code
 * builds against musl.
 *
 * A ring is used by the thread that made it only (IORING_SETUP_SINGLE_ISSUER
 * where the kernel has it). Every operation queued is then submitted and
 * waited for at once (bci_uring_run): one completion per operation, read
 * back with bci_uring_result() by the number it was queued with.
 */
#ifndef BCI_URING_H
#define BCI_URING_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct open_how;

struct bci_uring {
	int fd;
	void *ring;			/* the submission and completion rings, one mapping */
	size_t ring_size;
	void *sqes;			/* the submission entries */
	size_t sqes_size;
	unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned *cq_head, *cq_tail, *cq_mask;
	void *cqes;
	unsigned entries;		/* submission entries */
	unsigned queued;		/* queued since the last run */
	int *results;			/* by user number: each completion's res */
};

/*
 * A ring of @entries (a power of two) whose operations are numbered 0 to
 * @entries - 1. 0, or -errno: -ENOSYS without io_uring, -EPERM where it is
 * disabled (kernel.io_uring_disabled, a seccomp filter), -EOPNOTSUPP when
 * the kernel lacks one of the operations used (openat2, read, close).
 */
int bci_uring_init(struct bci_uring *r, unsigned entries);
void bci_uring_free(struct bci_uring *r);

/*
 * Queue an operation numbered @number (< entries, once per run). false when
 * the ring is full. @link: the next operation queued runs after this one
 * whatever this one's result (IOSQE_IO_HARDLINK).
 */
bool bci_uring_openat2(struct bci_uring *r, unsigned number, int dirfd, const char *path,
		       const struct open_how *how);
bool bci_uring_read(struct bci_uring *r, unsigned number, int fd, void *buf, unsigned len,
		    uint64_t offset, bool link);
bool bci_uring_close(struct bci_uring *r, unsigned number, int fd);

/*
 * Submit what was queued and wait until each has completed. 0, or -errno
 * when the kernel refused the ring call itself (the ring is then unusable:
 * what was queued may have run or not).
 */
int bci_uring_run(struct bci_uring *r);

/* What an operation queued but not completed (its run failed) reads as. */
#define BCI_URING_PENDING INT_MIN

/*
 * The result of operation @number in the last run: as the system call would
 * return, -errno; BCI_URING_PENDING if it did not complete.
 */
static inline int bci_uring_result(const struct bci_uring *r, unsigned number)
{
	return r->results[number];
}

#endif
