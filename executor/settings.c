// SPDX-License-Identifier: MIT
/*
 * The executor's configuration: /etc/bootci/executor.conf in the initramfs,
 * then `bootci.<key>=<value>` on the kernel command line. README.md lists the
 * same keys; `bootci-executor --help-config` prints this table.
 */
#include "executor.h"

#include "config.h"
#include "fsutil.h"
#include "suspend.h"
#include "testlist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_FILE "/etc/bootci/executor.conf"
#define CMDLINE_FILE "/proc/cmdline"

const struct bci_config_key bci_executor_keys[] = {
	{ "run_id", BCI_CONFIG_WORD, "default", NULL,
	  "name of the run: its results go to runs/<run_id>/ on the results partition" },
	{ "results_label", BCI_CONFIG_WORD, "BOOTCI-RESULTS", NULL,
	  "filesystem LABEL of the results partition" },
	{ "results_partuuid", BCI_CONFIG_STRING, "", NULL,
	  "GPT PARTUUID of the results partition; when set, used instead of results_label" },
	{ "results_fstype", BCI_CONFIG_WORD, "ext4", NULL,
	  "filesystem type the results partition is mounted as" },
	{ "results_wait", BCI_CONFIG_SECONDS, "30", NULL,
	  "how long to wait for the results partition to appear" },
	{ "modules", BCI_CONFIG_LIST, "", NULL,
	  "kernel modules to load (with their dependencies) before looking for the partition" },
	{ "coldplug", BCI_CONFIG_CHOICE, "yes", "yes|no",
	  "after `modules`: load the modules matching the modalias of every device in /sys/devices, as udev's coldplug" },
	{ "coldplug_deny", BCI_CONFIG_LIST, "", NULL,
	  "modules coldplug never loads (modprobe.d blacklists are applied too)" },
	{ "testlist", BCI_CONFIG_STRING, "", NULL,
	  "IGT testlist in the image (igt@bin[@sub[@dyn]] lines); when set, the IGT engine runs it" },
	{ "test_dir", BCI_CONFIG_WORD, "/usr/libexec/igt-gpu-tools", NULL,
	  "folder of the IGT test binaries named by the testlist" },
	{ "include", BCI_CONFIG_STRING, "", NULL,
	  "only tests whose full name (igt@bin@sub) matches this extended regex run" },
	{ "exclude", BCI_CONFIG_STRING, "", NULL,
	  "tests whose full name matches this extended regex do not run" },
	{ "multiple_mode", BCI_CONFIG_CHOICE, "no", "no|yes",
	  "yes: consecutive subtests of a binary run in one execution (igt_runner -m)" },
	{ "per_test_timeout", BCI_CONFIG_DURATION_OR_OFF, "10m", NULL,
	  "a subtest or dynamic subtest running longer is killed (SIGQUIT, then SIGKILL)" },
	{ "inactivity_timeout", BCI_CONFIG_DURATION_OR_OFF, "off", NULL,
	  "a test silent (no output, no kernel log) this long is killed" },
	{ "overall_timeout", BCI_CONFIG_DURATION_OR_OFF, "off", NULL,
	  "no job starts after the run has taken this long (the rest stay notrun)" },
	{ "kill_grace", BCI_CONFIG_SECONDS, "2m", NULL,
	  "how long a test killed with SIGQUIT gets before SIGKILL" },
	{ "output_limit", BCI_CONFIG_SIZE, "64M", NULL,
	  "per job and stream: output past this is dropped except protocol lines and the last quarter" },
	{ "dmesg_warn_level", BCI_CONFIG_WORD, "auto", NULL,
	  "kernel log records at this level (0-7) or more severe make dmesg-warn/dmesg-fail; auto: 4, or 5 with piglit_style_dmesg, as in igt_runner" },
	{ "piglit_style_dmesg", BCI_CONFIG_CHOICE, "no", "no|yes",
	  "judge dmesg the piglit way (igt_runner --piglit-style-dmesg)" },
	{ "abort_on", BCI_CONFIG_LIST, "", NULL,
	  "conditions that stop the run, checked between jobs and subtests: taint, lockdep" },
	{ "boot_cap", BCI_CONFIG_NUMBER, "3", NULL,
	  "a job that took the machine down this many times is not run again" },
	{ "watchdog_timeout", BCI_CONFIG_DURATION_OR_OFF, "60", NULL,
	  "hardware watchdog timeout while tests run (petted every second); off: not armed" },
	/* -- crash capture (pstore.c) -- */
	{ "pstore_backends", BCI_CONFIG_LIST, "efi_pstore", NULL,
	  "pstore back-end modules loaded at boot (efi_pstore, ramoops)" },
	{ "ramoops_address", BCI_CONFIG_STRING, "", NULL,
	  "ramoops: physical address of the memory reserved for it (memmap= on the command line)" },
	{ "ramoops_size", BCI_CONFIG_STRING, "", NULL,
	  "ramoops: size of that memory (e.g. 0x100000)" },
	/* -- hand-over to the known-good image (efivar.c, handover.c) -- */
	{ "known_good_entry", BCI_CONFIG_STRING, "bootci-known-good", NULL,
	  "EFI boot entry of the known-good image: its description, or Boot#### (hex)" },
	{ "handover_fallback", BCI_CONFIG_CHOICE, "reboot", "reboot|poweroff",
	  "without EFI or without that entry: how the boot ends instead of the hand-over" },
	/* -- suspend cycles (suspend.c) -- */
	BCI_SUSPEND_CONFIG_KEYS,
	{ "test", BCI_CONFIG_STRING, "", NULL,
	  "without testlist: one test program and its arguments (split on white space)" },
	{ "test_timeout", BCI_CONFIG_SECONDS, "10m", NULL,
	  "the test program is killed (SIGTERM, then SIGKILL) after this long" },
	{ "on_finish", BCI_CONFIG_CHOICE, "reboot", "reboot|poweroff",
	  "how the boot ends once the result is recorded" },
	{ "on_error", BCI_CONFIG_CHOICE, "reboot", "reboot|poweroff",
	  "how the boot ends when the executor cannot go on (bad config, no partition)" },
	{ NULL, 0, NULL, NULL, NULL },
};

/*
 * suspend_before/between/after: the testlist grammar, states the cycles know,
 * and a testlist to put them in (the single test program mode has no jobs).
 */
static int check_cycles(struct bci_config *config)
{
	static const char *const keys[] = { "suspend_before", "suspend_between", "suspend_after" };
	struct bci_testlist_cycle specs[BCI_TESTLIST_CYCLE_SPECS_MAX];
	struct bci_suspend_cycle_name parsed;
	char err[512], cycle[300];
	size_t count;

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *origin = bci_config_origin(config, keys[k]);
		const char *value = bci_config_get(config, keys[k]);

		if (bci_testlist_cycles_parse(keys[k], value, specs, &count, err, sizeof(err)) < 0) {
			bci_error("%s: %s", origin, err);
			return -EINVAL;
		}
		for (size_t i = 0; i < count; i++) {
			snprintf(cycle, sizeof(cycle), "%.255s-0001", specs[i].cycle);
			if (bci_suspend_cycle_parse(cycle, &parsed) < 0) {
				bci_error("%s: %s: '%s@%lu': unknown state or pm_test level (states "
					  "freeze, standby, mem, disk; pm_test freezer, devices, "
					  "platform, processors, core)",
					  origin, keys[k], specs[i].cycle, specs[i].count);
				return -EINVAL;
			}
		}
		if (count > 0 && !*bci_config_get(config, "testlist")) {
			bci_error("%s: %s: '%s' needs a testlist (cycles are jobs of the IGT engine; "
				  "the test program mode has none)",
				  origin, keys[k], value);
			return -EINVAL;
		}
	}
	return 0;
}

int bci_settings_dmesg_warn_level(const struct bci_config *config)
{
	const char *level = bci_config_get(config, "dmesg_warn_level");

	if (strcmp(level, "auto") != 0)
		return level[0] - '0';
	/* igt_runner's default: KERN_NOTICE counts too when dmesg is judged the piglit way. */
	return strcmp(bci_config_get(config, "piglit_style_dmesg"), "yes") == 0 ? 5 : 4;
}

/* Checks that need more than the value's type. */
static int check_values(struct bci_config *config)
{
	const char **items;
	char *storage;
	size_t count;
	int ret = 0;

	const char *level = bci_config_get(config, "dmesg_warn_level");
	if (strcmp(level, "auto") != 0 && (level[0] < '0' || level[0] > '7' || level[1])) {
		bci_error("%s: dmesg_warn_level: '%s' is not a kernel log level (0-7) nor auto",
			  bci_config_origin(config, "dmesg_warn_level"),
			  bci_config_get(config, "dmesg_warn_level"));
		return -EINVAL;
	}
	ret = bci_config_get_list(config, "abort_on", &storage, &items, &count);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < count && ret == 0; i++) {
		if (strcmp(items[i], "taint") != 0 && strcmp(items[i], "lockdep") != 0) {
			bci_error("%s: abort_on: unknown condition '%s' (taint, lockdep)",
				  bci_config_origin(config, "abort_on"), items[i]);
			ret = -EINVAL;
		}
	}
	free(items);
	free(storage);
	return ret < 0 ? ret : check_cycles(config);
}

int bci_settings_load(struct bci_executor *ex)
{
	char path[PATH_MAX], err[512];
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = bci_config_new(bci_executor_keys, &ex->config);
	if (ret < 0)
		return ret;

	ret = bci_path(ex, path, CONFIG_FILE);
	if (ret == 0)
		ret = bci_read_file(path, &text, &len, 1 << 20);
	if (ret == 0) {
		ret = bci_config_parse_file(ex->config, CONFIG_FILE, text, len, err, sizeof(err));
		free(text);
		if (ret < 0) {
			bci_error("%s", err);
			return ret;
		}
	} else if (ret != -ENOENT) {
		bci_error("cannot read %s: %s", CONFIG_FILE, strerror(-ret));
		return ret;
	}

	ret = bci_path(ex, path, CMDLINE_FILE);
	if (ret == 0)
		ret = bci_read_file(path, &text, &len, 1 << 16);
	if (ret < 0) {
		bci_error("cannot read %s: %s", CMDLINE_FILE, strerror(-ret));
		return ret;
	}
	ret = bci_config_parse_cmdline(ex->config, text, "bootci.", err, sizeof(err));
	free(text);
	if (ret < 0) {
		bci_error("%s", err);
		return ret;
	}
	return check_values(ex->config);
}
