// SPDX-License-Identifier: MIT
/*
 * A note of the master's own (mail.h, "note.c"): not a build's report but
 * a few lines about it (a series that did not build, a bisection's answer),
 * to the list and one more recipient, threaded on the message it follows,
 * queued in the outbox once under its key.
 */
#include "mail.h"

#include "../store/store.h"
#include "mail_header.h"
#include "message.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const days[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
				       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

int bci_mail_note_queue(struct bci_store *store, const char *data_dir,
			const struct bci_mail_note *n, char *message_id, size_t id_size,
			char *err, size_t err_size)
{
	struct bci_mail_config config = { 0 };
	struct bci_mail_envelope envelope = { 0 };
	char *text = NULL, *subject = NULL, *message = NULL, extra[320] = "";
	const char *domain;
	size_t len = 0, message_len = 0;
	time_t now = time(NULL);
	struct tm tm;
	FILE *out;
	int ret;

	if (id_size)
		message_id[0] = '\0';
	ret = bci_mail_config_load(data_dir, &config, err, err_size);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	if (n->to && bci_mail_address(n->to, extra, sizeof(extra)) < 0)
		extra[0] = '\0';
	if (!config.to && !extra[0]) {
		bci_mail_config_free(&config);
		return 0;
	}
	domain = strchr(config.sender, '@');
	domain = domain && domain[1] ? domain + 1 : "localhost";
	if ((ret = bci_mail_header_encode("Subject", n->subject, &subject)) < 0)
		goto out;
	gmtime_r(&now, &tm);
	out = open_memstream(&text, &len);
	if (!out) {
		ret = -ENOMEM;
		goto out;
	}
	fprintf(out, "From: %s\n", config.from);
	fprintf(out, "To: %s%s%s\n", config.to ? config.to : "", config.to && extra[0] ? ", " : "",
		extra);
	fprintf(out, "%s\n", subject);
	fprintf(out, "Date: %s, %02d %s %d %02d:%02d:%02d +0000\n", days[tm.tm_wday], tm.tm_mday,
		months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
	fprintf(out, "Message-ID: <bootci.%s.%lld@%s>\n", n->key, (long long)now, domain);
	if (n->in_reply_to)
		fprintf(out, "In-Reply-To: %s\nReferences: %s\n", n->in_reply_to, n->in_reply_to);
	fprintf(out, "MIME-Version: 1.0\n"
		     "Content-Type: text/plain; charset=utf-8\n"
		     "Content-Transfer-Encoding: 8bit\n"
		     "X-Bootci-Build: %s\n\n%s", n->key, n->body);
	if (fclose(out) != 0) {
		ret = -ENOMEM;
		goto out;
	}
	if ((ret = bci_mail_from_mbox(text, len, &message, &message_len, err, err_size)) < 0 ||
	    (ret = bci_mail_envelope_read(message, &envelope, err, err_size)) < 0)
		goto out;
	{
		struct bci_store_mail mail = { .message_id = envelope.message_id, .build = n->key,
					       .sender = config.sender,
					       .recipients = envelope.recipients, .message = message };

		ret = bci_store_mail_queue(store, &mail, NULL, err, err_size);
	}
	if (ret == -EEXIST)
		ret = 1;	/* the outbox holds this message already */
	else if (ret == 0)
		snprintf(message_id, id_size, "%s", envelope.message_id);
out:
	if (ret == -ENOMEM)
		bci_message(err, err_size, "%s", strerror(ENOMEM));
	bci_mail_envelope_free(&envelope);
	bci_mail_config_free(&config);
	free(message);
	free(text);
	free(subject);
	return ret;
}
