// SPDX-License-Identifier: MIT
/*
 * bootci-aggregator mail queue|send|list|show (bootci-aggregator-mail(1)):
 * a build's reply (report/mbox.c's message) or a message file queued in the
 * outbox, one delivery pass, the outbox listed, one message as stored.
 */
#include "../command.h"
#include "../commands.h"
#include "../store/store.h"
#include "fsutil.h"
#include "mail.h"

#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct mail_args {
	struct bci_command_store store;
	const char *build, *message, *filters, *matrix_url;
	char *to;			/* --to's, joined with ", " */
	int window;
	time_t date;
};

static int to_add(struct mail_args *a, const char *address)
{
	size_t len = a->to ? strlen(a->to) : 0;
	char *grown = realloc(a->to, len + strlen(address) + 3);

	if (!grown)
		return -ENOMEM;
	sprintf(grown + len, "%s%s", len ? ", " : "", address);
	a->to = grown;
	return 0;
}

static int args_parse(int argc, char **argv, struct mail_args *a, const char *verb)
{
	static const struct option options[] = {
		BCI_COMMAND_STORE_OPTIONS,
		{ "build", required_argument, NULL, 'b' },
		{ "message", required_argument, NULL, 'm' },
		{ "to", required_argument, NULL, 't' },
		{ "url", required_argument, NULL, 'u' },
		{ "filters", required_argument, NULL, 'f' },
		{ "window", required_argument, NULL, 'w' },
		{ "date", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool queue = !strcmp(verb, "queue");
	char address[512], *end;
	long n;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:d:b:m:t:u:f:w:D:h", options, NULL)) != -1) {
		if (bci_command_store_option(&a->store, opt, optarg))
			continue;
		if (!queue && opt != 'h')
			return bci_command_usage_exit('?');
		switch (opt) {
		case 'b': a->build = optarg; break;
		case 'm': a->message = optarg; break;
		case 'u': a->matrix_url = optarg; break;
		case 'f': a->filters = optarg; break;
		case 't':
			if (bci_mail_address(optarg, address, sizeof(address)) < 0) {
				fprintf(stderr, "bootci-aggregator mail: --to '%s': not an address\n",
					optarg);
				return 2;
			}
			if (to_add(a, optarg) < 0)
				return 1;
			break;
		case 'w':
		case 'D':
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || n < (opt == 'w') || n > INT_MAX) {
				fprintf(stderr, "bootci-aggregator mail: '%s': not a number%s\n", optarg,
					opt == 'w' ? " of at least 1" : "");
				return 2;
			}
			if (opt == 'w')
				a->window = (int)n;
			else
				a->date = (time_t)n;
			break;
		default:
			return bci_command_usage_exit(opt);
		}
	}
	if (queue && !a->build && !a->message)
		return bci_command_usage_exit('?');
	if (a->message && (a->to || a->matrix_url || a->filters)) {
		fprintf(stderr, "bootci-aggregator mail: --to, --url and --filters make a build's"
			" reply: not with --message (its own headers say where it goes)\n");
		return 2;
	}
	return -1;
}

static int config_load(const char *data_dir, struct bci_mail_config *config)
{
	char err[PATH_MAX + 512];
	int ret = bci_mail_config_load(data_dir, config, err, sizeof(err));

	if (ret < 0)
		fprintf(stderr, "bootci-aggregator mail: %s%s\n", err,
			ret == -ENOENT ? " (the SMTP server and sender: bootci-mail.conf(5))" : "");
	return ret;
}

/* --message FILE: the message as it is, its envelope from its headers. */
static int message_queue(struct bci_store *store, const struct mail_args *a,
			 const struct bci_mail_config *config)
{
	struct bci_mail_envelope envelope = { 0 };
	char err[PATH_MAX + 1024] = "", *mbox = NULL, *message = NULL;
	size_t mbox_len = 0, message_len = 0;
	int ret;

	ret = bci_read_file(a->message, &mbox, &mbox_len, 16 << 20);
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator mail: %s: %s\n", a->message, strerror(-ret));
		return ret;
	}
	ret = bci_mail_from_mbox(mbox, mbox_len, &message, &message_len, err, sizeof(err));
	if (ret == 0)
		ret = bci_mail_envelope_read(message, &envelope, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator mail: %s: %s\n", a->message, err);
		goto out;
	}
	struct bci_store_mail mail = { .message_id = envelope.message_id, .build = a->build,
				       .sender = config->sender, .recipients = envelope.recipients,
				       .message = message };
	ret = bci_store_mail_queue(store, &mail, NULL, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator mail: outbox: %s\n", err);
		goto out;
	}
	for (char *p = envelope.recipients; (p = strchr(p, '\n'));)
		*p = p[1] ? ' ' : '\0';
	printf("%s %s: to %s\n", envelope.message_id, ret ? "already in the outbox" : "queued",
	       envelope.recipients);
	ret = 0;
out:
	bci_mail_envelope_free(&envelope);
	free(message);
	free(mbox);
	return ret;
}

static int mail_queue(struct mail_args *a)
{
	struct bci_mail_config config = { 0 };
	struct bci_store *store = NULL;
	char err[PATH_MAX + 1024] = "", id[512], recipients[2048];
	const char *data_dir = bci_command_data_dir(&a->store);
	int ret, status = 1;

	if (config_load(data_dir, &config) < 0)
		return 1;
	if (bci_command_store_open(&a->store, &store))
		goto out;
	if (a->message) {
		status = message_queue(store, a, &config) < 0;
		goto out;
	}
	struct bci_mail_reply reply = { .config = &config, .data_dir = data_dir,
					.store_url = a->store.url, .threads = 2, .build = a->build,
					.to = a->to, .filters = a->filters,
					.matrix_url = a->matrix_url, .window = a->window,
					.date = a->date };
	ret = bci_mail_reply_queue(store, &reply, id, sizeof(id), recipients, sizeof(recipients),
				   err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator mail: build %s: %s\n", a->build,
			err[0] ? err : strerror(-ret));
		goto out;
	}
	if (ret == 1)
		printf("build %s: its reply %s is already in the outbox (%s)\n", a->build, id,
		       recipients);
	else
		printf("%s queued: to %s\n", id, recipients);
	status = 0;
out:
	bci_store_close(store);
	bci_mail_config_free(&config);
	return status;
}

static int mail_send(struct mail_args *a)
{
	struct bci_mail_config config = { 0 };
	struct bci_store *store = NULL;
	struct bci_mail_pass pass;
	char err[1024] = "";
	int ret, status = 1;

	if (config_load(bci_command_data_dir(&a->store), &config) < 0)
		return 1;
	if (bci_command_store_open(&a->store, &store))
		goto out;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	ret = bci_mail_deliver(store, &config, bci_mail_now(), stderr, NULL, &pass, err,
			       sizeof(err));
	curl_global_cleanup();
	printf("mail: %d sent, %d to retry, %d failed\n", pass.sent, pass.retried, pass.failed);
	if (ret < 0)
		fprintf(stderr, "bootci-aggregator mail send: %s\n", err);
	else
		status = 0;
out:
	bci_store_close(store);
	bci_mail_config_free(&config);
	return status;
}

static void time_print(double t)
{
	time_t s = (time_t)t;
	struct tm tm;
	char text[32];

	if (t <= 0) {
		fputs("-", stdout);
		return;
	}
	gmtime_r(&s, &tm);
	strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fputs(text, stdout);
}

static int list_one(const struct bci_store_mail *mail, void *ctx)
{
	(void)ctx;
	printf("%s\t%s\t%d\t", mail->message_id, mail->state, mail->attempts);
	time_print(mail->created);
	putchar('\t');
	time_print(mail->sent);
	printf("\t%s\t", mail->build ? mail->build : "-");
	for (const char *p = mail->recipients; *p; p++)
		if (*p != '\n' || p[1])
			putchar(*p == '\n' ? ',' : *p);
	printf("\t%s\n", mail->last_error ? mail->last_error : "-");
	return 0;
}

static int show_one(const struct bci_store_mail *mail, void *ctx)
{
	(void)ctx;
	fwrite(mail->message, 1, strlen(mail->message), stdout);
	return 0;
}

int bci_cmd_mail(int argc, char **argv)
{
	struct mail_args a = { .window = 5, .date = time(NULL) };
	struct bci_store *store = NULL;
	char err[1024] = "";
	const char *verb;
	int ret;

	if (argc < 2)
		return bci_command_usage_exit('?');
	verb = argv[1];
	if (!strcmp(verb, "-h") || !strcmp(verb, "--help"))
		return bci_command_usage_exit('h');
	if (strcmp(verb, "queue") && strcmp(verb, "send") && strcmp(verb, "list") &&
	    strcmp(verb, "show")) {
		fprintf(stderr, "bootci-aggregator mail: unknown '%s' (queue, send, list, show)\n",
			verb);
		return 2;
	}
	bci_command_store_init(&a.store, "mail");
	ret = args_parse(argc - 1, argv + 1, &a, verb);
	if (ret >= 0)
		goto out;
	if (!strcmp(verb, "queue")) {
		ret = optind == argc - 1 ? mail_queue(&a) : bci_command_usage_exit('?');
		goto out;
	}
	if (!strcmp(verb, "send")) {
		ret = optind == argc - 1 ? mail_send(&a) : bci_command_usage_exit('?');
		goto out;
	}
	if (!strcmp(verb, "show") ? optind != argc - 2 : optind != argc - 1) {
		ret = bci_command_usage_exit('?');
		goto out;
	}
	ret = 1;
	if (bci_command_store_open(&a.store, &store))
		goto out;
	if (!strcmp(verb, "list"))
		ret = bci_store_mail_each(store, NULL, list_one, NULL, err, sizeof(err));
	else if ((ret = bci_store_mail_get(store, argv[optind + 1], show_one, NULL, err,
					   sizeof(err))) == 0) {
		fprintf(stderr, "bootci-aggregator mail: no message %s in the outbox\n",
			argv[optind + 1]);
		ret = 1;
		goto out;
	}
	if (ret < 0)
		fprintf(stderr, "bootci-aggregator mail: %s\n", err);
	ret = ret < 0;
out:
	bci_store_close(store);
	free(a.to);
	return ret;
}
