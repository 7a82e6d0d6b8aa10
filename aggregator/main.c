// SPDX-License-Identifier: MIT
/*
 * bootci-aggregator: the host side of bootci. main() only dispatches to the
 * subcommand; each lives in its own module (commands.h).
 */
#include "commands.h"

#include <limits.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

static int cmd_results(int argc, char **argv)
{
	return bci_results_command("bootci-aggregator", argc, argv, bci_aggregator_usage_exit);
}

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
	bool huge_pages;	/* worth malloc's huge pages (huge_pages_exec) */
};

static const struct command commands[] = {
	{ "results", cmd_results,
	  "results DIR [-o OUT]\n"
	  "      write the results.json of the results directory DIR (igt_runner layout)\n"
	  "      to OUT (replaced atomically), or to standard output\n",
	  false },
	{ "ingest", bci_cmd_ingest,
	  "ingest [--store URL] [--data DIR] [--machine NAME] [--run-id ID] [--build NAME]\n"
	  "       [--jobs N|auto] DIR|ARCHIVE...\n"
	  "      store runs (results directories, or tar[.zst] run archives with their\n"
	  "      manifest.json) in the store: URL sqlite:PATH (default DATA/bootci.sqlite),\n"
	  "      postgresql://... or a libpq conninfo; DIR's archive is kept in DATA\n"
	  "      (default $BOOTCI_DATA, else /var/lib/bootci); the same run twice adds nothing;\n"
	  "      N runs at a time (default 1; auto: serve's default --workers), as serve's\n"
	  "      workers; --run-id only with one run\n",
	  true },
	{ "build", bci_cmd_build,
	  "build add NAME --tree TREE --commit SHA --tier fast|full [--base BUILD]\n"
	  "      [--series-title TITLE] [--message-id ID] [--registered UNIX] | build show NAME\n"
	  "      register a build (or change it) that runs name with `ingest --build`\n",
	  false },
	{ "machine", bci_cmd_machine,
	  "machine tag|untag NAME TAG... | machine tags NAME\n"
	  "      a machine's tags (platform, shard group) that known-issue filters name\n",
	  false },
	{ "report", bci_cmd_report,
	  "report --build NAME [--store URL] [--data DIR] [--filters FILE] [--window N]\n"
	  "       [--mbox FILE|-] [--send --to ADDR] [--from ADDR] [--url BASE] [--fold N]\n"
	  "       [--date UNIX] [--html DIR [--results-url SERVE_URL]]\n"
	  "      compare the build with its baseline (the last N runs, default 5, of its\n"
	  "      base tree) through DATA/known-issues.txt; write the reply to the series\n"
	  "      as an mbox message, and with --send pipe it to `sendmail -t`; --html writes\n"
	  "      the test matrix DIR/NAME/index.html and a page per result, or with\n"
	  "      --results-url links each cell to serve's page of the result instead\n",
	  true },
	{ "metrics", bci_cmd_metrics,
	  "metrics [--from UNIX] [--to UNIX] [--store URL] [--data DIR] [--window N] [--html FILE]\n"
	  "      the CI's metrics for [from, to) (default: the last 7 days): build latency\n"
	  "      to first result and complete report against the fast (30 min) and full\n"
	  "      (6 h) objectives, machine busy time, tests per day, regressions found;\n"
	  "      JSON on stdout, or the page serve shows at /metrics written to FILE\n",
	  false },
	{ "export", bci_cmd_export,
	  "export kcidb --build NAME [--origin NAME] [-o OUT] |\n"
	  "       export junit --machine NAME --run-id ID [-o OUT]   [--store URL] [--data DIR]\n"
	  "      a build as KCIDB I/O v4.2 JSON, a run as JUnit XML (OUT replaced atomically)\n",
	  false },
	{ "collect", bci_cmd_collect,
	  "collect [--results DIR] [--master URL] [--keep N] [--deadline D] [OPTIONS]\n"
	  "      upload every finished run on the results partition to the master\n"
	  "      (the known-good image's job; `collect --help` lists every setting)\n",
	  false },
	{ "publish", bci_cmd_publish,
	  "publish --build NAME --tree T --commit C --tier fast|full [--base NAME]\n"
	  "        [--series-title TITLE --message-id ID] [--manifest FILE]\n"
	  "        (--master URL --token-file F | [--data DIR] [--store URL]) IMAGE_DIR\n"
	  "      send bootci-builder's test image to the master (or, on the master, into\n"
	  "      DATA): verified against its manifest, kept in DATA/builds, registered,\n"
	  "      its fast tier queued\n"
	  "publish --known-good VERSION [--manifest FILE]\n"
	  "        (--master URL --token-file F | [--data DIR] [--store URL]) IMAGE_DIR\n"
	  "      the known-good disk image (disk.img ...) as VERSION, the same way\n",
	  false },
	{ "schedule", bci_cmd_schedule,
	  "schedule machines | schedule jobs [BUILD] | schedule return MACHINE\n"
	  "         | schedule redeploy MACHINE\n"
	  "         [--data DIR] [--store URL]\n"
	  "      the lab's machines (state, power cycles, why one is out) and jobs, from\n"
	  "      DATA/machines.conf and the store; return puts a machine taken out back\n",
	  false },
	{ "serve", bci_cmd_serve,
	  "serve --data DIR [--listen ADDR:PORT] [--tokens FILE] [--cert F --key F] [--store URL] ...\n"
	  "      the CI master's upload server (serve --help, README.md)\n",
	  true },
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

/* glibc's tunable (2.35 on) that has malloc ask the kernel for huge pages (MADV_HUGEPAGE). */
#define HUGETLB_TUNABLE "glibc.malloc.hugetlb"

/* The kernel gives transparent huge pages to memory that asks for them (not to all, nor none). */
static bool huge_pages_on_request(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
	char mode[256];
	bool on_request = f && fgets(mode, sizeof(mode), f) && strstr(mode, "[madvise]");

	if (f)
		fclose(f);
	return on_request;
}

/* Set for the program executed again (and removed by it): it is not executed a third time. */
#define HUGE_PAGES_MARK "BOOTCI_HUGE_PAGES_EXEC"

/*
 * The program again, with malloc asking for transparent huge pages: glibc
 * reads its tunables only as a program starts, so a command that benefits
 * executes itself once more with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (added
 * to any tunables already set). Under a virtual machine's nested paging,
 * every 4 KiB page first touched and every TLB miss is dear: 2 MiB pages made
 * an ingest of 40 runs of 10k results 7% cheaper in CPU and the report of
 * them a quarter (`make bench`). Nothing happens when the tunable is set
 * already (a user's choice), when the kernel gives huge pages to all memory
 * or to none, in a privileged process (glibc drops the tunable there), under
 * valgrind (whose /proc/self/exe is its own), or when the program's file
 * cannot be executed: the same program goes on with small pages. The file is
 * executed by its path, so that the process keeps its name (ps, pgrep).
 */
static void huge_pages_exec(char **argv)
{
	const char *tunables = getenv("GLIBC_TUNABLES"), *preload = getenv("LD_PRELOAD");
	char *before = NULL, value[4096], self[PATH_MAX];
	ssize_t len;
	int n;

	if (getenv(HUGE_PAGES_MARK)) {
		unsetenv(HUGE_PAGES_MARK);
		return;
	}
	if ((tunables && strstr(tunables, HUGETLB_TUNABLE)) || getauxval(AT_SECURE) ||
	    (preload && strstr(preload, "vgpreload")) || !huge_pages_on_request())
		return;
	len = readlink("/proc/self/exe", self, sizeof(self));
	if (len <= 0 || (size_t)len >= sizeof(self))
		return;
	self[len] = '\0';
	if (self[0] != '/' || strstr(self, " (deleted)"))
		return;
	if (tunables && !(before = strdup(tunables)))
		return;
	n = snprintf(value, sizeof(value), "%s%s" HUGETLB_TUNABLE "=1", before ? before : "",
		     before && *before ? ":" : "");
	if (n > 0 && (size_t)n < sizeof(value) && setenv("GLIBC_TUNABLES", value, 1) == 0 &&
	    setenv(HUGE_PAGES_MARK, "1", 1) == 0)
		execv(self, argv);
	/* Still here: the environment as it was. */
	unsetenv(HUGE_PAGES_MARK);
	if (before)
		setenv("GLIBC_TUNABLES", before, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	free(before);
}

int main(int argc, char **argv)
{
	/*
	 * An ingest allocates and frees a run's worth of small blocks; glibc's
	 * default of giving the top of the heap back as soon as 128 KiB is free
	 * (and faulting it in again) was a seventh of an ingest's CPU. Keep up to
	 * 64 MiB free, grow by 16 MiB (2 MiB more peak memory per ingest).
	 * Blocks up to 32 MiB (a run's lists of 40k files) come from the heap
	 * too, not from mmap: each one mapped is faulted in page by page, and
	 * unmapped when freed (with `ingest --jobs`, at every run again).
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
		if (commands[i].huge_pages)
			huge_pages_exec(argv);
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "bootci-aggregator: unknown command '%s'\n", argv[1]);
	bci_aggregator_usage(stderr);
	return 2;
}
