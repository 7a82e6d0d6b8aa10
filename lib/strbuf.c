// SPDX-License-Identifier: MIT
#include "strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bci_strbuf_reserve(struct bci_strbuf *b, size_t cap)
{
	size_t new_cap = b->cap ? b->cap : 256;
	char *p;

	if (cap + 1 <= b->cap)
		return 0;
	if (cap + 1 < cap)
		return -ENOMEM;
	while (new_cap < cap + 1)
		new_cap = new_cap * 2 > new_cap ? new_cap * 2 : cap + 1;
	p = realloc(b->p, new_cap);
	if (!p)
		return -ENOMEM;
	if (!b->p)
		p[0] = '\0';
	b->p = p;
	b->cap = new_cap;
	return 0;
}

int bci_strbuf_append(struct bci_strbuf *b, const char *s, size_t len)
{
	int ret;

	if (b->len + len < b->len)
		return -ENOMEM;
	ret = bci_strbuf_reserve(b, b->len + len);
	if (ret < 0)
		return ret;
	memcpy(b->p + b->len, s, len);
	b->len += len;
	b->p[b->len] = '\0';
	return 0;
}

int bci_strbuf_appendf(struct bci_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n, ret;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	ret = bci_strbuf_reserve(b, b->len + (size_t)n);
	if (ret < 0)
		return ret;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void bci_strbuf_reset(struct bci_strbuf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
}

void bci_strbuf_release(struct bci_strbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

char *bci_strbuf_steal(struct bci_strbuf *b, size_t *len)
{
	char *p = b->p;

	if (len)
		*len = b->len;
	memset(b, 0, sizeof(*b));
	return p;
}
