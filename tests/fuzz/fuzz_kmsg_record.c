// SPDX-License-Identifier: MIT
/*
 * Fuzz target for lib/kmsg_record.c: the input, line by line, as /dev/kmsg
 * records; each record parsed is formatted back (raw and readable) and the
 * raw form must parse to the same fields.
 */
#include "kmsg_record.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	struct bci_str readable = { 0 };

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl + 1 : end) - p);
		struct bci_kmsg_record r, again;

		if (bci_kmsg_record_parse(p, len, &r)) {
			char *text = strndup(r.text, r.text_len), line[512];

			if (r.text < p || r.text + r.text_len > p + len || !text)
				abort();
			if (bci_kmsg_record_format_readable(&readable, &r) < 0 || !readable.data)
				abort();
			int n = bci_kmsg_record_format(line, sizeof(line), r.prio, r.seq, r.usec,
						       r.flags ? r.flags : '-', text);
			if (n > 0 && (size_t)n < sizeof(line) && r.flags && r.flags != ';' &&
			    (!bci_kmsg_record_parse(line, (size_t)n, &again) || again.prio != r.prio ||
			     again.seq != r.seq || again.usec != r.usec || again.flags != r.flags))
				abort();
			free(text);
		}
		p += len;
	}
	bci_str_free(&readable);
	return 0;
}
