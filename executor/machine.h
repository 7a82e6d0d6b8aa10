/* SPDX-License-Identifier: MIT */
/*
 * The machine under test as the executor sees it: its environment recorded at
 * every boot (environment.c, in the format of lib/machine_env.h) and its
 * drivers loaded by modalias, as udev's coldplug would (coldplug.c).
 */
#ifndef BCI_MACHINE_H
#define BCI_MACHINE_H

#include <stddef.h>

struct bci_executor;
struct bci_machine_env;

/*
 * Reads DMI, PCI, CPU, memory, the command line, the loaded modules and the
 * firmware requests of the kernel log from ROOT/sys, ROOT/proc and
 * ROOT/dev/kmsg into a new environment (the caller frees it); *@config gets
 * ROOT/proc/config.gz decompressed (malloc'ed, NULL when the kernel has none).
 * What the machine does not say is left out; 0 or -ENOMEM.
 */
int bci_environment_collect(const struct bci_executor *ex, struct bci_machine_env **out,
			    char **config, size_t *config_len);
/* Collects and writes environment.txt and kernel.config into ex->boot_dir. 0 or -errno. */
int bci_environment_record(struct bci_executor *ex);

/* Modules the coldplug loads, in order: what a pass chose, for the console and the tests. */
struct bci_coldplug_plan {
	char **modules;
	size_t count;
	size_t denied;          /* modules matched but refused by coldplug_deny or a blacklist */
};

/*
 * One pass: the `modalias` of every device under ROOT/sys/devices, in path
 * order, looked up through libkmod; each module once, none in @skip (modules
 * already chosen, may be NULL), none in coldplug_deny, none blacklisted by
 * modprobe.d. 0 or -errno; the plan is freed with bci_coldplug_plan_free().
 */
int bci_coldplug_plan(struct bci_executor *ex, const struct bci_coldplug_plan *skip,
		      struct bci_coldplug_plan *plan);
void bci_coldplug_plan_free(struct bci_coldplug_plan *plan);
/*
 * Loads what the plan says, then plans again for the devices the loaded drivers
 * made appear (virtio_pci's virtio devices, say), until a pass finds nothing
 * new. Does nothing when coldplug=no. The number of modules loaded, or -errno
 * on a configuration error; a module that fails to load is a warning only.
 */
int bci_coldplug_run(struct bci_executor *ex);

#endif
