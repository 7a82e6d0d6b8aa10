// SPDX-License-Identifier: MIT
/*
 * bootci-executor: PID 1 of the test initramfs. As PID 1 it never returns:
 * every path ends in flush, sync and reboot (or power-off). With --root DIR it
 * runs as an ordinary process against a tree, system calls only printed.
 */
#include "executor.h"

#include "config.h"
#include "executor_keys.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bootci-executor                  (as PID 1 of the test initramfs)\n"
		"       bootci-executor --root DIR       (on a tree, system calls printed, not made)\n"
		"       bootci-executor --help-config    (the configuration keys)\n");
}

static void print_config_help(void)
{
	for (const struct bci_config_key *k = bci_executor_keys; k->name; k++)
		printf("%-18s %s (default: '%s')%s%s\n", k->name, k->help, k->default_value,
		       k->choices ? "; one of " : "", k->choices ? k->choices : "");
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "help-config", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct bci_executor ex = { .root = "", .sys = &bci_sys_real, .signal_fd = -1 };
	bool init = getpid() == 1;
	enum bci_ending ending;

	/* The kernel hands init the command line words it does not know: ignore them. */
	if (!init) {
		int opt;
		while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
			switch (opt) {
			case 'r':
				ex.root = optarg;
				ex.sys = &bci_sys_dry;
				break;
			case 'h':
				usage(stdout);
				return 0;
			case 'c':
				print_config_help();
				return 0;
			default:
				usage(stderr);
				return 2;
			}
		}
		if (optind != argc || ex.sys != &bci_sys_dry) {
			usage(stderr);
			fprintf(stderr, "bootci-executor: not PID 1: give --root DIR\n");
			return 2;
		}
		if (strcmp(ex.root, "/") == 0 || ex.root[0] == '\0') {
			fprintf(stderr, "bootci-executor: --root must name a tree other than /\n");
			return 2;
		}
	}

	if (bci_signals_setup(&ex) < 0)
		bci_error("cannot set up signal handling; going on without it");
	ending = bci_executor_boot(&ex);
	ending = bci_executor_end(&ex, ending);
	if (!init)
		return 0;

	/* reboot(2) failed: keep asking, never return (init exiting panics the kernel). */
	for (;;) {
		nanosleep(&(struct timespec){ 1, 0 }, NULL);
		ex.sys->sync();
		ex.sys->reboot(ending == BCI_END_POWEROFF ? RB_POWER_OFF : RB_AUTOBOOT);
	}
}
