// SPDX-License-Identifier: MIT
/*
 * lib/uring.c: opens, reads and closes handed to the kernel in one call,
 * each result where its number says, as the system calls would give them.
 * Where the kernel has no io_uring or refuses it (disabled, a seccomp
 * filter) the tests say so and skip: the results generator then reads
 * without it. A kernel with io_uring but not the operations used fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fakeroot.h"
#include "uring.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void path_of(struct fakeroot *root, const char *rel, char *path, size_t size)
{
	assert_true((size_t)snprintf(path, size, "%s%s", root->dir, rel) < size);
}

/* A ring, or a skip when this kernel has none to give. */
static bool ring_or_skip(struct bci_uring *r, unsigned entries)
{
	int ret = bci_uring_init(r, entries);

	/* Not there, or refused (kernel.io_uring_disabled, seccomp); its operations must be. */
	if (ret == -ENOSYS || ret == -EPERM) {
		print_message("no io_uring here (%s): skipped\n", strerror(-ret));
		return false;
	}
	assert_int_equal(ret, 0);
	return true;
}

/* Open, read and close chained; an absent file, a symlink refused, a directory read. */
static void open_read_close_in_one_run(void **state)
{
	static const struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
	};
	struct fakeroot root;
	struct bci_uring r;
	char path[PATH_MAX + 16], buf[64] = "", dirbuf[8];
	int dirfd, fd, dfd;

	(void)state;
	if (!ring_or_skip(&r, 16))
		return;
	fakeroot_create(&root, "");
	fakeroot_write(&root, "/d/f.txt", "twelve bytes");
	path_of(&root, "/d/f.txt", path, sizeof(path));
	{
		char link[PATH_MAX + 16];

		path_of(&root, "/d/link", link, sizeof(link));
		assert_int_equal(symlink(path, link), 0);
	}
	path_of(&root, "/d", path, sizeof(path));
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);

	assert_true(bci_uring_openat2(&r, 0, dirfd, "f.txt", &how));
	assert_true(bci_uring_openat2(&r, 1, dirfd, "absent", &how));
	assert_true(bci_uring_openat2(&r, 2, dirfd, "link", &how));
	assert_true(bci_uring_openat2(&r, 3, dirfd, "../d/f.txt", &how));
	assert_true(bci_uring_openat2(&r, 4, dirfd, ".", &how));
	assert_int_equal(bci_uring_run(&r), 0);
	fd = bci_uring_result(&r, 0);
	assert_true(fd >= 0);
	assert_int_equal(bci_uring_result(&r, 1), -ENOENT);
	assert_int_equal(bci_uring_result(&r, 2), -ELOOP);
	assert_int_equal(bci_uring_result(&r, 3), -EXDEV);
	dfd = bci_uring_result(&r, 4);
	assert_true(dfd >= 0);

	/* One byte more than there is: the read stops at the end. The close runs after it. */
	assert_true(bci_uring_read(&r, 5, fd, buf, 13, 0, true));
	assert_true(bci_uring_close(&r, 6, fd));
	assert_true(bci_uring_read(&r, 7, dfd, dirbuf, sizeof(dirbuf), 0, true));
	assert_true(bci_uring_close(&r, 8, dfd));
	assert_int_equal(bci_uring_run(&r), 0);
	assert_int_equal(bci_uring_result(&r, 5), 12);
	assert_memory_equal(buf, "twelve bytes", 12);
	assert_int_equal(bci_uring_result(&r, 6), 0);
	assert_int_equal(bci_uring_result(&r, 7), -EISDIR);
	/* Hard-linked: the close ran although the read failed. */
	assert_int_equal(bci_uring_result(&r, 8), 0);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(fcntl(dfd, F_GETFD), -1);

	close(dirfd);
	bci_uring_free(&r);
	fakeroot_remove(&root);
}

/* A run holds as many operations as the ring has entries, and no number beyond them. */
static void a_full_ring_says_so(void **state)
{
	static const struct open_how how = { .flags = O_RDONLY | O_CLOEXEC };
	struct bci_uring r;

	(void)state;
	if (!ring_or_skip(&r, 4))
		return;
	assert_false(bci_uring_close(&r, 4, -1));	/* numbered past the ring */
	for (unsigned i = 0; i < 4; i++)
		assert_true(bci_uring_openat2(&r, i, AT_FDCWD, "/nonexistent-bootci-path", &how));
	assert_false(bci_uring_openat2(&r, 0, AT_FDCWD, "/nonexistent-bootci-path", &how));
	assert_int_equal(bci_uring_run(&r), 0);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(bci_uring_result(&r, i), -ENOENT);
	/* Room again after the run. */
	assert_true(bci_uring_close(&r, 0, -1));
	assert_int_equal(bci_uring_run(&r), 0);
	assert_int_equal(bci_uring_result(&r, 0), -EBADF);
	bci_uring_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(open_read_close_in_one_run),
		cmocka_unit_test(a_full_ring_says_so),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
