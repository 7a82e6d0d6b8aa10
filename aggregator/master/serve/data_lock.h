/* SPDX-License-Identifier: MIT */
/*
 * One serve per data folder: DATA/serve.lock, held with flock() for the
 * server's whole life, holds the holder's PID (decimal, newline) for the
 * message a second serve gives. The lock, not the file, decides: a file left
 * by a serve that was killed holds no lock (the kernel drops it with the
 * process), so it never blocks the next start. The file is never removed
 * (a serve that unlinked it could let two others lock two different files).
 */
#ifndef BCI_SERVE_DATA_LOCK_H
#define BCI_SERVE_DATA_LOCK_H

#include <stddef.h>

#define BCI_SERVE_LOCK_FILE "serve.lock"

/*
 * Creates @data_dir when missing, locks DATA/serve.lock and writes this
 * process's PID in it. Returns the lock's fd (the caller keeps it open while
 * it serves, then gives it to bci_serve_data_unlock()), -EBUSY when another
 * process holds it (@err names its PID), or another -errno (@err).
 */
int bci_serve_data_lock(const char *data_dir, char *err, size_t err_size);
/* Empties the PID and releases the lock; @fd < 0 is ignored. */
void bci_serve_data_unlock(int fd);

#endif
