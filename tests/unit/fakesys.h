/* SPDX-License-Identifier: MIT */
/*
 * A fake /sys for the machine's environment and coldplug tests: DMI strings,
 * PCI functions (with their ids, modalias and bound driver) and bare devices
 * with a modalias, laid out as the kernel lays them out. Helpers abort the
 * test on failure.
 */
#ifndef BCI_TEST_FAKESYS_H
#define BCI_TEST_FAKESYS_H

#include "fakeroot.h"

/* /sys/class/dmi/id/@name (sys_vendor, bios_date, ...) holding @value and a newline. */
void fakesys_add_dmi(struct fakeroot *root, const char *name, const char *value);

struct fakesys_pci {
	const char *slot;          /* "0000:00:02.0" */
	unsigned vendor, device, subsystem_vendor, subsystem_device, class_code, revision;
	const char *driver;        /* NULL: none bound */
};

/*
 * /sys/devices/pci0000:00/SLOT with vendor, device, subsystem_vendor,
 * subsystem_device, class, revision and modalias files, its driver link, and
 * /sys/bus/pci/devices/SLOT linking to it, as the kernel makes them.
 */
void fakesys_add_pci(struct fakeroot *root, const struct fakesys_pci *function);

/* /sys/devices/@device/modalias holding @alias. */
void fakesys_add_modalias(struct fakeroot *root, const char *device, const char *alias);

#endif
