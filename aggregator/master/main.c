// SPDX-License-Identifier: MIT
/*
 * bootci-aggregator: the CI master. main() only dispatches to the command;
 * each lives in its own folder (commands.h).
 */
#include "commands.h"

#include "../results/results.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>

static int cmd_results(int argc, char **argv)
{
	return bci_results_command("bootci-aggregator", argc, argv, bci_aggregator_usage_exit);
}

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
};

static const struct command commands[] = {
	{ "results", cmd_results,
	  "results DIR [-o OUT]\n"
	  "      write the results.json of the results directory DIR (igt_runner layout)\n"
	  "      to OUT (replaced atomically), or to standard output\n" },
	{ "ingest", bci_cmd_ingest,
	  "ingest [--store URL] [--data DIR] [--machine NAME] [--run-id ID] [--build NAME]\n"
	  "       [--jobs N|auto] DIR|ARCHIVE...\n"
	  "      store runs (results directories, or tar[.zst] run archives with their\n"
	  "      manifest.json) in the store: URL sqlite:PATH (default DATA/bootci.sqlite),\n"
	  "      postgresql://... or a libpq conninfo; DIR's archive is kept in DATA\n"
	  "      (default $BOOTCI_DATA, else /var/lib/bootci); the same run twice adds nothing;\n"
	  "      N runs at a time (default 1; auto: serve's default --workers), as serve's\n"
	  "      workers; --run-id only with one run\n" },
	{ "build", bci_cmd_build,
	  "build add NAME --tree TREE --commit SHA --tier fast|full [--base BUILD]\n"
	  "      [--series-title TITLE] [--message-id ID] [--registered UNIX] | build show NAME\n"
	  "      register a build (or change it) that runs name with `ingest --build`\n" },
	{ "machine", bci_cmd_machine,
	  "machine tag|untag NAME TAG... | machine tags NAME\n"
	  "      a machine's tags (platform, shard group) that known-issue filters name\n" },
	{ "report", bci_cmd_report,
	  "report --build NAME [--store URL] [--data DIR] [--filters FILE] [--window N]\n"
	  "       [--mbox FILE|-] [--send --to ADDR] [--from ADDR] [--url BASE] [--fold N]\n"
	  "       [--date UNIX] [--html DIR [--results-url SERVE_URL]]\n"
	  "      compare the build with its baseline (the last N runs, default 5, of its\n"
	  "      base tree) through DATA/known-issues.txt; write the reply to the series\n"
	  "      as an mbox message, and with --send pipe it to `sendmail -t`; --html writes\n"
	  "      the test matrix DIR/NAME/index.html and a page per result, or with\n"
	  "      --results-url links each cell to serve's page of the result instead\n" },
	{ "metrics", bci_cmd_metrics,
	  "metrics [--from UNIX] [--to UNIX] [--store URL] [--data DIR] [--window N] [--html FILE]\n"
	  "      the CI's metrics for [from, to) (default: the last 7 days): build latency\n"
	  "      to first result and complete report against the fast (30 min) and full\n"
	  "      (6 h) objectives, machine busy time, tests per day, regressions found;\n"
	  "      JSON on stdout, or the page serve shows at /metrics written to FILE\n" },
	{ "export", bci_cmd_export,
	  "export kcidb --build NAME [--origin NAME] [-o OUT] |\n"
	  "       export junit --machine NAME --run-id ID [-o OUT]   [--store URL] [--data DIR]\n"
	  "      a build as KCIDB I/O v4.2 JSON, a run as JUnit XML (OUT replaced atomically)\n" },
	{ "publish", bci_cmd_publish,
	  "publish --build NAME --tree T --commit C --tier fast|full [--base NAME]\n"
	  "        [--series-title TITLE --message-id ID] [--manifest FILE]\n"
	  "        (--master URL --token-file F | [--data DIR] [--store URL]) IMAGE_DIR\n"
	  "      send bootci-builder's test image to the master (or, on the master, into\n"
	  "      DATA): verified against its manifest, kept in DATA/builds, registered,\n"
	  "      its fast tier queued\n"
	  "publish --known-good VERSION [--manifest FILE]\n"
	  "        (--master URL --token-file F | [--data DIR] [--store URL]) IMAGE_DIR\n"
	  "      the known-good disk image (disk.img ...) as VERSION, the same way\n" },
	{ "schedule", bci_cmd_schedule,
	  "schedule machines | schedule jobs [BUILD] | schedule return MACHINE\n"
	  "         | schedule redeploy MACHINE\n"
	  "         [--data DIR] [--store URL]\n"
	  "      the lab's machines (state, power cycles, why one is out) and jobs, from\n"
	  "      DATA/machines.conf and the store; return puts a machine taken out back\n" },
	{ "serve", bci_cmd_serve,
	  "serve --data DIR [--listen ADDR:PORT] [--tokens FILE] [--cert F --key F] [--store URL] ...\n"
	  "      the CI master's upload server (serve --help, README.md)\n" },
};

void bci_aggregator_usage(FILE *out)
{
	fprintf(out, "usage: bootci-aggregator COMMAND [ARGS]\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %s", commands[i].usage);
}

int bci_aggregator_usage_exit(int opt)
{
	bci_aggregator_usage(opt == 'h' ? stdout : stderr);
	return opt == 'h' ? 0 : 2;
}

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
		bci_aggregator_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		bci_aggregator_usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "bootci-aggregator: unknown command '%s'\n", argv[1]);
	bci_aggregator_usage(stderr);
	return 2;
}
