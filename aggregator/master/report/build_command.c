// SPDX-License-Identifier: MIT
/*
 * What the report reads that a person registers:
 *
 *   build add NAME --tree T --commit C --tier fast|full [--base B]
 *             [--series-title TITLE] [--message-id ID] [--registered UNIX]
 *   build show NAME
 *   machine tag|untag NAME TAG...    machine tags NAME
 *   machine group NAME [GROUP]       machine ungroup NAME
 *   machine refused [NAME] [--json]  the uploads serve refused (store/refused.h)
 *
 * Runs are attached to a build when they are ingested (`ingest --build`).
 */
#include "../command.h"
#include "../commands.h"
#include "../names.h"
#include "../store/refused.h"
#include "../store/store.h"
#include "manifest.h"
#include "message.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
			" control character, not . or .., at most %d bytes as a folder name)\n",
			build.name, BCI_NAME_FOLDER_MAX);
		return 2;
	}
	if (!strcmp(argv[optind], "add") && build.message_id &&
	    !bci_name_message_id_ok(build.message_id)) {
		char quoted[256];

		fprintf(stderr, "bootci-aggregator build add: --message-id '%s': not one Message-ID"
			" (" BCI_NAME_MESSAGE_ID_RULE ")\n",
			bci_quote(quoted, sizeof(quoted), build.message_id, strlen(build.message_id)));
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

/*
 * The uploads serve refused, from the data folder's records: one line each,
 * newest first (time, machine, run, sha256, bytes, times refused, why), or
 * the records as /api/v1/refused has them.
 */
static int refused_print(const char *data_dir, const char *machine, bool json)
{
	struct bci_refused *list = NULL;
	char err[PATH_MAX + 256] = "", when[32];
	size_t count = 0;
	int ret;

	ret = bci_refused_list(data_dir, machine, &list, &count, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator machine: %s\n", err);
		return 1;
	}
	if (json) {
		ret = bci_refused_json(stdout, list, count);
	} else {
		for (size_t i = 0; i < count; i++) {
			const struct bci_refused *r = &list[i];
			time_t t = (time_t)r->time;
			struct tm tm;

			if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
				snprintf(when, sizeof(when), "%lld", (long long)r->time);
			printf("%s %s %s sha256:%s %llu bytes, refused %llu time%s: %s\n", when,
			       r->machine, r->run_id, r->sha256, (unsigned long long)r->size,
			       (unsigned long long)r->count, r->count == 1 ? "" : "s", r->reason);
		}
	}
	free(list);
	if (ret < 0 || fflush(stdout) != 0) {
		fprintf(stderr, "bootci-aggregator machine: standard output: %s\n",
			strerror(ret < 0 ? -ret : errno));
		return 1;
	}
	return 0;
}

/*
 * machine group NAME GROUP: puts the machine in the shard group; machine
 * group NAME: prints its group (nothing when it has none); machine ungroup
 * NAME: takes it out of any.
 */
static int group_command(struct bci_command_store *cs, const char *verb, const char *machine,
			 int n, char **args)
{
	char err[PATH_MAX + 1024] = "", group[BCI_MANIFEST_WORD_MAX + 1];
	struct bci_store *store;
	int ret;

	if (n > (verb[0] == 'g') || (n == 1 && !bci_name_tag_ok(args[0]))) {
		if (n == 1 && verb[0] == 'g')
			fprintf(stderr, "bootci-aggregator machine: '%s' is not a shard group (a word:"
				" [A-Za-z0-9._-], 1 to 128 bytes)\n", args[0]);
		return bci_command_usage_exit('?');
	}
	if (bci_command_store_open(cs, &store))
		return 1;
	if (verb[0] == 'g' && !n) {
		ret = bci_store_machine_group(store, machine, group, sizeof(group), err, sizeof(err));
		if (ret > 0)
			printf("%s\n", group);
	} else {
		ret = bci_store_machine_group_set(store, machine, n ? args[0] : NULL, err,
						  sizeof(err));
	}
	bci_store_close(store);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator machine: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "bootci-aggregator machine: standard output: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

int bci_cmd_machine(int argc, char **argv)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bci_command_store cs;
	struct bci_store *store;
	char err[PATH_MAX + 1024] = "";
	const char *verb, *machine;
	bool json = false;
	int opt, ret = 0;

	bci_command_store_init(&cs, "machine");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:h", options, NULL)) != -1)
		if (opt == 'j')
			json = true;
		else if (!bci_command_store_option(&cs, opt, optarg))
			return bci_command_usage_exit(opt);
	if (argc - optind >= 1 && !strcmp(argv[optind], "refused")) {
		if (argc - optind > 2)
			return bci_command_usage_exit('?');
		return refused_print(bci_command_data_dir(&cs),
				     argc - optind == 2 ? argv[optind + 1] : NULL, json);
	}
	if (json || argc - optind < 2)
		return bci_command_usage_exit('?');
	verb = argv[optind];
	machine = argv[optind + 1];
	if (!strcmp(verb, "group") || !strcmp(verb, "ungroup"))
		return group_command(&cs, verb, machine, argc - optind - 2, argv + optind + 2);
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
