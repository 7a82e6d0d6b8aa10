/* SPDX-License-Identifier: MIT */
/*
 * serve's data folder, the only place uploads are kept:
 *
 *   DATA/incoming/<machine>/<run>.part      the bytes of an upload received so far
 *   DATA/incoming/<machine>/<run>.sha256    the digest that upload announced (hex, newline)
 *   DATA/archives/<h>.tar.zst               accepted archives, named by their sha256 h
 *   DATA/runs/<machine>/<run>.json          an accepted run: {"machine", "run_id",
 *                                           "sha256", "size", "ingested"}
 *   DATA/refused/<machine>/<run>.json       an archive refused (422): store/refused.h
 *
 * A run is accepted once its archive and its record are both durable (written,
 * fsynced, renamed, folder fsynced), in that order, so a record never points
 * at a missing archive; the answer to the client comes after. Two runs with the
 * same bytes share one archive. An upload cut short leaves its .part, which a
 * later PUT resumes; a refused one leaves nothing. What a process killed
 * between two of these steps leaves (the digest of a run already recorded, a
 * digest without its .part, a temporary file) is removed when the spool is
 * opened, before serve takes requests.
 *
 * An upload cut short and never resumed expires: once its .part has not been
 * written for an age the caller chooses, bci_spool_expire() removes it.
 *
 * Callers serialise the operations on one (machine, run) pair themselves
 * (serve holds a per-run lock); different runs need no coordination.
 */
#ifndef BCI_SERVE_SPOOL_H
#define BCI_SERVE_SPOOL_H

#include "manifest.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum bci_run_state {
	BCI_RUN_ABSENT,
	BCI_RUN_PARTIAL,	/* an upload in incoming/, @received bytes of it */
	BCI_RUN_STORED,		/* accepted: its archive is durable */
};

struct bci_run_status {
	enum bci_run_state state;
	uint64_t received;	/* PARTIAL: bytes held; STORED: the archive's size */
	char sha256[BCI_SHA256_HEX_LEN + 1];	/* announced (PARTIAL) or stored (STORED) */
	bool ingested;		/* STORED: the store has it */
};

struct bci_spool {
	char root[PATH_MAX - 512];	/* room for the names under it */
};

/* Creates the folders under @root when missing; removes the leftovers of killed processes in incoming/. */
int bci_spool_open(struct bci_spool *spool, const char *root, char *err, size_t err_size);

int bci_spool_status(const struct bci_spool *spool, const char *machine, const char *run_id,
		     struct bci_run_status *status, char *err, size_t err_size);

/*
 * Opens the upload's .part for writing at offset @start: 0 starts afresh
 * (any earlier .part dropped, @sha256 recorded); otherwise the .part must hold
 * at least @start bytes announced with the same @sha256, and is cut to @start.
 * Returns the fd (positioned at @start) or -errno; -ERANGE when @start cannot
 * be resumed from (@err says what the spool holds).
 */
int bci_spool_begin(const struct bci_spool *spool, const char *machine, const char *run_id,
		    const char *sha256, uint64_t start, char *err, size_t err_size);

/* The path of the upload's .part (for validation), into @path (PATH_MAX). */
void bci_spool_part_path(const struct bci_spool *spool, const char *machine, const char *run_id,
			 char *path);
/* The path of the accepted archive with digest @sha256, into @path (PATH_MAX). */
void bci_spool_archive_path(const struct bci_spool *spool, const char *sha256, char *path);

/*
 * Makes the upload's .part (@size bytes, digest @sha256 already verified) the
 * run's accepted archive, durably, and records the run (not ingested yet).
 */
int bci_spool_accept(const struct bci_spool *spool, const char *machine, const char *run_id,
		     const char *sha256, uint64_t size, char *err, size_t err_size);

/* Marks an accepted run as ingested (durably). */
int bci_spool_mark_ingested(const struct bci_spool *spool, const char *machine,
			    const char *run_id, char *err, size_t err_size);

/* Drops the upload's .part and digest: nothing of it is kept. */
void bci_spool_discard(const struct bci_spool *spool, const char *machine, const char *run_id);

/*
 * Calls @fn for every accepted run not yet ingested (restart recovery);
 * stops at the first non-zero return of @fn and returns it.
 */
int bci_spool_each_pending(const struct bci_spool *spool,
			   int (*fn)(void *ctx, const char *machine, const char *run_id,
				     const struct bci_run_status *status),
			   void *ctx, char *err, size_t err_size);

/*
 * Calls @fn for every upload in incoming/ whose .part was last written more
 * than @max_age seconds before @now (its size and age in seconds); stops at
 * the first non-zero return of @fn and returns it. Removes nothing: @fn
 * decides, and removes with bci_spool_expire() under the run's exclusion.
 */
int bci_spool_each_expired(const struct bci_spool *spool, time_t now, uint64_t max_age,
			   int (*fn)(void *ctx, const char *machine, const char *run_id,
				     uint64_t size, uint64_t age),
			   void *ctx);

/*
 * Removes the upload's .part and digest when the .part is still older than
 * @max_age seconds at @now (it may have been resumed since it was listed):
 * 1 removed (its size in *@size), 0 kept or absent.
 */
int bci_spool_expire(const struct bci_spool *spool, const char *machine, const char *run_id,
		     time_t now, uint64_t max_age, uint64_t *size);

/*
 * The bytes @machine holds in incoming/: the sum of its .part files' sizes,
 * but @except_run_id's (NULL: none excepted).
 */
uint64_t bci_spool_incoming_bytes(const struct bci_spool *spool, const char *machine,
				  const char *except_run_id);

#endif
