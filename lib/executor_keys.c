// SPDX-License-Identifier: MIT
#include "executor_keys.h"

#include "message.h"
#include "testlist.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int bci_executor_name_check(const char *value, char *why, size_t why_size)
{
	size_t len = strlen(value);

	if (len == 0 || len > BCI_EXECUTOR_NAME_MAX) {
		bci_message(why, why_size, "is not a name: 1 to %d characters", BCI_EXECUTOR_NAME_MAX);
		return -EINVAL;
	}
	if (value[0] == '.') {
		bci_message(why, why_size, "is not a name: it starts with '.'");
		return -EINVAL;
	}
	for (const char *p = value; *p; p++) {
		if (!isalnum((unsigned char)*p) && !strchr("._-", *p)) {
			bci_message(why, why_size, "is not a name: '%c' is not one of A-Z a-z 0-9 . _ -",
				    *p);
			return -EINVAL;
		}
	}
	return 0;
}

int bci_executor_image_path_check(const char *value, char *why, size_t why_size)
{
	if (value[0] != '/') {
		bci_message(why, why_size, "is not an absolute path in the image");
		return -EINVAL;
	}
	for (const char *p = value; *p;) {
		size_t n;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			bci_message(why, why_size, "has a '%.*s' component (a path in the image "
				    "names its folders)", (int)n, p);
			return -EINVAL;
		}
		p += n;
	}
	return 0;
}

/*
 * run_id, suspend_rtc: one path component (runs/<run_id>/, /dev/<rtc>): a
 * name cannot leave the folder it is joined to.
 */
static int check_name(const struct bci_config_key *key, const char *value, char *why,
		      size_t why_size)
{
	char what[160];

	if (bci_executor_name_check(value, what, sizeof(what)) == 0)
		return 0;
	bci_message(why, why_size, "%s: '%s' %s", key->name, value, what);
	return -EINVAL;
}

/* The executor keeps a superseded run as runs/<run_id>.superseded-N: no run may look like one. */
static int check_run_id(const struct bci_config_key *key, const char *value, char *why,
			size_t why_size)
{
	int ret = check_name(key, value, why, why_size);

	if (ret == 0 && strstr(value, BCI_EXECUTOR_SUPERSEDED)) {
		bci_message(why, why_size, "%s: '%s' holds '" BCI_EXECUTOR_SUPERSEDED "', the "
			    "suffix of a run kept aside", key->name, value);
		return -EINVAL;
	}
	return ret;
}

/* testlist, test_dir: paths in the image (empty: no testlist). */
static int check_image_path(const struct bci_config_key *key, const char *value, char *why,
			    size_t why_size)
{
	char what[160];

	if (!value[0] || bci_executor_image_path_check(value, what, sizeof(what)) == 0)
		return 0;
	bci_message(why, why_size, "%s: '%s' %s", key->name, value, what);
	return -EINVAL;
}

/* dmesg_warn_level: a kernel log level, or igt_runner's choice. */
static int check_log_level(const struct bci_config_key *key, const char *value, char *why,
			   size_t why_size)
{
	if (strcmp(value, "auto") == 0 || (value[0] >= '0' && value[0] <= '7' && !value[1]))
		return 0;
	bci_message(why, why_size, "%s: '%s' is not a kernel log level (0-7) nor auto", key->name,
		    value);
	return -EINVAL;
}

/* abort_on: conditions the IGT engine knows how to watch. */
static int check_abort_conditions(const struct bci_config_key *key, const char *value, char *why,
				  size_t why_size)
{
	char *copy = strdup(value), *save = NULL;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (char *item = strtok_r(copy, ", \t", &save); item && !ret;
	     item = strtok_r(NULL, ", \t", &save)) {
		if (strcmp(item, "taint") != 0 && strcmp(item, "lockdep") != 0) {
			bci_message(why, why_size, "%s: unknown condition '%s' (taint, lockdep)",
				    key->name, item);
			ret = -EINVAL;
		}
	}
	free(copy);
	return ret;
}

/* suspend_before/between/after: the cycle grammar of lib/testlist. */
static int check_cycles(const struct bci_config_key *key, const char *value, char *why,
			size_t why_size)
{
	struct bci_testlist_cycle specs[BCI_TESTLIST_CYCLE_SPECS_MAX];
	size_t count;

	return bci_testlist_cycles_parse(key->name, value, specs, &count, why, why_size);
}

/* test_poweroff_status: an exit status a process can have (1-255), or 0 for none. */
static int check_exit_status(const struct bci_config_key *key, const char *value, char *why,
			     size_t why_size)
{
	if (strtoul(value, NULL, 10) <= 255)
		return 0;
	bci_message(why, why_size, "%s: %s is not an exit status (0 for none, 1-255)", key->name,
		    value);
	return -EINVAL;
}

const struct bci_config_key bci_executor_keys[] = {
	{ "mode", BCI_CONFIG_CHOICE, "run", "run|deploy",
	  "run: a test run; deploy: write the known-good disk image the deploy plan names "
	  "(salvage the old results, write, verify, re-register the boot entry), then hand over",
	  NULL },
	{ "deploy", BCI_CONFIG_STRING, "/etc/bootci/deploy.plan", NULL,
	  "mode=deploy: the deploy plan in the image (an absolute path without . or .. "
	  "components; the master's deploy initrd puts it there)", check_image_path },
	{ "run_id", BCI_CONFIG_WORD, "default", NULL,
	  "name of the run: its results go to runs/<run_id>/ on the results partition (a name: 1 "
	  "to 128 of A-Z a-z 0-9 . _ -, not starting with '.', without '.superseded-')",
	  check_run_id },
	{ "results_label", BCI_CONFIG_WORD, "BOOTCI-RESULTS", NULL,
	  "filesystem LABEL of the results partition", NULL },
	{ "results_partuuid", BCI_CONFIG_STRING, "", NULL,
	  "GPT PARTUUID of the results partition; when set, used instead of results_label", NULL },
	{ "results_fstype", BCI_CONFIG_WORD, "ext4", NULL,
	  "filesystem type the results partition is mounted as", NULL },
	{ "results_wait", BCI_CONFIG_SECONDS, "30", NULL,
	  "how long to wait for the results partition to appear", NULL },
	{ "modules", BCI_CONFIG_LIST, "", NULL,
	  "kernel modules to load (with their dependencies) before looking for the partition", NULL },
	/* -- drivers by modalias (executor/coldplug.c) -- */
	{ "coldplug", BCI_CONFIG_CHOICE, "yes", "yes|no",
	  "after `modules`: load the modules matching the modalias of every device in /sys/devices, as udev's coldplug", NULL },
	{ "coldplug_deny", BCI_CONFIG_LIST, "", NULL,
	  "modules coldplug never loads (modprobe.d blacklists are applied too)", NULL },
	/* -- the IGT engine (executor/igt/) -- */
	{ "testlist", BCI_CONFIG_STRING, "", NULL,
	  "IGT testlist in the image (igt@bin[@sub[@dyn]] lines; an absolute path without . or .. "
	  "components); when set, the IGT engine runs it", check_image_path },
	{ "test_dir", BCI_CONFIG_WORD, "/usr/libexec/igt-gpu-tools", NULL,
	  "folder of the IGT test binaries named by the testlist (an absolute path without . or .. "
	  "components)", check_image_path },
	{ "include", BCI_CONFIG_STRING, "", NULL,
	  "only tests whose full name (igt@bin@sub) matches this extended regex run", NULL },
	{ "exclude", BCI_CONFIG_STRING, "", NULL,
	  "tests whose full name matches this extended regex do not run", NULL },
	{ "multiple_mode", BCI_CONFIG_CHOICE, "no", "no|yes",
	  "yes: consecutive subtests of a binary run in one execution (igt_runner -m)", NULL },
	{ "per_test_timeout", BCI_CONFIG_DURATION_OR_OFF, "10m", NULL,
	  "a subtest or dynamic subtest running longer is killed (SIGQUIT, then SIGKILL)", NULL },
	{ "inactivity_timeout", BCI_CONFIG_DURATION_OR_OFF, "off", NULL,
	  "a test silent (no output, no kernel log) this long is killed", NULL },
	{ "overall_timeout", BCI_CONFIG_DURATION_OR_OFF, "off", NULL,
	  "no job starts after the run has taken this long (the rest stay notrun)", NULL },
	{ "kill_grace", BCI_CONFIG_SECONDS, "2m", NULL,
	  "how long a test killed with SIGQUIT gets before SIGKILL", NULL },
	{ "output_limit", BCI_CONFIG_SIZE, "64M", NULL,
	  "per job and stream: output past this is dropped except protocol lines and the last quarter",
	  NULL },
	{ "dmesg_warn_level", BCI_CONFIG_WORD, "auto", NULL,
	  "kernel log records at this level (0-7) or more severe make dmesg-warn/dmesg-fail; auto: 4, "
	  "or 5 with piglit_style_dmesg, as in igt_runner", check_log_level },
	{ "piglit_style_dmesg", BCI_CONFIG_CHOICE, "no", "no|yes",
	  "judge dmesg the piglit way (igt_runner --piglit-style-dmesg)", NULL },
	{ "abort_on", BCI_CONFIG_LIST, "", NULL,
	  "conditions that stop the run, checked between jobs and subtests: taint, lockdep",
	  check_abort_conditions },
	{ "boot_cap", BCI_CONFIG_NUMBER, "3", NULL,
	  "a job, or the test program, that took the machine down this many times is not run again"
	  " (the test program's run is then over: state capped)", NULL },
	{ "watchdog_timeout", BCI_CONFIG_DURATION_OR_OFF, "60", NULL,
	  "hardware watchdog timeout while tests run (petted every second); off: not armed", NULL },
	/* -- crash capture (pstore.c) -- */
	{ "pstore_backends", BCI_CONFIG_LIST, "efi_pstore", NULL,
	  "pstore back-end modules loaded at boot (efi_pstore, ramoops); coldplug loads no other, "
	  "so empty means no pstore", NULL },
	{ "ramoops_address", BCI_CONFIG_STRING, "", NULL,
	  "ramoops: physical address of the memory reserved for it (memmap= on the command line)",
	  NULL },
	{ "ramoops_size", BCI_CONFIG_STRING, "", NULL,
	  "ramoops: size of that memory (e.g. 0x100000)", NULL },
	/* -- hand-over to the known-good image (efivar.c, handover.c) -- */
	{ "known_good_entry", BCI_CONFIG_STRING, "bootci-known-good", NULL,
	  "EFI boot entry of the known-good image: its description, or Boot#### (hex)", NULL },
	{ "handover_fallback", BCI_CONFIG_CHOICE, "reboot", "reboot|poweroff",
	  "without EFI or without that entry: how the boot ends instead of the hand-over", NULL },
	{ "error_boots", BCI_CONFIG_NUMBER, "3", NULL,
	  "boots in a row that end in error before their run begins, after which the known-good "
	  "image reports the machine to the master (which takes it out)", NULL },
	/* -- suspend cycles (suspend.c) -- */
	{ "suspend_wake_after", BCI_CONFIG_SECONDS, "5", NULL,
	  "suspend cycles: the RTC alarm wakes the machine this long after the cycle starts", NULL },
	{ "suspend_mem_sleep", BCI_CONFIG_CHOICE, "deep", "deep|s2idle|shallow|kernel",
	  "suspend cycles of state mem: /sys/power/mem_sleep (kernel: leave the kernel's choice)",
	  NULL },
	{ "suspend_watchdog", BCI_CONFIG_CHOICE, "auto", "auto|close|keep",
	  "suspend cycles: close the watchdog before and re-arm it after, or keep it armed; auto "
	  "keeps it for s2idle and pm_test cycles (the only way out of a sleep that never ends) and "
	  "closes it for platform sleep states", NULL },
	{ "suspend_rtc", BCI_CONFIG_WORD, "rtc0", NULL,
	  "suspend cycles: the RTC (/dev/<name>, /sys/class/rtc/<name>) whose alarm wakes the "
	  "machine (a name, as run_id)", check_name },
	{ "suspend_before", BCI_CONFIG_STRING, "", NULL,
	  "suspend cycles run before the testlist's first test: cycle specs separated by spaces, "
	  "each as a testlist's bootci@suspend item without its prefix (grammar in lib/testlist.h; "
	  "e.g. mem@3 freeze_devices@1); needs testlist", check_cycles },
	{ "suspend_between", BCI_CONFIG_STRING, "", NULL,
	  "suspend cycles run between every two consecutive test jobs of the testlist, as "
	  "suspend_before", check_cycles },
	{ "suspend_after", BCI_CONFIG_STRING, "", NULL,
	  "suspend cycles run after the testlist's last test, as suspend_before", check_cycles },
	/* -- the single test program mode (runner.c) -- */
	{ "test", BCI_CONFIG_STRING, "", NULL,
	  "without testlist: one test program and its arguments (split on white space)", NULL },
	{ "test_timeout", BCI_CONFIG_SECONDS, "10m", NULL,
	  "the test program is killed (SIGTERM, then SIGKILL) after this long", NULL },
	{ "test_poweroff_status", BCI_CONFIG_NUMBER, "0", NULL,
	  "the test program's exit status that ends the boot in a power-off instead of on_finish"
	  " (0: none)", check_exit_status },
	/* -- how the boot ends -- */
	{ "on_finish", BCI_CONFIG_CHOICE, "reboot", "reboot|poweroff",
	  "how the boot ends once the result is recorded", NULL },
	{ "on_error", BCI_CONFIG_CHOICE, "reboot", "reboot|poweroff",
	  "how the boot ends when the executor cannot go on (bad config, no partition)", NULL },
	{ NULL, 0, NULL, NULL, NULL, NULL },
};

/* Cycles are jobs of the IGT engine: the single test program mode has none. */
static int check_across_keys(const struct bci_config *config, char *err, size_t err_size)
{
	static const char *const cycle_keys[] = { "suspend_before", "suspend_between", "suspend_after" };

	if (strcmp(bci_config_get(config, "mode"), "deploy") == 0 && !*bci_config_get(config, "deploy")) {
		bci_message(err, err_size, "%s: mode: 'deploy' needs a deploy plan (deploy= is empty)",
			    bci_config_origin(config, "mode"));
		return -EINVAL;
	}
	if (*bci_config_get(config, "testlist"))
		return 0;
	for (size_t k = 0; k < sizeof(cycle_keys) / sizeof(cycle_keys[0]); k++) {
		const char *value = bci_config_get(config, cycle_keys[k]);

		if (value[strspn(value, " \t")]) {
			bci_message(err, err_size, "%s: %s: '%s' needs a testlist (cycles are jobs of "
				    "the IGT engine; the test program mode has none)",
				    bci_config_origin(config, cycle_keys[k]), cycle_keys[k], value);
			return -EINVAL;
		}
	}
	return 0;
}

int bci_executor_config_load(const char *file_name, const char *file_text, size_t file_len,
			     const char *cmdline, struct bci_config **out, char *err,
			     size_t err_size)
{
	struct bci_config *config;
	int ret = bci_config_new(bci_executor_keys, &config);

	if (ret < 0) {
		bci_message(err, err_size, "configuration: out of memory");
		*out = NULL;
		return ret;
	}
	if (file_text)
		ret = bci_config_parse_file(config, file_name, file_text, file_len, err, err_size);
	if (!ret && cmdline)
		ret = bci_config_parse_cmdline(config, cmdline, BCI_EXECUTOR_CMDLINE_PREFIX, err,
					       err_size);
	if (!ret)
		ret = check_across_keys(config, err, err_size);
	*out = config;
	return ret;
}
