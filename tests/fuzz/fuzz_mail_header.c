// SPDX-License-Identifier: MIT
/*
 * Fuzz target for lib/mail_header.c: the input as a header's value, decoded.
 * The result stays within its bound, holds no control character more than
 * the input did (decoding never makes a line break or a NUL), and is valid
 * UTF-8 whenever the input was. Printable UTF-8 input goes through the
 * writer too and must read back as it was.
 */
#include "mail_header.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Whether the @n bytes at @s are UTF-8 (no overlong form, surrogate, or
 * character past U+10FFFF), and with @printable no control character either.
 */
static bool utf8_valid(const unsigned char *s, size_t n, bool printable)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], need, code, least;

		if (c < 0x80) {
			if (printable && (c < 0x20 || c == 0x7f))
				return false;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, code = c & 0x1f, least = 0x80;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, code = c & 0x0f, least = 0x800;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, code = c & 0x07, least = 0x10000;
		else
			return false;
		if (n - i <= need)
			return false;
		for (unsigned k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			code = code << 6 | (s[i + k] & 0x3f);
		}
		if (code < least || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff) ||
		    (printable && code < 0xa0))
			return false;
		i += need + 1;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = strnlen((const char *)data, size), out_len, controls_in[33] = { 0 };
	char *out = NULL;
	int ret = bci_mail_header_decode((const char *)data, size, &out);

	if (ret < 0) {
		if (out)
			abort();
		return 0;
	}
	out_len = strlen(out);
	if (out_len > BCI_MAIL_HEADER_DECODED_MAX(size))
		abort();
	for (size_t i = 0; i < len; i++)
		if (data[i] < 0x20 || data[i] == 0x7f)
			controls_in[data[i] == 0x7f ? 32 : data[i]]++;
	for (size_t i = 0; i < out_len; i++) {
		unsigned char c = (unsigned char)out[i];

		if ((c < 0x20 || c == 0x7f) && controls_in[c == 0x7f ? 32 : c]-- == 0)
			abort();
	}
	if (utf8_valid(data, len, false) && !utf8_valid((const unsigned char *)out, out_len, false))
		abort();
	/* Nothing decoded: the input unfolded, so never longer than it. */
	if (ret == 0 && out_len > len)
		abort();
	free(out);
	/* Printable text the writer encodes, the reader reads back after the blank it leaves. */
	if (len == size && utf8_valid(data, len, true)) {
		char *text = strndup((const char *)data, len), *header = NULL;

		if (!text)
			return 0;
		if (bci_mail_header_encode("Subject", text, &header) == 0) {
			if (bci_mail_header_decode(header + 8, strlen(header + 8), &out) <= 0 ||
			    out[0] != ' ' || strcmp(out + 1, text))
				abort();
			free(out);
		}
		free(header);
		free(text);
	}
	return 0;
}
