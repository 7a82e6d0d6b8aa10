/* SPDX-License-Identifier: MIT */
/*
 * A fake root tree for executor tests: /proc files, /sys/block entries and
 * /dev entries that are image files, so libblkid and libkmod work on it
 * unprivileged. Helpers abort the test on failure (cmocka asserts).
 */
#ifndef BCI_TEST_FAKEROOT_H
#define BCI_TEST_FAKEROOT_H

#include <limits.h>

struct fakeroot {
	char dir[PATH_MAX];
};

void fakeroot_create(struct fakeroot *root, const char *cmdline);
void fakeroot_remove(struct fakeroot *root);
/* Writes @text to ROOT/@path, creating the parents. */
void fakeroot_write(struct fakeroot *root, const char *path, const char *text);
/* Adds /dev/DISK (@size_mb, GPT with one partition of PARTUUID @partuuid when not NULL)
 * and /dev/DISK1 holding an ext4 filesystem labelled @label (none when NULL). */
void fakeroot_add_disk(struct fakeroot *root, const char *disk, const char *partuuid,
		       const char *label);
/* Links ROOT/lib/modules/<release> to the unpacked test kernel's modules; returns 0
 * or -1 when the kernel is not there (the test is then skipped). */
int fakeroot_add_kernel_modules(struct fakeroot *root);
/* Reads ROOT/@path into a static buffer; NULL when missing. */
const char *fakeroot_read(struct fakeroot *root, const char *path);
/* The host build of a fixture program: $BUILD/host/bin/fixtures/@name. */
const char *fixture_path(const char *name);

struct bci_executor;

/*
 * A fake root made with @cmdline and an executor on it: dry system calls,
 * settings loaded, run folder ROOT/results/runs/t created, release "test".
 */
void fakeroot_executor(struct fakeroot *root, struct bci_executor *ex, const char *cmdline);
/* Frees what fakeroot_executor() and the test gave @ex, and removes the tree. */
void fakeroot_executor_release(struct fakeroot *root, struct bci_executor *ex);

/* How many fds this process has open (a test compares before and after). */
int fakeroot_open_fds(void);

#endif
