/* SPDX-License-Identifier: MIT */
/*
 * The deploy plan: what the master tells the executor's deploy mode to write
 * on a damaged machine's disk (aggregator/schedule/deploy.c writes it into the
 * deploy initrd, executor/deploy.c reads it). One `key = value` a line in
 * bci_kv_parse()'s syntax, '#' comments; every key at most once:
 *
 *   machine        the machine's name in the inventory (a name: A-Z a-z 0-9 . _ -)
 *   known_good     the known-good image version (a name)
 *   image          where the disk image is in the initramfs (an absolute path
 *                  without . or .. components)
 *   image_size     its size in bytes (1 to BCI_DEPLOY_PLAN_SIZE_MAX)
 *   image_sha256   its SHA-256, 64 lowercase hex digits: the disk must read
 *                  back as exactly these bytes
 *   deploy_id      this deploy's id (a name), the same for every attempt until
 *                  it is over: the salvage area (salvage.h) names it, so an
 *                  attempt restarted after a power cut knows the salvage as its
 *                  own; and the deploy's record is the run runs/<deploy_id>/,
 *                  whose upload tells the master the deploy is over
 *   disk           optional: the whole disk to write (/dev/NAME, one name);
 *                  absent, the executor picks the disk itself
 *   esp_partition  optional: the ESP's partition number in the image (1-128,
 *                  default 1), for the EFI boot entry
 *   loader         optional: the known-good loader on the ESP (an absolute
 *                  path, default BCI_DEPLOY_PLAN_LOADER)
 */
#ifndef BCI_DEPLOY_PLAN_H
#define BCI_DEPLOY_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define BCI_DEPLOY_PLAN_WORD_MAX 128
#define BCI_DEPLOY_PLAN_PATH_MAX 256
#define BCI_DEPLOY_PLAN_SIZE_MAX (64ULL << 30)
#define BCI_DEPLOY_PLAN_LOADER "/EFI/bootci/known-good.efi"
/* The most a plan file may hold: it is a dozen short lines. */
#define BCI_DEPLOY_PLAN_TEXT_MAX 8192

struct bci_deploy_plan {
	char machine[BCI_DEPLOY_PLAN_WORD_MAX + 1];
	char known_good[BCI_DEPLOY_PLAN_WORD_MAX + 1];
	char image[BCI_DEPLOY_PLAN_PATH_MAX];
	uint64_t image_size;
	char image_sha256[65];
	char deploy_id[BCI_DEPLOY_PLAN_WORD_MAX + 1];
	char disk[BCI_DEPLOY_PLAN_PATH_MAX];	/* "" when the plan names none */
	unsigned esp_partition;
	char loader[BCI_DEPLOY_PLAN_PATH_MAX];
};

/*
 * Parses @len bytes of the plan file @name into @plan. 0, or -EINVAL with
 * "<name>:<line>: <key>: what is wrong" (or the key that is missing) in @err.
 */
int bci_deploy_plan_parse(const char *name, const char *text, size_t len,
			  struct bci_deploy_plan *plan, char *err, size_t err_size);

/*
 * The plan's text, as the parser reads it back (optional keys only when set),
 * malloc'ed in *@text. 0, -EINVAL when a field would not parse back (named in
 * @err), -ENOMEM.
 */
int bci_deploy_plan_format(const struct bci_deploy_plan *plan, char **text, char *err,
			   size_t err_size);

#endif
