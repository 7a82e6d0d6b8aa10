/* SPDX-License-Identifier: MIT */
/*
 * Re-deploy: a machine whose disk is damaged (GPT, ESP or results partition
 * unreadable) gets the known-good disk image written again by a deploy job.
 *
 * The master learns it two ways. Automatically: a job handed out
 * BCI_SCHEDULE_MAX_BOOTS times without its run ever uploading means the
 * executor ran each time but the known-good image, which uploads, never
 * started after it (the firmware fell through to netboot again). By a
 * person: `bootci-aggregator schedule redeploy MACHINE`.
 *
 * The mark is a file, DATA/schedule/damaged/<machine> holding the reason
 * (the store's machine states are only ready and out). At the machine's next
 * boot it gets the deploy job instead of a test job: the kernel and
 * initrd.img of the last build it ran, bootci.mode=deploy on the command
 * line, and a deploy initrd (two newc archives back to back) holding the
 * plan at BCI_DEPLOY_PLAN_PATH and the newest known-good version's disk.img
 * at BCI_DEPLOY_IMAGE_PATH. The mark then becomes DATA/schedule/deploying/
 * <machine>; the machine's next boot request (the deploy job reboots) clears
 * it and the machine is scheduled as before.
 */
#ifndef BCI_SCHEDULE_DEPLOY_H
#define BCI_SCHEDULE_DEPLOY_H

#include "schedule.h"

#include <stdint.h>

#define BCI_DEPLOY_PLAN_PATH "etc/bootci/deploy.plan"
#define BCI_DEPLOY_IMAGE_PATH "etc/bootci/known-good/disk.img"
/* The known-good file the deploy job writes to the disk. */
#define BCI_DEPLOY_IMAGE_FILE "disk.img"
/* The deploy initrd carries the image in RAM: a bigger one is refused. */
#define BCI_DEPLOY_IMAGE_MAX (1024UL * 1024 * 1024)

enum bci_deploy_state {
	BCI_DEPLOY_NONE,
	BCI_DEPLOY_DAMAGED,	/* its next boot gets the deploy job */
	BCI_DEPLOY_DEPLOYING,	/* the deploy job was handed out */
};

/*
 * Marks @machine (a name of the inventory) damaged because of @why. 1 when
 * marked, 0 when it was marked or being deployed already, -ENOENT when the
 * inventory has no such machine, -errno (@err).
 */
int bci_schedule_redeploy(struct bci_schedule *s, const char *machine, const char *why,
			  char *err, size_t err_size);

/* @machine's mark, its reason (or the version being deployed) in @note. -errno (@err). */
int bci_schedule_deploy_state(struct bci_schedule *s, const char *machine, char *note,
			      size_t note_size, char *err, size_t err_size);

/*
 * The boot request of a marked @machine at @now: damaged, the deploy
 * job's iPXE script in *@script and 1; deploying, the mark is cleared and 0
 * (the caller answers as for any machine); not marked, 0. -errno (@err).
 */
int bci_schedule_deploy_boot(struct bci_schedule *s, const char *machine, const char *base_url,
			     char **script, char *err, size_t err_size);

/*
 * The deploy initrd, streamed: @head (the plan's archive, then the image's
 * archive up to its bytes), @image_size bytes of @fd (the known-good
 * disk.img's object), then @tail (padding and trailer). The image is never
 * held in memory: a few machines re-deployed at once must not cost the master
 * a disk image each.
 */
struct bci_deploy_initrd {
	char *head;
	size_t head_len;
	int fd;
	uint64_t image_size;
	char *tail;
	size_t tail_len;
};

/*
 * The deploy initrd of @machine being deployed with known-good @version:
 * 0 with @out filled (bci_deploy_initrd_clear() frees it), -ENOENT when it is
 * not being deployed with that version, -errno (@err).
 */
int bci_schedule_deploy_initrd(struct bci_schedule *s, const char *machine, const char *version,
			       struct bci_deploy_initrd *out, char *err, size_t err_size);
/* Frees @initrd's buffers and closes its fd (-1 after). */
void bci_deploy_initrd_clear(struct bci_deploy_initrd *initrd);

#endif
