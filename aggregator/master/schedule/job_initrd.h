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

/*
 * The same archive without its file's bytes, for a body too big to hold in
 * memory (a deploy's disk image): *@head (the folders, the file's header and
 * name) + the @body_len bytes of the body + *@tail (its padding and the
 * trailer) are byte for byte what bci_job_initrd_make() would make. Both
 * malloc'ed. 0, -EFBIG (newc sizes are 32 bits), -ENOMEM.
 */
int bci_job_initrd_frame(const char *path, size_t body_len, char **head, size_t *head_len,
			 char **tail, size_t *tail_len);

#endif
