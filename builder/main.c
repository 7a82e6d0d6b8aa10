// SPDX-License-Identifier: MIT
/* bootci-builder: command line over the builder library; see usage() for the commands. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "message.h"
#include "cpio_spec.h"
#include "cpio_writer.h"
#include "fsutil.h"
#include "image/image.h"
#include "module_stage.h"
#include "recipe.h"
#include "spec_from_dir.h"

#define EXIT_USAGE 2

static void usage(FILE *out)
{
	fputs("usage:\n"
	      "  bootci-builder initramfs [--compress zstd|xz|gzip|none] SPEC [SPEC...] OUT\n"
	      "      Writes the newc cpio image described by the gen_init_cpio SPECs to OUT\n"
	      "      (the last argument), compressed with zstd unless told otherwise.\n"
	      "      Entry mtimes are $SOURCE_DATE_EPOCH (0 if unset); the same inputs\n"
	      "      always give the same bytes. On error OUT is left untouched.\n"
	      "  bootci-builder spec-from-dir DIR DEST [OUT]\n"
	      "      Prints (or writes to OUT) spec lines putting every entry under DIR\n"
	      "      at DEST/... in the image, with its mode and uid/gid 0.\n"
	      "  bootci-builder modules --moddir DIR --kver KVER --out STAGING [--depmod PROG] MODULE...\n"
	      "      Copies MODULEs (names or aliases) of DIR/lib/modules/KVER with their\n"
	      "      dependencies and soft dependencies into STAGING/lib/modules/KVER, runs\n"
	      "      depmod there, and prints one line per module: NAME PATH or NAME built-in.\n"
	      "  bootci-builder test-image --recipe FILE KERNEL [--igt DIR] [--testlist FILE] [OPTIONS] --out DIR\n"
	      "      DIR gets vmlinuz, initrd.img (the recipe's compression), boot.ipxe and\n"
	      "      bootci.efi (UKI with the recipe's command line). With --igt or --testlist,\n"
	      "      the image's /etc/bootci/executor.conf gets testlist= and test_dir=: it runs them.\n"
	      "  bootci-builder known-good --recipe FILE KERNEL [OPTIONS] --out DIR\n"
	      "      DIR gets disk.img (GPT: ESP with the UKI at \\EFI\\BOOT\\BOOTX64.EFI and\n"
	      "      \\EFI\\bootci\\known-good.efi, ext4 BOOTCI-RESULTS), layout, known-good.efi and\n"
	      "      register-boot-entry.sh (adds the EFI boot entry at the end of BootOrder).\n"
	      "    KERNEL is one of:\n"
	      "      --kernel-deb FILE                  a Debian linux-image .deb\n"
	      "      --kernel-tree DIR --modules MDIR   a build tree + make modules_install INSTALL_MOD_PATH=MDIR\n"
	      "      --vmlinuz FILE --modules MDIR      MDIR: INSTALL_MOD_PATH root or lib/modules/KVER\n"
	      "    OPTIONS: --kver KVER, --sysroot DIR (where libraries come from, /),\n"
	      "      --stub FILE (EFI stub), --depmod PROG, --manifest FILE (SHA256 SIZE MODE PATH ORIGIN\n"
	      "      per file). The output folder is replaced whole or left as it was.\n",
	      out);
}

/* SOURCE_DATE_EPOCH (@text, may be NULL) into @epoch, or said on stderr. */
static int source_date_epoch(const char *text, int64_t *epoch)
{
	if (builder_epoch_parse(text, epoch) == 0)
		return 0;
	fprintf(stderr, "bootci-builder: SOURCE_DATE_EPOCH='%s' is not a number of seconds\n", text);
	return -EINVAL;
}

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("bootci-builder: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	usage(stderr);
	return EXIT_USAGE;
}

/* The exit of a command whose getopt_long() handed back -h (0) or an unknown option. */
static int option_exit(int opt)
{
	usage(opt == 'h' ? stdout : stderr);
	return opt == 'h' ? 0 : EXIT_USAGE;
}

/* A failed step: the library's message (or errno's) on stderr, and the failure exit. */
static int command_failed(int ret, const char *err)
{
	fprintf(stderr, "bootci-builder: %s\n", err[0] ? err : strerror(-ret));
	return EXIT_FAILURE;
}

static int command_initramfs(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "compress", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct builder_cpio_options options = { .compression = BUILDER_COMPRESS_ZSTD };
	char err[1024] = "";
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	struct builder_spec *spec;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (builder_compression_parse(optarg, &options.compression) < 0)
				return usage_error("unknown compression '%s'", optarg);
			break;
		default:
			return option_exit(opt);
		}
	}
	if (argc - optind < 2)
		return usage_error("initramfs needs SPEC... OUT");
	if (source_date_epoch(epoch, &options.mtime) < 0)
		return EXIT_FAILURE;

	spec = builder_spec_new();
	if (!spec) {
		fputs("bootci-builder: out of memory\n", stderr);
		return EXIT_FAILURE;
	}
	ret = 0;
	for (int i = optind; i < argc - 1 && !ret; i++)
		ret = builder_spec_parse_file(spec, argv[i], err, sizeof(err));
	if (!ret)
		ret = builder_spec_finalize(spec, err, sizeof(err));
	if (!ret)
		ret = builder_cpio_write_file(spec, argv[argc - 1], &options, err, sizeof(err));
	builder_spec_free(spec);
	if (ret < 0)
		return command_failed(ret, err);
	return 0;
}

static int command_spec_from_dir(int argc, char **argv)
{
	char err[1024] = "";
	char *text;
	size_t len;
	int ret;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 3 || argc > 4)
		return usage_error("spec-from-dir needs DIR DEST [OUT]");
	ret = builder_spec_from_dir(argv[1], argv[2], &text, &len, err, sizeof(err));
	if (ret < 0)
		return command_failed(ret, err);
	if (argc == 4) {
		ret = bci_write_file_atomic(argv[3], text, len, 0644);
		if (ret < 0)
			fprintf(stderr, "bootci-builder: %s: %s\n", argv[3], strerror(-ret));
	} else {
		ret = bci_write_all(STDOUT_FILENO, text, len);
		if (ret < 0)
			fprintf(stderr, "bootci-builder: stdout: %s\n", strerror(-ret));
	}
	free(text);
	return ret < 0 ? EXIT_FAILURE : 0;
}

static int command_modules(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "moddir", required_argument, NULL, 'm' },
		{ "kver", required_argument, NULL, 'k' },
		{ "out", required_argument, NULL, 'o' },
		{ "depmod", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct builder_module_options options = { 0 };
	struct builder_module_list list = { 0 };
	char err[1024] = "";
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		switch (opt) {
		case 'm':
			options.moddir = optarg;
			break;
		case 'k':
			options.kver = optarg;
			break;
		case 'o':
			options.staging = optarg;
			break;
		case 'd':
			options.depmod = optarg;
			break;
		default:
			return option_exit(opt);
		}
	}
	if (!options.moddir || !options.kver || !options.staging)
		return usage_error("modules needs --moddir, --kver and --out");
	if (optind == argc)
		return usage_error("modules needs at least one MODULE");

	ret = builder_modules_stage(&options, (const char *const *)argv + optind,
				    (size_t)(argc - optind), &list, err, sizeof(err));
	if (ret < 0)
		return command_failed(ret, err);
	for (size_t i = 0; i < list.count; i++)
		printf("%s %s\n", list.modules[i].name,
		       list.modules[i].relative_path ? list.modules[i].relative_path : "built-in");
	builder_module_list_clear(&list);
	return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
}

static int command_image(int argc, char **argv, enum builder_image_kind kind)
{
	static const struct option long_options[] = {
		{ "recipe", required_argument, NULL, 'r' },
		{ "kernel-deb", required_argument, NULL, 'D' },
		{ "kernel-tree", required_argument, NULL, 'T' },
		{ "vmlinuz", required_argument, NULL, 'V' },
		{ "modules", required_argument, NULL, 'M' },
		{ "kver", required_argument, NULL, 'k' },
		{ "igt", required_argument, NULL, 'i' },
		{ "testlist", required_argument, NULL, 't' },
		{ "sysroot", required_argument, NULL, 's' },
		{ "stub", required_argument, NULL, 'S' },
		{ "depmod", required_argument, NULL, 'd' },
		{ "manifest", required_argument, NULL, 'm' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct builder_image_options options = { 0 };
	char err[1024] = "";
	const char *recipe_path = NULL, *epoch = getenv("SOURCE_DATE_EPOCH");
	struct builder_recipe *recipe;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		switch (opt) {
		case 'r': recipe_path = optarg; break;
		case 'D': options.kernel.deb = optarg; break;
		case 'T': options.kernel.tree = optarg; break;
		case 'V': options.kernel.vmlinuz = optarg; break;
		case 'M': options.kernel.modules = optarg; break;
		case 'k': options.kernel.kver = optarg; break;
		case 'i': options.igt = optarg; break;
		case 't': options.testlist = optarg; break;
		case 's': options.sysroot = optarg; break;
		case 'S': options.stub = optarg; break;
		case 'd': options.depmod = optarg; break;
		case 'm': options.manifest = optarg; break;
		case 'o': options.out = optarg; break;
		default:
			return option_exit(opt);
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!recipe_path || !options.out)
		return usage_error("%s needs --recipe and --out", argv[0]);
	if (source_date_epoch(epoch, &options.epoch) < 0)
		return EXIT_FAILURE;
	recipe = builder_recipe_new();
	if (!recipe) {
		fputs("bootci-builder: out of memory\n", stderr);
		return EXIT_FAILURE;
	}
	ret = builder_recipe_load(recipe, recipe_path, err, sizeof(err));
	if (!ret && recipe->kind != kind) {
		bci_message(err, sizeof(err), "%s: 'image = %s' recipe given to %s", recipe_path,
			    recipe->kind == BUILDER_IMAGE_TEST ? "test" : "known-good", argv[0]);
		ret = -EINVAL;
	}
	options.recipe = recipe;
	if (!ret)
		ret = builder_image_build(&options, err, sizeof(err));
	builder_recipe_free(recipe);
	if (ret < 0)
		return command_failed(ret, err);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "initramfs"))
		return command_initramfs(argc - 1, argv + 1);
	if (!strcmp(argv[1], "spec-from-dir"))
		return command_spec_from_dir(argc - 1, argv + 1);
	if (!strcmp(argv[1], "modules"))
		return command_modules(argc - 1, argv + 1);
	if (!strcmp(argv[1], "test-image"))
		return command_image(argc - 1, argv + 1, BUILDER_IMAGE_TEST);
	if (!strcmp(argv[1], "known-good"))
		return command_image(argc - 1, argv + 1, BUILDER_IMAGE_KNOWN_GOOD);
	return usage_error("unknown command '%s'", argv[1]);
}
