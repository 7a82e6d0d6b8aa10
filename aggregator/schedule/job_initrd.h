/* SPDX-License-Identifier: MIT */
/* The job initrd: one file in an uncompressed newc cpio (job_initrd.c says why). */
#ifndef BCI_SCHEDULE_JOB_INITRD_H
#define BCI_SCHEDULE_JOB_INITRD_H

#include <stddef.h>

/*
 * An archive holding @text (@len bytes) at @path (relative, no leading '/';
 * its parent folders are added), malloc'ed into *@data. 0 or -ENOMEM.
 */
int bci_job_initrd_make(const char *path, const char *text, size_t len, char **data,
			size_t *data_len);

#endif
