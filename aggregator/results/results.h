/* SPDX-License-Identifier: MIT */
/*
 * The results command, of both programs: bootci-results (main.c) and
 * `bootci-aggregator results`.
 */
#ifndef BCI_RESULTS_COMMAND_H
#define BCI_RESULTS_COMMAND_H

/*
 * DIR [-o OUT]: the results.json of the results directory DIR. @prog names
 * the program in errors; @usage_exit(opt) prints the usage for getopt's
 * @opt ('h': on stdout, 0; anything else: on stderr, 2) and returns the
 * exit status.
 */
int bci_results_command(const char *prog, int argc, char **argv, int (*usage_exit)(int opt));

#endif
