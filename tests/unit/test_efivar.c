// SPDX-License-Identifier: MIT
/*
 * EFI variables and load options (lib/efi) and the executor's hand-over on
 * fake efivarfs trees: ROOT/sys/firmware/efi/efivars/NAME-GUID regular files
 * holding 4 bytes of attributes and the data, as efivarfs shows them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "handover.h"
#include "boot_fault.h"
#include "fakeroot.h"
#include "fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GUID BCI_EFI_GLOBAL_GUID

static unsigned syncs;

static void count_sync(void)
{
	syncs++;
}

/* The boot record's date comes through the table's clock. */
static int test_clock(clockid_t clock, struct timespec *ts)
{
	return clock_gettime(clock, ts) < 0 ? -errno : 0;
}

static const struct bci_sys test_sys = { .name = "test", .sync = count_sync, .clock = test_clock };

struct fixture {
	struct fakeroot root;
	struct bci_executor ex;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	fakeroot_create(&f->root, "console=ttyS0 bootci.run_id=r1");
	f->ex.root = f->root.dir;
	f->ex.sys = &test_sys;
	f->ex.signal_fd = -1;
	f->ex.watchdog_fd = -1;
	syncs = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	bci_config_free(f->ex.config);
	fakeroot_remove(&f->root);
	free(f);
	return 0;
}

/* The machine booted through EFI: /sys/firmware/efi/efivars exists. */
static void add_efi(struct fixture *f)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s" BCI_EFIVARS_DIR, f->root.dir);
	assert_int_equal(bci_mkdir_p(path, 0755), 0);
}

/* A variable file as efivarfs shows it: attributes (LE) then data. */
static void put_variable(struct fixture *f, const char *name, uint32_t attributes,
			 const void *data, size_t size)
{
	char path[PATH_MAX + 128];
	uint8_t buf[4096];

	assert_true(size + 4 <= sizeof(buf));
	for (int i = 0; i < 4; i++)
		buf[i] = (uint8_t)(attributes >> (8 * i));
	memcpy(buf + 4, data, size);
	snprintf(path, sizeof(path), "%s" BCI_EFIVARS_DIR "/%s-" GUID, f->root.dir, name);
	assert_int_equal(bci_write_file_atomic(path, buf, size + 4, 0644), 0);
}

/* The raw file of a variable; its size in *@size. */
static uint8_t *file_of(struct fixture *f, const char *name, size_t *size)
{
	char path[PATH_MAX + 128], *text = NULL;

	snprintf(path, sizeof(path), "%s" BCI_EFIVARS_DIR "/%s-" GUID, f->root.dir, name);
	if (bci_read_file(path, &text, size, 1 << 20) < 0)
		return NULL;
	return (uint8_t *)text;
}

/* A Boot#### entry for HD(1,GPT,...)/File(@loader) named @description. */
static void put_entry(struct fixture *f, uint16_t number, const char *description,
		      const char *loader)
{
	struct bci_efi_hard_drive hd = { .partition_number = 1, .start_lba = 2048, .size_lba = 131072 };
	struct bci_efi_load_option option = { .attributes = BCI_EFI_LOAD_OPTION_ACTIVE };
	uint8_t *path = NULL;
	size_t size = 0;

	assert_int_equal(bci_efi_guid_parse("6b6f6f62-6369-4b47-8000-000000000002", hd.partition_guid), 0);
	assert_int_equal(bci_efi_device_path_hd_file(&hd, loader, &path, &size), 0);
	option.description = (char *)description;
	option.file_path = path;
	option.file_path_size = size;
	assert_int_equal(bci_efi_boot_entry_set(f->ex.root, number, &option), 0);
	free(path);
}

static void load_settings(struct fixture *f, const char *cmdline)
{
	char text[1024];

	snprintf(text, sizeof(text), "%s\n", cmdline);
	fakeroot_write(&f->root, "/proc/cmdline", text);
	assert_int_equal(bci_settings_load(&f->ex), 0);
}

/* ---- variables ---- */

static void variable_set_get_delete(void **state)
{
	struct fixture *f = *state;
	uint8_t *data = NULL, *raw;
	uint32_t attributes = 0;
	size_t size = 0;

	add_efi(f);
	assert_int_equal(bci_efivar_get(f->ex.root, "Test", GUID, &attributes, &data, &size), -ENOENT);
	assert_int_equal(bci_efivar_set(f->ex.root, "Test", GUID, 0x7, "longer data", 11), 0);
	/* Replacing with shorter data leaves no tail of the old one. */
	assert_int_equal(bci_efivar_set(f->ex.root, "Test", GUID, 0x3, "abc", 3), 0);
	assert_int_equal(bci_efivar_get(f->ex.root, "Test", GUID, &attributes, &data, &size), 0);
	assert_int_equal(attributes, 0x3);
	assert_int_equal(size, 3);
	assert_memory_equal(data, "abc", 3);
	free(data);
	raw = file_of(f, "Test", &size);
	assert_non_null(raw);
	assert_int_equal(size, 7);
	assert_memory_equal(raw, "\x03\x00\x00\x00" "abc", 7);
	free(raw);

	/* Empty data is a valid variable. */
	assert_int_equal(bci_efivar_set(f->ex.root, "Empty", GUID, 0x7, NULL, 0), 0);
	assert_int_equal(bci_efivar_get(f->ex.root, "Empty", GUID, NULL, &data, &size), 0);
	assert_int_equal(size, 0);
	free(data);

	assert_int_equal(bci_efivar_delete(f->ex.root, "Test", GUID), 0);
	assert_int_equal(bci_efivar_delete(f->ex.root, "Test", GUID), -ENOENT);
	assert_int_equal(bci_efivar_get(f->ex.root, "Test", GUID, NULL, &data, &size), -ENOENT);
	/* A name cannot leave the folder. */
	assert_int_equal(bci_efivar_set(f->ex.root, "../x", GUID, 0x7, "a", 1), -EINVAL);
}

static void variable_shorter_than_attributes_is_invalid(void **state)
{
	struct fixture *f = *state;
	uint8_t *data = NULL;
	size_t size;

	add_efi(f);
	fakeroot_write(&f->root, BCI_EFIVARS_DIR "/Short-" GUID, "ab");
	assert_int_equal(bci_efivar_get(f->ex.root, "Short", GUID, NULL, &data, &size), -EINVAL);
}

static void availability(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(bci_efivar_available(f->ex.root), -ENODEV);
	add_efi(f);
	/* The folder without efivarfs mounted on it is empty. */
	assert_int_equal(bci_efivar_available(f->ex.root), -ENOMEDIUM);
	put_variable(f, "BootCurrent", 0x6, "\x01\x00", 2);
	assert_int_equal(bci_efivar_available(f->ex.root), 0);
}

/* ---- text ---- */

static void utf16_round_trip(void **state)
{
	/* ASCII, 2- and 3-byte UTF-8, and a character outside the BMP (a surrogate pair). */
	static const char text[] = "bootci é€ \xf0\x9f\x9a\x80 ok";
	uint8_t *utf16 = NULL;
	char *back = NULL;
	size_t size = 0;

	(void)state;
	assert_int_equal(bci_efi_utf8_to_utf16(text, &utf16, &size), 0);
	/* 14 characters, one of them two units, and the NUL. */
	assert_int_equal(size, 2 * (14 + 1 + 1));
	assert_memory_equal(utf16, "b\0o\0", 4);
	assert_int_equal(bci_efi_utf16_to_utf8(utf16, size / 2, &back), 0);
	assert_string_equal(back, text);
	free(back);
	free(utf16);

	/* An unpaired surrogate is shown as U+FFFD, never rejected. */
	assert_int_equal(bci_efi_utf16_to_utf8((const uint8_t *)"a\0\x00\xd8" "b\0", 3, &back), 0);
	assert_string_equal(back, "a\xef\xbf\xbd" "b");
	free(back);

	/* Invalid UTF-8 (overlong, truncated, surrogate) is refused. */
	assert_int_equal(bci_efi_utf8_to_utf16("\xc0\xaf", &utf16, &size), -EILSEQ);
	assert_int_equal(bci_efi_utf8_to_utf16("\xe2\x82", &utf16, &size), -EILSEQ);
	assert_int_equal(bci_efi_utf8_to_utf16("\xed\xa0\x80", &utf16, &size), -EILSEQ);
}

static void guid_text(void **state)
{
	static const uint8_t global[16] = { 0x61, 0xdf, 0xe4, 0x8b, 0xca, 0x93, 0xd2, 0x11,
					    0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c };
	uint8_t guid[16];
	char text[37];

	(void)state;
	assert_int_equal(bci_efi_guid_parse("8BE4DF61-93CA-11D2-AA0D-00E098032B8C", guid), 0);
	assert_memory_equal(guid, global, 16);
	bci_efi_guid_format(guid, text);
	assert_string_equal(text, GUID);
	assert_int_equal(bci_efi_guid_parse("8be4df61-93ca-11d2-aa0d-00e098032b8", guid), -EINVAL);
	assert_int_equal(bci_efi_guid_parse("8be4df61x93ca-11d2-aa0d-00e098032b8c", guid), -EINVAL);
	assert_int_equal(bci_efi_guid_parse("8be4df61-93ca-11d2-aa0d-00e098032b8g", guid), -EINVAL);
}

/* ---- device paths and load options ---- */

static void device_path_hd_file(void **state)
{
	struct bci_efi_hard_drive hd = { .partition_number = 1, .start_lba = 0x800, .size_lba = 0x20000 };
	uint8_t *path = NULL;
	size_t size = 0;
	char text[512];
	int len;

	(void)state;
	assert_int_equal(bci_efi_guid_parse("6b6f6f62-6369-4b47-8000-000000000002", hd.partition_guid), 0);
	assert_int_equal(bci_efi_device_path_hd_file(&hd, "/EFI/bootci/known-good.efi", &path, &size), 0);
	/* HD (42) + File (4 + 27 UTF-16 units with the NUL) + End (4). */
	assert_int_equal(size, 42 + 4 + 2 * 27 + 4);
	assert_memory_equal(path, "\x04\x01\x2a\x00\x01\x00\x00\x00", 8);
	assert_int_equal(path[40], 2);
	assert_int_equal(path[41], 2);
	assert_memory_equal(path + size - 4, "\x7f\xff\x04\x00", 4);
	assert_int_equal(bci_efi_device_path_check(path, size), 3);
	len = bci_efi_device_path_format(path, size, text, sizeof(text));
	assert_int_equal(len, (int)strlen(text));
	assert_string_equal(text, "HD(1,GPT,6b6f6f62-6369-4b47-8000-000000000002,0x800,0x20000)/"
				  "File(\\EFI\\bootci\\known-good.efi)");
	/* A short buffer keeps a NUL and reports the full length, like snprintf. */
	assert_int_equal(bci_efi_device_path_format(path, size, text, 8), len);
	assert_string_equal(text, "HD(1,GP");
	/* No End node, or bytes after it: malformed. */
	assert_int_equal(bci_efi_device_path_check(path, size - 4), -EINVAL);
	assert_int_equal(bci_efi_device_path_check(path, size - 1), -EINVAL);
	free(path);
}

static void device_path_firmware_entries(void **state)
{
	/* OVMF's entries: PciRoot(0x0)/Pci(0x3,0x0) and a PXE path with MAC and IPv4. */
	static const uint8_t misc[] = { 0x02, 0x01, 0x0c, 0x00, 0xd0, 0x41, 0x03, 0x0a,
					0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x06, 0x00,
					0x00, 0x03, 0x7f, 0xff, 0x04, 0x00 };
	uint8_t pxe[12 + 6 + 37 + 27 + 4] = { 0 };
	char text[512];

	(void)state;
	assert_int_equal(bci_efi_device_path_format(misc, sizeof(misc), text, sizeof(text)), 25);
	assert_string_equal(text, "PciRoot(0x0)/Pci(0x3,0x0)");

	memcpy(pxe, misc, 18);
	pxe[18] = 0x03, pxe[19] = 0x0b, pxe[20] = 37;
	memcpy(pxe + 22, "\x52\x54\x00\x12\x34\x56", 6);
	pxe[18 + 36] = 0x01;
	pxe[55] = 0x03, pxe[56] = 0x0c, pxe[57] = 27;
	memcpy(pxe + 82, "\x7f\xff\x04\x00", 4);
	assert_true(bci_efi_device_path_format(pxe, sizeof(pxe), text, sizeof(text)) > 0);
	assert_string_equal(text, "PciRoot(0x0)/Pci(0x3,0x0)/MAC(525400123456,0x1)/IPv4(0.0.0.0,0,DHCP)");

	/* An unknown node: Path(type,subtype,hex). */
	assert_true(bci_efi_device_path_format((const uint8_t *)"\x09\x02\x06\x00\xab\xcd\x7f\xff\x04\x00",
					       10, text, sizeof(text)) > 0);
	assert_string_equal(text, "Path(9,2,abcd)");
}

static void load_option_round_trip(void **state)
{
	static const uint8_t end[] = { 0x7f, 0xff, 0x04, 0x00 };
	struct bci_efi_load_option option = {
		.attributes = BCI_EFI_LOAD_OPTION_ACTIVE,
		.description = (char *)"known-good é",
		.file_path = end,
		.file_path_size = sizeof(end),
		.optional_data = (const uint8_t *)"opt",
		.optional_data_size = 3,
	}, parsed;
	uint8_t *body = NULL;
	size_t size = 0;

	(void)state;
	assert_int_equal(bci_efi_load_option_build(&option, &body, &size), 0);
	/* attributes, FilePathListLength, 13 UTF-16 units with the NUL, path, data. */
	assert_int_equal(size, 4 + 2 + 26 + 4 + 3);
	assert_memory_equal(body, "\x01\x00\x00\x00\x04\x00k\0n\0", 10);
	assert_memory_equal(body + 6 + 22, "\xe9\x00\x00\x00", 4);
	assert_int_equal(bci_efi_load_option_parse(body, size, &parsed), 0);
	assert_int_equal(parsed.attributes, BCI_EFI_LOAD_OPTION_ACTIVE);
	assert_string_equal(parsed.description, "known-good é");
	assert_int_equal(parsed.file_path_size, 4);
	assert_memory_equal(parsed.file_path, end, 4);
	assert_int_equal(parsed.optional_data_size, 3);
	assert_memory_equal(parsed.optional_data, "opt", 3);
	bci_efi_load_option_clear(&parsed);

	/* Truncated: no NUL after the description, or a path longer than what is left. */
	assert_int_equal(bci_efi_load_option_parse(body, 6 + 20, &parsed), -EINVAL);
	assert_int_equal(bci_efi_load_option_parse(body, 6 + 26 + 3, &parsed), -EINVAL);
	assert_int_equal(bci_efi_load_option_parse(body, 5, &parsed), -EINVAL);
	free(body);
}

/* ---- the boot manager's variables ---- */

static void boot_next_written_as_efivarfs_wants(void **state)
{
	struct fixture *f = *state;
	uint16_t number = 0;
	uint8_t *raw;
	size_t size = 0;

	add_efi(f);
	assert_int_equal(bci_efi_boot_next_get(f->ex.root, &number), -ENOENT);
	assert_int_equal(bci_efi_boot_next_set(f->ex.root, 0x1234), 0);
	raw = file_of(f, "BootNext", &size);
	assert_non_null(raw);
	assert_int_equal(size, 6);
	assert_memory_equal(raw, "\x07\x00\x00\x00\x34\x12", 6);
	free(raw);
	assert_int_equal(bci_efi_boot_next_get(f->ex.root, &number), 0);
	assert_int_equal(number, 0x1234);
}

static void boot_order_and_free_number(void **state)
{
	struct fixture *f = *state;
	uint16_t *order = NULL, number = 0;
	size_t count = 0;

	add_efi(f);
	put_variable(f, "BootOrder", 0x7, "\x02\x00\x00\x00\x01\x00", 6);
	assert_int_equal(bci_efi_boot_order_get(f->ex.root, &order, &count), 0);
	assert_int_equal(count, 3);
	assert_int_equal(order[0], 2);
	assert_int_equal(order[2], 1);
	free(order);
	assert_int_equal(bci_efi_boot_order_set(f->ex.root, (const uint16_t[]){ 0xa, 0xb }, 2), 0);
	assert_int_equal(bci_efi_boot_order_get(f->ex.root, &order, &count), 0);
	assert_int_equal(count, 2);
	assert_int_equal(order[1], 0xb);
	free(order);

	assert_int_equal(bci_efi_boot_entry_free_number(f->ex.root, &number), 0);
	assert_int_equal(number, 0);
	put_entry(f, 0, "UiApp", "/a.efi");
	put_entry(f, 1, "UEFI Misc Device", "/b.efi");
	put_entry(f, 3, "other", "/c.efi");
	/* Names are case sensitive: these are other variables, not Boot0002. */
	put_variable(f, "boot0002", 0x7, "", 0);
	put_variable(f, "Boot000a", 0x7, "", 0);
	assert_int_equal(bci_efi_boot_entry_free_number(f->ex.root, &number), 0);
	assert_int_equal(number, 2);
	assert_int_equal(bci_efi_boot_number_parse("boot00aB", &number), 0);
	assert_int_equal(number, 0xab);
	assert_int_equal(bci_efi_boot_number_parse("Boot123", &number), -EINVAL);
	assert_int_equal(bci_efi_boot_number_parse("Boot12345", &number), -EINVAL);
}

static void find_entry_by_description_and_number(void **state)
{
	struct fixture *f = *state;
	uint16_t number = 0;

	add_efi(f);
	put_entry(f, 1, "UEFI Misc Device", "/EFI/BOOT/BOOTX64.EFI");
	put_entry(f, 3, "bootci-known-good", "/EFI/bootci/known-good.efi");
	put_entry(f, 0xa, "bootci-known-good", "/EFI/bootci/known-good.efi");
	assert_int_equal(bci_efi_boot_find(f->ex.root, "bootci-known-good", &number), 0);
	assert_int_equal(number, 3);
	/* A tie goes to the entry BootOrder names first. */
	put_variable(f, "BootOrder", 0x7, "\x01\x00\x0a\x00\x03\x00", 6);
	assert_int_equal(bci_efi_boot_find(f->ex.root, "bootci-known-good", &number), 0);
	assert_int_equal(number, 0xa);
	assert_int_equal(bci_efi_boot_find(f->ex.root, "Boot0001", &number), 0);
	assert_int_equal(number, 1);
	assert_int_equal(bci_efi_boot_find(f->ex.root, "Boot0002", &number), -ENOENT);
	assert_int_equal(bci_efi_boot_find(f->ex.root, "bootci-known", &number), -ENOENT);
}

static void hard_drive_probed_from_gpt(void **state)
{
	static const char partuuid[] = "6b6f6f62-6369-4b47-8000-00000000000a";
	struct fixture *f = *state;
	struct bci_efi_hard_drive hd;
	uint8_t expected[16];
	char disk[PATH_MAX];

	fakeroot_add_disk(&f->root, "vda", partuuid, NULL);
	fakeroot_add_disk(&f->root, "vdb", NULL, NULL);
	snprintf(disk, sizeof(disk), "%s/dev/vda", f->root.dir);
	assert_int_equal(bci_efi_hard_drive_probe(disk, 1, &hd), 0);
	assert_int_equal(hd.partition_number, 1);
	assert_int_equal(hd.start_lba, 2048);
	assert_int_equal(hd.size_lba, 16384);
	assert_int_equal(bci_efi_guid_parse(partuuid, expected), 0);
	assert_memory_equal(hd.partition_guid, expected, 16);
	assert_int_equal(bci_efi_hard_drive_probe(disk, 2, &hd), -ENOENT);
	snprintf(disk, sizeof(disk), "%s/dev/vdb", f->root.dir);
	assert_int_equal(bci_efi_hard_drive_probe(disk, 1, &hd), -EMEDIUMTYPE);
}

/* bootci-efi create-entry's logic: twice the same label is one entry, kept in its place. */
static void entry_created_then_replaced(void **state)
{
	static const char partuuid[] = "6b6f6f62-6369-4b47-8000-00000000000b";
	struct fixture *f = *state;
	struct bci_efi_load_option option;
	uint16_t number, *order = NULL;
	size_t order_count = 0, raw_size;
	char err[256], line[1400];
	uint8_t *raw;
	bool replaced;

	add_efi(f);
	fakeroot_add_disk(&f->root, "vda", partuuid, NULL);
	put_entry(f, 0, "netboot", "/EFI/x.efi");
	put_variable(f, "BootOrder", 0x7, "\x00\x00", 2);
	assert_int_equal(bci_efi_boot_entry_create(f->ex.root, "kg", "/dev/vda", 1, "/EFI/kg.efi", false,
						   &number, &replaced, err, sizeof(err)), 0);
	assert_int_equal(number, 1);
	assert_false(replaced);
	assert_int_equal(bci_efi_boot_entry_get(f->ex.root, 1, &option, &raw, &raw_size), 0);
	assert_string_equal(option.description, "kg");
	assert_int_equal(option.attributes, BCI_EFI_LOAD_OPTION_ACTIVE);
	bci_efi_load_option_clear(&option);
	free(raw);
	bci_efi_boot_entry_describe(f->ex.root, 1, line, sizeof(line));
	assert_non_null(strstr(line, "Boot0001* kg\tHD(1,GPT,6b6f6f62-6369-4b47-8000-00000000000b,"));
	assert_non_null(strstr(line, "/File(\\EFI\\kg.efi)"));
	/* Again, first this time: the same number, BootOrder unchanged (already in it). */
	assert_int_equal(bci_efi_boot_entry_create(f->ex.root, "kg", "/dev/vda", 1, "/EFI/kg2.efi", true,
						   &number, &replaced, err, sizeof(err)), 0);
	assert_int_equal(number, 1);
	assert_true(replaced);
	assert_int_equal(bci_efi_boot_order_get(f->ex.root, &order, &order_count), 0);
	assert_int_equal(order_count, 2);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 1);
	free(order);
	assert_int_equal(bci_efi_boot_resolve(f->ex.root, "1", &number), 0);
	assert_int_equal(number, 1);
	assert_int_equal(bci_efi_boot_resolve(f->ex.root, "kg", &number), 0);
	assert_int_equal(bci_efi_boot_resolve(f->ex.root, "5", &number), -ENOENT);
	/* The disk's mistakes are named. */
	assert_int_equal(bci_efi_boot_entry_create(f->ex.root, "kg", "/dev/vda", 2, "/EFI/kg.efi", false,
						   &number, &replaced, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "/dev/vda: partition 2: no such partition");
}

/* ---- the hand-over ---- */

static void handover_sets_boot_next(void **state)
{
	struct fixture *f = *state;
	uint8_t *raw;
	size_t size = 0;

	add_efi(f);
	load_settings(f, "console=ttyS0");
	put_entry(f, 1, "UEFI Misc Device", "/EFI/BOOT/BOOTX64.EFI");
	put_entry(f, 3, "bootci-known-good", "/EFI/bootci/known-good.efi");
	put_variable(f, "BootCurrent", 0x6, "\x02\x00", 2);
	assert_int_equal(bci_handover(&f->ex, BCI_END_REBOOT), BCI_END_REBOOT);
	raw = file_of(f, "BootNext", &size);
	assert_non_null(raw);
	assert_int_equal(size, 6);
	assert_memory_equal(raw, "\x07\x00\x00\x00\x03\x00", 6);
	free(raw);
	assert_int_equal(syncs, 1);
}

static void handover_to_explicit_number(void **state)
{
	struct fixture *f = *state;
	uint16_t number = 0;

	add_efi(f);
	load_settings(f, "bootci.known_good_entry=Boot000A bootci.handover_fallback=poweroff");
	put_entry(f, 0xa, "something else", "/x.efi");
	assert_int_equal(bci_handover(&f->ex, BCI_END_REBOOT), BCI_END_REBOOT);
	assert_int_equal(bci_efi_boot_next_get(f->ex.root, &number), 0);
	assert_int_equal(number, 0xa);
}

static void handover_missing_entry_takes_fallback(void **state)
{
	struct fixture *f = *state;
	uint16_t number;

	add_efi(f);
	put_entry(f, 1, "UEFI Misc Device", "/EFI/BOOT/BOOTX64.EFI");
	load_settings(f, "bootci.handover_fallback=poweroff");
	assert_int_equal(bci_handover(&f->ex, BCI_END_REBOOT), BCI_END_POWEROFF);
	assert_int_equal(bci_efi_boot_next_get(f->ex.root, &number), -ENOENT);
	bci_config_free(f->ex.config);
	f->ex.config = NULL;
	load_settings(f, "bootci.known_good_entry=Boot0007");
	assert_int_equal(bci_handover(&f->ex, BCI_END_REBOOT), BCI_END_REBOOT);
	assert_int_equal(bci_efi_boot_next_get(f->ex.root, &number), -ENOENT);
	assert_int_equal(syncs, 0);
}

static void handover_without_efi_takes_fallback(void **state)
{
	struct fixture *f = *state;

	load_settings(f, "bootci.handover_fallback=poweroff");
	/* No /sys/firmware/efi at all (a BIOS boot) ... */
	assert_int_equal(bci_handover(&f->ex, BCI_END_REBOOT), BCI_END_POWEROFF);
	/* ... or efivarfs not mounted. */
	add_efi(f);
	assert_int_equal(bci_handover(&f->ex, BCI_END_REBOOT), BCI_END_POWEROFF);
	/* And without any configuration (it could not be read): the defaults. */
	bci_config_free(f->ex.config);
	f->ex.config = NULL;
	assert_int_equal(bci_handover(&f->ex, BCI_END_REBOOT), BCI_END_REBOOT);
}

static void handover_leaves_poweroff_self_and_off_alone(void **state)
{
	struct fixture *f = *state;
	uint16_t number;

	add_efi(f);
	put_entry(f, 3, "bootci-known-good", "/EFI/bootci/known-good.efi");
	load_settings(f, "bootci.handover_fallback=poweroff");
	/* Power-off asked for: no BootNext. */
	assert_int_equal(bci_handover(&f->ex, BCI_END_POWEROFF), BCI_END_POWEROFF);
	assert_int_equal(bci_efi_boot_next_get(f->ex.root, &number), -ENOENT);
	/* The known-good image's own boot: no BootNext to itself. */
	put_variable(f, "BootCurrent", 0x6, "\x03\x00", 2);
	assert_int_equal(bci_handover(&f->ex, BCI_END_REBOOT), BCI_END_REBOOT);
	assert_int_equal(bci_efi_boot_next_get(f->ex.root, &number), -ENOENT);
	/* known_good_entry empty: hand-over off. */
	bci_config_free(f->ex.config);
	f->ex.config = NULL;
	load_settings(f, "bootci.known_good_entry= bootci.handover_fallback=poweroff");
	put_variable(f, "BootCurrent", 0x6, "\x01\x00", 2);
	assert_int_equal(bci_handover(&f->ex, BCI_END_REBOOT), BCI_END_REBOOT);
	assert_int_equal(bci_efi_boot_next_get(f->ex.root, &number), -ENOENT);
}

static void boot_record_line(void **state)
{
	struct fixture *f = *state;
	char line[512], expected[256];
	int len;

	fakeroot_write(&f->root, "/proc/cmdline", "console=ttyS0 bootci.test=\"/x y\"\n");
	snprintf(f->ex.release, sizeof(f->ex.release), "6.1.0-test");
	len = bci_boot_record(&f->ex, line, sizeof(line));
	assert_int_equal(len, (int)strlen(line));
	assert_non_null(strstr(line, "efi-boot-current=none release=6.1.0-test realtime="));
	assert_null(strchr(line, '\n'));
	snprintf(expected, sizeof(expected), " cmdline=console=ttyS0 bootci.test=\"/x y\"");
	assert_string_equal(line + strlen(line) - strlen(expected), expected);

	add_efi(f);
	put_variable(f, "BootCurrent", 0x6, "\x0b\x00", 2);
	assert_true(bci_boot_record(&f->ex, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, "efi-boot-current=Boot000B "));
	assert_int_equal(bci_boot_record(&f->ex, line, 20), -ENOBUFS);
	assert_string_equal(line, "");
}

/*
 * The boot fault note (lib/boot_fault.h): written and read back through the
 * variable, its reason one line, and anything else in
 * the variable refused rather than guessed at.
 */
static void boot_fault_note(void **state)
{
	struct fixture *f = *state;
	struct bci_boot_fault fault = { .run = "lab-42", .boots = 3, .cap = 3 }, back;
	char text[512];

	add_efi(f);
	assert_int_equal(bci_boot_fault_read(f->ex.root, &back), -ENOENT);
	snprintf(fault.reason, sizeof(fault.reason), "cannot create the run folder\n/results/runs/x");
	assert_int_equal(bci_boot_fault_write(f->ex.root, &fault), 0);
	assert_int_equal(bci_boot_fault_read(f->ex.root, &back), 0);
	assert_string_equal(back.run, "lab-42");
	assert_int_equal(back.boots, 3);
	assert_int_equal(back.cap, 3);
	assert_string_equal(back.reason, "cannot create the run folder /results/runs/x");
	assert_true(bci_boot_fault_due(&back));
	back.boots = 2;
	assert_false(bci_boot_fault_due(&back));
	assert_int_equal(bci_boot_fault_format(&back, text, sizeof(text)), 77);
	assert_string_equal(text, "run lab-42\nboots 2\ncap 3\nreason cannot create the run folder"
				  " /results/runs/x\n");
	assert_int_equal(bci_boot_fault_format(&back, text, 20), -ENOBUFS);

	/* The longest reason fits the variable's text. */
	memset(fault.reason, 'r', BCI_BOOT_FAULT_REASON_MAX);
	fault.reason[BCI_BOOT_FAULT_REASON_MAX] = '\0';
	assert_int_equal(bci_boot_fault_write(f->ex.root, &fault), 0);
	assert_int_equal(bci_boot_fault_read(f->ex.root, &back), 0);
	assert_int_equal(strlen(back.reason), BCI_BOOT_FAULT_REASON_MAX);

	static const char *const bad[] = {
		"run x\nboots 2\ncap 3\n",			/* no reason */
		"run x\nboots 0\ncap 3\nreason r\n",		/* no boot */
		"run x\nboots 2\ncap 3\nreason r\nmore 1\n",	/* a line more */
		"boots 2\nrun x\ncap 3\nreason r\n",		/* another order */
		"run x\nboots -2\ncap 3\nreason r\n",
		"run x\nboots 2x\ncap 3\nreason r\n",
		"run x\nboots 2\ncap 03\nreason r\n",		/* not as the writer writes it */
		"run \nboots 2\ncap 3\nreason r\n",		/* no run */
		"run x\nboots 2\ncap 3\nreason r",		/* its end cut */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(bci_boot_fault_parse(bad[i], strlen(bad[i]), &back), -EINVAL);
	assert_int_equal(bci_boot_fault_parse("run x\nboots 2\ncap 3\nreason \n", 28, &back), 0);
	assert_string_equal(back.reason, "");

	assert_int_equal(bci_boot_fault_clear(f->ex.root), 0);
	assert_int_equal(bci_boot_fault_read(f->ex.root, &back), -ENOENT);
	assert_int_equal(bci_boot_fault_clear(f->ex.root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(variable_set_get_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(boot_fault_note, setup, teardown),
		cmocka_unit_test_setup_teardown(variable_shorter_than_attributes_is_invalid, setup, teardown),
		cmocka_unit_test_setup_teardown(availability, setup, teardown),
		cmocka_unit_test(utf16_round_trip),
		cmocka_unit_test(guid_text),
		cmocka_unit_test(device_path_hd_file),
		cmocka_unit_test(device_path_firmware_entries),
		cmocka_unit_test(load_option_round_trip),
		cmocka_unit_test_setup_teardown(boot_next_written_as_efivarfs_wants, setup, teardown),
		cmocka_unit_test_setup_teardown(boot_order_and_free_number, setup, teardown),
		cmocka_unit_test_setup_teardown(find_entry_by_description_and_number, setup, teardown),
		cmocka_unit_test_setup_teardown(hard_drive_probed_from_gpt, setup, teardown),
		cmocka_unit_test_setup_teardown(entry_created_then_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(handover_sets_boot_next, setup, teardown),
		cmocka_unit_test_setup_teardown(handover_to_explicit_number, setup, teardown),
		cmocka_unit_test_setup_teardown(handover_missing_entry_takes_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(handover_without_efi_takes_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(handover_leaves_poweroff_self_and_off_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(boot_record_line, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
