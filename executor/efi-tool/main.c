// SPDX-License-Identifier: MIT
/*
 * bootci-efi: the EFI boot entries of a test machine, by hand or from a
 * provisioning boot (as the executor's test program). Static, so it runs in
 * the test image; a thin layer over lib/efi.
 */
#include "efi/efi.h"

#include <stdbool.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bootci-efi [--root DIR] list\n"
		"       bootci-efi [--root DIR] create-entry --label L --disk DEV --partition N\n"
		"                  --loader PATH [--last | --first]\n"
		"       bootci-efi [--root DIR] set-bootnext NUM|Boot####|LABEL\n"
		"       bootci-efi [--root DIR] delete-bootnext\n"
		"\n"
		"list          Boot#### entries (* = active) with their device paths, BootOrder,\n"
		"              BootCurrent and BootNext\n"
		"create-entry  HD(partition N of the GPT disk DEV)/File(PATH) as the entry L: the\n"
		"              next free Boot#### (or L's own number when L exists), added at the\n"
		"              end of BootOrder (--last, the default: network entries stay first)\n"
		"              or at its start (--first); an entry already in BootOrder keeps its\n"
		"              place; '/' in PATH is taken as '\\'\n"
		"set-bootnext  the entry the firmware boots once, next time\n"
		"--root DIR    efivarfs and DEV looked up under DIR (tests)\n");
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "bootci-efi: %s: %s\n", what, strerror(-err));
	return 1;
}

static int need_efi(const char *root)
{
	int ret = bci_efivar_available(root);

	if (ret == -ENODEV)
		fprintf(stderr, "bootci-efi: no EFI: the machine did not boot through EFI\n");
	else if (ret == -ENOMEDIUM)
		fprintf(stderr, "bootci-efi: no EFI variables: mount efivarfs on %s\n",
			BCI_EFIVARS_DIR);
	else if (ret < 0)
		fprintf(stderr, "bootci-efi: %s: %s\n", BCI_EFIVARS_DIR, strerror(-ret));
	return ret;
}

static void print_number_variable(const char *name, int ret, uint16_t number)
{
	if (ret == 0)
		printf("%s: Boot%04X\n", name, number);
	else if (ret == -ENOENT)
		printf("%s: absent\n", name);
	else
		printf("%s: unreadable (%s)\n", name, strerror(-ret));
}

static int cmd_list(const char *root)
{
	uint16_t *entries = NULL, *order = NULL, number = 0;
	size_t entry_count = 0, order_count = 0;
	int ret;

	if (need_efi(root) < 0)
		return 1;
	ret = bci_efi_boot_current_get(root, &number);
	print_number_variable("BootCurrent", ret, number);
	ret = bci_efi_boot_next_get(root, &number);
	print_number_variable("BootNext", ret, number);
	ret = bci_efi_boot_order_get(root, &order, &order_count);
	if (ret == 0) {
		printf("BootOrder:");
		for (size_t i = 0; i < order_count; i++)
			printf("%s%04X", i ? "," : " ", order[i]);
		printf("\n");
	} else {
		print_number_variable("BootOrder", ret, 0);
	}
	free(order);
	ret = bci_efi_boot_entries(root, &entries, &entry_count);
	if (ret < 0)
		return fail("Boot#### entries", ret);
	for (size_t i = 0; i < entry_count; i++) {
		char line[1400];

		bci_efi_boot_entry_describe(root, entries[i], line, sizeof(line));
		printf("%s\n", line);
	}
	free(entries);
	return 0;
}

static int cmd_create_entry(const char *root, int argc, char **argv)
{
	static const struct option options[] = {
		{ "label", required_argument, NULL, 'l' },
		{ "disk", required_argument, NULL, 'd' },
		{ "partition", required_argument, NULL, 'p' },
		{ "loader", required_argument, NULL, 'L' },
		{ "last", no_argument, NULL, 'z' },
		{ "first", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const char *label = NULL, *disk = NULL, *loader = NULL;
	unsigned long partition = 0;
	bool first = false, replaced;
	char err[512], line[1400], *end;
	uint16_t number;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'l': label = optarg; break;
		case 'd': disk = optarg; break;
		case 'L': loader = optarg; break;
		case 'z': first = false; break;
		case 'a': first = true; break;
		case 'p':
			errno = 0;
			partition = strtoul(optarg, &end, 10);
			if (errno || *end || partition == 0 || partition > 128) {
				fprintf(stderr, "bootci-efi: --partition: '%s' is not a partition number (1-128)\n",
					optarg);
				return 2;
			}
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !label || !disk || !partition || !loader || !*label) {
		fprintf(stderr, "bootci-efi: create-entry needs --label, --disk, --partition and --loader\n");
		return 2;
	}
	if (need_efi(root) < 0)
		return 1;
	if (bci_efi_boot_entry_create(root, label, disk, (unsigned)partition, loader, first, &number,
				      &replaced, err, sizeof(err)) < 0) {
		fprintf(stderr, "bootci-efi: %s\n", err);
		return 1;
	}
	bci_efi_boot_entry_describe(root, number, line, sizeof(line));
	printf("%s (%s)\n", line, replaced ? "replaced" : "created");
	return 0;
}

static int cmd_set_bootnext(const char *root, const char *what)
{
	uint16_t number;
	int ret;

	if (need_efi(root) < 0)
		return 1;
	ret = bci_efi_boot_resolve(root, what, &number);
	if (ret == -ENOENT) {
		fprintf(stderr, "bootci-efi: no boot entry '%s' (bootci-efi list shows them)\n", what);
		return 1;
	}
	if (ret < 0)
		return fail(what, ret);
	ret = bci_efi_boot_next_set(root, number);
	if (ret < 0)
		return fail("BootNext", ret);
	printf("BootNext: Boot%04X\n", number);
	return 0;
}

static int cmd_delete_bootnext(const char *root)
{
	int ret;

	if (need_efi(root) < 0)
		return 1;
	ret = bci_efivar_delete(root, "BootNext", BCI_EFI_GLOBAL_GUID);
	if (ret < 0 && ret != -ENOENT)
		return fail("BootNext", ret);
	printf("BootNext: absent\n");
	return 0;
}

int main(int argc, char **argv)
{
	/* efivarfs on the machine; a fake tree's regular files with --root. */
	const char *root = "";
	const char *command;
	int first = 1;

	if (argc >= 3 && strcmp(argv[1], "--root") == 0) {
		root = argv[2];
		first = 3;
	}
	if (argc <= first) {
		usage(stderr);
		return 2;
	}
	command = argv[first];
	if (strcmp(command, "-h") == 0 || strcmp(command, "--help") == 0 ||
	    strcmp(command, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(command, "list") == 0 && argc == first + 1)
		return cmd_list(root);
	if (strcmp(command, "create-entry") == 0)
		return cmd_create_entry(root, argc - first, argv + first);
	if (strcmp(command, "set-bootnext") == 0 && argc == first + 2)
		return cmd_set_bootnext(root, argv[first + 1]);
	if (strcmp(command, "delete-bootnext") == 0 && argc == first + 1)
		return cmd_delete_bootnext(root);
	usage(stderr);
	return 2;
}
