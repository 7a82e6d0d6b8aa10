// SPDX-License-Identifier: MIT
/*
 * A build's reply queued in the outbox (mail.h's bci_mail_reply_queue): the
 * report (report/regress.c) and its message (report/mbox.c), as `report
 * --mbox` makes them, made into SMTP's bytes and queued once per build.
 * `mail queue --build` and serve's sender (reply = final) both come here.
 */
#include "mail.h"

#include "../report/report.h"
#include "../store/store.h"
#include "message.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct already {
	char message_id[512];
	char state[16];
};

static int already_seen(const struct bci_store_mail *mail, void *ctx)
{
	struct already *a = ctx;

	snprintf(a->message_id, sizeof(a->message_id), "%s", mail->message_id);
	snprintf(a->state, sizeof(a->state), "%s", mail->state);
	return 0;
}

/* The reply as report --mbox writes it, in *@mbox (malloc'ed). */
static int reply_mbox(struct bci_store *store, const struct bci_mail_reply *r, char **mbox,
		      size_t *len, char *err, size_t err_size)
{
	const struct bci_mail_config *config = r->config;
	struct bci_filters *filters = NULL;
	struct bci_report *report = NULL;
	char path[PATH_MAX], *to = NULL;
	FILE *out;
	int ret;

	snprintf(path, sizeof(path), "%s", r->filters ? r->filters : "");
	if (!r->filters)
		snprintf(path, sizeof(path), "%s/known-issues.txt", r->data_dir);
	/* The data folder's filter file is optional; one named by the caller is not. */
	ret = bci_filters_load(path, &filters, err, err_size);
	if (ret < 0 && !(ret == -ENOENT && !r->filters))
		return ret;
	struct bci_report_options options = { .data_dir = r->data_dir, .filters = filters,
					      .window = r->window > 0 ? r->window : 5,
					      .threads = r->threads, .store_url = r->store_url };
	ret = bci_report_build(store, r->build, &options, &report, err, err_size);
	if (ret < 0)
		goto out;
	/* The list first, then the author (and anyone else) the caller names. */
	if (asprintf(&to, "%s%s%s", config->to ? config->to : "", config->to && r->to ? ", " : "",
		     r->to ? r->to : "") < 0) {
		to = NULL;
		ret = -ENOMEM;
		goto out;
	}
	struct bci_mbox_options mbox_options = {
		.from = config->from, .to = *to ? to : NULL,
		.matrix_url = r->matrix_url ? r->matrix_url : config->matrix_url,
		.date = r->date, .fold_after = 1,
	};
	out = open_memstream(mbox, len);
	if (!out) {
		ret = -ENOMEM;
		goto out;
	}
	ret = bci_mbox_write(out, report, &mbox_options, err, err_size);
	if (fclose(out) && ret == 0)
		ret = -ENOMEM;
	if (ret < 0) {
		free(*mbox);
		*mbox = NULL;
	}
out:
	if (ret == -ENOMEM)
		bci_message(err, err_size, "%s", strerror(ENOMEM));
	free(to);
	bci_report_free(report);
	bci_filters_free(filters);
	return ret;
}

int bci_mail_reply_queue(struct bci_store *store, const struct bci_mail_reply *r,
			 char *message_id, size_t id_size, char *recipients, size_t recipients_size,
			 char *err, size_t err_size)
{
	struct bci_mail_envelope envelope = { 0 };
	struct already seen = { "", "" };
	char *mbox = NULL, *message = NULL;
	size_t mbox_len = 0, message_len = 0;
	int ret;

	/* One reply a build: asking again changes nothing. */
	ret = bci_store_mail_each(store, r->build, already_seen, &seen, err, err_size);
	if (ret < 0)
		return ret;
	if (ret > 0) {
		snprintf(message_id, id_size, "%s", seen.message_id);
		snprintf(recipients, recipients_size, "%s", seen.state);
		return 1;
	}
	ret = reply_mbox(store, r, &mbox, &mbox_len, err, err_size);
	if (ret == 0)
		ret = bci_mail_from_mbox(mbox, mbox_len, &message, &message_len, err, err_size);
	if (ret == 0)
		ret = bci_mail_envelope_read(message, &envelope, err, err_size);
	if (ret == 0) {
		struct bci_store_mail mail = { .message_id = envelope.message_id, .build = r->build,
					       .sender = r->config->sender,
					       .recipients = envelope.recipients, .message = message };

		ret = bci_store_mail_queue(store, &mail, NULL, err, err_size);
		/* Another queuer's reply went in first (serve's and the command's at once). */
		if (ret == -EEXIST &&
		    bci_store_mail_each(store, r->build, already_seen, &seen, err, err_size) > 0) {
			bci_mail_envelope_free(&envelope);
			free(message);
			free(mbox);
			snprintf(message_id, id_size, "%s", seen.message_id);
			snprintf(recipients, recipients_size, "%s", seen.state);
			return 1;
		}
	}
	if (ret >= 0) {
		snprintf(message_id, id_size, "%s", envelope.message_id);
		for (char *p = envelope.recipients; (p = strchr(p, '\n'));)
			*p = p[1] ? ' ' : '\0';
		snprintf(recipients, recipients_size, "%s", envelope.recipients);
	}
	bci_mail_envelope_free(&envelope);
	free(message);
	free(mbox);
	return ret;
}

/* The builds the store says are final, copied: queueing one runs statements of its own. */
struct finals {
	char **names;
	size_t count;
};

static int final_take(const char *build, void *ctx)
{
	struct finals *f = ctx;
	char **grown = realloc(f->names, (f->count + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	f->names = grown;
	if (!(f->names[f->count] = strdup(build)))
		return -ENOMEM;
	f->count++;
	return 0;
}

/* The submitter of the Patchwork series a build was made from: the reply's second recipient. */
static int series_author(const struct bci_store_pw_series *series, void *ctx)
{
	char *author = ctx;

	if (series->submitter && !author[0])
		snprintf(author, 320, "%s", series->submitter);
	return 0;
}

int bci_mail_replies_final(struct bci_store *store, const struct bci_mail_reply *defaults,
			   FILE *log, char *err, size_t err_size)
{
	struct finals finals = { 0 };
	int ret, queued = 0;

	ret = bci_store_mail_builds_final(store, final_take, &finals, err, err_size);
	for (size_t i = 0; ret >= 0 && i < finals.count; i++) {
		struct bci_mail_reply r = *defaults;
		char id[512], recipients[1024], why[1024] = "", author[320] = "", address[320];
		int one;

		r.build = finals.names[i];
		r.date = time(NULL);
		/* A build from a Patchwork series answers its author too, after the list. */
		if (!r.to && bci_store_pw_series_by_build(store, r.build, series_author, author,
							  why, sizeof(why)) > 0 &&
		    bci_mail_address(author, address, sizeof(address)) == 0)
			r.to = address;
		why[0] = '\0';
		one = bci_mail_reply_queue(store, &r, id, sizeof(id), recipients, sizeof(recipients),
					   why, sizeof(why));
		if (log) {
			if (one == 0)
				fprintf(log, "mail: build %s: its jobs have all ended: reply %s queued"
					" to %s\n", r.build, id, recipients);
			else if (one < 0)
				fprintf(log, "mail: build %s: its reply: %s\n", r.build,
					why[0] ? why : strerror(-one));
			fflush(log);
		}
		queued += one == 0;
	}
	if (ret == -ENOMEM)
		bci_message(err, err_size, "%s", strerror(ENOMEM));
	for (size_t i = 0; i < finals.count; i++)
		free(finals.names[i]);
	free(finals.names);
	return ret < 0 ? ret : queued;
}
