// SPDX-License-Identifier: MIT
/*
 * The executor's configuration: /etc/bootci/executor.conf in the initramfs,
 * then `bootci.<key>=<value>` on the kernel command line, read through the
 * key table of lib/executor_keys.c (which documents and checks every key).
 */
#include "executor.h"

#include "executor_keys.h"
#include "fsutil.h"
#include "suspend.h"
#include "testlist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMDLINE_FILE "/proc/cmdline"

/*
 * The states a cycle may name: lib/testlist checks the cycle grammar, the
 * suspend module (for now) the states it knows.
 */
static int check_cycle_states(struct bci_config *config)
{
	static const char *const keys[] = { "suspend_before", "suspend_between", "suspend_after" };
	struct bci_testlist_cycle specs[BCI_TESTLIST_CYCLE_SPECS_MAX];
	struct bci_testlist_cycle_name parsed;
	char err[512], cycle[300];
	size_t count;

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *origin = bci_config_origin(config, keys[k]);

		if (bci_testlist_cycles_parse(keys[k], bci_config_get(config, keys[k]), specs, &count,
					      err, sizeof(err)) < 0) {
			bci_error("%s: %s", origin, err);
			return -EINVAL;
		}
		for (size_t i = 0; i < count; i++) {
			snprintf(cycle, sizeof(cycle), "%.255s-0001", specs[i].cycle);
			if (bci_testlist_cycle_name_parse(cycle, &parsed) < 0) {
				bci_error("%s: %s: '%s@%lu': unknown state or pm_test level (states "
					  "freeze, standby, mem, disk; pm_test freezer, devices, "
					  "platform, processors, core)",
					  origin, keys[k], specs[i].cycle, specs[i].count);
				return -EINVAL;
			}
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

/* Reads @file under the root into *@text; a missing file is no text, not an error. */
static int read_optional(struct bci_executor *ex, const char *file, size_t max, char **text,
			 size_t *len)
{
	char path[PATH_MAX];
	int ret = bci_path(ex->root, path, "%s", file);

	if (ret == 0)
		ret = bci_read_file(path, text, len, max);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		bci_error("cannot read %s: %s", file, strerror(-ret));
	return ret;
}

int bci_settings_load(struct bci_executor *ex)
{
	char *file = NULL, *cmdline = NULL, err[512];
	size_t file_len = 0, cmdline_len = 0;
	int ret, loaded;

	ret = read_optional(ex, BCI_EXECUTOR_CONFIG_FILE, 1 << 20, &file, &file_len);
	if (ret == 0)
		ret = read_optional(ex, CMDLINE_FILE, 1 << 16, &cmdline, &cmdline_len);
	if (ret == 0 && !cmdline) {
		bci_error("cannot read %s: %s", CMDLINE_FILE, strerror(ENOENT));
		ret = -ENOENT;
	}
	if (ret < 0) {
		/* The defaults still say how the boot ends (on_error). */
		free(file);
		file = NULL;
		free(cmdline);
		cmdline = NULL;
	}
	/* Even on error, ex->config holds what was set before the bad entry. */
	loaded = bci_executor_config_load(BCI_EXECUTOR_CONFIG_FILE, file, file_len, cmdline,
					  &ex->config, err, sizeof(err));
	if (loaded < 0 && ret == 0) {
		bci_error("%s", err);
		ret = loaded;
	}
	if (ret == 0)
		ret = check_cycle_states(ex->config);
	free(cmdline);
	free(file);
	return ret;
}
