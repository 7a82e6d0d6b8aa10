// SPDX-License-Identifier: MIT
/*
 * The master's own mail to a series (patchwork.h): with DATA/mail.conf, a
 * short message to the list and the series' submitter, threaded on the
 * series' Message-ID, queued in the outbox once under its key. The reply to
 * a series that does not apply or build says why and links the build log
 * (as the build's message: the build is never registered, so no report's
 * reply comes for it); a bisection's answer is the other (bisect.c).
 */
#include "patchwork.h"

#include "../mail/mail.h"
#include "../report/report.h"
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

int bci_patchwork_mail_queue(struct bci_patchwork *pw, const struct bci_patchwork_mail *m,
			     char *err, size_t err_size)
{
	struct bci_mail_config config = { 0 };
	struct bci_mail_envelope envelope = { 0 };
	char *text = NULL, *subject = NULL, *message = NULL, author[320] = "";
	const char *domain;
	size_t len = 0, message_len = 0;
	time_t now = time(NULL);
	struct tm tm;
	FILE *out;
	int ret;

	ret = bci_mail_config_load(pw->data_dir, &config, err, err_size);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	if (m->submitter && bci_mail_address(m->submitter, author, sizeof(author)) < 0)
		author[0] = '\0';
	if (!config.to && !author[0]) {
		bci_mail_config_free(&config);
		return 0;
	}
	domain = strchr(config.sender, '@');
	domain = domain && domain[1] ? domain + 1 : "localhost";
	if ((ret = bci_mail_header_encode("Subject", m->subject, &subject)) < 0)
		goto out;
	gmtime_r(&now, &tm);
	out = open_memstream(&text, &len);
	if (!out) {
		ret = -ENOMEM;
		goto out;
	}
	fprintf(out, "From: %s\n", config.from);
	fprintf(out, "To: %s%s%s\n", config.to ? config.to : "", config.to && author[0] ? ", " : "",
		author);
	fprintf(out, "%s\n", subject);
	fprintf(out, "Date: %s, %02d %s %d %02d:%02d:%02d +0000\n", days[tm.tm_wday], tm.tm_mday,
		months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
	fprintf(out, "Message-ID: <bootci.%s.%lld@%s>\n", m->key, (long long)now, domain);
	if (m->message_id)
		fprintf(out, "In-Reply-To: %s\nReferences: %s\n", m->message_id, m->message_id);
	fprintf(out, "MIME-Version: 1.0\n"
		     "Content-Type: text/plain; charset=utf-8\n"
		     "Content-Transfer-Encoding: 8bit\n"
		     "X-Bootci-Build: %s\n\n%s", m->key, m->body);
	if (fclose(out) != 0) {
		ret = -ENOMEM;
		goto out;
	}
	if ((ret = bci_mail_from_mbox(text, len, &message, &message_len, err, err_size)) < 0 ||
	    (ret = bci_mail_envelope_read(message, &envelope, err, err_size)) < 0)
		goto out;
	{
		struct bci_store_mail mail = { .message_id = envelope.message_id, .build = m->key,
					       .sender = config.sender,
					       .recipients = envelope.recipients, .message = message };

		ret = bci_store_mail_queue(pw->store, &mail, NULL, err, err_size);
	}
	if (ret == -EEXIST)
		ret = 1;	/* the outbox holds this message already */
	else if (ret == 0)
		bci_patchwork_say(pw, "series %lld: mail %s queued to %s", (long long)m->series,
				  envelope.message_id, config.to ? config.to : author);
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

int bci_patchwork_fail_mail(struct bci_patchwork *pw, const struct bci_patchwork_failed *f,
			    char *err, size_t err_size)
{
	char *subject = NULL, *body = NULL;
	int ret;

	if (asprintf(&subject, "Re: %s", f->name ? f->name : f->build) < 0)
		return -ENOMEM;
	if (asprintf(&body, "bootci did not test this series: it %s.\n\n%s%s%s", f->why,
		     f->log_url ? "The build's log: " : "", f->log_url ? f->log_url : "",
		     f->log_url ? "\n" : "") < 0) {
		free(subject);
		return -ENOMEM;
	}
	struct bci_patchwork_mail m = { .series = f->series, .key = f->build,
					.message_id = f->message_id, .submitter = f->submitter,
					.subject = subject, .body = body };

	ret = bci_patchwork_mail_queue(pw, &m, err, err_size);
	free(subject);
	free(body);
	return ret;
}
