// SPDX-License-Identifier: MIT
/* One boot of the test machine, from the API filesystems to the recorded result. */
#include "executor.h"

#include "boot_fault.h"
#include "config.h"
#include "handover.h"
#include "fsutil.h"
#include "machine.h"
#include "message.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/reboot.h>
#include <unistd.h>

static const char *run_id(const struct bci_executor *ex)
{
	const char *run = ex->config ? bci_config_get(ex->config, "run_id") : NULL;

	return run && *run ? run : "-";
}

/*
 * Counts this boot in the boot fault note (lib/boot_fault.h, an EFI
 * variable: the results partition may be what fails): boots in a row that
 * ended in error before run @run began. At error_boots of them the machine
 * cannot get anywhere by booting again (the same netboot fails the same way):
 * the console says so, and the known-good image this boot hands over to
 * sends the note to the master, which takes the machine out.
 */
static void fault_count(struct bci_executor *ex)
{
	unsigned long cap = ex->config ? bci_config_get_number(ex->config, "error_boots") : 3;
	struct bci_boot_fault fault;
	const char *run = run_id(ex), *last = bci_console_last_error();
	int ret;

	if (!cap)
		return;
	ret = bci_boot_fault_read(ex->root, &fault);
	if (ret < 0 || strcmp(fault.run, run))
		fault = (struct bci_boot_fault){ .boots = 0 };
	snprintf(fault.run, sizeof(fault.run), "%s", run);
	fault.boots++;
	fault.cap = (unsigned)cap;
	snprintf(fault.reason, sizeof(fault.reason), "%s",
		 *last ? last : "the executor could not go on");
	ret = bci_boot_fault_write(ex->root, &fault);
	if (ret < 0) {
		bci_warn("cannot count this boot in the EFI variable " BCI_BOOT_FAULT_NAME ": %s",
			 bci_strerror(-ret));
		return;
	}
	if (bci_boot_fault_due(&fault))
		bci_error("%u boots in a row ended before run %s began (error_boots=%u): the"
			  " known-good image tells the master, which takes this machine out; last:"
			  " %s", fault.boots, run, fault.cap, fault.reason);
	else
		bci_say("boot %u of %u in a row that ended before run %s began", fault.boots,
			fault.cap, run);
}

/* The run began: the boots that ended before it no longer count. */
static void fault_forget(struct bci_executor *ex)
{
	struct bci_boot_fault fault;

	if (bci_boot_fault_read(ex->root, &fault) == 0 && !strcmp(fault.run, run_id(ex)))
		bci_boot_fault_clear(ex->root);
}

static enum bci_ending error_ending(struct bci_executor *ex)
{
	ex->end_reason = "error: the executor could not go on (see the console)";
	/*
	 * A boot that cannot proceed hands over to the known-good image too, even
	 * when it failed before efivarfs was mounted (a bad configuration, say):
	 * rebooting into the same netboot would fail the same way, for ever.
	 */
	if (bci_efivar_available(ex->root) == -ENOMEDIUM) {
		if (!ex->kmod)
			bci_modules_init(ex);
		bci_mounts_firmware(ex);
	}
	/* Only a boot whose run did not begin: a run's own errors are in its results. */
	if (!ex->run_began)
		fault_count(ex);
	/* Settings before a bad one stay set: an earlier on_error still applies. */
	if (ex->config && strcmp(bci_config_get(ex->config, "on_error"), "poweroff") == 0)
		return BCI_END_POWEROFF;
	return BCI_END_REBOOT;
}

enum bci_ending bci_executor_boot(struct bci_executor *ex)
{
	int ret;

	ex->watchdog_fd = -1;
	if (bci_mounts_early(ex) < 0)
		return BCI_END_REBOOT;
	bci_console_attach(ex);
	bci_say("bootci-executor starting (%s)", ex->sys->name);

	if (bci_settings_load(ex) < 0)
		return error_ending(ex);
	if (bci_modules_init(ex) < 0)
		return error_ending(ex);
	bci_say("kernel %s", ex->release);
	bci_mounts_firmware(ex);
	bci_pstore_load_backends(ex);
	if (bci_modules_load_configured(ex) < 0)
		return error_ending(ex);
	bci_coldplug_run(ex);
	/* The deploy mode writes the disk the results partition is on: no run folder first. */
	if (strcmp(bci_config_get(ex->config, "mode"), "deploy") == 0) {
		if (bci_deploy_run(ex) < 0)
			return error_ending(ex);
		ex->end_reason = "deployed";
		return BCI_END_REBOOT;
	}
	if (bci_partition_mount_results(ex) < 0)
		return error_ending(ex);
	/* Room for the records of a partition that fills up; says when it is full already. */
	bci_reserve_hold(ex);

	if (snprintf(ex->run_dir, sizeof(ex->run_dir), "%s/runs/%s", ex->results_mount,
		     bci_config_get(ex->config, "run_id")) >= (int)sizeof(ex->run_dir))
		return error_ending(ex);
	ret = bci_mkdir_p(ex->run_dir, 0755);
	if (ret < 0) {
		bci_error("cannot create the run folder %s: %s", ex->run_dir, bci_strerror(-ret));
		return error_ending(ex);
	}
	if (bci_run_dir_claim(ex) < 0)
		return error_ending(ex);
	/* Before anything runs: what the previous boot left, and this boot's record. */
	if (bci_boot_begin(ex) < 0)
		return error_ending(ex);
	ex->run_began = true;
	fault_forget(ex);
	bci_environment_record(ex);
	/* A full partition aborts an IGT run before its first job (igt/run.c); a single program
	 * runs all the same: the known-good image's (collect) is what frees the partition. */
	if (*bci_config_get(ex->config, "testlist")) {
		if (bci_igt_run(ex) < 0)
			return error_ending(ex);
		ret = 0;
	} else if ((ret = bci_test_program_run(ex)) < 0) {
		return error_ending(ex);
	}
	bci_say("run %s recorded", bci_config_get(ex->config, "run_id"));
	/* A capped run is over as a finished one is: the known-good image uploads it. */
	ex->end_reason = ret == BCI_TEST_PROGRAM_CAPPED_NOW ? "finished: capped (boot_cap)" :
			 ret == BCI_TEST_PROGRAM_POWEROFF ? "finished: the test program asked for a power-off" :
			 ex->results_full[0] ? "finished: results partition full" : "finished";
	if (ret == BCI_TEST_PROGRAM_POWEROFF)
		return BCI_END_POWEROFF;
	return strcmp(bci_config_get(ex->config, "on_finish"), "poweroff") == 0 ? BCI_END_POWEROFF
										: BCI_END_REBOOT;
}

enum bci_ending bci_executor_end(struct bci_executor *ex, enum bci_ending ending)
{
	int how, ret;

	bci_modules_exit(ex);
	bci_boot_end(ex, ex->end_reason ? ex->end_reason : "unknown");
	ex->sys->sync();
	if (ex->results_mount[0]) {
		ret = ex->sys->umount(ex->results_mount);
		if (ret < 0)
			bci_warn("cannot unmount %s: %s", ex->results_mount, strerror(-ret));
		ex->sys->sync();
	}
	/* The results are safe on disk: now the way back to the known-good image. */
	ending = bci_handover(ex, ending);
	how = ending == BCI_END_POWEROFF ? RB_POWER_OFF : RB_AUTOBOOT;
	/* Armed until here: a sync, unmount or hand-over that hangs is still reset. */
	bci_watchdog_close(ex);
	bci_say("%s", ending == BCI_END_POWEROFF ? "powering off" : "rebooting");
	ret = ex->sys->reboot(how);
	if (ret < 0)
		bci_error("reboot(2): %s", strerror(-ret));
	return ending;
}
