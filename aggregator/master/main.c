// SPDX-License-Identifier: MIT
/*
 * bootci-aggregator: the CI master. main() only dispatches to the command;
 * each lives in its own folder (commands.h), their usage in command.c.
 */
#include "command.h"
#include "commands.h"

#include "../results/results.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>

static int cmd_results(int argc, char **argv)
{
	return bci_results_command("bootci-aggregator", argc, argv, bci_command_usage_exit);
}

/* The commands, as bci_command_usage() lists them (command.c). */
static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "results", cmd_results },
	{ "ingest", bci_cmd_ingest },
	{ "build", bci_cmd_build },
	{ "machine", bci_cmd_machine },
	{ "report", bci_cmd_report },
	{ "metrics", bci_cmd_metrics },
	{ "export", bci_cmd_export },
	{ "publish", bci_cmd_publish },
	{ "schedule", bci_cmd_schedule },
	{ "mail", bci_cmd_mail },
	{ "patchwork", bci_cmd_patchwork },
	{ "bisect", bci_cmd_bisect },
	{ "serve", bci_cmd_serve },
};

int main(int argc, char **argv)
{
	/*
	 * Ingest allocates and frees a run's worth of small blocks at a time:
	 * glibc's default of giving the top of the heap back as soon as 128 KiB
	 * are free would fault the same pages in again for every run. Keep up to
	 * 64 MiB free and grow by 16 MiB; blocks up to 32 MiB (a run's file lists)
	 * come from the heap too, not from mmap, which would map and unmap them
	 * page by page for every run. These follow from the program's own
	 * allocation pattern, not from a machine: they are not deployment settings.
	 */
	mallopt(M_TOP_PAD, 16 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	if (argc < 2) {
		bci_command_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		bci_command_usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		bci_command_usage_select(commands[i].name);
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "bootci-aggregator: unknown command '%s'\n", argv[1]);
	bci_command_usage(stderr);
	return 2;
}
