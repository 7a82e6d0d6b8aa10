// SPDX-License-Identifier: MIT
/* bootci-aggregator publish: the command line over bci_publish_dir() (publish.h). */
#include "../command.h"
#include "../commands.h"
#include "publish.h"
#include "../store/store.h"
#include "../names.h"
#include "fsutil.h"
#include "message.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * --master: the token is the file's first line (a publisher's, DATA/publishers
 * on the master); @known_good: that image's version (@p has its folder and
 * manifest), else @p is a build.
 */
static int publish_remote(const char *master, const char *token_file, const char *known_good,
			  const struct bci_publish *p)
{
	char err[PATH_MAX + 1024] = "", *token = NULL;
	size_t len;
	int ret;

	if (!token_file) {
		fprintf(stderr, "bootci-aggregator publish: --master needs --token-file\n");
		return 2;
	}
	if ((ret = bci_read_file(token_file, &token, &len, 4096)) < 0) {
		fprintf(stderr, "bootci-aggregator publish: %s: %s\n", token_file, strerror(-ret));
		return 1;
	}
	token[strcspn(token, "\r\n")] = '\0';
	if (known_good)
		ret = bci_publish_known_good_remote(master, token, known_good, p->image_dir,
						    p->manifest, p->log, err, sizeof(err));
	else
		ret = bci_publish_remote(master, token, p, err, sizeof(err));
	explicit_bzero(token, len);
	free(token);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator publish: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	return 0;
}

/* On the master: the build @p, or with @known_good that image's version. */
static int publish_local(const struct bci_command_store *cs, const char *known_good,
			 const struct bci_publish *p)
{
	const char *data_dir = bci_command_data_dir(cs);
	char err[PATH_MAX + 1024] = "";
	struct bci_store *store = NULL;
	int ret;

	if (bci_command_store_open(cs, &store))
		return 1;
	if (known_good)
		ret = bci_publish_known_good(store, data_dir, known_good, p->image_dir, p->manifest,
					     stdout, err, sizeof(err));
	else
		ret = bci_publish_dir(store, data_dir, p, err, sizeof(err));
	bci_store_close(store);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator publish: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	return 0;
}

int bci_cmd_publish(int argc, char **argv)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "build", required_argument, NULL, 'b' },
		{ "tree", required_argument, NULL, 't' },
		{ "commit", required_argument, NULL, 'c' },
		{ "tier", required_argument, NULL, 'T' },
		{ "base", required_argument, NULL, 'B' },
		{ "series-title", required_argument, NULL, 'S' },
		{ "message-id", required_argument, NULL, 'M' },
		{ "manifest", required_argument, NULL, 'm' },
		{ "master", required_argument, NULL, 'u' },
		{ "token-file", required_argument, NULL, 'k' },
		{ "known-good", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *master = NULL, *token_file = NULL, *known_good = NULL;
	struct bci_publish p = { .log = stdout };
	struct bci_command_store cs;
	int opt;

	bci_command_store_init(&cs, "publish");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:b:t:c:T:B:S:M:m:u:k:K:h", options, NULL)) != -1) {
		if (bci_command_store_option(&cs, opt, optarg))
			continue;
		switch (opt) {
		case 'b': p.build = optarg; break;
		case 't': p.tree = optarg; break;
		case 'c': p.commit = optarg; break;
		case 'T': p.tier = optarg; break;
		case 'B': p.base = optarg; break;
		case 'S': p.series_title = optarg; break;
		case 'M': p.message_id = optarg; break;
		case 'm': p.manifest = optarg; break;
		case 'u': master = optarg; break;
		case 'k': token_file = optarg; break;
		case 'K': known_good = optarg; break;
		default:
			return bci_command_usage_exit(opt);
		}
	}
	if (known_good && optind == argc - 1 && !p.build && !p.tree && !p.commit && !p.tier) {
		p.image_dir = argv[optind];
		if (master)
			return publish_remote(master, token_file, known_good, &p);
		return publish_local(&cs, known_good, &p);
	}
	if (optind != argc - 1 || !p.build || !p.tree || !p.commit || !p.tier) {
		fprintf(stderr, "bootci-aggregator publish: --build, --tree, --commit, --tier and"
				" IMAGE_DIR are required\n");
		return bci_command_usage_exit('?');
	}
	if (!!p.series_title != !!p.message_id) {
		fprintf(stderr, "bootci-aggregator publish: --series-title and --message-id go together\n");
		return 2;
	}
	if (p.message_id && !bci_name_message_id_ok(p.message_id)) {
		char quoted[256];

		fprintf(stderr, "bootci-aggregator publish: --message-id '%s': not one Message-ID"
			" (" BCI_NAME_MESSAGE_ID_RULE ")\n",
			bci_quote(quoted, sizeof(quoted), p.message_id, strlen(p.message_id)));
		return 2;
	}
	p.image_dir = argv[optind];
	if (master)
		return publish_remote(master, token_file, NULL, &p);
	return publish_local(&cs, NULL, &p);
}
