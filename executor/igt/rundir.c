// SPDX-License-Identifier: MIT
/*
 * The run folder is an igt_runner results directory (metadata.txt,
 * joblist.txt, uname.txt, starttime.txt, endtime.txt, aborted.txt,
 * N/{journal,out,err,dmesg}.txt) with bootci-journal.txt beside it: created
 * once, at the run's first boot, and loaded again at every later one.
 */
#include "igt.h"

#include "config.h"
#include "fsutil.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

int bci_igt_rundir_path(const struct bci_executor *ex, char *buf, const char *fmt, ...)
{
	char prefix[PATH_MAX + 1];
	va_list ap;
	int ret;

	snprintf(prefix, sizeof(prefix), "%s/", ex->run_dir);
	va_start(ap, fmt);
	ret = bci_vpath(buf, prefix, fmt, ap);
	va_end(ap);
	return ret;
}

int bci_igt_rundir_write(const struct bci_executor *ex, const char *name, const char *text)
{
	char path[PATH_MAX];
	int ret = bci_igt_rundir_path(ex, path, "%s", name);

	if (ret == 0)
		ret = bci_write_file_atomic(path, text, strlen(text), 0644);
	if (ret < 0)
		bci_error("cannot write %s: %s", path, strerror(-ret));
	return ret;
}

int bci_igt_rundir_write_time(const struct bci_executor *ex, const char *name)
{
	struct timespec ts = { 0, 0 };
	char text[64];

	ex->sys->clock(CLOCK_REALTIME, &ts);
	snprintf(text, sizeof(text), "%ld.%06ld\n", (long)ts.tv_sec, ts.tv_nsec / 1000);
	return bci_igt_rundir_write(ex, name, text);
}

/* igt_runner's metadata.txt: its settings, as its resultgen reads them back. */
static int write_metadata(struct bci_executor *ex)
{
	struct bci_config *c = ex->config;
	char text[4096];
	const char *abort_on = bci_config_get(c, "abort_on");
	int abort_mask = (strstr(abort_on, "taint") ? 1 : 0) | (strstr(abort_on, "lockdep") ? 2 : 0);

	snprintf(text, sizeof(text),
		 "abort_mask : %d\nname : %s\ndry_run : 0\nsync : 1\nlog_level : 0\n"
		 "overwrite : 0\nmultiple_mode : %d\ninactivity_timeout : %lu\n"
		 "per_test_timeout : %lu\noverall_timeout : %lu\nuse_watchdog : %d\n"
		 "piglit_style_dmesg : %d\ndmesg_warn_level : %d\nprune_mode : 0\n"
		 "test_root : %s\nresults_path : /results/runs/%s\n",
		 abort_mask, bci_config_get(c, "run_id"),
		 strcmp(bci_config_get(c, "multiple_mode"), "yes") == 0,
		 bci_config_get_seconds(c, "inactivity_timeout"),
		 bci_config_get_seconds(c, "per_test_timeout"),
		 bci_config_get_seconds(c, "overall_timeout"),
		 bci_config_get_seconds(c, "watchdog_timeout") > 0,
		 strcmp(bci_config_get(c, "piglit_style_dmesg"), "yes") == 0,
		 bci_settings_dmesg_warn_level(c), bci_config_get(c, "test_dir"),
		 bci_config_get(c, "run_id"));
	return bci_igt_rundir_write(ex, BCI_RESULTS_METADATA, text);
}

static int write_uname(struct bci_executor *ex)
{
	struct utsname u;
	char text[512];

	if (uname(&u) < 0) {
		int ret = -errno;
		bci_error("uname: %s", strerror(-ret));
		return ret;
	}
	snprintf(text, sizeof(text), "%s %s %s %s %s\n", u.sysname, u.nodename, u.release,
		 u.version, u.machine);
	return bci_igt_rundir_write(ex, BCI_RESULTS_UNAME, text);
}

/*
 * The boots of the run before this one all ended before its joblist was
 * written (the joblist comes last): the kernel died or hung while the test
 * binaries listed their subtests, or the plan failed. After boot_cap of them
 * the run is not planned again: why, into @why; else "".
 */
static void plan_capped(struct bci_executor *ex, char *why, size_t size)
{
	unsigned long cap = bci_config_get_number(ex->config, "boot_cap");
	unsigned before = ex->boot_number > 1 ? ex->boot_number - 1 : 0;

	why[0] = '\0';
	if (before == 0 || before < cap)
		return;
	snprintf(why, size, "%u boots of the run ended before its plan was made (the kernel died or "
		 "hung while the test binaries listed their subtests, or the plan failed: see the boot "
		 "records): not planned again (boot_cap %lu)", before, cap);
}

/* Creates the run: metadata, the joblist (once, before any job), uname, start time. */
int bci_igt_rundir_create(struct bci_executor *ex, struct bci_joblist *jobs)
{
	char *text, why[PATH_MAX + 256] = "", aborted[PATH_MAX + 300];
	size_t len;
	int ret, aborted_run;

	/*
	 * A testlist that cannot be read (a job initrd that did not arrive) is the
	 * job's fault, not the machine's: the run is made, aborted at bootup as
	 * igt_runner says it, so it ends, is uploaded and shows the reason, instead
	 * of a run folder that stays "in progress" and a job handed out again. So is
	 * a plan that took the machine down boot_cap times: the run ends, and its
	 * boot records (the crash of each) reach the master with it.
	 */
	plan_capped(ex, why, sizeof(why));
	ret = why[0] ? -ECANCELED : bci_igt_plan_build(ex, jobs, why, sizeof(why));
	if (ret < 0 && why[0]) {
		bci_joblist_clear(jobs);
		snprintf(aborted, sizeof(aborted), "Aborted at bootup\n\n%s\n", why);
		ret = bci_igt_rundir_write(ex, BCI_RESULTS_ABORTED, aborted);
		if (ret == 0)
			ret = 1;
	}
	if (ret < 0)
		return ret;
	if (ret == 1)
		bci_error("run %s aborted at bootup: %s", bci_config_get(ex->config, "run_id"), why);
	aborted_run = ret;
	ret = write_metadata(ex);
	if (ret == 0)
		ret = write_uname(ex);
	if (ret == 0)
		ret = bci_igt_rundir_write_time(ex, BCI_RESULTS_STARTTIME);
	if (ret < 0)
		return ret;
	ret = bci_joblist_format(jobs, &text, &len);
	if (ret < 0) {
		bci_error("cannot format joblist.txt: %s", strerror(-ret));
		return ret;
	}
	/* Last: its presence says the run exists. */
	ret = bci_igt_rundir_write(ex, BCI_RESULTS_JOBLIST, text);
	free(text);
	if (ret == 0 && !aborted_run)
		bci_say("run %s: %zu jobs planned", bci_config_get(ex->config, "run_id"),
			jobs->count);
	return ret < 0 ? ret : aborted_run;
}

/* NAME.tmp.XXXXXX: a temporary of bci_atomic_open() (mkostemp's six letters or digits). */
static bool is_temporary(const char *name)
{
	const char *tmp = strstr(name, ".tmp.");

	if (!tmp || tmp == name || strlen(tmp) != 11)
		return false;
	for (const char *p = tmp + 5; *p; p++)
		if (!isalnum((unsigned char)*p))
			return false;
	return true;
}

/*
 * Removes the temporaries left in folder @dir by replacements that a power
 * cut stopped before their rename: half-written files that would otherwise
 * stay in the run and be uploaded with it. Counts them into *@removed.
 */
static void sweep_folder(const char *dir, unsigned *removed)
{
	char path[PATH_MAX];
	struct dirent *entry;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((entry = readdir(d))) {
		if (!is_temporary(entry->d_name) ||
		    snprintf(path, sizeof(path), "%s/%s", dir, entry->d_name) >= (int)sizeof(path))
			continue;
		if (unlink(path) == 0)
			(*removed)++;
		else
			bci_warn("cannot remove %s, left by a cut replacement: %s", path,
				 strerror(errno));
	}
	closedir(d);
}

/*
 * The run folder and its job folders without the temporaries of an earlier
 * boot: nothing else writes in them before the run is loaded, so every one
 * found is a replacement that boot never finished (the file it would have
 * replaced, if any, is whole).
 */
static void sweep_temporaries(const struct bci_executor *ex)
{
	char path[PATH_MAX];
	struct dirent *entry;
	unsigned removed = 0;
	DIR *d;

	sweep_folder(ex->run_dir, &removed);
	d = opendir(ex->run_dir);
	if (!d)
		return;
	while ((entry = readdir(d))) {
		const char *p = entry->d_name;

		while (isdigit((unsigned char)*p))
			p++;
		if (p == entry->d_name || *p ||
		    bci_igt_rundir_path(ex, path, "%s", entry->d_name) < 0)
			continue;
		sweep_folder(path, &removed);
	}
	closedir(d);
	if (removed)
		bci_say("run %s: removed %u half-written temporar%s (NAME.tmp.XXXXXX) an earlier "
			"boot left", bci_config_get(ex->config, "run_id"), removed,
			removed == 1 ? "y" : "ies");
}

int bci_igt_rundir_load(struct bci_executor *ex, struct bci_joblist *jobs, bool *exists)
{
	char path[PATH_MAX], err[512], *text;
	size_t len;
	int ret;

	sweep_temporaries(ex);
	if (bci_igt_rundir_path(ex, path, BCI_RESULTS_JOBLIST) < 0)
		return -ENAMETOOLONG;
	ret = bci_read_file(path, &text, &len, 64 << 20);
	if (ret == -ENOENT) {
		*exists = false;
		return 0;
	}
	if (ret < 0) {
		bci_error("cannot read %s: %s", path, strerror(-ret));
		return ret;
	}
	*exists = true;
	ret = bci_joblist_parse(BCI_RESULTS_JOBLIST, text, len, jobs, err, sizeof(err));
	free(text);
	if (ret < 0)
		bci_error("%s", err);
	return ret;
}
