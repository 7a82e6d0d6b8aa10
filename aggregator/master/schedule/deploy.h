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
 * <machine>, which names the deploy (its deploy_id, in the plan too):
 *
 *   <version> (was: <reason>)      what is written, and why (the note shown)
 *   deploy_id deploy-<UTC time>-<8 hex digits>
 *   handed N                        deploy jobs handed out so far
 *   given_up N                      `handed` when the master last gave up
 *
 * The deploy is over when the machine says so: its last step writes the run
 * <deploy_id> (the deploy's record) on the new results partition, and the
 * known-good image's collect uploads it with the machine's identity the
 * deploy put back. A boot request while the mark names a deploy whose run
 * has not come in is a deploy that did not finish (a power cut, a reset, a
 * failed step): the same deploy job again, the same version and deploy_id,
 * so that the attempt finds the salvage the cut one left on the disk
 * (executor/deploy_salvage.c). After BCI_DEPLOY_TRIES of them in a row the
 * master gives up: the machine is taken out of the schedule, saying so
 * (`schedule return` puts it back for as many tries again). The boot request
 * once the run came in clears the mark, and the machine is scheduled as before.
 */
#ifndef BCI_SCHEDULE_DEPLOY_H
#define BCI_SCHEDULE_DEPLOY_H

#include "schedule.h"

#include <stdint.h>

#define BCI_DEPLOY_PLAN_PATH "etc/bootci/deploy.plan"
#define BCI_DEPLOY_IMAGE_PATH "etc/bootci/known-good/disk.img"
/* The known-good file the deploy job writes to the disk. */
#define BCI_DEPLOY_IMAGE_FILE "disk.img"
/* Deploy jobs handed out without the deploy's record coming in, before the master gives up. */
#define BCI_DEPLOY_TRIES 3
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
 * The boot request of a marked @machine: damaged, or deploying and its
 * deploy's record (the run <deploy_id>) not in, the deploy job's iPXE script
 * in *@script and 1 (after BCI_DEPLOY_TRIES deploys that did not finish, the
 * machine is taken out and the script is `exit`); deploying and its record
 * in, the mark is cleared and 0 (the caller answers as for any machine); not
 * marked, 0. -errno (@err).
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
