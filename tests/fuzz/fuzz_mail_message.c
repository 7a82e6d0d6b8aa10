// SPDX-License-Identifier: MIT
/*
 * Fuzz target for a message made ready for SMTP (mail/message.c): whatever
 * bci_mail_from_mbox() accepts has every line ended by CRLF and no bare CR
 * or LF, a blank line ending its headers, and no NUL; whatever envelope is
 * read from it has a Message-ID in angle brackets and recipients that are
 * each one address (no blank, no control character, an '@'), so nothing
 * read from a message can add an SMTP command of its own.
 */
#include "../../aggregator/master/mail/mail.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bci_mail_envelope envelope;
	char err[256] = "", *out = NULL;
	size_t len = 0;

	if (bci_mail_from_mbox((const char *)data, size, &out, &len, err, sizeof(err)) < 0) {
		if (!err[0])
			abort();
		return 0;
	}
	if (len != strlen(out) || len < 2 || memcmp(out + len - 2, "\r\n", 2) || !strstr(out, "\r\n\r\n"))
		abort();
	for (size_t i = 0; i < len; i++)
		if ((out[i] == '\r') != (i + 1 < len && out[i + 1] == '\n') ||
		    (out[i] == '\n' && (!i || out[i - 1] != '\r')))
			abort();
	err[0] = '\0';
	if (bci_mail_envelope_read(out, &envelope, err, sizeof(err)) == 0) {
		size_t id = strlen(envelope.message_id);

		if (envelope.message_id[0] != '<' || envelope.message_id[id - 1] != '>' ||
		    !strchr(envelope.message_id, '@') || strpbrk(envelope.message_id, "\r\n"))
			abort();
		for (const char *p = envelope.recipients; *p;) {
			size_t n = strcspn(p, "\n");

			if (!n || !memchr(p, '@', n) || p[n] != '\n')
				abort();
			for (size_t i = 0; i < n; i++)
				if ((unsigned char)p[i] <= ' ' || p[i] == 0x7f)
					abort();
			p += n + 1;
		}
		bci_mail_envelope_free(&envelope);
	} else if (!err[0]) {
		abort();
	}
	free(out);
	return 0;
}
