// SPDX-License-Identifier: MIT
/*
 * The executor's modules on fake root trees: partition lookup through
 * libblkid, module resolution through libkmod, the test runner, and whole
 * boots with a recording system-call table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "executor.h"
#include "boot_fault.h"
#include "efi/efi.h"
#include "fakeroot.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <libkmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- a system-call table that records what the executor asked for ---- */
static char recorded[8192];

static void record(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void record(const char *fmt, ...)
{
	size_t used = strlen(recorded);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(recorded + used, sizeof(recorded) - used, fmt, ap);
	va_end(ap);
}

static const char *fail_mount_of; /* a fstype whose mount fails with ENODEV */

static int rec_mount(const char *source, const char *target, const char *fstype,
		     unsigned long flags, const char *data)
{
	(void)source;
	(void)target;
	(void)flags;
	(void)data;
	record("mount %s\n", fstype);
	return fail_mount_of && strcmp(fstype, fail_mount_of) == 0 ? -ENODEV : 0;
}

static int rec_umount(const char *target)
{
	record("umount %s\n", strrchr(target, '/'));
	return 0;
}

/* Records the module and the dependencies libkmod would load before it. */
static int rec_probe_module(struct kmod_module *module, const char *options)
{
	struct kmod_list *deps = kmod_module_get_dependencies(module), *item;

	kmod_list_foreach(item, deps) {
		struct kmod_module *dep = kmod_module_get_module(item);
		record("dep %s\n", kmod_module_get_name(dep));
		kmod_module_unref(dep);
	}
	kmod_module_unref_list(deps);
	record("load %s%s%s\n", kmod_module_get_name(module), options ? " " : "",
	       options ? options : "");
	return 0;
}

static int rec_reboot(int how)
{
	record("%s\n", how == RB_POWER_OFF ? "poweroff" : "reboot");
	return 0;
}

static void rec_sync(void)
{
}

/* The fake tree's table, with the mounts, module loads and the end of the boot recorded. */
static struct bci_sys recording_sys;

static void recording_sys_init(void)
{
	recording_sys = bci_sys_dry;
	recording_sys.name = "test";
	recording_sys.mount = rec_mount;
	recording_sys.umount = rec_umount;
	recording_sys.probe_module = rec_probe_module;
	recording_sys.reboot = rec_reboot;
	recording_sys.sync = rec_sync;
}

struct fixture {
	struct fakeroot root;
	struct bci_executor ex;
};

static void start(struct fixture *f, const char *cmdline)
{
	memset(f, 0, sizeof(*f));
	recorded[0] = '\0';
	fail_mount_of = NULL;
	fakeroot_create(&f->root, cmdline);
	f->ex.root = f->root.dir;
	recording_sys_init();
	f->ex.sys = &recording_sys;
	f->ex.signal_fd = -1;
}

static void finish(struct fixture *f)
{
	bci_modules_exit(&f->ex);
	bci_config_free(f->ex.config);
	if (f->ex.signal_fd >= 0)
		close(f->ex.signal_fd);
	fakeroot_remove(&f->root);
}

static int teardown(void **state)
{
	finish(*state);
	free(*state);
	return 0;
}

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct fixture));
	return *state ? 0 : -1;
}

/* ---- partition lookup ---- */
static void partition_found_by_label(void **state)
{
	struct fixture *f = *state;
	char device[PATH_MAX];

	start(f, "quiet");
	fakeroot_add_disk(&f->root, "vda", NULL, "OTHER");
	fakeroot_add_disk(&f->root, "vdb", NULL, "BOOTCI-RESULTS");
	assert_int_equal(bci_partition_find(&f->ex, "BOOTCI-RESULTS", "", device, sizeof(device)), 0);
	assert_string_equal(device + strlen(f->root.dir), "/dev/vdb1");
	assert_int_equal(bci_partition_find(&f->ex, "MISSING", "", device, sizeof(device)), -ENOENT);
}

static void partition_label_twice_is_ambiguous(void **state)
{
	struct fixture *f = *state;
	char device[PATH_MAX];

	start(f, "quiet");
	fakeroot_add_disk(&f->root, "vda", NULL, "BOOTCI-RESULTS");
	fakeroot_add_disk(&f->root, "vdb", NULL, "BOOTCI-RESULTS");
	assert_int_equal(bci_partition_find(&f->ex, "BOOTCI-RESULTS", "", device, sizeof(device)),
			 -ENOTUNIQ);
}

static void partition_found_by_partuuid(void **state)
{
	static const char uuid[] = "5b1e6f3a-2c4d-4e8f-9a0b-1c2d3e4f5a6b";
	struct fixture *f = *state;
	char device[PATH_MAX];

	start(f, "quiet");
	fakeroot_add_disk(&f->root, "sda", "0fc63daf-8483-4772-8e79-3d69d8477de4", "BOOTCI-RESULTS");
	fakeroot_add_disk(&f->root, "sdb", uuid, NULL);
	/* PARTUUID wins over the label, and is compared without regard to case. */
	assert_int_equal(bci_partition_find(&f->ex, "BOOTCI-RESULTS", "5B1E6F3A-2C4D-4E8F-9A0B-1C2D3E4F5A6B",
					    device, sizeof(device)),
			 0);
	assert_string_equal(device + strlen(f->root.dir), "/dev/sdb1");
}

/* ---- modules ---- */
static void modules_resolve_dependencies(void **state)
{
	struct fixture *f = *state;

	start(f, "bootci.modules=ext4,virtio_blk");
	if (fakeroot_add_kernel_modules(&f->root) < 0)
		skip();
	assert_int_equal(bci_settings_load(&f->ex), 0);
	assert_int_equal(bci_modules_init(&f->ex), 0);
	assert_int_equal(bci_modules_load_configured(&f->ex), 0);
	assert_non_null(strstr(recorded, "dep jbd2\n"));
	assert_non_null(strstr(recorded, "dep mbcache\n"));
	assert_non_null(strstr(recorded, "load ext4\n"));
	assert_non_null(strstr(recorded, "dep virtio_ring\n"));
	assert_non_null(strstr(recorded, "load virtio_blk\n"));
	assert_int_equal(bci_modules_load(&f->ex, "no_such_module_anywhere"), -ENOENT);
}

/* ---- the runner ---- */
static void prepare_run(struct fixture *f, const char *cmdline)
{
	start(f, cmdline);
	assert_int_equal(bci_settings_load(&f->ex), 0);
	assert_int_equal(bci_signals_setup(&f->ex), 0);
	assert_true(snprintf(f->ex.run_dir, sizeof(f->ex.run_dir), "%.*s/results/runs/t",
			     (int)sizeof(f->ex.run_dir) - 32, f->root.dir) < (int)sizeof(f->ex.run_dir));
}

static void runner_records_exit_status_and_output(void **state)
{
	struct fixture *f = *state;
	char cmdline[PATH_MAX + 64];

	snprintf(cmdline, sizeof(cmdline), "bootci.test=\"%s 3\"", fixture_path("exit-with"));
	prepare_run(f, cmdline);
	assert_int_equal(bci_test_program_run(&f->ex), 0);
	assert_non_null(strstr(fakeroot_read(&f->root, "/results/runs/t/test/result.txt"),
			       "state done\nexit-status 3\n"));
	assert_string_equal(fakeroot_read(&f->root, "/results/runs/t/test/out.txt"),
			    "exit-with: stdout line\n");
	assert_string_equal(fakeroot_read(&f->root, "/results/runs/t/test/err.txt"),
			    "exit-with: stderr line\n");
}

static void runner_records_signal(void **state)
{
	struct fixture *f = *state;
	char cmdline[PATH_MAX + 64];

	snprintf(cmdline, sizeof(cmdline), "bootci.test=\"%s segv\"", fixture_path("misbehave"));
	prepare_run(f, cmdline);
	assert_int_equal(bci_test_program_run(&f->ex), 0);
	assert_non_null(strstr(fakeroot_read(&f->root, "/results/runs/t/test/result.txt"),
			       "signal 11 "));
}

static void runner_times_out_with_sigterm(void **state)
{
	struct fixture *f = *state;
	char cmdline[PATH_MAX + 64];
	const char *result;

	snprintf(cmdline, sizeof(cmdline), "bootci.test_timeout=1 bootci.test=\"%s sleep 60\"",
		 fixture_path("misbehave"));
	prepare_run(f, cmdline);
	assert_int_equal(bci_test_program_run(&f->ex), 0);
	result = fakeroot_read(&f->root, "/results/runs/t/test/result.txt");
	assert_non_null(strstr(result, "signal 15 "));
	assert_non_null(strstr(result, "timeout yes\n"));
}

static void runner_escalates_to_sigkill(void **state)
{
	struct fixture *f = *state;
	char cmdline[PATH_MAX + 64];
	const char *result;

	snprintf(cmdline, sizeof(cmdline), "bootci.test_timeout=1 bootci.test=\"%s ignore-term 60\"",
		 fixture_path("misbehave"));
	prepare_run(f, cmdline);
	assert_int_equal(bci_test_program_run(&f->ex), 0);
	result = fakeroot_read(&f->root, "/results/runs/t/test/result.txt");
	assert_non_null(strstr(result, "signal 9 "));
	assert_non_null(strstr(result, "timeout yes\n"));
}

static void runner_missing_program_is_127(void **state)
{
	struct fixture *f = *state;

	prepare_run(f, "bootci.test=/nonexistent/program");
	assert_int_equal(bci_test_program_run(&f->ex), 0);
	assert_non_null(strstr(fakeroot_read(&f->root, "/results/runs/t/test/result.txt"),
			       "exit-status 127\n"));
}

/*
 * A boot that died while the program ran (result.txt still "state running"):
 * its output is kept in its boot record, not overwritten by the rerun, and the
 * rerun counts as the run's second start.
 */
static void runner_rerun_keeps_the_crashed_boots_output(void **state)
{
	struct fixture *f = *state;
	char cmdline[PATH_MAX + 64];
	const char *result;

	snprintf(cmdline, sizeof(cmdline), "bootci.test=\"%s 0\"", fixture_path("exit-with"));
	prepare_run(f, cmdline);
	fakeroot_write(&f->root, "/results/runs/t/test/result.txt",
		       "command x\nstate running\nboot 1\nstarts 1\n");
	fakeroot_write(&f->root, "/results/runs/t/test/out.txt", "boot 1's output, cut by a panic\n");
	fakeroot_write(&f->root, "/results/runs/t/test/err.txt", "boot 1's errors\n");
	f->ex.boot_number = 2;
	assert_int_equal(bci_test_program_run(&f->ex), 0);
	assert_string_equal(fakeroot_read(&f->root, "/results/runs/t/boot-0001/test-out.txt"),
			    "boot 1's output, cut by a panic\n");
	assert_string_equal(fakeroot_read(&f->root, "/results/runs/t/boot-0001/test-err.txt"),
			    "boot 1's errors\n");
	assert_string_equal(fakeroot_read(&f->root, "/results/runs/t/test/out.txt"),
			    "exit-with: stdout line\n");
	result = fakeroot_read(&f->root, "/results/runs/t/test/result.txt");
	assert_non_null(strstr(result, "state done\nexit-status 0\n"));
	assert_non_null(strstr(result, "boot 2\nstarts 2\n"));
}

/* After boot_cap boots that died while it ran, the run is over: capped, not run again. */
static void runner_capped_after_boot_cap_crashed_boots(void **state)
{
	struct fixture *f = *state;
	char cmdline[PATH_MAX + 64];
	const char *result;

	snprintf(cmdline, sizeof(cmdline), "bootci.boot_cap=3 bootci.test=\"%s 0\"",
		 fixture_path("exit-with"));
	prepare_run(f, cmdline);
	fakeroot_write(&f->root, "/results/runs/t/test/result.txt",
		       "command x\nstate running\nboot 3\nstarts 3\n");
	fakeroot_write(&f->root, "/results/runs/t/test/out.txt", "boot 3's output\n");
	f->ex.boot_number = 4;
	assert_int_equal(bci_test_program_run(&f->ex), BCI_TEST_PROGRAM_CAPPED_NOW);
	result = fakeroot_read(&f->root, "/results/runs/t/test/result.txt");
	assert_non_null(strstr(result, "state capped\n"));
	assert_non_null(strstr(result, "starts 3\n"));
	assert_null(strstr(result, "exit-status"));
	assert_null(fakeroot_read(&f->root, "/results/runs/t/test/out.txt"));
	assert_string_equal(fakeroot_read(&f->root, "/results/runs/t/boot-0003/test-out.txt"),
			    "boot 3's output\n");
	/* Handed out again later, it starts afresh: the crashed boots' output stays kept. */
	f->ex.boot_number = 5;
	assert_int_equal(bci_test_program_run(&f->ex), 0);
	assert_non_null(strstr(fakeroot_read(&f->root, "/results/runs/t/test/result.txt"),
			       "state done\nexit-status 0\n"));
	assert_string_equal(fakeroot_read(&f->root, "/results/runs/t/boot-0003/test-out.txt"),
			    "boot 3's output\n");
}

/* ---- whole boots ---- */
static void boot_runs_test_and_reboots(void **state)
{
	struct fixture *f = *state;
	char cmdline[PATH_MAX + 128];
	enum bci_ending ending;

	snprintf(cmdline, sizeof(cmdline), "console=ttyS0 bootci.run_id=r1 bootci.test=\"%s 0\"",
		 fixture_path("exit-with"));
	start(f, cmdline);
	fakeroot_write(&f->root, "/etc/bootci/executor.conf", "results_wait=1\non_finish=poweroff\n");
	fakeroot_add_disk(&f->root, "vda", NULL, "BOOTCI-RESULTS");
	if (fakeroot_add_kernel_modules(&f->root) < 0)
		skip();
	assert_int_equal(bci_signals_setup(&f->ex), 0);
	ending = bci_executor_boot(&f->ex);
	assert_int_equal(ending, BCI_END_POWEROFF);
	bci_executor_end(&f->ex, ending);
	assert_non_null(strstr(fakeroot_read(&f->root, "/results/runs/r1/test/result.txt"),
			       "exit-status 0\n"));
	assert_non_null(strstr(recorded, "mount proc\nmount sysfs\nmount devtmpfs\n"));
	assert_non_null(strstr(recorded, "mount ext4\numount /results\npoweroff\n"));
}

/* The known-good image's collect exits 3 once the master took the machine out: it powers off. */
static void boot_test_program_asks_for_poweroff(void **state)
{
	struct fixture *f = *state;
	char cmdline[PATH_MAX + 128];
	enum bci_ending ending;

	snprintf(cmdline, sizeof(cmdline), "bootci.run_id=r1 bootci.test=\"%s 3\"",
		 fixture_path("exit-with"));
	start(f, cmdline);
	fakeroot_write(&f->root, "/etc/bootci/executor.conf",
		       "results_wait=1\non_finish=reboot\ntest_poweroff_status=3\n");
	fakeroot_add_disk(&f->root, "vda", NULL, "BOOTCI-RESULTS");
	if (fakeroot_add_kernel_modules(&f->root) < 0)
		skip();
	assert_int_equal(bci_signals_setup(&f->ex), 0);
	ending = bci_executor_boot(&f->ex);
	assert_int_equal(ending, BCI_END_POWEROFF);
	bci_executor_end(&f->ex, ending);
	assert_non_null(strstr(fakeroot_read(&f->root, "/results/runs/r1/test/result.txt"),
			       "exit-status 3\n"));
	assert_non_null(strstr(recorded, "umount /results\npoweroff\n"));
}

/* Another status (and the same one without the setting) ends as on_finish says. */
static void boot_test_program_other_status_reboots(void **state)
{
	struct fixture *f = *state;
	char cmdline[PATH_MAX + 128];

	snprintf(cmdline, sizeof(cmdline), "bootci.run_id=r1 bootci.test=\"%s 1\"",
		 fixture_path("exit-with"));
	start(f, cmdline);
	fakeroot_write(&f->root, "/etc/bootci/executor.conf",
		       "results_wait=1\ntest_poweroff_status=3\n");
	fakeroot_add_disk(&f->root, "vda", NULL, "BOOTCI-RESULTS");
	if (fakeroot_add_kernel_modules(&f->root) < 0)
		skip();
	assert_int_equal(bci_signals_setup(&f->ex), 0);
	assert_int_equal(bci_executor_boot(&f->ex), BCI_END_REBOOT);
}

static void boot_without_partition_takes_error_path(void **state)
{
	struct fixture *f = *state;

	start(f, "bootci.results_wait=1 bootci.on_error=poweroff bootci.test=/bin/true");
	if (fakeroot_add_kernel_modules(&f->root) < 0)
		skip();
	assert_int_equal(bci_executor_boot(&f->ex), BCI_END_POWEROFF);
	assert_null(strstr(recorded, "mount ext4"));
	assert_null(fakeroot_read(&f->root, "/results/runs/default/test/result.txt"));
}

static void boot_with_bad_config_reboots(void **state)
{
	struct fixture *f = *state;

	start(f, "bootci.test_timeout=forever");
	assert_int_equal(bci_executor_boot(&f->ex), BCI_END_REBOOT);
	assert_null(strstr(recorded, "mount ext4"));
}

/* A boot that cannot proceed still mounts efivarfs, so the hand-over can set BootNext. */
static void boot_with_bad_config_still_reaches_efi(void **state)
{
	struct fixture *f = *state;

	start(f, "bootci.test_timeout=forever");
	fakeroot_write(&f->root, "/sys/firmware/efi/fw_platform_size", "64\n");
	fakeroot_write(&f->root, "/proc/filesystems", "nodev\tsysfs\nnodev\tefivarfs\nnodev\tpstore\n");
	assert_int_equal(bci_executor_boot(&f->ex), BCI_END_REBOOT);
	assert_non_null(strstr(recorded, "mount efivarfs\n"));
	assert_null(strstr(recorded, "mount ext4"));
}

static void boot_with_bad_config_file_reboots(void **state)
{
	struct fixture *f = *state;

	start(f, "quiet");
	fakeroot_write(&f->root, "/etc/bootci/executor.conf", "on_error=poweroff\nresults_lable=X\n");
	/* on_error was read before the bad line: it still decides the ending. */
	assert_int_equal(bci_executor_boot(&f->ex), BCI_END_POWEROFF);
}

/* The machine resets: the same tree, a fresh executor (its command line in ROOT/proc/cmdline). */
static void next_boot(struct fixture *f, const char *cmdline)
{
	bci_config_free(f->ex.config);
	if (f->ex.signal_fd >= 0)
		close(f->ex.signal_fd);
	memset(&f->ex, 0, sizeof(f->ex));
	f->ex.root = f->root.dir;
	f->ex.sys = &recording_sys;
	f->ex.signal_fd = -1;
	recorded[0] = '\0';
	fakeroot_write(&f->root, "/proc/cmdline", cmdline);
}

static struct bci_boot_fault fault_note(struct fixture *f)
{
	struct bci_boot_fault fault = { .boots = 0 };

	assert_int_equal(bci_boot_fault_read(f->root.dir, &fault), 0);
	return fault;
}

/*
 * A run folder that cannot be made (issue 34, point 5: a cleared inode gave
 * EUCLEAN at every boot, and a reboot each time): each such boot is counted
 * in the boot fault note, an EFI variable, with its reason; at error_boots the
 * note is due for the master. The known-good image's own run beginning does
 * not reset it; the run's own does.
 */
static void boot_errors_before_the_run_are_counted(void **state)
{
	static const char run_cmdline[] = "bootci.results_wait=1 bootci.run_id=r1 bootci.test=/bin/true"
					  " bootci.error_boots=2 bootci.known_good_entry=";
	struct fixture *f = *state;
	char efivars[PATH_MAX + 64]; /* and later the run folder's path */
	struct bci_boot_fault fault;
	enum bci_ending ending;

	start(f, run_cmdline);
	fakeroot_add_disk(&f->root, "vda", NULL, "BOOTCI-RESULTS");
	if (fakeroot_add_kernel_modules(&f->root) < 0)
		skip();
	snprintf(efivars, sizeof(efivars), "%s/sys/firmware/efi/efivars", f->root.dir);
	assert_int_equal(bci_mkdir_p(efivars, 0755), 0);
	assert_int_equal(bci_efivar_set(f->root.dir, "Other", BCI_EFI_GLOBAL_GUID, 7, "x", 1), 0);
	fakeroot_write(&f->root, "/results/runs/r1", "a file where the run folder goes\n");

	for (unsigned boot = 1; boot <= 2; boot++) {
		if (boot > 1)
			next_boot(f, run_cmdline);
		ending = bci_executor_boot(&f->ex);
		assert_int_equal(ending, BCI_END_REBOOT);
		bci_executor_end(&f->ex, ending);
		fault = fault_note(f);
		assert_string_equal(fault.run, "r1");
		assert_int_equal(fault.boots, boot);
		assert_int_equal(fault.cap, 2);
		assert_int_equal(bci_boot_fault_due(&fault), boot == 2);
		assert_non_null(strstr(fault.reason, "cannot create the run folder "));
		assert_non_null(strstr(fault.reason, "/results/runs/r1: Not a directory"));
	}

	/* The known-good image's run begins: not r1's, the count stays for its collect. */
	next_boot(f, "bootci.results_wait=1 bootci.run_id=known-good bootci.test=/bin/true"
		     " bootci.known_good_entry=");
	bci_executor_end(&f->ex, bci_executor_boot(&f->ex));
	assert_int_equal(fault_note(f).boots, 2);

	/* The folder can be made again: r1 begins, its note goes. */
	snprintf(efivars, sizeof(efivars), "%s/results/runs/r1", f->root.dir);
	assert_int_equal(unlink(efivars), 0);
	next_boot(f, run_cmdline);
	bci_executor_end(&f->ex, bci_executor_boot(&f->ex));
	assert_int_equal(bci_boot_fault_read(f->root.dir, &fault), -ENOENT);
}

/* ---- which run a boot belongs to ---- */
static bool run_has(struct fakeroot *root, const char *rel)
{
	return fakeroot_read(root, rel) != NULL;
}

static void run_is_claimed_by_its_image_only(void **state)
{
	struct fakeroot root;
	struct bci_executor ex = { 0 };

	(void)state;
	fakeroot_executor(&root, &ex, "bootci.testlist=/etc/bootci/testlist");
	fakeroot_write(&root, "/etc/bootci/testlist", "igt@kms_flip@basic\n");
	fakeroot_write(&root, "/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3\n");

	/* a new run: its identity is written first */
	assert_int_equal(bci_run_dir_claim(&ex), 0);
	assert_non_null(strstr(fakeroot_read(&root, "/results/runs/t/bootci-identity.txt"),
			       "kernel test #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3\n"));
	fakeroot_write(&root, "/results/runs/t/joblist.txt", "kms_flip basic\n");
	/* the same image again (a resume): the run is its own */
	assert_int_equal(bci_run_dir_claim(&ex), 0);
	assert_true(run_has(&root, "/results/runs/t/joblist.txt"));
	assert_false(run_has(&root, "/results/runs/t.superseded-1/joblist.txt"));

	/* another build of the kernel: the old run is kept aside, a new one starts */
	fakeroot_write(&root, "/proc/sys/kernel/version", "#2 SMP PREEMPT_DYNAMIC Debian 6.1.193-1\n");
	assert_int_equal(bci_run_dir_claim(&ex), 0);
	assert_string_equal(fakeroot_read(&root, "/results/runs/t.superseded-1/joblist.txt"),
			    "kms_flip basic\n");
	assert_false(run_has(&root, "/results/runs/t/joblist.txt"));
	assert_non_null(strstr(fakeroot_read(&root, "/results/runs/t/bootci-identity.txt"), "#2 SMP"));

	/* another plan: likewise, under the next free name */
	fakeroot_write(&root, "/results/runs/t/joblist.txt", "kms_flip basic\n");
	fakeroot_write(&root, "/etc/bootci/testlist", "igt@kms_flip@basic\nigt@gem_exec@basic\n");
	assert_int_equal(bci_run_dir_claim(&ex), 0);
	assert_true(run_has(&root, "/results/runs/t.superseded-2/joblist.txt"));

	/* a run begun before identities were recorded is taken as this image's */
	fakeroot_write(&root, "/results/runs/t/joblist.txt", "kms_flip basic\n");
	char identity[PATH_MAX + 64];
	snprintf(identity, sizeof(identity), "%s/bootci-identity.txt", ex.run_dir);
	assert_int_equal(unlink(identity), 0);
	assert_int_equal(bci_run_dir_claim(&ex), 0);
	assert_true(run_has(&root, "/results/runs/t/joblist.txt"));
	assert_false(run_has(&root, "/results/runs/t.superseded-3/joblist.txt"));
	fakeroot_executor_release(&root, &ex);
}

/*
 * A job's kernel log budget: past it, only records as severe as the warning
 * level are copied (a log storm cannot fill the disk, and no warning that
 * judges the job is lost). A SOCK_SEQPACKET pair hands out one record per
 * read, as /dev/kmsg does.
 */
static void kmsg_budget_keeps_severe_records(void **state)
{
	static const char *const records[] = {
		"6,1,100,-;first info record, within the budget\n",
		"6,2,200,-;second info record, past the budget\n",
		"4,3,300,-;WARNING: kept past the budget\n",
		"14,4,400,-;user info record, past the budget\n",
		"3,5,500,-;an error, kept\n",
	};
	/* A socket of records stands for /dev/kmsg: one record per read, as the kernel's. */
	const struct bci_executor ex = { .root = "", .sys = &bci_sys_real };
	struct bci_kmsg_budget budget = { .limit = 50, .keep_level = 4 };
	char path[] = "/tmp/bootci-kmsg-budget.XXXXXX", *text = NULL;
	int sv[2], out;
	long n;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
	for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); i++)
		assert_int_equal(write(sv[1], records[i], strlen(records[i])), (ssize_t)strlen(records[i]));
	out = mkstemp(path);
	assert_true(out >= 0);
	n = bci_kmsg_drain(&ex, sv[0], out, &budget);
	assert_int_equal(n, (long)(strlen(records[0]) + strlen(records[2]) + strlen(records[4])));
	assert_int_equal(budget.dropped, strlen(records[1]) + strlen(records[3]));
	assert_int_equal(bci_read_file(path, &text, NULL, 4096), 0);
	assert_string_equal(text, "6,1,100,-;first info record, within the budget\n"
				  "4,3,300,-;WARNING: kept past the budget\n"
				  "3,5,500,-;an error, kept\n");
	free(text);
	/* no budget: everything */
	assert_int_equal(write(sv[1], records[1], strlen(records[1])), (ssize_t)strlen(records[1]));
	assert_int_equal(bci_kmsg_drain(&ex, sv[0], out, NULL), (long)strlen(records[1]));
	close(out);
	unlink(path);
	close(sv[0]);
	close(sv[1]);
}

/*
 * A fake tree's /dev/kmsg (bci_sys_dry) behaves as the kernel's: a marker is
 * added as a record in the read format, and reading hands out one record at
 * a time, so the budget judges every record by its own level (a file read in
 * one go was judged by its first record).
 */
static void fake_tree_kmsg_is_read_a_record_at_a_time(void **state)
{
	struct fixture *f = *state;
	/*
	 * Each record here is 55 to 70 bytes, its timestamp (the uptime in
	 * microseconds) taking 5 to 13 digits: the first fits in 100, two do not.
	 */
	struct bci_kmsg_budget budget = { .limit = 100, .keep_level = 4 };
	char path[PATH_MAX + 16];
	const char *text;
	int kmsg, out;

	start(f, "");
	fakeroot_write(&f->root, "/dev/kmsg", "6,1,100,-;before the reader\n");
	kmsg = bci_kmsg_open(&f->ex);
	assert_true(kmsg >= 0);
	bci_kmsg_mark(&f->ex, 6, "an info record within the budget\n");
	bci_kmsg_mark(&f->ex, 6, "an info record past the budget\n");
	bci_kmsg_mark(&f->ex, 3, "an error, kept past the budget\n");
	snprintf(path, sizeof(path), "%s/dmesg.txt", f->root.dir);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(out >= 0);
	assert_true(bci_kmsg_drain(&f->ex, kmsg, out, &budget) > 0);
	close(out);
	close(kmsg);
	text = fakeroot_read(&f->root, "/dmesg.txt");
	assert_non_null(text);
	/* facility user (8) + level, as the kernel shows a record written to /dev/kmsg */
	assert_non_null(strstr(text, ";[bootci] an info record within the budget\n"));
	assert_true(strncmp(text, "14,0,", 5) == 0);
	assert_null(strstr(text, "past the budget\n14,"));
	assert_null(strstr(text, "an info record past the budget"));
	assert_non_null(strstr(text, "\n11,0,"));
	assert_non_null(strstr(text, ";[bootci] an error, kept past the budget\n"));
	assert_null(strstr(text, "before the reader"));
	/* exactly the one record past the budget, as the log file holds it */
	const char *log = fakeroot_read(&f->root, "/dev/kmsg");
	const char *dropped = strstr(log, "an info record past the budget\n");
	assert_non_null(dropped);
	while (dropped > log && dropped[-1] != '\n')
		dropped--;
	assert_int_equal(budget.dropped, strcspn(dropped, "\n") + 1);
}

/* ---- the console's clock ---- */

/*
 * A clock table for the console: CLOCK_MONOTONIC and CLOCK_BOOTTIME as the test sets
 * them, and a kernel whose printk clock runs kernel_ahead_ns ahead of CLOCK_MONOTONIC
 * (the stamp of every record written to the tree's /dev/kmsg), or refuses the write.
 */
static long long fake_mono_ns, fake_boot_ns, kernel_ahead_ns;
static int kmsg_writes;
static bool kmsg_refuses;

static int fake_clock(clockid_t clock, struct timespec *ts)
{
	long long ns = clock == CLOCK_BOOTTIME ? fake_boot_ns : fake_mono_ns;

	ts->tv_sec = (time_t)(ns / 1000000000LL);
	ts->tv_nsec = (long)(ns % 1000000000LL);
	return 0;
}

static int fake_kmsg_write(int fd, int level, const char *text, size_t len)
{
	char record[1200];
	int n;

	kmsg_writes++;
	if (kmsg_refuses)
		return -ENOSPC;
	n = snprintf(record, sizeof(record), "%d,%d,%lld,-;%.*s", 8 + level, kmsg_writes,
		     (fake_mono_ns + kernel_ahead_ns) / 1000, (int)len, text);
	return bci_write_all(fd, record, (size_t)n);
}

/* bci_say(@text) on @err_fd's file, from @from on: what was added, or NULL. */
static const char *say_line(int err_fd, const char *text)
{
	static char line[256];
	off_t from = lseek(err_fd, 0, SEEK_END);
	ssize_t n;

	bci_say("%s", text);
	n = pread(err_fd, line, sizeof(line) - 1, from);
	if (n <= 0)
		return NULL;
	line[n] = '\0';
	return line;
}

/* The steps of console_lines_are_stamped_on_the_kernel_clock, in a child: 0 or the failed step. */
static int console_clock_steps(const char *root, int err_fd)
{
	static struct bci_sys sys;
	static struct bci_executor ex;
	const char *line;
	char path[PATH_MAX + 16], *log = NULL;

	sys = bci_sys_dry;
	sys.clock = fake_clock;
	sys.kmsg_write = fake_kmsg_write;
	ex = (struct bci_executor){ .root = root, .sys = &sys, .signal_fd = -1 };
	fake_mono_ns = fake_boot_ns = 10LL * 1000000000;
	kernel_ahead_ns = 1500LL * 1000000;
	dup2(err_fd, 2);
	bci_console_attach(&ex);
	/* The first line measures the kernel's clock with a marker: stamped 10 s + 1.5 s. */
	line = say_line(err_fd, "one");
	if (!line || strcmp(line, "[   11.500000] bootci: one\n") != 0)
		return 1;
	if (kmsg_writes != 1)
		return 2;
	/* Measured, no marker: the clocks moved together. */
	fake_mono_ns = fake_boot_ns = 12LL * 1000000000;
	line = say_line(err_fd, "two");
	if (!line || strcmp(line, "[   13.500000] bootci: two\n") != 0 || kmsg_writes != 1)
		return 3;
	/* A suspend of 5 s (CLOCK_BOOTTIME ran on), the kernel's clock 0.75 s further ahead:
	 * measured again with a marker that says so. */
	fake_mono_ns = 20LL * 1000000000;
	fake_boot_ns = 25LL * 1000000000;
	kernel_ahead_ns = 2250LL * 1000000;
	line = say_line(err_fd, "three");
	if (!line || strcmp(line, "[   22.250000] bootci: three\n") != 0 || kmsg_writes != 2)
		return 4;
	snprintf(path, sizeof(path), "%s/dev/kmsg", root);
	if (bci_read_file(path, &log, NULL, 1 << 16) < 0 ||
	    !strstr(log, ";[bootci] back from suspend: 5.000 s asleep\n"))
		return 5;
	free(log);
	/* A marker the kernel refuses after the next suspend: the old offset stays, and the
	 * lines after it try no marker of their own. */
	fake_mono_ns = 30LL * 1000000000;
	fake_boot_ns = 38LL * 1000000000;
	kmsg_refuses = true;
	line = say_line(err_fd, "four");
	if (!line || strcmp(line, "[   32.250000] bootci: four\n") != 0 || kmsg_writes != 3)
		return 6;
	line = say_line(err_fd, "five");
	if (!line || strcmp(line, "[   32.250000] bootci: five\n") != 0 || kmsg_writes != 3)
		return 7;
	return 0;
}

/*
 * The console's lines carry the kernel's printk clock (printk_clock.c): the offset
 * kmsg.c's markers measure, measured again after a suspend, kept when a marker fails.
 * In a child: the console's clock state is the process's.
 */
static void console_lines_are_stamped_on_the_kernel_clock(void **state)
{
	struct fakeroot root;
	char err_path[] = "/tmp/bootci-console.XXXXXX";
	int err_fd, status;
	pid_t pid;

	(void)state;
	fakeroot_create(&root, "");
	fakeroot_write(&root, "/dev/kmsg", "");
	err_fd = mkstemp(err_path);
	assert_true(err_fd >= 0);
	unlink(err_path);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(console_clock_steps(root.dir, err_fd));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char text[4096] = "";
		ssize_t n = pread(err_fd, text, sizeof(text) - 1, 0);

		text[n > 0 ? n : 0] = '\0';
		fail_msg("step %d failed (status %#x); the console said:\n%s",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1, status, text);
	}
	close(err_fd);
	fakeroot_remove(&root);
}

static void settings_check_levels_and_conditions(void **state)
{
	struct fixture *f = *state;

	start(f, "bootci.dmesg_warn_level=9");
	assert_int_equal(bci_settings_load(&f->ex), -EINVAL);
	bci_config_free(f->ex.config);
	f->ex.config = NULL;
	fakeroot_write(&f->root, "/proc/cmdline", "bootci.abort_on=taint,ping\n");
	assert_int_equal(bci_settings_load(&f->ex), -EINVAL);
	bci_config_free(f->ex.config);
	f->ex.config = NULL;
	fakeroot_write(&f->root, "/proc/cmdline", "bootci.abort_on=taint,lockdep bootci.dmesg_warn_level=3\n");
	assert_int_equal(bci_settings_load(&f->ex), 0);
	assert_int_equal(bci_settings_dmesg_warn_level(f->ex.config), 3);
	bci_config_free(f->ex.config);
	f->ex.config = NULL;
	/* auto, as igt_runner: 4, or KERN_NOTICE (5) when dmesg is judged the piglit way */
	fakeroot_write(&f->root, "/proc/cmdline", "bootci.dmesg_warn_level=auto\n");
	assert_int_equal(bci_settings_load(&f->ex), 0);
	assert_int_equal(bci_settings_dmesg_warn_level(f->ex.config), 4);
	bci_config_free(f->ex.config);
	f->ex.config = NULL;
	fakeroot_write(&f->root, "/proc/cmdline", "bootci.piglit_style_dmesg=yes\n");
	assert_int_equal(bci_settings_load(&f->ex), 0);
	assert_int_equal(bci_settings_dmesg_warn_level(f->ex.config), 5);
	bci_config_free(f->ex.config);
	f->ex.config = NULL;
	fakeroot_write(&f->root, "/proc/cmdline", "bootci.dmesg_warn_level=44\n");
	assert_int_equal(bci_settings_load(&f->ex), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* First: the console's clock state is fresh in the process. */
		cmocka_unit_test(console_lines_are_stamped_on_the_kernel_clock),
		cmocka_unit_test_setup_teardown(partition_found_by_label, setup, teardown),
		cmocka_unit_test_setup_teardown(partition_label_twice_is_ambiguous, setup, teardown),
		cmocka_unit_test_setup_teardown(partition_found_by_partuuid, setup, teardown),
		cmocka_unit_test_setup_teardown(modules_resolve_dependencies, setup, teardown),
		cmocka_unit_test_setup_teardown(runner_records_exit_status_and_output, setup, teardown),
		cmocka_unit_test_setup_teardown(runner_records_signal, setup, teardown),
		cmocka_unit_test_setup_teardown(runner_times_out_with_sigterm, setup, teardown),
		cmocka_unit_test_setup_teardown(runner_escalates_to_sigkill, setup, teardown),
		cmocka_unit_test_setup_teardown(runner_missing_program_is_127, setup, teardown),
		cmocka_unit_test_setup_teardown(runner_rerun_keeps_the_crashed_boots_output, setup,
						teardown),
		cmocka_unit_test_setup_teardown(runner_capped_after_boot_cap_crashed_boots, setup,
						teardown),
		cmocka_unit_test_setup_teardown(boot_runs_test_and_reboots, setup, teardown),
		cmocka_unit_test_setup_teardown(boot_test_program_asks_for_poweroff, setup, teardown),
		cmocka_unit_test_setup_teardown(boot_test_program_other_status_reboots, setup,
						teardown),
		cmocka_unit_test_setup_teardown(boot_without_partition_takes_error_path, setup, teardown),
		cmocka_unit_test_setup_teardown(boot_with_bad_config_reboots, setup, teardown),
		cmocka_unit_test_setup_teardown(boot_with_bad_config_file_reboots, setup, teardown),
		cmocka_unit_test_setup_teardown(boot_with_bad_config_still_reaches_efi, setup, teardown),
		cmocka_unit_test_setup_teardown(boot_errors_before_the_run_are_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(settings_check_levels_and_conditions, setup, teardown),
		cmocka_unit_test(kmsg_budget_keeps_severe_records),
		cmocka_unit_test_setup_teardown(fake_tree_kmsg_is_read_a_record_at_a_time, setup, teardown),
		cmocka_unit_test(run_is_claimed_by_its_image_only),
	};

	return cmocka_run_group_tests_name("executor", tests, NULL, NULL);
}
