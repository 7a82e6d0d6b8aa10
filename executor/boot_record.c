// SPDX-License-Identifier: MIT
/*
 * This boot's record in the run folder: boot-NNNN/ (numbered through the
 * run's boots), boot.txt written before anything runs (when, which kernel and
 * command line, how the previous boot ended, what pstore and the EFI
 * variables kept of it, the EFI boot entry), and end.txt written only on an
 * orderly end, so that the next boot tells a clean end from a crash or a reset.
 */
#include "executor.h"

#include "handover.h"
#include "fsutil.h"
#include "results_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first free boot-NNNN of the run folder. */
static unsigned next_boot_number(const struct bci_executor *ex)
{
	unsigned highest = 0, n;
	struct dirent *entry;
	DIR *d = opendir(ex->run_dir);

	if (!d)
		return 1;
	while ((entry = readdir(d)))
		if (bci_results_boot_dir_parse(entry->d_name, &n) && n > highest)
			highest = n;
	closedir(d);
	return highest + 1;
}


static void read_line(const struct bci_executor *ex, const char *path, char *buf, size_t size,
		      const char *fallback)
{
	char full[PATH_MAX], *text = NULL;

	snprintf(buf, size, "%s", fallback);
	if (bci_path(ex->root, full, "%s", path) < 0 || bci_read_file(full, &text, NULL, 1 << 16) < 0)
		return;
	text[strcspn(text, "\n")] = '\0';
	snprintf(buf, size, "%s", text);
	free(text);
}

/* How the previous boot of this run ended, as far as anything tells. */
static void previous_end(const struct bci_executor *ex, bool crashed, const char *crash_names,
			 char *buf, size_t size)
{
	char path[PATH_MAX + 32], *text = NULL, bootstatus[64];

	/* A crash record at a run's first boot is a boot's from before the run (another run's,
	 * or one that died before its run folder was whole): kept, and said as such. */
	if (ex->boot_number <= 1 && crashed) {
		snprintf(buf, size, "none (first boot of the run; a kernel crash of an earlier boot, "
			 "not of this run: pstore: %s)", crash_names);
		return;
	}
	if (ex->boot_number <= 1) {
		snprintf(buf, size, "none (first boot of the run)");
		return;
	}
	snprintf(path, sizeof(path), "%s/" BCI_RESULTS_BOOT_DIR "/" BCI_RESULTS_BOOT_END, ex->run_dir,
		 ex->boot_number - 1);
	if (bci_read_file(path, &text, NULL, 4096) == 0) {
		text[strcspn(text, "\n")] = '\0';
		snprintf(buf, size, "clean: %s", text);
		free(text);
		return;
	}
	if (crashed) {
		snprintf(buf, size, "kernel crash (pstore: %s)", crash_names);
		return;
	}
	/* Some watchdog drivers report that they reset the machine. */
	read_line(ex, "/sys/class/watchdog/watchdog0/bootstatus", bootstatus, sizeof(bootstatus), "0");
	if (strcmp(bootstatus, "0") != 0)
		snprintf(buf, size, "watchdog reset (bootstatus %s)", bootstatus);
	else
		snprintf(buf, size, "unknown: no clean end, no crash record (hang, reset or power loss)");
}

int bci_boot_begin(struct bci_executor *ex)
{
	char path[PATH_MAX + 16], boot_id[64], cmdline[2048], end[1200], record[8192], efi[3072];
	struct bci_pstore_saved saved;
	int ret;

	ex->boot_number = next_boot_number(ex);
	if (snprintf(ex->boot_dir, sizeof(ex->boot_dir), "%.*s/" BCI_RESULTS_BOOT_DIR, PATH_MAX - 16,
		     ex->run_dir, ex->boot_number) >= (int)sizeof(ex->boot_dir))
		return -ENAMETOOLONG;
	ret = bci_mkdir_p(ex->boot_dir, 0755);
	if (ret < 0) {
		bci_error("cannot create %s: %s", ex->boot_dir, strerror(-ret));
		return ret;
	}
	ret = bci_pstore_collect(ex, &saved);
	if (ret < 0)
		return ret;
	previous_end(ex, ex->kernel_crashed, saved.crash_names, end, sizeof(end));

	read_line(ex, "/proc/sys/kernel/random/boot_id", boot_id, sizeof(boot_id), "unknown");
	read_line(ex, "/proc/cmdline", cmdline, sizeof(cmdline), "");
	if (bci_boot_record(ex, efi, sizeof(efi)) < 0)
		snprintf(efi, sizeof(efi), "unknown");
	snprintf(record, sizeof(record),
		 "boot %u\nboot_id %s\ntime %ld\nkernel %s\ncmdline %s\nprevious %s\n"
		 "pstore_records %d\nefi_dump_variables %d\nrecord %s\n",
		 ex->boot_number, boot_id, bci_clock_ms(ex, CLOCK_REALTIME) / 1000, ex->release,
		 cmdline, end, saved.pstore, saved.efi, efi);
	snprintf(path, sizeof(path), "%s/" BCI_RESULTS_BOOT_RECORD, ex->boot_dir);
	ret = bci_write_file_atomic(path, record, strlen(record), 0644);
	if (ret < 0)
		bci_error("cannot write %s: %s", path, strerror(-ret));
	/* serve ties the console to the run's boot by "boot N of the run;" (console_log.h). */
	if (ex->kernel_crashed)
		bci_say("boot %u of the run; previous boot: kernel crash (%d pstore records)",
			ex->boot_number, saved.pstore);
	else
		bci_say("boot %u of the run; previous boot: %s", ex->boot_number, end);
	if (saved.pstore > 0 || saved.efi > 0)
		bci_say("saved %d pstore record%s and %d EFI dump variable%s to " BCI_RESULTS_BOOT_DIR
			"/, then erased them",
			saved.pstore, saved.pstore == 1 ? "" : "s", saved.efi, saved.efi == 1 ? "" : "s",
			ex->boot_number);
	return ret;
}

void bci_boot_end(struct bci_executor *ex, const char *how)
{
	char path[PATH_MAX + 16], text[256];
	int n, ret;

	if (!ex->boot_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/" BCI_RESULTS_BOOT_END, ex->boot_dir);
	n = snprintf(text, sizeof(text), "%s\n", how);
	ret = bci_write_file_atomic(path, text, (size_t)n, 0644);
	if (ret < 0 && (ret == -ENOSPC || ret == -EDQUOT)) {
		/* The last record of the boot: what is left of the reserve is for it. */
		bci_reserve_release(ex, "Results partition full at the end of the boot");
		ret = bci_write_file_atomic(path, text, (size_t)n, 0644);
	}
	if (ret < 0)
		bci_error("cannot record how boot %u ends (%s): %s", ex->boot_number, path,
			  strerror(-ret));
}
