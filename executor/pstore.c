// SPDX-License-Identifier: MIT
/*
 * What the previous boot left behind when it died, and this boot's record.
 *
 * At every boot, before any test runs, every /sys/fs/pstore entry and every
 * EFI crash variable (efi-pstore's dump-type0-*) is copied into the run's
 * folder for this boot (boot-NNNN/pstore/, boot-NNNN/efi/), fsynced, and only
 * then erased: NVRAM filling up with dumps is the top complaint about
 * efi-pstore, and a full NVRAM stops the firmware from booting. A dmesg
 * record of a panic or oops marks the previous boot as crashed, for the IGT
 * engine to attribute to the test that was running.
 */
#include "executor.h"

#include "config.h"
#include "efivar.h"
#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EFI_DUMP_PREFIX "dump-type0-"
#define EFI_PSTORE_GUID "cfc8fc79-be2e-4ddc-97f0-9f98bfe298a0"
#define MAX_RECORD (4 << 20)

int bci_pstore_load_backends(struct bci_executor *ex)
{
	const char *address = bci_config_get(ex->config, "ramoops_address");
	const char *size = bci_config_get(ex->config, "ramoops_size");
	const char **names;
	char *storage, options[256];
	size_t count;
	int ret = bci_config_get_list(ex->config, "pstore_backends", &storage, &names, &count);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < count; i++) {
		const char *opts = NULL;
		if (strcmp(names[i], "ramoops") == 0) {
			/* ramoops keeps its records in RAM that survives a reset: it must be told where. */
			if (!*address || !*size) {
				bci_warn("ramoops: set ramoops_address and ramoops_size (and memmap= "
					 "on the command line); not loaded");
				continue;
			}
			snprintf(options, sizeof(options), "mem_address=%s mem_size=%s", address, size);
			opts = options;
		}
		if (bci_modules_load_with(ex, names[i], opts) < 0)
			bci_warn("pstore back end %s not loaded: crashes may go unrecorded", names[i]);
	}
	free(names);
	free(storage);
	return 0;
}

/* The first free boot-NNNN of the run folder. */
static unsigned next_boot_number(const struct bci_executor *ex)
{
	unsigned highest = 0, n;
	struct dirent *entry;
	DIR *d = opendir(ex->run_dir);

	if (!d)
		return 1;
	while ((entry = readdir(d)))
		if (sscanf(entry->d_name, "boot-%u", &n) == 1 && n > highest)
			highest = n;
	closedir(d);
	return highest + 1;
}

/* Is this dmesg record the log of a kernel that died (efi-pstore and ramoops headers)? */
static bool record_is_crash(const char *name, const char *text)
{
	if (strncmp(name, "dmesg-", 6) != 0)
		return false;
	return strstr(text, "Panic") || strstr(text, "Oops") || strstr(text, "Kernel panic");
}

/*
 * A dump-type0 variable is efi-pstore's copy of a kernel log dump, written
 * only for an oops or a panic (pstore's default max_reason). When efi_pstore
 * was not loaded to show it as a pstore file, the variable is all there is:
 * it counts as a crash, and an uncompressed one (name "...-D-<guid>") is also
 * saved as readable text, dmesg-<name>, for the crash attribution.
 */
static bool efi_dump_is_crash(const char *name, const char *data, size_t size, const char *dest)
{
	char path[PATH_MAX + 300];
	size_t len = strlen(name), suffix = strlen(EFI_PSTORE_GUID) + 3;

	if (strncmp(name, EFI_DUMP_PREFIX, strlen(EFI_DUMP_PREFIX)) != 0)
		return false;
	/* efivarfs: 4 bytes of attributes, then the record. */
	if (data && size > 4 && len > suffix && strncmp(name + len - suffix, "-D-", 3) == 0 &&
	    snprintf(path, sizeof(path), "%s/dmesg-%s", dest, name) < (int)sizeof(path) &&
	    bci_write_file_atomic(path, data + 4, size - 4, 0644) < 0)
		bci_warn("cannot write %s", path);
	return true;
}

static int copy_file(const char *from, const char *to, char **text_out, size_t *len_out)
{
	char *text;
	size_t len;
	int ret = bci_read_file(from, &text, &len, MAX_RECORD);

	if (ret < 0)
		return ret;
	ret = bci_write_file_atomic(to, text, len, 0644);
	if (ret == 0 && text_out) {
		*text_out = text;
		*len_out = len;
	} else {
		free(text);
	}
	return ret;
}

/* efivarfs files are immutable until told otherwise; a fake tree cannot be told. */
static int unlink_efivar(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), flags;

	if (fd >= 0) {
		if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_IMMUTABLE_FL)) {
			flags &= ~FS_IMMUTABLE_FL;
			ioctl(fd, FS_IOC_SETFLAGS, &flags);
		}
		close(fd);
	}
	return unlink(path) < 0 ? -errno : 0;
}

/*
 * Copies every regular file of @src (names matching @prefix/@suffix when
 * given) into @dest, fsyncs, then erases the originals. Returns how many
 * were saved; sets *@crashed when a record shows a dead kernel.
 */
static int save_and_erase(const char *src, const char *dest, const char *prefix,
			  const char *suffix, bool efivars, bool *crashed, char *crash_names,
			  size_t crash_names_size)
{
	struct dirent **entries;
	int n = scandir(src, &entries, NULL, alphasort), saved = 0, ret;

	if (n < 0)
		return errno == ENOENT ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		const char *name = entries[i]->d_name;
		char from[PATH_MAX + 256], to[PATH_MAX + 256], *text = NULL;
		size_t len = strlen(name), size = 0;

		if (name[0] == '.' || (prefix && strncmp(name, prefix, strlen(prefix)) != 0) ||
		    (suffix && (len < strlen(suffix) || strcmp(name + len - strlen(suffix), suffix) != 0)))
			goto next;
		if (saved == 0 && (ret = bci_mkdir_p(dest, 0755)) < 0) {
			bci_error("cannot create %s: %s", dest, strerror(-ret));
			goto next;
		}
		snprintf(from, sizeof(from), "%s/%s", src, name);
		snprintf(to, sizeof(to), "%s/%s", dest, name);
		ret = copy_file(from, to, &text, &size);
		if (ret < 0) {
			/* Not erased: a record we could not save stays for the next boot. */
			bci_error("cannot save %s: %s", from, strerror(-ret));
			goto next;
		}
		saved++;
		if (efivars ? efi_dump_is_crash(name, text, size, dest) : record_is_crash(name, text)) {
			*crashed = true;
			size_t used = strlen(crash_names);
			snprintf(crash_names + used, crash_names_size - used, "%s%s", used ? " " : "",
				 name);
		}
		free(text);
		ret = efivars ? unlink_efivar(from) : (unlink(from) < 0 ? -errno : 0);
		if (ret < 0 && ret != -ENOENT)
			bci_warn("cannot erase %s: %s", from, strerror(-ret));
next:
		free(entries[i]);
	}
	free(entries);
	return saved;
}

static void read_line(const struct bci_executor *ex, const char *path, char *buf, size_t size,
		      const char *fallback)
{
	char full[PATH_MAX], *text = NULL;

	snprintf(buf, size, "%s", fallback);
	if (bci_path(ex, full, "%s", path) < 0 || bci_read_file(full, &text, NULL, 1 << 16) < 0)
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

	if (ex->boot_number <= 1) {
		snprintf(buf, size, "none (first boot of the run)");
		return;
	}
	snprintf(path, sizeof(path), "%s/boot-%04u/end.txt", ex->run_dir, ex->boot_number - 1);
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
	char pstore[PATH_MAX], efivars[PATH_MAX], dest[PATH_MAX + 16], crash_names[1024] = "";
	char boot_id[64], cmdline[2048], end[1200], record[8192], efi[3072];
	bool crashed = false;
	int saved_pstore, saved_efi, ret;

	ex->boot_number = next_boot_number(ex);
	if (snprintf(ex->boot_dir, sizeof(ex->boot_dir), "%.*s/boot-%04u", PATH_MAX - 16,
		     ex->run_dir, ex->boot_number) >= (int)sizeof(ex->boot_dir))
		return -ENAMETOOLONG;
	ret = bci_mkdir_p(ex->boot_dir, 0755);
	if (ret < 0) {
		bci_error("cannot create %s: %s", ex->boot_dir, strerror(-ret));
		return ret;
	}
	if (bci_path(ex, pstore, "/sys/fs/pstore") < 0 ||
	    bci_path(ex, efivars, "/sys/firmware/efi/efivars") < 0)
		return -ENAMETOOLONG;

	snprintf(dest, sizeof(dest), "%s/pstore", ex->boot_dir);
	saved_pstore = save_and_erase(pstore, dest, NULL, NULL, false, &crashed, crash_names,
				      sizeof(crash_names));
	/* What efi-pstore did not expose (or a kernel without pstore left): the variables. */
	snprintf(dest, sizeof(dest), "%s/efi", ex->boot_dir);
	bool crashed_pstore = crashed;
	saved_efi = save_and_erase(efivars, dest, EFI_DUMP_PREFIX, EFI_PSTORE_GUID, true, &crashed,
				   crash_names, sizeof(crash_names));
	bci_fsync_dir(ex->boot_dir);

	ex->kernel_crashed = crashed;
	/* The dump to attribute: pstore's files, else what only the EFI variables kept. */
	snprintf(ex->crash_dump, sizeof(ex->crash_dump), "boot-%04u/%s", ex->boot_number,
		 crashed && !crashed_pstore ? "efi" : "pstore");
	previous_end(ex, crashed, crash_names, end, sizeof(end));

	read_line(ex, "/proc/sys/kernel/random/boot_id", boot_id, sizeof(boot_id), "unknown");
	read_line(ex, "/proc/cmdline", cmdline, sizeof(cmdline), "");
	if (bci_boot_record(ex, efi, sizeof(efi)) < 0)
		snprintf(efi, sizeof(efi), "unknown");
	snprintf(record, sizeof(record),
		 "boot %u\nboot_id %s\ntime %ld\nkernel %s\ncmdline %s\nprevious %s\n"
		 "pstore_records %d\nefi_dump_variables %d\nrecord %s\n",
		 ex->boot_number, boot_id, (long)time(NULL), ex->release, cmdline, end,
		 saved_pstore < 0 ? 0 : saved_pstore, saved_efi < 0 ? 0 : saved_efi, efi);
	snprintf(dest, sizeof(dest), "%s/boot.txt", ex->boot_dir);
	ret = bci_write_file_atomic(dest, record, strlen(record), 0644);
	if (ret < 0)
		bci_error("cannot write %s: %s", dest, strerror(-ret));
	if (crashed)
		bci_say("boot %u of the run; previous boot: kernel crash (%d pstore records)",
			ex->boot_number, saved_pstore);
	else
		bci_say("boot %u of the run; previous boot: %s", ex->boot_number, end);
	if (saved_pstore > 0 || saved_efi > 0)
		bci_say("saved %d pstore record%s and %d EFI dump variable%s to boot-%04u/, then erased them",
			saved_pstore, saved_pstore == 1 ? "" : "s", saved_efi, saved_efi == 1 ? "" : "s",
			ex->boot_number);
	return ret;
}

void bci_boot_end(struct bci_executor *ex, const char *how)
{
	char path[PATH_MAX + 16], text[256];
	int n;

	if (!ex->boot_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/end.txt", ex->boot_dir);
	n = snprintf(text, sizeof(text), "%s\n", how);
	if (bci_write_file_atomic(path, text, (size_t)n, 0644) < 0)
		bci_warn("cannot record how boot %u ends", ex->boot_number);
}
