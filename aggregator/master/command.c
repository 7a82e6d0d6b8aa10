// SPDX-License-Identifier: MIT
/* What every command shares (command.h): the usage, the store prologue. */
#include "command.h"

#include "store/store.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Each command's usage, in the order `bootci-aggregator --help` lists them. */
static const struct usage {
	const char *command, *text;
} usages[] = {
	{ "results",
	  "results DIR [-o OUT]\n"
	  "      write the results.json of the results directory DIR (igt_runner layout)\n"
	  "      to OUT (replaced atomically), or to standard output\n" },
	{ "ingest",
	  "ingest [--store URL] [--data DIR] [--machine NAME] [--run-id ID] [--build NAME]\n"
	  "       [--jobs N|auto] DIR|ARCHIVE...\n"
	  "      store runs (results directories, or tar[.zst] run archives with their\n"
	  "      manifest.json) in the store: URL sqlite:PATH (default DATA/bootci.sqlite),\n"
	  "      postgresql://... or a libpq conninfo; DIR's archive is kept in DATA\n"
	  "      (default $BOOTCI_DATA, else /var/lib/bootci); the same run twice adds nothing;\n"
	  "      N runs at a time (default 1; auto: serve's default --workers), as serve's\n"
	  "      workers; --run-id only with one run\n" },
	{ "build",
	  "build add NAME --tree TREE --commit SHA --tier fast|full [--base BUILD]\n"
	  "      [--series-title TITLE] [--message-id ID] [--registered UNIX] | build show NAME\n"
	  "      register a build (or change it) that runs name with `ingest --build`\n" },
	{ "machine",
	  "machine tag|untag NAME TAG... | machine tags NAME | machine group NAME [GROUP] |\n"
	  "        machine ungroup NAME | machine refused [NAME] [--json]\n"
	  "      a machine's tags (platform) that known-issue filters name; its shard group,\n"
	  "      whose machines' runs the report's baseline counts together; the uploads serve\n"
	  "      refused\n" },
	{ "report",
	  "report --build NAME [--store URL] [--data DIR] [--filters FILE] [--window N]\n"
	  "       [--mbox FILE|-] [--send --to ADDR] [--from ADDR] [--url BASE] [--fold N]\n"
	  "       [--date UNIX] [--html DIR [--results-url SERVE_URL]]\n"
	  "      compare the build with its baseline (the last N runs, default 5, of its\n"
	  "      base tree) through DATA/known-issues.txt; write the reply to the series\n"
	  "      as an mbox message (each test once, its machines beneath; --url: serve's\n"
	  "      address, linked), and with --send pipe it to `sendmail -t`; --html writes\n"
	  "      the test matrix DIR/NAME/index.html and a page per result, or with\n"
	  "      --results-url links each cell to serve's page of the result instead\n" },
	{ "metrics",
	  "metrics [--from UNIX] [--to UNIX] [--store URL] [--data DIR] [--window N] [--html FILE]\n"
	  "      the CI's metrics for [from, to) (default: the last 7 days): build latency\n"
	  "      to first result and complete report against the fast (30 min) and full\n"
	  "      (6 h) objectives, machine busy time, tests per day, regressions found;\n"
	  "      JSON on stdout, or the page serve shows at /metrics written to FILE\n" },
	{ "export",
	  "export kcidb --build NAME [--origin NAME] [-o OUT] |\n"
	  "       export junit --machine NAME --run-id ID [-o OUT]   [--url BASE] [--store URL]\n"
	  "       [--data DIR]\n"
	  "      a build as KCIDB I/O v4.2 JSON, a run as JUnit XML (OUT replaced atomically);\n"
	  "      --url: serve's address, each result linked to its page there\n" },
	{ "publish",
	  "publish --build NAME --tree T --commit C --tier fast|full [--base NAME]\n"
	  "        [--series-title TITLE --message-id ID] [--manifest FILE]\n"
	  "        (--master URL --token-file F | [--data DIR] [--store URL]) IMAGE_DIR\n"
	  "      send bootci-builder's test image to the master (or, on the master, into\n"
	  "      DATA): verified against its manifest, kept in DATA/builds, registered,\n"
	  "      its fast tier queued\n"
	  "  publish --known-good VERSION [--manifest FILE]\n"
	  "        (--master URL --token-file F | [--data DIR] [--store URL]) IMAGE_DIR\n"
	  "      the known-good disk image (disk.img ...) as VERSION, the same way\n" },
	{ "schedule",
	  "schedule machines | schedule jobs [BUILD] | schedule confirm BUILD\n"
	  "         | schedule return MACHINE\n"
	  "         | schedule redeploy MACHINE | schedule power MACHINE on|off|cycle|status\n"
	  "         [--data DIR] [--store URL]\n"
	  "      the lab's machines (state, power cycles, why one is out) and jobs, from\n"
	  "      DATA/machines.conf and the store; return puts a machine taken out back\n"
	  "      (and powers it on); power runs its power driver by hand; confirm queues\n"
	  "      the reruns of a build's possible new issues\n" },
	{ "mail",
	  "mail queue --build NAME [--to ADDR]... [--url BASE] [--filters FILE] [--window N]\n"
	  "     | mail queue --message FILE [--build NAME] | mail send | mail list\n"
	  "     | mail show MESSAGE-ID   [--data DIR] [--store URL]\n"
	  "      the outbox of the replies the master sends by SMTP (DATA/mail.conf): queue\n"
	  "      a build's reply (as report --mbox writes it) or a message once, send what is\n"
	  "      due (serve does it every interval), list the outbox, print one message\n" },
	{ "patchwork",
	  "patchwork poll | patchwork series | patchwork check SERIES CONTEXT STATE\n"
	  "          [--description TEXT] [--url URL]   [--project NAME] [--data DIR] [--store URL]\n"
	  "      the Patchwork projects of DATA/patchwork.conf: one poll (new complete series\n"
	  "      picked up, their mbox kept, pending checks posted), the series settled, or a\n"
	  "      check (pending|success|warning|fail) on every patch of a series, posted once\n" },
	{ "bisect",
	  "bisect list | bisect show BUILD | bisect start BUILD | bisect stop BUILD\n"
	  "       [--data DIR] [--store URL]\n"
	  "      the bisections of series' possible new issues to their first bad patch\n"
	  "      (serve runs them): list them, show one's steps and answer, start or stop one\n" },
	{ "serve",
	  "serve --data DIR [--listen ADDR:PORT] [--tokens FILE] [--cert F --key F] [--store URL] ...\n"
	  "      the CI master's upload server (serve --help, bootci-aggregator-serve(1))\n" },
};

/* The command main() runs (bci_command_usage_select()): its usage alone is printed. */
static const struct usage *selected;

void bci_command_usage(FILE *out)
{
	fprintf(out, "usage: bootci-aggregator COMMAND [ARGS]\n");
	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++)
		fprintf(out, "  %s", usages[i].text);
	fprintf(out, "COMMAND --help: that command's usage. See bootci-aggregator(1).\n");
}

void bci_command_usage_select(const char *command)
{
	selected = NULL;
	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++)
		if (!strcmp(usages[i].command, command))
			selected = &usages[i];
}

int bci_command_usage_exit(int opt)
{
	FILE *out = opt == 'h' ? stdout : stderr;

	if (selected)
		fprintf(out, "usage: bootci-aggregator %sSee bootci-aggregator-%s(1).\n",
			selected->text, selected->command);
	else
		bci_command_usage(out);
	return opt == 'h' ? 0 : 2;
}

void bci_command_store_init(struct bci_command_store *cs, const char *command)
{
	*cs = (struct bci_command_store){
		.command = command, .url = getenv("BOOTCI_STORE"), .data_dir = getenv("BOOTCI_DATA"),
	};
}

bool bci_command_store_option(struct bci_command_store *cs, int opt, const char *arg)
{
	if (opt == 's')
		cs->url = arg;
	else if (opt == 'd')
		cs->data_dir = arg;
	else
		return false;
	return true;
}

const char *bci_command_data_dir(const struct bci_command_store *cs)
{
	return cs->data_dir && *cs->data_dir ? cs->data_dir : BCI_COMMAND_DEFAULT_DATA;
}

int bci_command_store_open(const struct bci_command_store *cs, struct bci_store **store)
{
	char err[PATH_MAX + 1024] = "";

	if (bci_store_open(cs->url, bci_command_data_dir(cs), store, err, sizeof(err)) < 0) {
		fprintf(stderr, "bootci-aggregator %s: store: %s\n", cs->command, err);
		return 1;
	}
	return 0;
}
