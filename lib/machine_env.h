/* SPDX-License-Identifier: MIT */
/*
 * What a boot records about its machine: the one home of the format, its
 * writer (the executor, at every boot) and its reader (the aggregator's
 * collect, for the upload's manifest; anything else that wants it).
 *
 * A boot's record folder (runs/<run>/boot-NNNN/) holds:
 *
 *   environment.txt   the environment of the kernel under test, below
 *   kernel.config     the kernel's .config, decompressed from /proc/config.gz;
 *                     only when the kernel has one (environment.txt then says
 *                     `kernel.config kernel.config`)
 *
 * environment.txt is text, one `key value` per line, the key and the value
 * separated by one space. The first line is `format 1`. The value is the rest
 * of the line, escaped: `\\` for a backslash, `\n`, `\r`, `\t`, and `\xHH` for
 * any other byte below 0x20 and for 0x7f; nothing else is escaped, so bytes
 * from 0x80 up (UTF-8) pass as they are. Lines starting with `#` are comments.
 *
 * Scalar keys, each at most once, any of them absent when the machine does not
 * say (no DMI on a board without SMBIOS, no .config, ...):
 *
 *   dmi.sys_vendor dmi.product_name dmi.product_version
 *   dmi.board_vendor dmi.board_name dmi.board_version
 *   dmi.bios_vendor dmi.bios_version dmi.bios_date
 *                     /sys/class/dmi/id/<name>, trailing white space removed
 *   cpu.model         the first `model name` of /proc/cpuinfo
 *   cpu.count         the number of `processor` entries of /proc/cpuinfo
 *   memory.kib        MemTotal of /proc/meminfo, KiB (decimal)
 *   kernel.release    /proc/sys/kernel/osrelease
 *   kernel.cmdline    /proc/cmdline, without its newline
 *   kernel.config     the name of the .config file beside it: `kernel.config`
 *
 * Repeated keys, in the order the machine listed them:
 *
 *   pci SLOT VENDOR:DEVICE SUBVENDOR:SUBDEVICE CLASS REVISION DRIVER
 *       one PCI function of /sys/bus/pci/devices: SLOT as the kernel names it
 *       (0000:00:02.0), ids as 4 lower-case hex digits, CLASS as 6, REVISION
 *       as 2, DRIVER the driver bound to it or `-` when none is: the rest of the
 *       line, escaped (driver names may have spaces: "i6300ESB timer")
 *   module NAME       a module loaded (/proc/modules), when the boot record is made
 *   firmware RESULT NAME
 *       a firmware file the kernel log says a driver asked for: RESULT `ok`
 *       when it was loaded, else the kernel's error number (`-2`); NAME (the
 *       rest of the line, escaped) as the driver asked for it
 *
 * A reader refuses a format it does not know, an unknown key, a repeated
 * scalar, a bad escape or a malformed pci/firmware/number value, with an error
 * naming the line. All functions return 0 (or a count) or -errno; errors also
 * go into the caller's @err buffer.
 */
#ifndef BCI_MACHINE_ENV_H
#define BCI_MACHINE_ENV_H

#include <stddef.h>

#define BCI_MACHINE_ENV_FORMAT 1
#define BCI_MACHINE_ENV_FILE "environment.txt"
#define BCI_MACHINE_ENV_CONFIG_FILE "kernel.config"
/* Larger than any environment.txt a machine makes (thousands of PCI functions and modules). */
#define BCI_MACHINE_ENV_MAX_SIZE (4u << 20)

/* The scalar keys, in the order the writer puts them. */
enum bci_machine_env_field {
	BCI_ENV_DMI_SYS_VENDOR,
	BCI_ENV_DMI_PRODUCT_NAME,
	BCI_ENV_DMI_PRODUCT_VERSION,
	BCI_ENV_DMI_BOARD_VENDOR,
	BCI_ENV_DMI_BOARD_NAME,
	BCI_ENV_DMI_BOARD_VERSION,
	BCI_ENV_DMI_BIOS_VENDOR,
	BCI_ENV_DMI_BIOS_VERSION,
	BCI_ENV_DMI_BIOS_DATE,
	BCI_ENV_CPU_MODEL,
	BCI_ENV_CPU_COUNT,
	BCI_ENV_MEMORY_KIB,
	BCI_ENV_KERNEL_RELEASE,
	BCI_ENV_KERNEL_CMDLINE,
	BCI_ENV_KERNEL_CONFIG,
	BCI_ENV_FIELD_COUNT,
};

struct bci_pci_function {
	char *slot;                 /* "0000:00:02.0" */
	unsigned vendor, device;    /* 16 bits each */
	unsigned subsystem_vendor, subsystem_device;
	unsigned class_code;        /* 24 bits: class, subclass, programming interface */
	unsigned revision;          /* 8 bits */
	char *driver;               /* NULL: no driver bound */
};

struct bci_firmware_request {
	char *name;
	int error;                  /* 0: loaded; else the kernel's -errno */
};

/* Everything is owned by the struct; bci_machine_env_free() releases it. */
struct bci_machine_env {
	char *fields[BCI_ENV_FIELD_COUNT];   /* NULL: the machine did not say */
	struct bci_pci_function *pci;
	size_t pci_count;
	char **modules;
	size_t module_count;
	struct bci_firmware_request *firmware;
	size_t firmware_count;
};

/* The key of a scalar field ("dmi.sys_vendor"), or NULL for an out-of-range one. */
const char *bci_machine_env_key(enum bci_machine_env_field field);

/* An empty environment (every field unknown). */
int bci_machine_env_new(struct bci_machine_env **out);
void bci_machine_env_free(struct bci_machine_env *env);

/* Building one: each copies its strings. Setting a field twice replaces it. */
int bci_machine_env_set(struct bci_machine_env *env, enum bci_machine_env_field field,
			const char *value);
int bci_machine_env_add_pci(struct bci_machine_env *env, const struct bci_pci_function *function);
int bci_machine_env_add_module(struct bci_machine_env *env, const char *name);
/* A name already listed is kept once, with the latest result. */
int bci_machine_env_add_firmware(struct bci_machine_env *env, const char *name, int error);

/* environment.txt's text: a malloc'ed NUL-terminated buffer owned by the caller. */
int bci_machine_env_format(const struct bci_machine_env *env, char **text, size_t *len);
/*
 * Writes DIR/kernel.config (when @kernel_config is not NULL; the field
 * kernel.config must then be set) and DIR/environment.txt, each durably
 * (temporary, fsync, rename, directory fsync), the .config first so that
 * environment.txt never names a file that is not there.
 */
int bci_machine_env_write(const char *dir, const struct bci_machine_env *env,
			  const char *kernel_config, size_t kernel_config_len,
			  char *err, size_t err_size);

/* Parses environment.txt's @text (@len bytes, need not be NUL-terminated); @name for errors. */
int bci_machine_env_parse(const char *name, const char *text, size_t len,
			  struct bci_machine_env **out, char *err, size_t err_size);
/*
 * Reads DIR/environment.txt. -ENOENT when the boot recorded none (a boot made
 * by an older executor); a kernel.config it names must be in DIR.
 */
int bci_machine_env_read(const char *dir, struct bci_machine_env **out, char *err,
			 size_t err_size);

/*
 * Reads a kernel log line (the text of a /dev/kmsg record or a dmesg line,
 * without its prefix) for a firmware request; 1 with @name (@size bytes) and
 * @error filled when it is one, else 0. The kernel's own firmware loader
 * messages: "firmware: direct-loading firmware X", "Direct firmware load for
 * X failed with error N", "firmware: failed to load X (N)", each possibly
 * after a "driver device: " prefix.
 */
int bci_machine_env_firmware_line(const char *line, size_t len, char *name, size_t size,
				  int *error);

#endif
