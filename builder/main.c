// SPDX-License-Identifier: MIT
/* bootci-builder: command line over the builder library; see usage() for the commands. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builder_error.h"
#include "cpio_spec.h"
#include "cpio_writer.h"
#include "fsutil.h"
#include "module_stage.h"
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
	      "      depmod there, and prints one line per module: NAME PATH or NAME built-in.\n",
	      out);
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

static int command_initramfs(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "compress", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct builder_cpio_options options = { .compression = BUILDER_COMPRESS_ZSTD };
	struct builder_error err = { "" };
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	struct builder_spec *spec;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (builder_compression_parse(optarg, &options.compression) < 0)
				return usage_error("unknown compression '%s'", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind < 2)
		return usage_error("initramfs needs SPEC... OUT");
	if (builder_epoch_parse(epoch, &options.mtime) < 0) {
		fprintf(stderr, "bootci-builder: SOURCE_DATE_EPOCH='%s' is not a number of seconds\n", epoch);
		return EXIT_FAILURE;
	}

	spec = builder_spec_new();
	if (!spec) {
		fputs("bootci-builder: out of memory\n", stderr);
		return EXIT_FAILURE;
	}
	ret = 0;
	for (int i = optind; i < argc - 1 && !ret; i++)
		ret = builder_spec_parse_file(spec, argv[i], &err);
	if (!ret)
		ret = builder_spec_finalize(spec, &err);
	if (!ret)
		ret = builder_cpio_write_file(spec, argv[argc - 1], &options, &err);
	builder_spec_free(spec);
	if (ret < 0) {
		fprintf(stderr, "%s\n", err.msg[0] ? err.msg : strerror(-ret));
		return EXIT_FAILURE;
	}
	return 0;
}

static int command_spec_from_dir(int argc, char **argv)
{
	struct builder_error err = { "" };
	char *text;
	size_t len;
	int ret;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 3 || argc > 4)
		return usage_error("spec-from-dir needs DIR DEST [OUT]");
	ret = builder_spec_from_dir(argv[1], argv[2], &text, &len, &err);
	if (ret < 0) {
		fprintf(stderr, "bootci-builder: %s\n", err.msg[0] ? err.msg : strerror(-ret));
		return EXIT_FAILURE;
	}
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
	struct builder_error err = { "" };
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
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!options.moddir || !options.kver || !options.staging)
		return usage_error("modules needs --moddir, --kver and --out");
	if (optind == argc)
		return usage_error("modules needs at least one MODULE");

	ret = builder_modules_stage(&options, (const char *const *)argv + optind,
				    (size_t)(argc - optind), &list, &err);
	if (ret < 0) {
		fprintf(stderr, "bootci-builder: %s\n", err.msg[0] ? err.msg : strerror(-ret));
		return EXIT_FAILURE;
	}
	for (size_t i = 0; i < list.count; i++)
		printf("%s %s\n", list.modules[i].name,
		       list.modules[i].relative_path ? list.modules[i].relative_path : "built-in");
	builder_module_list_clear(&list);
	return fflush(stdout) == 0 ? 0 : EXIT_FAILURE;
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
	return usage_error("unknown command '%s'", argv[1]);
}
