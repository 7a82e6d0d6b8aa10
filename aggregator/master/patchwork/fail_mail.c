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

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int bci_patchwork_mail_queue(struct bci_patchwork *pw, const struct bci_patchwork_mail *m,
			     char *err, size_t err_size)
{
	struct bci_mail_note n = { .key = m->key, .in_reply_to = m->message_id,
				   .to = m->submitter, .subject = m->subject, .body = m->body };
	char message_id[1024];
	int ret = bci_mail_note_queue(pw->store, pw->data_dir, &n, message_id, sizeof(message_id),
				      err, err_size);

	if (ret == 0 && message_id[0])
		bci_patchwork_say(pw, "series %lld: mail %s queued", (long long)m->series,
				  message_id);
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
