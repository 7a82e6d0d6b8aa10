// SPDX-License-Identifier: MIT
/*
 * bootci-results DIR [-o OUT]: the results generator alone, as igt_results is
 * beside igt_runner: `bootci-aggregator results` (the same code, results.c) in
 * a static binary that links nothing but libc. It runs on any machine without
 * the master's libraries, and starts without the dynamic loader mapping them.
 */
#include "results.h"

#include <stdio.h>

static int usage_exit(int opt)
{
	FILE *out = opt == 'h' ? stdout : stderr;

	fprintf(out, "usage: bootci-results DIR [-o OUT]\n"
		     "  write the results.json of the results directory DIR (igt_runner layout)\n"
		     "  to OUT (replaced atomically) or to standard output\n");
	return opt == 'h' ? 0 : 2;
}

int main(int argc, char **argv)
{
	return bci_results_command("bootci-results", argc, argv, usage_exit);
}
