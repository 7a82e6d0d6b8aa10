// SPDX-License-Identifier: MIT
/*
 * One pass over the outbox (mail.h's bci_mail_deliver): the due messages
 * read first (a statement is not run inside another's rows), then each
 * claimed, sent, and its outcome stored at once.
 */
#include "mail.h"

#include "../store/store.h"
#include "message.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct due {
	int64_t key;
	char *message_id, *build, *sender, *recipients, *message;
	int attempts;
	double created;
};

struct due_list {
	struct due *items;
	size_t count, cap;
};

static int due_take(const struct bci_store_mail *mail, void *ctx)
{
	struct due_list *list = ctx;
	struct due *d;

	if (list->count == list->cap) {
		size_t more = list->cap ? list->cap * 2 : 8;
		struct due *grown = realloc(list->items, more * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		list->items = grown;
		list->cap = more;
	}
	d = &list->items[list->count];
	*d = (struct due){
		.key = mail->key, .attempts = mail->attempts, .created = mail->created,
		.message_id = strdup(mail->message_id), .build = mail->build ? strdup(mail->build) : NULL,
		.sender = strdup(mail->sender), .recipients = strdup(mail->recipients),
		.message = strdup(mail->message),
	};
	list->count++;
	if (!d->message_id || !d->sender || !d->recipients || !d->message ||
	    (mail->build && !d->build))
		return -ENOMEM;
	return 0;
}

static void due_list_free(struct due_list *list)
{
	for (size_t i = 0; i < list->count; i++) {
		struct due *d = &list->items[i];

		free(d->message_id);
		free(d->build);
		free(d->sender);
		free(d->recipients);
		free(d->message);
	}
	free(list->items);
}

double bci_mail_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What the accepted callback needs: it marks the message sent the moment the server took it. */
struct accepted {
	struct bci_store *store;
	const struct due *due;
	int marked;
	char err[512];
};

static void mark_sent(void *ctx)
{
	struct accepted *a = ctx;

	a->marked = bci_store_mail_sent(a->store, a->due->key, bci_mail_now(),
					a->due->attempts + 1, a->err, sizeof(a->err)) == 0;
}

/* The delay before attempt @attempts + 1: retry-first doubled each attempt, up to retry-max. */
static double backoff(const struct bci_mail_config *config, int attempts)
{
	double delay = (double)config->retry_first;

	for (int i = 1; i < attempts && delay < (double)config->retry_max; i++)
		delay *= 2;
	return delay < (double)config->retry_max ? delay : (double)config->retry_max;
}

static void say(FILE *log, const struct due *d, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(FILE *log, const struct due *d, const char *fmt, ...)
{
	va_list ap;

	if (!log)
		return;
	/* One line, whole, among serve's other threads' lines. */
	flockfile(log);
	fprintf(log, "mail: %s", d->message_id);
	if (d->build)
		fprintf(log, " (build %s)", d->build);
	fputs(": ", log);
	va_start(ap, fmt);
	vfprintf(log, fmt, ap);
	va_end(ap);
	fputc('\n', log);
	fflush(log);
	funlockfile(log);
}

static int deliver_one(struct bci_store *store, const struct bci_mail_config *config,
		       const struct due *d, double now, FILE *log, const atomic_bool *stop,
		       struct bci_mail_pass *pass, char *err, size_t err_size)
{
	struct accepted accepted = { .store = store, .due = d };
	int attempts = d->attempts + 1, ret;
	char why[600] = "";
	double delay;

	ret = bci_store_mail_claim(store, d->key, now, now + (double)config->timeout + 60, err,
				   err_size);
	if (ret <= 0)
		return ret;	/* another sender has it */
	ret = bci_smtp_send(config, d->sender, d->recipients, d->message, strlen(d->message),
			    mark_sent, &accepted, stop, why, sizeof(why));
	if (ret == BCI_SMTP_SENT) {
		if (!accepted.marked) {
			/* Accepted but not marked: the next pass sends it again (mail.h). */
			bci_message(err, err_size, "%s: sent, but not marked sent: %s",
				    d->message_id, accepted.err);
			return -EIO;
		}
		pass->sent++;
		say(log, d, "sent (attempt %d)", attempts);
		return 0;
	}
	if (ret < 0) {
		/* Nothing was tried (the auth file): the same as a refusal for now. */
		ret = BCI_SMTP_LATER;
	}
	delay = backoff(config, attempts);
	if (ret == BCI_SMTP_LATER && now + delay <= d->created + (double)config->retry_for) {
		ret = bci_store_mail_retry(store, d->key, attempts, now + delay, why, err, err_size);
		if (ret < 0)
			return ret;
		pass->retried++;
		say(log, d, "not sent (attempt %d), retried in %.0f s: %s", attempts, delay, why);
		return 0;
	}
	if (ret == BCI_SMTP_LATER) {
		char last[sizeof(why)];

		memcpy(last, why, sizeof(last));
		bci_message(why, sizeof(why), "not sent in retry-for (%lu s): %s", config->retry_for,
			    last);
	}
	ret = bci_store_mail_failed(store, d->key, attempts, why, err, err_size);
	if (ret < 0)
		return ret;
	pass->failed++;
	say(log, d, "not sent (attempt %d), kept as failed and not retried: %s", attempts, why);
	return 0;
}

int bci_mail_deliver(struct bci_store *store, const struct bci_mail_config *config, double now,
		     FILE *log, const atomic_bool *stop, struct bci_mail_pass *pass, char *err,
		     size_t err_size)
{
	struct due_list list = { 0 };
	int ret, first_error = 0;

	*pass = (struct bci_mail_pass){ 0 };
	ret = bci_store_mail_due(store, now, due_take, &list, err, err_size);
	if (ret < 0) {
		if (ret == -ENOMEM)
			bci_message(err, err_size, "outbox: %s", strerror(ENOMEM));
		due_list_free(&list);
		return ret;
	}
	for (size_t i = 0; i < list.count && !(stop && atomic_load(stop)); i++) {
		char one[600] = "";

		ret = deliver_one(store, config, &list.items[i], now, log, stop, pass, one,
				  sizeof(one));
		if (ret < 0 && !first_error) {
			first_error = ret;
			bci_message(err, err_size, "%s", one);
		}
	}
	due_list_free(&list);
	return first_error ? first_error : pass->sent;
}
