// SPDX-License-Identifier: MIT
/*
 * The results command (results.h), of bootci-results and of
 * `bootci-aggregator results`. DIR [-o OUT]: writes the results.json
 * (piglit format, as igt_runner makes it) of the results directory DIR to OUT,
 * or to standard output. OUT is replaced atomically: on any error the old OUT
 * (if any) stays and no temporary is left behind.
 */
#include "results.h"

#include "fsutil.h"
#include "resultgen/resultgen.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes to a temporary beside @path and renames it over @path only when complete. */
static int results_stream(FILE *out, const void *dir, char *err, size_t err_size)
{
	return bci_resultgen_write(dir, out, err, err_size);
}

static int results_to_file(const char *dir, const char *path, char *err, size_t err_size)
{
	return bci_atomic_write_stream(path, 0644, results_stream, dir, err, err_size);
}

int bci_results_command(const char *prog, int argc, char **argv, int (*usage_exit)(int opt))
{
	static const struct option options[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out_path = NULL;
	char err[PATH_MAX + 1024] = "";
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out_path = optarg;
			break;
		default:
			return usage_exit(opt);
		}
	}
	if (optind != argc - 1)
		return usage_exit('?');
	if (out_path)
		ret = results_to_file(argv[optind], out_path, err, sizeof(err));
	else
		ret = bci_resultgen_write(argv[optind], stdout, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", prog, err[0] ? err : strerror(-ret));
		return 1;
	}
	return 0;
}

