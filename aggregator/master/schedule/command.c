// SPDX-License-Identifier: MIT
/*
 * bootci-aggregator schedule: the scheduler's state for the people who run
 * the lab, read from and written to the store serve's scheduler uses (so it
 * works while serve runs: SQLite in WAL mode, or PostgreSQL).
 *
 *   schedule machines         each machine of the inventory: state, power cycles, note; its
 *                             job in hand and that job's boots so far
 *   schedule jobs [BUILD]     every job (of BUILD): machine, run id, tier (or confirm), shard,
 *                             state, boots, then the master's verdict when it has one
 *   schedule confirm BUILD    the reruns of BUILD's possible new issues queued, as the gate
 *                             queues them (schedule.h), each job printed with its tests
 *   schedule return MACHINE   a machine taken out is back in, powered on (schedule.h)
 *   schedule power MACHINE on|off|cycle|status   its power driver, by hand
 *   schedule redeploy MACHINE its disk is re-deployed at its next boot (deploy.h)
 */
#include "../command.h"
#include "../commands.h"
#include "../store/store.h"
#include "../serve/console_state.h"
#include "deploy.h"
#include "internal.h"
#include "judge.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int job_print(const struct bci_store_job *job, void *ctx)
{
	(void)ctx;
	printf("%-16s %-32s %-24s %-4s %d/%d %-9s %d%s%s\n", job->machine, job->run_id, job->build,
	       job->kind ? job->kind : job->tier, job->shard + 1, job->shards, job->state, job->boots,
	       job->note && *job->note ? "  " : "", job->note ? job->note : "");
	return 0;
}

/* A confirm job and its tests, a line each below it. */
static int rerun_print(const struct bci_store_job *job, void *ctx)
{
	const char *line = job->testlist;

	if (!job->kind || strcmp(job->kind, "confirm"))
		return 0;
	job_print(job, ctx);
	while (line && *line) {
		size_t n = strcspn(line, "\n");

		if (n)
			printf("    %.*s\n", (int)n, line);
		line += n + (line[n] == '\n');
	}
	return 0;
}

/* `schedule confirm BUILD`: the judge's possible new issues, their reruns queued and printed. */
static int confirm(struct bci_schedule *s, const char *build, char *err, size_t err_size)
{
	struct bci_schedule_issues issues = { 0 };
	int ret = bci_schedule_judge_report(s->store, build, (void *)s->data_dir, &issues, err,
					    err_size);

	if (ret == 0)
		printf("%s: no possible new issue: nothing to rerun\n", build);
	if (ret > 0)
		ret = bci_schedule_confirm_queue(s, build, &issues, err, err_size);
	bci_schedule_issues_free(&issues);
	if (ret > 0)
		ret = bci_store_jobs_each(s->store, build, "fast", rerun_print, NULL, err, err_size);
	return ret < 0 ? ret : 0;
}

static int job_in_hand_print(const struct bci_store_job *job, void *ctx)
{
	printf("%-16s job %s (build %s, %s%s): %s, %d boot%s\n", (const char *)ctx, job->run_id,
	       job->build, job->kind ? job->kind : job->tier, job->kind ? "" : " tier", job->state, job->boots, job->boots == 1 ? "" : "s");
	return 0;
}

/* The machine's console as serve's reader last wrote it (serve/console_state.h), in one line. */
static void console_print(struct bci_schedule *s, const struct bci_inventory_machine *m)
{
	struct bci_console_state state;
	char line[600], err[PATH_MAX + 200];
	int ret;

	if (m->console.kind == BCI_CONSOLE_NONE)
		return;
	ret = bci_console_state_of(s->data_dir, m->name, &state, err, sizeof(err));
	if (ret < 0) {
		printf("%-16s console: %s\n", m->name, err);
	} else if (!ret) {
		printf("%-16s console %s: not read by serve yet\n", m->name, m->console.spec);
	} else {
		bci_console_state_line(&state, time(NULL), line, sizeof(line));
		printf("%-16s console %s\n", m->name, line);
	}
}

static int machines_print(struct bci_schedule *s, char *err, size_t err_size)
{
	for (size_t i = 0; i < s->inventory->machine_count; i++) {
		const struct bci_inventory_machine *m = &s->inventory->machines[i];
		struct bci_schedule_state state = { .state = "ready" };
		int ret = bci_schedule_state_read(s, m->name, &state, err, err_size);

		if (ret < 0)
			return ret;
		printf("%-16s %-17s %-5s %d power cycle(s)%s%s\n", m->name, m->mac,
		       ret ? state.state : "new", state.power_cycles, state.note[0] ? ": " : "",
		       state.note);
		char note[512];
		int disk = bci_schedule_deploy_state(s, m->name, note, sizeof(note), err, err_size);

		if (disk < 0)
			return disk;
		ret = bci_store_job_next(s->store, m->name, job_in_hand_print, (void *)m->name, err,
					 err_size);
		if (ret < 0)
			return ret;
		if (disk != BCI_DEPLOY_NONE)
			printf("%-16s disk %s: %s\n", m->name,
			       disk == BCI_DEPLOY_DAMAGED ? "damaged, re-deployed at its next boot"
							  : "being re-deployed with known-good",
			       note);
		console_print(s, m);
	}
	return 0;
}

static int jobs_print(struct bci_schedule *s, const char *build, char *err, size_t err_size)
{
	int ret = 0;

	if (build)
		return bci_store_jobs_each(s->store, build, NULL, job_print, NULL, err, err_size);
	for (size_t i = 0; i < s->inventory->machine_count && ret >= 0; i++)
		ret = bci_store_machine_jobs_each(s->store, s->inventory->machines[i].name, job_print,
						  NULL, err, err_size);
	return ret;
}

int bci_cmd_schedule(int argc, char **argv)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bci_inventory *inventory = NULL;
	struct bci_command_store cs;
	const char *data_dir, *verb;
	struct bci_store *store = NULL;
	char err[PATH_MAX + 1024] = "", path[PATH_MAX];
	int opt, ret, operands;

	bci_command_store_init(&cs, "schedule");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:h", options, NULL)) != -1)
		if (!bci_command_store_option(&cs, opt, optarg))
			return bci_command_usage_exit(opt);
	operands = argc - optind;
	verb = operands ? argv[optind] : "";
	if (!((!strcmp(verb, "machines") && operands == 1) ||
	      (!strcmp(verb, "jobs") && operands <= 2) ||
	      (!strcmp(verb, "confirm") && operands == 2) ||
	      (!strcmp(verb, "return") && operands == 2) ||
	      (!strcmp(verb, "redeploy") && operands == 2) ||
	      (!strcmp(verb, "power") && operands == 3))) {
		fprintf(stderr, "bootci-aggregator schedule: '%.64s'%s: expected machines, jobs [BUILD], "
			"confirm BUILD, return MACHINE, redeploy MACHINE or power MACHINE ACTION\n", verb,
			operands > (strcmp(verb, "power") ? 2 : 3) ? " with too many operands" : "");
		return bci_command_usage_exit('?');
	}
	data_dir = bci_command_data_dir(&cs);
	snprintf(path, sizeof(path), "%s/%s", data_dir, BCI_INVENTORY_FILE);
	if ((ret = bci_inventory_load(path, &inventory, err, sizeof(err))) < 0) {
		fprintf(stderr, "bootci-aggregator schedule: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	if (bci_command_store_open(&cs, &store)) {
		bci_inventory_free(inventory);
		return 1;
	}
	struct bci_schedule s = { .store = store, .inventory = inventory, .data_dir = data_dir,
				  .log = stdout };
	if (!strcmp(verb, "machines"))
		ret = machines_print(&s, err, sizeof(err));
	else if (!strcmp(verb, "jobs"))
		ret = jobs_print(&s, operands == 2 ? argv[optind + 1] : NULL, err, sizeof(err));
	else if (!strcmp(verb, "confirm"))
		ret = confirm(&s, argv[optind + 1], err, sizeof(err));
	else if (!strcmp(verb, "power"))
		ret = bci_schedule_power(&s, argv[optind + 1], argv[optind + 2], err, sizeof(err));
	else if (!strcmp(verb, "redeploy"))
		ret = bci_schedule_redeploy(&s, argv[optind + 1], "asked for by a person", err,
					    sizeof(err));
	else
		ret = bci_schedule_return(&s, argv[optind + 1], (double)time(NULL), err, sizeof(err));
	bci_store_close(store);
	bci_inventory_free(inventory);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator schedule: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	return 0;
}
