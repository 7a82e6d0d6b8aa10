// SPDX-License-Identifier: MIT
/*
 * The way back: when a run is finished, capped or cannot go on, the next boot
 * must be the known-good image (it uploads the results), whatever the boot
 * order says (network first, so that the machine takes the next job after
 * that). EFI BootNext does exactly that for one boot, and the firmware deletes
 * it as it uses it. Also the per-boot record the journal keeps.
 */
#include "handover.h"

#include "config.h"
#include "fsutil.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#define DEFAULT_ENTRY "bootci-known-good"

/* Settings may be missing when the configuration itself could not be read. */
static const char *setting(const struct bci_executor *ex, const char *key, const char *fallback)
{
	const char *value = ex->config ? bci_config_get(ex->config, key) : NULL;

	return value ? value : fallback;
}

static enum bci_ending fallback_ending(const struct bci_executor *ex)
{
	return strcmp(setting(ex, "handover_fallback", "reboot"), "poweroff") == 0
		       ? BCI_END_POWEROFF
		       : BCI_END_REBOOT;
}

static const char *ending_name(enum bci_ending ending)
{
	return ending == BCI_END_POWEROFF ? "powering off" : "rebooting into the boot order";
}

/* The description of Boot@number for messages; "?" when it cannot be read. */
static void entry_label(const struct bci_executor *ex, uint16_t number, char *label, size_t size)
{
	struct bci_efi_load_option option;
	uint8_t *raw = NULL;
	size_t raw_size = 0;

	snprintf(label, size, "?");
	if (bci_efi_boot_entry_get(ex->root, number, &option, &raw, &raw_size) == 0) {
		snprintf(label, size, "%s", option.description);
		bci_efi_load_option_clear(&option);
		free(raw);
	}
}

enum bci_ending bci_handover(struct bci_executor *ex, enum bci_ending ending)
{
	const char *wanted = setting(ex, "known_good_entry", DEFAULT_ENTRY);
	enum bci_ending fallback = fallback_ending(ex);
	uint16_t number, current, next;
	char label[128];
	int ret;

	/* Power-off was asked for (on_finish, on_error): nobody wants a boot to follow. */
	if (ending != BCI_END_REBOOT)
		return ending;
	if (!*wanted) {
		bci_say("hand-over: off (known_good_entry is empty): %s", ending_name(ending));
		return ending;
	}
	ret = bci_efivar_available(ex->root);
	if (ret < 0) {
		bci_warn("hand-over: no EFI variables (%s): cannot set BootNext to '%s'; %s",
			 ret == -ENODEV ? "the machine did not boot through EFI"
					: ret == -ENOMEDIUM ? "efivarfs is not mounted"
							    : strerror(-ret),
			 wanted, ending_name(fallback));
		return fallback;
	}
	ret = bci_efi_boot_find(ex->root, wanted, &number);
	if (ret < 0) {
		bci_warn("hand-over: no EFI boot entry '%s' (%s; bootci-efi create-entry makes it): %s",
			 wanted, ret == -ENOENT ? "not found" : strerror(-ret), ending_name(fallback));
		return fallback;
	}
	entry_label(ex, number, label, sizeof(label));
	/*
	 * The known-good image runs this same executor: handing over to itself would
	 * loop forever. Its boot goes back to the boot order (the network: next job).
	 */
	if (bci_efi_boot_current_get(ex->root, &current) == 0 && current == number) {
		ret = bci_efi_boot_next_get(ex->root, &next);
		if (ret == 0)
			bci_say("hand-over: this boot is Boot%04X (%s), the known-good entry; BootNext=Boot%04X left as it is: %s",
				number, label, next, ending_name(ending));
		else
			bci_say("hand-over: this boot is Boot%04X (%s), the known-good entry; BootNext absent: %s",
				number, label, ending_name(ending));
		return ending;
	}
	ret = bci_efi_boot_next_set(ex->root, number);
	if (ret < 0) {
		bci_warn("hand-over: cannot write BootNext=Boot%04X (%s): %s; %s", number, label,
			 strerror(-ret), ending_name(fallback));
		return fallback;
	}
	/* efivarfs wrote through SetVariable(); the sync is for everything else before the reset. */
	if (ex->sys && ex->sys->sync)
		ex->sys->sync();
	bci_say("hand-over: BootNext=Boot%04X (%s)", number, label);
	return BCI_END_REBOOT;
}

/* Appends to @buf like snprintf at @*used; false once it no longer fits. */
static bool append(char *buf, size_t size, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static bool append(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= size)
		return false;
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, size - *used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size - *used)
		return false;
	*used += (size_t)n;
	return true;
}

int bci_boot_record(struct bci_executor *ex, char *buf, size_t size)
{
	char current[16] = "none", path[PATH_MAX], *cmdline = NULL;
	const char *release = ex->release;
	struct utsname names;
	struct timespec now;
	uint16_t number;
	size_t used = 0;
	bool fits;

	if (bci_efi_boot_current_get(ex->root, &number) == 0)
		snprintf(current, sizeof(current), "Boot%04X", number);
	if (!release[0])
		release = uname(&names) == 0 ? names.release : "unknown";
	if (ex->sys->clock(CLOCK_REALTIME, &now) < 0)
		now = (struct timespec){ 0 };
	if (bci_path(ex->root, path, "/proc/cmdline") == 0 &&
	    bci_read_file(path, &cmdline, NULL, 1 << 16) == 0) {
		/* One line: the newline the kernel ends it with, and any other, become spaces. */
		for (char *c = cmdline; *c; c++)
			if (*c == '\n' || *c == '\r')
				*c = ' ';
		for (size_t n = strlen(cmdline); n && cmdline[n - 1] == ' '; n--)
			cmdline[n - 1] = '\0';
	}
	fits = append(buf, size, &used, "efi-boot-current=%s release=%s realtime=%lld.%03ld cmdline=%s",
		      current, release, (long long)now.tv_sec, now.tv_nsec / 1000000L,
		      cmdline ? cmdline : "");
	free(cmdline);
	if (!fits) {
		if (size)
			buf[0] = '\0';
		return -ENOBUFS;
	}
	return (int)used;
}
