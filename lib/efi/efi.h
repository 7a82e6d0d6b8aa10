/* SPDX-License-Identifier: MIT */
/*
 * EFI variables through efivarfs, with efivar's semantics, and the boot
 * manager's variables on top of them (Boot####, BootOrder, BootNext,
 * BootCurrent; UEFI 2.x, 3.1.3 "Load Options"): the one EFI implementation
 * of bootci, used by the executor (the hand-over, deploy), bootci-efi and
 * bootci-collect (the boot entries in the run's manifest).
 *
 * A variable is the file ROOT/sys/firmware/efi/efivars/NAME-GUID (through
 * bci_path() of lib/path.h: ROOT is "" on the machine, a fake tree in tests):
 * 4 bytes of attributes, little endian, then the data. efivarfs takes a write
 * as one whole variable, so a write is always a single write(2) of attributes
 * + data; its files are immutable (FS_IMMUTABLE_FL) until the flag is
 * cleared. A fake tree's variables are regular files: efivar.c tells them
 * apart by their file system.
 *
 *   efivar.c       variables: read, write, delete (efivarfs I/O)
 *   text.c         UTF-16LE <-> UTF-8, GUIDs
 *   device_path.c  device path lists: check, text form, HD()/File() built
 *   load_option.c  EFI_LOAD_OPTION (a Boot#### variable's body): parse, build
 *   boot.c         the boot manager's variables, finding the entry a name means
 *   disk_entry.c   an entry for a partition of a GPT disk (libblkid): the only
 *                  part that needs libblkid, so a reader of entries links without it
 *   bytes.h        little-endian integers and hex digits, for these files only
 *
 * Functions return 0 (or a count) on success and -errno on failure: -ENOENT
 * for a missing variable or entry, -ENODEV when there are no EFI variables
 * at all, -EINVAL for malformed contents. Buffers returned through `**`
 * arguments are malloc'ed and owned by the caller.
 */
#ifndef BCI_EFI_H
#define BCI_EFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#define BCI_EFI_GLOBAL_GUID "8be4df61-93ca-11d2-aa0d-00e098032b8c"
#define BCI_EFIVARS_DIR "/sys/firmware/efi/efivars"

#define BCI_EFI_VARIABLE_NON_VOLATILE 0x00000001u
#define BCI_EFI_VARIABLE_BOOTSERVICE_ACCESS 0x00000002u
#define BCI_EFI_VARIABLE_RUNTIME_ACCESS 0x00000004u
/* What the boot manager's variables carry: NV|BS|RT. */
#define BCI_EFI_VARIABLE_BOOT_ATTRIBUTES 0x00000007u

#define BCI_EFI_LOAD_OPTION_ACTIVE 0x00000001u

/* Upper bound for one variable: NVRAM stores are a few hundred KiB at most. */
#define BCI_EFIVAR_MAX_SIZE (1024 * 1024)

/* ---- variables (efivar.c) ---- */

/*
 * 0 when ROOT/sys/firmware/efi/efivars exists and holds variables; -ENODEV when
 * the machine did not boot through EFI (no /sys/firmware/efi), -ENOMEDIUM when
 * efivarfs is not mounted (the folder is empty).
 */
int bci_efivar_available(const char *root);

/* Reads NAME-GUID: attributes (may be NULL) and data (malloc'ed, may be empty). */
int bci_efivar_get(const char *root, const char *name, const char *guid, uint32_t *attributes,
		   uint8_t **data, size_t *size);
/* Creates or replaces NAME-GUID with @attributes and @size bytes of @data (one write). */
int bci_efivar_set(const char *root, const char *name, const char *guid, uint32_t attributes,
		   const void *data, size_t size);
/* Deletes NAME-GUID; -ENOENT when it does not exist. */
int bci_efivar_delete(const char *root, const char *name, const char *guid);

/* ---- text: UTF-8 <-> UTF-16LE, GUIDs (text.c) ---- */

/*
 * UTF-16LE (@units code units, stops at a NUL) to NUL-terminated UTF-8 in a
 * malloc'ed *@out. Unpaired surrogates become U+FFFD: firmware strings are
 * shown, never rejected.
 */
int bci_efi_utf16_to_utf8(const uint8_t *utf16, size_t units, char **out);
/*
 * NUL-terminated UTF-8 to UTF-16LE with its NUL, malloc'ed; *@size in bytes.
 * -EILSEQ for invalid UTF-8 (a description we write must be exact).
 */
int bci_efi_utf8_to_utf16(const char *utf8, uint8_t **out, size_t *size);

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" <-> the 16 bytes of an EFI_GUID (mixed endian). */
int bci_efi_guid_parse(const char *text, uint8_t guid[16]);
void bci_efi_guid_format(const uint8_t guid[16], char text[37]);

/* ---- device paths (device_path.c) ---- */

/* Where a loader lives: a GPT partition (as in the HD() media node) and a file on it. */
struct bci_efi_hard_drive {
	uint32_t partition_number;  /* 1-based */
	uint64_t start_lba;         /* in the disk's logical blocks */
	uint64_t size_lba;
	uint8_t partition_guid[16]; /* the GPT entry's unique partition GUID */
};

/*
 * Checks that @size bytes are a device path list: well-formed nodes (length
 * >= 4, inside the buffer) ending with an End Entire node exactly at @size.
 * Returns the number of nodes (End nodes included) or -EINVAL.
 */
int bci_efi_device_path_check(const uint8_t *path, size_t size);
/*
 * Text form as the UEFI spec's device path to text protocol writes it
 * (PciRoot(0x0)/Pci(0x3,0x0)/HD(1,GPT,<guid>,0x800,0x20000)/File(\EFI\x.efi));
 * unknown nodes as Path(type,subtype,hex). Always NUL-terminates @buf;
 * returns the full length, or -EINVAL for a malformed list.
 */
int bci_efi_device_path_format(const uint8_t *path, size_t size, char *buf, size_t bufsize);
/* HD(...)/File(@loader)/End, malloc'ed. '/' in @loader becomes '\'. */
int bci_efi_device_path_hd_file(const struct bci_efi_hard_drive *hd, const char *loader,
				uint8_t **out, size_t *size);

/* ---- EFI_LOAD_OPTION, the body of a Boot#### (load_option.c) ---- */

struct bci_efi_load_option {
	uint32_t attributes;
	char *description;             /* UTF-8, malloc'ed */
	const uint8_t *file_path;      /* the device path list, inside the parsed buffer */
	size_t file_path_size;
	const uint8_t *optional_data;  /* inside the parsed buffer; NULL when size is 0 */
	size_t optional_data_size;
};

/*
 * Parses @size bytes (the variable's data, without efivarfs' attributes).
 * file_path and optional_data point into @data, which must outlive @option;
 * bci_efi_load_option_clear() frees the description. -EINVAL when malformed.
 */
int bci_efi_load_option_parse(const uint8_t *data, size_t size,
			      struct bci_efi_load_option *option);
void bci_efi_load_option_clear(struct bci_efi_load_option *option);
/* The inverse: @option's fields to a malloc'ed variable body. */
int bci_efi_load_option_build(const struct bci_efi_load_option *option, uint8_t **out,
			      size_t *size);

/* ---- the boot manager's variables (boot.c) ---- */

/* "Boot0003"/"boot0003" -> 3; -EINVAL for anything else. */
int bci_efi_boot_number_parse(const char *text, uint16_t *number);

/* Boot#### read and parsed; *@raw (owned by the caller) backs @option's pointers. */
int bci_efi_boot_entry_get(const char *root, uint16_t number, struct bci_efi_load_option *option,
			   uint8_t **raw, size_t *raw_size);
int bci_efi_boot_entry_set(const char *root, uint16_t number,
			   const struct bci_efi_load_option *option);

/* Every Boot#### present, ascending, malloc'ed (may be 0 entries). */
int bci_efi_boot_entries(const char *root, uint16_t **numbers, size_t *count);
/* The lowest number with no Boot#### variable; -ENOSPC when all 65536 are taken. */
int bci_efi_boot_entry_free_number(const char *root, uint16_t *number);

/*
 * The entry @what names: "Boot####" (hex, must exist), else the entry whose
 * description is exactly @what (the first in BootOrder, else the lowest
 * number, when several share it). -ENOENT when there is none.
 */
int bci_efi_boot_find(const char *root, const char *what, uint16_t *number);

/* As bci_efi_boot_find, @what may also be a bare number (1-4 hex digits): bootci-efi's NUM. */
int bci_efi_boot_resolve(const char *root, const char *what, uint16_t *number);

/*
 * One line for people: "Boot0003* label<TAB>HD(...)/File(...)" (+data when it
 * carries optional data; "(unreadable: why)" when it cannot be read).
 */
void bci_efi_boot_entry_describe(const char *root, uint16_t number, char *buf, size_t size);

/* BootOrder with @number in it: appended (first with @first), never twice. */
int bci_efi_boot_order_add(const char *root, uint16_t number, bool first);

/* BootOrder as an array of entry numbers, malloc'ed; -ENOENT when absent. */
int bci_efi_boot_order_get(const char *root, uint16_t **order, size_t *count);
int bci_efi_boot_order_set(const char *root, const uint16_t *order, size_t count);

/* BootNext (NV|BS|RT, u16 LE) and BootCurrent (set by the firmware); -ENOENT when absent. */
int bci_efi_boot_next_get(const char *root, uint16_t *number);
int bci_efi_boot_next_set(const char *root, uint16_t number);
int bci_efi_boot_current_get(const char *root, uint16_t *number);

/* ---- an entry for a partition of a GPT disk (disk_entry.c, libblkid) ---- */

/*
 * Fills @hd for partition @partition_number of the GPT disk (or image file)
 * at @disk_path through libblkid's partition probing. -ENOENT when there is
 * no such partition, -EMEDIUMTYPE when the disk has no GPT.
 */
int bci_efi_hard_drive_probe(const char *disk_path, unsigned partition_number,
			     struct bci_efi_hard_drive *hd);
/*
 * Makes the entry @label: HD(partition @partition of the GPT disk at @disk, a
 * path under the root)/File(@loader), active. Provisioning twice must not
 * leave two entries of one name: an entry @label already has is replaced
 * (*@replaced true), else the lowest free number is taken. The entry then is
 * in BootOrder: appended (at its start with @first) unless already there.
 * 0 with *@number; -errno with what failed (naming @disk, the partition) in
 * @err.
 */
int bci_efi_boot_entry_create(const char *root, const char *label, const char *disk,
			      unsigned partition, const char *loader, bool first,
			      uint16_t *number, bool *replaced, char *err, size_t err_size);

#endif
