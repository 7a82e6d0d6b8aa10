// SPDX-License-Identifier: MIT
/*
 * bootci-aggregator bisect: the bisections of builds' possible new issues
 * (a series', patchwork.h "bisect.c"; a tree's, ../bisect/bisect.h), read
 * and steered by hand while serve runs them:
 *
 *   bisect list           every bisection: build, state, verdict
 *   bisect show BUILD     one: its series or tree, tests, machines, each step, the answer
 *   bisect start BUILD    starts one now (serve's Patchwork builder or tree
 *                         bisector moves it on)
 *   bisect stop BUILD     ends one: stopped, its queued runs abandoned
 */
#include "../bisect/bisect.h"
#include "../command.h"
#include "../commands.h"
#include "../store/store.h"
#include "patchwork.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static int bisect_line(const struct bci_store_bisect *b, void *ctx)
{
	(void)ctx;
	printf("bisect %s: %s%s%s\n", b->build, b->state, b->verdict ? ": " : "",
	       b->verdict ? b->verdict : "");
	return 0;
}

/* A text of lines, printed joined with ", ". */
static void lines_print(const char *label, const char *text)
{
	printf("%s", label);
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");

		printf("%s%.*s", p == text ? " " : ", ", (int)n, p);
		p += n + (p[n] == '\n');
	}
	printf("\n");
}

struct show {
	int patches;
	bool tree;
};

static int bisect_detail(const struct bci_store_bisect *b, void *ctx)
{
	struct show *show = ctx;

	show->patches = b->patches;
	show->tree = b->commits != NULL;
	bisect_line(b, NULL);
	if (show->tree) {
		size_t len = strlen(b->commits);
		const char *last;

		while (len && b->commits[len - 1] == '\n')
			len--;
		for (last = b->commits + len; last > b->commits && last[-1] != '\n'; last--)
			;
		printf("tree %s: %d commits, %.12s to %.12s\n", b->project, b->patches, b->commits,
		       last);
	} else {
		printf("series %s %lld: %d patches\n", b->project, (long long)b->series,
		       b->patches);
	}
	lines_print("tests:", b->tests);
	lines_print("machines:", b->machines);
	return 0;
}

static int step_line(const struct bci_store_bisect_step *s, void *ctx)
{
	const struct show *show = ctx;

	printf("step %d: %s %d of %d (%s): %s%s%s\n", s->step, show->tree ? "commit" : "patch",
	       s->patches, show->patches, s->candidate, s->state, s->note ? ": " : "",
	       s->note ? s->note : "");
	return 0;
}

static int state_copy(const struct bci_store_bisect *b, void *ctx)
{
	snprintf(ctx, 16, "%s", b->state);
	return 0;
}

struct open_jobs {
	struct bci_store *store;
	char *err;
	size_t err_size;
	int abandoned;
};

static int job_abandon(const struct bci_store_job *job, void *ctx)
{
	struct open_jobs *o = ctx;

	if (strcmp(job->state, "queued"))
		return 0;
	o->abandoned++;
	return bci_store_job_end(o->store, job->key, "abandoned", "its bisection was stopped", 0,
				 o->err, o->err_size);
}

static int step_abandon(const struct bci_store_bisect_step *s, void *ctx)
{
	struct open_jobs *o = ctx;

	if (strcmp(s->state, "running"))
		return 0;
	return bci_store_jobs_each(o->store, s->candidate, "fast", job_abandon, o, o->err,
				   o->err_size);
}

struct series_project {
	char name[256];
};

static int project_of(const struct bci_store_pw_series *s, void *ctx)
{
	snprintf(((struct series_project *)ctx)->name, sizeof(((struct series_project *)ctx)->name),
		 "%s", s->project);
	return 0;
}

/* `bisect start BUILD`: its series' project from the store, that project's config. */
static int start(struct bci_store *store, const char *data_dir, const char *build, char *err,
		 size_t err_size)
{
	struct bci_patchwork_config *config = NULL;
	struct series_project sp = { "" };
	const struct bci_patchwork_project *project;
	char path[PATH_MAX];
	int ret;

	ret = bci_store_pw_series_by_build(store, build, project_of, &sp, err, err_size);
	if (ret == 0) {
		/* A tree's build: its range from the tree's clone (machines.conf). */
		ret = bci_tree_bisect_start(store, data_dir, build, err, err_size);
		if (ret >= 0)
			printf("%s\n", err);
		return ret < 0 ? ret : 0;
	}
	if (ret < 0)
		return ret;
	snprintf(path, sizeof(path), "%s/%s", data_dir, BCI_PATCHWORK_CONFIG_FILE);
	if ((ret = bci_patchwork_config_load(path, &config, err, err_size)) < 0) {
		if (ret == -ENOENT)
			snprintf(err, err_size, "no %s: its series' project is not followed", path);
		return ret;
	}
	project = bci_patchwork_config_project(config, sp.name);
	if (!project || !project->build_command) {
		snprintf(err, err_size, "%s has no [project %s] with a build-command: its candidates"
			 " cannot be built", path, sp.name);
		bci_patchwork_config_free(config);
		return -ENOENT;
	}
	struct bci_patchwork pw = { .project = project, .store = store, .data_dir = data_dir,
				    .log = stdout };
	ret = bci_patchwork_bisect_start(&pw, build, true, err, err_size);
	if (ret == 0)
		printf("bisect %s: nothing to bisect: no possible new issue\n", build);
	bci_patchwork_config_free(config);
	return ret < 0 ? ret : 0;
}

int bci_cmd_bisect(int argc, char **argv)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bci_command_store cs;
	struct bci_store *store = NULL;
	const char *verb, *build;
	char err[PATH_MAX + 1024] = "";
	int opt, operands, ret;

	bci_command_store_init(&cs, "bisect");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:h", options, NULL)) != -1)
		if (!bci_command_store_option(&cs, opt, optarg))
			return bci_command_usage_exit(opt);
	operands = argc - optind;
	verb = operands ? argv[optind] : "";
	build = operands > 1 ? argv[optind + 1] : NULL;
	if (!((!strcmp(verb, "list") && operands == 1) ||
	      ((!strcmp(verb, "show") || !strcmp(verb, "start") || !strcmp(verb, "stop")) &&
	       operands == 2))) {
		fprintf(stderr, "bootci-aggregator bisect: '%.64s'%s: expected list, show BUILD,"
			" start BUILD or stop BUILD\n", verb, operands > 2 ? " with too many operands"
			: "");
		return bci_command_usage_exit('?');
	}
	if (bci_command_store_open(&cs, &store))
		return 1;
	if (!strcmp(verb, "list")) {
		ret = bci_store_bisects_each(store, NULL, bisect_line, NULL, err, sizeof(err));
	} else if (!strcmp(verb, "show")) {
		struct show show = { 0 };

		ret = bci_store_bisect_get(store, build, bisect_detail, &show, err, sizeof(err));
		if (ret == 0) {
			snprintf(err, sizeof(err), "build %s has no bisection", build);
			ret = -ENOENT;
		}
		if (ret > 0)
			ret = bci_store_bisect_steps_each(store, build, step_line, &show, err,
							  sizeof(err));
	} else if (!strcmp(verb, "stop")) {
		struct open_jobs o = { store, err, sizeof(err), 0 };
		char state[16] = "";

		ret = bci_store_bisect_get(store, build, state_copy, state, err, sizeof(err));
		if (ret == 0) {
			snprintf(err, sizeof(err), "build %s has no bisection", build);
			ret = -ENOENT;
		} else if (ret > 0 && strcmp(state, "running")) {
			snprintf(err, sizeof(err), "the bisection of %s is %s already", build, state);
			ret = -EALREADY;
		}
		if (ret > 0)
			ret = bci_store_bisect_steps_each(store, build, step_abandon, &o, err,
							  sizeof(err));
		if (ret >= 0)
			ret = bci_store_bisect_end(store, build, "stopped", "stopped by hand", err,
						   sizeof(err));
		if (ret >= 0)
			printf("bisect %s: stopped; %d queued run(s) abandoned\n", build, o.abandoned);
	} else {
		ret = start(store, bci_command_data_dir(&cs), build, err, sizeof(err));
	}
	bci_store_close(store);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator bisect: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	return 0;
}
