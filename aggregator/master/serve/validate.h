/* SPDX-License-Identifier: MIT */
/*
 * What serve accepts as an upload, checked before anything is kept: a run
 * archive (lib/run_archive.h: its format and its rules, the same reader
 * ingest and the cache use) within serve's limits (--max-entries,
 * --max-unpacked, --max-file, --max-manifest, --max-path), whose manifest
 * names the machine and run of the URL. A bomb is stopped as soon as it
 * crosses a limit, never unpacked in full; nothing is written anywhere.
 */
#ifndef BCI_SERVE_VALIDATE_H
#define BCI_SERVE_VALIDATE_H

#include "manifest.h"
#include "run_archive.h"

#include <stddef.h>

/*
 * Validates the archive in @fd (read from its current offset to its end)
 * as the upload of @machine's run @run_id. 0; -EINVAL when the archive is
 * refused (@err says why, naming the entry); another -errno on a local
 * failure (@err says which).
 */
int bci_archive_validate_fd(int fd, const struct bci_run_archive_limits *limits,
			    const char *machine, const char *run_id, char *err, size_t err_size);
/* The same over @size bytes in memory (the tests' way in). */
int bci_archive_validate_memory(const void *data, size_t size,
				const struct bci_run_archive_limits *limits, const char *machine,
				const char *run_id, char *err, size_t err_size);

#endif
