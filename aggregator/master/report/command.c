// SPDX-License-Identifier: MIT
/*
 * The CI master's commands around reports:
 *
 *   build add NAME --tree T --commit C --tier fast|full [--base B]
 *             [--series-title TITLE] [--message-id ID] [--registered UNIX]
 *   build show NAME
 *   machine tag|untag NAME TAG...    machine tags NAME
 *   report --build NAME [--mbox FILE] [--send] ...
 *
 * Runs are attached to a build when they are ingested (`ingest --build`).
 */
#include "../command.h"
#include "../commands.h"
#include "../names.h"
#include "fsutil.h"
#include "report.h"
#include "../store/store.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- build ---- */

static int build_print(const struct bci_store_build *b, void *ctx)
{
	(void)ctx;
	printf("name %s\ntree %s\ncommit %s\ntier %s\n", b->name, b->tree, b->commit, b->tier);
	if (b->base)
		printf("base %s\n", b->base);
	if (b->series_title)
		printf("series-title %s\n", b->series_title);
	if (b->message_id)
		printf("message-id %s\n", b->message_id);
	printf("registered %.0f\n", b->registered);
	return 0;
}

int bci_cmd_build(int argc, char **argv)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "tree", required_argument, NULL, 't' },
		{ "commit", required_argument, NULL, 'c' },
		{ "tier", required_argument, NULL, 'T' },
		{ "base", required_argument, NULL, 'b' },
		{ "series-title", required_argument, NULL, 'S' },
		{ "message-id", required_argument, NULL, 'M' },
		{ "registered", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bci_store_build build = { 0 };
	struct bci_command_store cs;
	struct bci_store *store;
	char err[PATH_MAX + 1024] = "", *end;
	int opt, ret;

	bci_command_store_init(&cs, "build");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:t:c:T:b:S:M:r:h", options, NULL)) != -1) {
		if (bci_command_store_option(&cs, opt, optarg))
			continue;
		switch (opt) {
		case 't': build.tree = optarg; break;
		case 'c': build.commit = optarg; break;
		case 'T': build.tier = optarg; break;
		case 'b': build.base = optarg; break;
		case 'S': build.series_title = optarg; break;
		case 'M': build.message_id = optarg; break;
		case 'r':
			build.registered = strtod(optarg, &end);
			if (end == optarg || *end || build.registered <= 0) {
				fprintf(stderr, "bootci-aggregator build: --registered '%s': not a Unix time\n",
					optarg);
				return 2;
			}
			break;
		default:
			return bci_command_usage_exit(opt);
		}
	}
	if (optind + 2 != argc || (strcmp(argv[optind], "add") && strcmp(argv[optind], "show")))
		return bci_command_usage_exit('?');
	build.name = argv[optind + 1];
	if (!strcmp(argv[optind], "add") && (!build.tree || !build.commit || !build.tier)) {
		fprintf(stderr, "bootci-aggregator build add: --tree, --commit and --tier are required\n");
		return 2;
	}
	if (!strcmp(argv[optind], "add") && !bci_name_build_ok(build.name)) {
		fprintf(stderr, "bootci-aggregator build add: '%s' is not a build name (no '/', no"
			" control character, not . or ..)\n", build.name);
		return 2;
	}
	if (bci_command_store_open(&cs, &store))
		return 1;
	if (!strcmp(argv[optind], "show"))
		ret = bci_store_build_get(store, build.name, build_print, NULL, err, sizeof(err));
	else
		ret = bci_store_build_put(store, &build, err, sizeof(err));
	bci_store_close(store);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator build: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	return 0;
}

/* ---- machine ---- */

static int tag_print(const char *tag, void *ctx)
{
	(void)ctx;
	printf("%s\n", tag);
	return 0;
}

int bci_cmd_machine(int argc, char **argv)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bci_command_store cs;
	struct bci_store *store;
	char err[PATH_MAX + 1024] = "";
	const char *verb, *machine;
	int opt, ret = 0;

	bci_command_store_init(&cs, "machine");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:h", options, NULL)) != -1)
		if (!bci_command_store_option(&cs, opt, optarg))
			return bci_command_usage_exit(opt);
	if (argc - optind < 2)
		return bci_command_usage_exit('?');
	verb = argv[optind];
	machine = argv[optind + 1];
	if ((strcmp(verb, "tag") && strcmp(verb, "untag") && strcmp(verb, "tags")) ||
	    (!strcmp(verb, "tags") ? argc - optind != 2 : argc - optind < 3))
		return bci_command_usage_exit('?');
	if (bci_command_store_open(&cs, &store))
		return 1;
	if (!strcmp(verb, "tags")) {
		ret = bci_store_machine_tags(store, machine, tag_print, NULL, err, sizeof(err));
	} else {
		ret = bci_store_begin(store, err, sizeof(err));
		for (int i = optind + 2; i < argc && ret >= 0; i++)
			ret = verb[0] == 't' ?
				bci_store_machine_tag(store, machine, argv[i], err, sizeof(err)) :
				bci_store_machine_untag(store, machine, argv[i], err, sizeof(err));
		if (ret >= 0)
			ret = bci_store_commit(store, err, sizeof(err));
		else
			bci_store_rollback(store);
	}
	bci_store_close(store);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator machine: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	return 0;
}

/* ---- report ---- */

/* Pipes the file @path to `sendmail -t` (found in PATH), which takes the recipients from its headers. */
static int mail_send(const char *path)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		if (!freopen(path, "r", stdin))
			_exit(126);
		execlp("sendmail", "sendmail", "-t", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return -ENOENT;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

struct report_args {
	struct bci_command_store store;
	const char *build, *filters, *mbox, *from, *to, *matrix_url, *html;
	const char *results_url;
	int window, fold_after, send;
	time_t date;
};

static int number_parse(const char *s, long min, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return end == s || *end || errno || *out < min ? -EINVAL : 0;
}

static int report_args_parse(int argc, char **argv, struct report_args *a)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "build", required_argument, NULL, 'b' },
		{ "filters", required_argument, NULL, 'f' },
		{ "window", required_argument, NULL, 'w' },
		{ "mbox", required_argument, NULL, 'o' },
		{ "send", no_argument, NULL, 'S' },
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 't' },
		{ "url", required_argument, NULL, 'u' },
		{ "fold", required_argument, NULL, 'n' },
		{ "date", required_argument, NULL, 'D' },
		{ "html", required_argument, NULL, 'H' },
		{ "results-url", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long n;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:b:f:w:o:SF:t:u:n:D:H:R:h", options, NULL)) != -1) {
		if (bci_command_store_option(&a->store, opt, optarg))
			continue;
		switch (opt) {
		case 'b': a->build = optarg; break;
		case 'f': a->filters = optarg; break;
		case 'o': a->mbox = optarg; break;
		case 'S': a->send = 1; break;
		case 'F': a->from = optarg; break;
		case 't': a->to = optarg; break;
		case 'u': a->matrix_url = optarg; break;
		case 'H': a->html = optarg; break;
		case 'R': a->results_url = optarg; break;
		case 'w':
		case 'n':
		case 'D':
			if (number_parse(optarg, opt == 'D' ? 0 : 1, &n) < 0 || n > INT_MAX) {
				fprintf(stderr, "bootci-aggregator report: '%s': not a number%s\n", optarg,
					opt == 'D' ? "" : " of at least 1");
				return 2;
			}
			if (opt == 'w')
				a->window = (int)n;
			else if (opt == 'n')
				a->fold_after = (int)n;
			else
				a->date = (time_t)n;
			break;
		default:
			return bci_command_usage_exit(opt);
		}
	}
	if (optind != argc || !a->build)
		return bci_command_usage_exit('?');
	if (a->send && !a->to) {
		fprintf(stderr, "bootci-aggregator report: --send needs --to (sendmail -t reads the recipients from the headers)\n");
		return 2;
	}
	return -1;
}

struct mbox_job {
	const struct bci_report *report;
	const struct bci_mbox_options *mbox;
};

static int mbox_stream(FILE *out, const void *ctx, char *err, size_t err_size)
{
	const struct mbox_job *job = ctx;

	return bci_mbox_write(out, job->report, job->mbox, err, err_size);
}

/* Writes the reply to @path (replaced atomically) or standard output ("-"). */
static int mbox_save(const char *path, const struct bci_report *report,
		     const struct bci_mbox_options *mbox, char *err, size_t err_size)
{
	struct mbox_job job = { .report = report, .mbox = mbox };

	if (!strcmp(path, "-"))
		return bci_mbox_write(stdout, report, mbox, err, err_size);
	return bci_atomic_write_stream(path, 0644, mbox_stream, &job, err, err_size);
}

int bci_cmd_report(int argc, char **argv)
{
	struct report_args a = { .window = 5, .fold_after = 1, .date = time(NULL) };
	char err[PATH_MAX + 1024] = "", filters_path[PATH_MAX], send_path[PATH_MAX] = "";
	struct bci_filters *filters = NULL;
	struct bci_report *report = NULL;
	struct bci_store *store = NULL;
	struct bci_matrix_view view = { 0 };
	const char *data_dir;
	int ret, status = 1;

	bci_command_store_init(&a.store, "report");
	ret = report_args_parse(argc, argv, &a);
	if (ret >= 0)
		return ret;
	data_dir = bci_command_data_dir(&a.store);
	/* The data folder's filter file is optional; one named on the command line is not. */
	snprintf(filters_path, sizeof(filters_path), "%s", a.filters ? a.filters : "");
	if (!a.filters)
		snprintf(filters_path, sizeof(filters_path), "%s/known-issues.txt", data_dir);
	ret = bci_filters_load(filters_path, &filters, err, sizeof(err));
	if (ret < 0 && !(ret == -ENOENT && !a.filters)) {
		fprintf(stderr, "bootci-aggregator report: filters: %s\n", err);
		return 1;
	}
	if (bci_command_store_open(&a.store, &store))
		goto out;
	struct bci_report_options options = { .data_dir = data_dir, .filters = filters,
					      .window = a.window, .threads = 2,
					      .store_url = a.store.url };
	/* With --html the matrix takes each machine's results from the report's reading of them. */
	if (a.html)
		ret = bci_matrix_report(store, a.build, &options, &report, &view, err,
					sizeof(err));
	else
		ret = bci_report_build(store, a.build, &options, &report, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator report: %s\n", err[0] ? err : strerror(-ret));
		goto out;
	}
	struct bci_mbox_options mbox = { .from = a.from, .to = a.to, .matrix_url = a.matrix_url,
					 .date = a.date, .fold_after = a.fold_after };
	if (a.send && !a.mbox) {
		const char *tmpdir = getenv("TMPDIR");

		snprintf(send_path, sizeof(send_path), "%s/reply-XXXXXX",
			 tmpdir && *tmpdir ? tmpdir : P_tmpdir);
		int fd = mkstemp(send_path);

		if (fd < 0) {
			fprintf(stderr, "bootci-aggregator report: %s: %s\n", send_path, strerror(errno));
			send_path[0] = '\0';
			goto out;
		}
		close(fd);
	}
	if (a.html) {
		ret = bci_html_write_view(data_dir, report, &view, a.html, a.results_url, err,
					  sizeof(err));
		if (ret < 0) {
			fprintf(stderr, "bootci-aggregator report: html: %s\n",
				err[0] ? err : strerror(-ret));
			goto out;
		}
	}
	if (a.mbox || a.send) {
		ret = mbox_save(a.mbox ? a.mbox : send_path, report, &mbox, err, sizeof(err));
		if (ret < 0) {
			fprintf(stderr, "bootci-aggregator report: %s\n", err[0] ? err : strerror(-ret));
			goto out;
		}
	}
	if (a.send) {
		ret = mail_send(a.mbox ? a.mbox : send_path);
		if (ret < 0) {
			fprintf(stderr, "bootci-aggregator report: sendmail -t: %s\n",
				ret == -ENOENT ? "not found in PATH" : "failed");
			goto out;
		}
	}
	printf("build %s: %s: %ld possible new issues, %ld known, %ld flaky, %ld fixed,"
	       " %ld warnings; %ld results on %d machines\n", report->build,
	       bci_report_failed(report) ? "FAILURE" : "SUCCESS", report->counts[BCI_VERDICT_NEW],
	       report->counts[BCI_VERDICT_KNOWN], report->counts[BCI_VERDICT_FLAKY],
	       report->counts[BCI_VERDICT_FIXED], report->counts[BCI_VERDICT_WARNING],
	       report->results, report->machines);
	status = 0;
out:
	bci_matrix_release(&view);
	if (send_path[0])
		unlink(send_path);
	bci_report_free(report);
	bci_filters_free(filters);
	bci_store_close(store);
	return status;
}

/* ---- export ---- */

struct export_args {
	struct bci_store *store;
	const char *kind, *build, *origin, *machine, *run_id;
};

static int export_write(FILE *out, const struct export_args *a, char *err, size_t err_size)
{
	if (!strcmp(a->kind, "kcidb"))
		return bci_export_kcidb(a->store, a->build, a->origin, out, err, err_size);
	return bci_export_junit(a->store, a->machine, a->run_id, out, err, err_size);
}

static int export_stream(FILE *out, const void *ctx, char *err, size_t err_size)
{
	return export_write(out, ctx, err, err_size);
}

/* To @path (replaced atomically) or standard output ("-" or NULL). */
static int export_save(const char *path, const struct export_args *a, char *err, size_t err_size)
{
	if (!path || !strcmp(path, "-"))
		return export_write(stdout, a, err, err_size);
	return bci_atomic_write_stream(path, 0644, export_stream, a, err, err_size);
}

int bci_cmd_export(int argc, char **argv)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "build", required_argument, NULL, 'b' },
		{ "origin", required_argument, NULL, 'O' },
		{ "machine", required_argument, NULL, 'm' },
		{ "run-id", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct export_args a = { .origin = "bootci" };
	char err[PATH_MAX + 1024] = "";
	struct bci_command_store cs;
	const char *output = NULL;
	int opt, ret;

	bci_command_store_init(&cs, "export");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:b:O:m:r:o:h", options, NULL)) != -1) {
		if (bci_command_store_option(&cs, opt, optarg))
			continue;
		switch (opt) {
		case 'b': a.build = optarg; break;
		case 'O': a.origin = optarg; break;
		case 'm': a.machine = optarg; break;
		case 'r': a.run_id = optarg; break;
		case 'o': output = optarg; break;
		default:
			return bci_command_usage_exit(opt);
		}
	}
	if (optind != argc - 1)
		return bci_command_usage_exit('?');
	a.kind = argv[optind];
	if (!(!strcmp(a.kind, "kcidb") && a.build) &&
	    !(!strcmp(a.kind, "junit") && a.machine && a.run_id)) {
		fprintf(stderr, "bootci-aggregator export: 'kcidb --build NAME' or 'junit --machine NAME --run-id ID'\n");
		return 2;
	}
	if (bci_command_store_open(&cs, &a.store))
		return 1;
	ret = export_save(output, &a, err, sizeof(err));
	bci_store_close(a.store);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator export: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	return 0;
}
