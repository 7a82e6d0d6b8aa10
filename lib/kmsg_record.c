// SPDX-License-Identifier: MIT
/* /dev/kmsg records: see kmsg_record.h for the format. */
#include "kmsg_record.h"
#include "strv.h"

#include <stdio.h>
#include <string.h>

static bool is_c_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/*
 * A number the way strtoull() reads it in base 10 (white space, a sign,
 * digits; saturated on overflow, negated modulo 2^64 after a '-'), at @p
 * before @end. Returns where it stopped, or NULL when there are no digits.
 */
static const char *read_number(const char *p, const char *end, unsigned long long *value)
{
	unsigned long long v = 0;
	bool negative = false, overflow = false, digits = false;

	while (p < end && is_c_space(*p))
		p++;
	if (p < end && (*p == '-' || *p == '+'))
		negative = *p++ == '-';
	while (p < end && *p >= '0' && *p <= '9') {
		unsigned d = (unsigned)(*p++ - '0');

		digits = true;
		if (v > (~0ULL - d) / 10)
			overflow = true;
		v = v * 10 + d;
	}
	if (!digits)
		return NULL;
	if (overflow)
		v = ~0ULL;
	else if (negative)
		v = -v;
	*value = v;
	return p;
}

bool bci_kmsg_record_parse(const char *line, size_t len, struct bci_kmsg_record *rec)
{
	const char *end = line + strnlen(line, len), *p, *semicolon;
	unsigned long long prio;

	p = read_number(line, end, &prio);
	if (!p || p >= end || *p != ',')
		return false;
	p = read_number(p + 1, end, &rec->seq);
	if (!p || p >= end || *p != ',')
		return false;
	p = read_number(p + 1, end, &rec->usec);
	if (!p || p >= end || *p != ',' || p + 1 >= end)
		return false;
	rec->flags = p[1];
	semicolon = memchr(line, ';', (size_t)(end - line));
	if (!semicolon)
		return false;
	/* strtoul's value as an unsigned int: what sscanf's %u leaves. */
	rec->prio = (unsigned)prio;
	rec->text = semicolon + 1;
	rec->text_len = (size_t)(end - rec->text);
	return true;
}

int bci_kmsg_record_format(char *buf, size_t size, unsigned prio, unsigned long long seq,
			   unsigned long long usec, char flags, const char *text)
{
	return snprintf(buf, size, "%u,%llu,%llu,%c;%s", prio, seq, usec, flags, text);
}

static bool printable_or_space(int c)
{
	return (c >= 0x20 && c <= 0x7e) || (c >= '\t' && c <= '\r');
}

/*
 * The character of "\x.." at @p (after the "\x"), read as sscanf "%2x"
 * would: white space skipped, a sign taking one of the two digits. Returns
 * the number of digits read (0: none) and the value in *@c.
 */
static int escaped_char(const char *p, const char *end, int *c)
{
	int width = 2, digits = 0, sign = 1;

	*c = 0;
	while (p < end && is_c_space(*p))
		p++;
	if (p < end && (*p == '-' || *p == '+')) {
		sign = *p == '-' ? -1 : 1;
		p++;
		width--;
	}
	while (width > 0 && p < end && bci_hex_digit(*p) >= 0) {
		*c = *c * 16 + bci_hex_digit(*p++);
		width--;
		digits++;
	}
	*c *= sign;
	return digits;
}

/*
 * "<prio> [sec.usec] " into @buf (at least 40 bytes), as "<%u> [%llu.%06llu] "
 * would: without printf, since a results generator formats every record.
 */
static size_t format_prefix(char *buf, unsigned prio, unsigned long long usec)
{
	char digits[24];
	unsigned long long sec = usec / 1000000, frac = usec % 1000000;
	size_t n = 0, len = 0;
	int k;

	buf[len++] = '<';
	buf[len++] = (char)('0' + (prio & 7));
	buf[len++] = '>';
	buf[len++] = ' ';
	buf[len++] = '[';
	do
		digits[n++] = (char)('0' + sec % 10);
	while ((sec /= 10) != 0);
	while (n > 0)
		buf[len++] = digits[--n];
	buf[len++] = '.';
	for (k = 5; k >= 0; k--) {
		buf[len + (size_t)k] = (char)('0' + frac % 10);
		frac /= 10;
	}
	len += 6;
	buf[len++] = ']';
	buf[len++] = ' ';
	return len;
}

int bci_kmsg_record_format_readable(struct bci_str *out, const struct bci_kmsg_record *rec)
{
	const char *text = rec->text, *end = rec->text + rec->text_len;
	size_t len = rec->text_len, i, plain = 0;
	char prefix[48];
	int ret;

	bci_str_reset(out);
	ret = bci_str_append(out, prefix, format_prefix(prefix, rec->prio, rec->usec));
	for (i = 0; i < len && ret == 0; i++) {
		/* Only a backslash starts an escape: the bytes up to the next one are plain. */
		const char *backslash = memchr(text + i, '\\', len - i);
		int c;

		if (!backslash)
			break;
		i = (size_t)(backslash - text);
		if (i + 4 < len && text[i + 1] == 'x' &&
		    escaped_char(text + i + 2, end, &c) && printable_or_space(c)) {
			char ch = (char)c;

			ret = bci_str_append(out, text + plain, i - plain);
			if (ret == 0)
				ret = bci_str_append(out, &ch, 1);
			i += 3;
			plain = i + 1;
		}
	}
	if (ret == 0)
		ret = bci_str_append(out, text + plain, len - plain);
	return ret;
}
