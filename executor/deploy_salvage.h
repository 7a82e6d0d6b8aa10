/* SPDX-License-Identifier: MIT */
/*
 * The deploy mode's salvage, what deploy.c calls of deploy_salvage.c. The
 * deploy mode's two files (executor.h holds its entry point, bci_deploy_run(),
 * and the write and verify the tests call):
 *
 *   deploy.c          the boot's story: the plan, the disk, the image written
 *                     and read back, the partition table, the boot entry, the
 *                     deploy's record (the run the master waits for)
 *   deploy_salvage.c  what the old disk held (the machine's identity, its run
 *                     folders), kept in the salvage area (lib/salvage.h) past
 *                     the image: saved and synced before the first byte of
 *                     the image is written, put back on the new results
 *                     partition after it is verified, then cleared
 *
 * Not for use outside the deploy mode and its tests.
 */
#ifndef BCI_EXECUTOR_DEPLOY_SALVAGE_H
#define BCI_EXECUTOR_DEPLOY_SALVAGE_H

#include "executor.h"

#include "deploy_plan.h"
#include "salvage.h"

#include <stdbool.h>
#include <stdint.h>

/* The machine's identity on the results partition (bootci-machine.conf(5), collect's). */
#define BCI_DEPLOY_IDENTITY_FILE "bootci-machine.conf"

struct bci_deploy_salvage {
	uint64_t disk_size;
	struct bci_salvage_footer footer;	/* the area's, once it holds this deploy's */
	bool held;		/* the area holds this deploy's salvage, durable */
	bool kept;		/* it was written by an earlier attempt of this deploy */
	unsigned restored;	/* put back: the identity and each run folder */
	bool identity;		/* the identity among them */
};

/*
 * Before the first byte of the image is written: the salvage area of @disk
 * holds this deploy's salvage, synced and read back. Kept from an earlier
 * attempt of the same deploy (its deploy_id and machine, its payload whole),
 * else saved now from the old results partition (by its label, or at the
 * offset the image on @image_fd gives it). 0 when the disk may be written;
 * -errno after a bci_error() when it must not be: a salvage that cannot be
 * made durable, or one of this deploy that does not read back (it stays for
 * a person).
 */
int bci_deploy_salvage_save(struct bci_executor *ex, const struct bci_deploy_plan *plan,
			    const char *disk, int image_fd, struct bci_deploy_salvage *s);

/*
 * Once the image is verified and its results partition mounted on
 * ex->results_mount: the salvage put back there and synced. 0, or -errno
 * after a bci_error() (the area is left as it is).
 */
int bci_deploy_salvage_restore(struct bci_executor *ex, const char *disk,
			       struct bci_deploy_salvage *s);

/*
 * Once the salvage is back: the area cleared. A failure is only said: a later
 * deploy has another deploy_id and does not take the area for its own.
 */
void bci_deploy_salvage_clear(struct bci_executor *ex, const char *disk,
			      struct bci_deploy_salvage *s);

/*
 * The halves of those two on folders and files (the tests call them):
 * what @old_root (an old results partition, mounted) holds into @w, the
 * identity first, then every run folder whole or not at all; what could not
 * be saved is counted in @f->lost and named in @f->lost_names. Returns how
 * many were saved (the identity and run folders), *@identity whether the
 * identity is among them.
 */
unsigned bci_deploy_salvage_pack(struct bci_salvage_writer *w, const char *old_root,
				 struct bci_salvage_footer *f, bool *identity);
/*
 * The payload @f describes on @fd into the folder @root, each file synced,
 * then @root's file system. 0 with the identity and run folders counted in
 * *@restored (*@identity: the identity among them), or -errno (@err).
 */
int bci_deploy_salvage_unpack(int fd, const struct bci_salvage_footer *f, const char *root,
			      unsigned *restored, bool *identity, char *err, size_t err_size);

#endif
