// SPDX-License-Identifier: MIT
/*
 * The executor's boot fault note (lib/boot_fault.h) to the master: boots
 * that ended one after the other before their run could begin (a run folder
 * that cannot be made, a partition that cannot be mounted) would go on for
 * ever, each handing over to this image and netbooting the same job again.
 * Once the count reached the executor's error_boots the known-good image says
 * so to the master (PUT .../fault), which takes the machine out with the
 * note; the note is removed once the master has it, and collect's exit status
 * then asks the executor to power the machine off (test_poweroff_status): a
 * machine out of the schedule that reboots only netboots to be sent away.
 */
#include "collect.h"

#include "boot_fault.h"
#include "message.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* What the master's fault note holds: one line, at most this many bytes (its API's limit). */
#define NOTE_MAX 200

int bci_collect_fault_report(const char *root, const struct bci_collect_upload *report,
			     FILE *console)
{
	struct bci_boot_fault fault;
	char full[512], note[NOTE_MAX + 1], err[1024] = "";
	size_t len;
	int ret;

	ret = bci_boot_fault_read(root, &fault);
	if (ret == -ENOENT || ret == -ENODEV || ret == -ENOMEDIUM)
		return 0;
	if (ret < 0) {
		fprintf(console, "collect: the EFI variable " BCI_BOOT_FAULT_NAME " cannot be read"
				 " (%s): left as it is\n", bci_strerror(-ret));
		return 0;
	}
	if (!bci_boot_fault_due(&fault))
		return 0;
	/* Cut to what the master takes: the count and the run come first. */
	snprintf(full, sizeof(full), "%u boots in a row ended before run %s began: %s", fault.boots,
		 fault.run, fault.reason);
	len = strnlen(full, NOTE_MAX);
	memcpy(note, full, len);
	note[len] = '\0';
	fprintf(console, "collect: %s; telling the master\n", note);
	ret = bci_collect_report_fault(report, note, err, sizeof(err));
	if (ret < 0) {
		fprintf(console, "collect: the master did not take the fault note (%s): sent again at"
				 " the next boot\n", err);
		return ret;
	}
	ret = bci_boot_fault_clear(root);
	if (ret < 0)
		fprintf(console, "collect: the master has the fault note, but " BCI_BOOT_FAULT_NAME
				 " cannot be removed: %s\n", bci_strerror(-ret));
	else
		fprintf(console, "collect: the master has the fault note (it takes this machine out"
				 " of its schedule)\n");
	return 1;
}
