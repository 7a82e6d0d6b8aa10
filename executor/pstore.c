// SPDX-License-Identifier: MIT
/*
 * What the previous boot left behind when it died: its pstore and EFI crash records.
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
#include "efi/efi.h"
#include "fsutil.h"
#include "results_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* efi-pstore's variable in the efivarfs file @file (NAME-GUID), deleted through lib/efi. */
static int delete_efivar(const struct bci_executor *ex, const char *file)
{
	size_t len = strlen(file), guid_len = strlen(EFI_PSTORE_GUID);
	char name[NAME_MAX + 1];

	if (len <= guid_len + 1 || len - guid_len - 1 >= sizeof(name) ||
	    file[len - guid_len - 1] != '-')
		return -EINVAL;
	snprintf(name, sizeof(name), "%.*s", (int)(len - guid_len - 1), file);
	return bci_efivar_delete(ex->root, name, EFI_PSTORE_GUID);
}

/*
 * Copies every regular file of @src (names matching @prefix/@suffix when
 * given) into @dest, fsyncs, then erases the originals. Returns how many
 * were saved; sets *@crashed when a record shows a dead kernel.
 */
static int save_and_erase(const struct bci_executor *ex, const char *src, const char *dest,
			  const char *prefix,
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
		ret = efivars ? delete_efivar(ex, name) : (unlink(from) < 0 ? -errno : 0);
		if (ret < 0 && ret != -ENOENT)
			bci_warn("cannot erase %s: %s", from, strerror(-ret));
next:
		free(entries[i]);
	}
	free(entries);
	return saved;
}

int bci_pstore_collect(struct bci_executor *ex, struct bci_pstore_saved *saved)
{
	char pstore[PATH_MAX], efivars[PATH_MAX], dest[PATH_MAX + 16];
	bool crashed = false, crashed_pstore;

	memset(saved, 0, sizeof(*saved));
	if (bci_path(ex->root, pstore, "/sys/fs/pstore") < 0 ||
	    bci_path(ex->root, efivars, "/sys/firmware/efi/efivars") < 0)
		return -ENAMETOOLONG;
	snprintf(dest, sizeof(dest), "%s/pstore", ex->boot_dir);
	saved->pstore = save_and_erase(ex, pstore, dest, NULL, NULL, false, &crashed,
				       saved->crash_names, sizeof(saved->crash_names));
	/* What efi-pstore did not expose (or a kernel without pstore left): the variables. */
	snprintf(dest, sizeof(dest), "%s/efi", ex->boot_dir);
	crashed_pstore = crashed;
	saved->efi = save_and_erase(ex, efivars, dest, EFI_DUMP_PREFIX, EFI_PSTORE_GUID, true,
				    &crashed, saved->crash_names, sizeof(saved->crash_names));
	if (saved->pstore < 0)
		saved->pstore = 0;
	if (saved->efi < 0)
		saved->efi = 0;
	bci_fsync_dir(ex->boot_dir);

	ex->kernel_crashed = crashed;
	/* The dump to attribute: pstore's files, else what only the EFI variables kept. */
	snprintf(ex->crash_dump, sizeof(ex->crash_dump), BCI_RESULTS_BOOT_DIR "/%s", ex->boot_number,
		 crashed && !crashed_pstore ? "efi" : "pstore");
	return 0;
}
