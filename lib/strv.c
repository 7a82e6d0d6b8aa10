// SPDX-License-Identifier: MIT
#include "strv.h"

#include "message.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for @need more bytes (terminator included) in a buffer of @cap bytes. */
static int grow(void **data, size_t *cap, size_t used, size_t need, size_t item_size)
{
	size_t bigger = *cap ? *cap : 8;
	void *p;

	if (used + need <= *cap)
		return 0;
	if (used > SIZE_MAX / item_size / 2 || need > SIZE_MAX / item_size / 2 - used)
		return -ENOMEM;
	while (bigger < used + need)
		bigger *= 2;
	p = realloc(*data, bigger * item_size);
	if (!p)
		return -ENOMEM;
	*data = p;
	*cap = bigger;
	return 0;
}

int bci_str_append(struct bci_str *s, const char *text, size_t len)
{
	void *data = s->data;
	int ret = grow(&data, &s->cap, s->len, len + 1, 1);

	s->data = data;
	if (ret < 0)
		return ret;
	memcpy(s->data + s->len, text, len);
	s->len += len;
	s->data[s->len] = '\0';
	return 0;
}

int bci_str_reserve(struct bci_str *s, size_t len)
{
	void *data = s->data;
	int ret = len < SIZE_MAX ? grow(&data, &s->cap, 0, len + 1, 1) : -ENOMEM;

	s->data = data;
	if (ret == 0 && s->len == 0)
		s->data[0] = '\0';
	return ret;
}

void bci_str_reset(struct bci_str *s)
{
	s->len = 0;
	if (s->data)
		s->data[0] = '\0';
}

int bci_str_appendf(struct bci_str *s, const char *fmt, ...)
{
	va_list ap;
	char *text;
	int n, ret;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	ret = bci_str_append(s, text, (size_t)n);
	free(text);
	return ret;
}

char *bci_str_steal(struct bci_str *s)
{
	char *text = s->data ? s->data : strdup("");

	s->data = NULL;
	s->len = s->cap = 0;
	return text;
}

void bci_str_free(struct bci_str *s)
{
	free(s->data);
	s->data = NULL;
	s->len = s->cap = 0;
}

/* Takes @copy (malloc'ed) into the list, or frees it. */
static int strv_take(struct bci_strv *v, char *copy)
{
	void *items = v->items;
	int ret;

	if (!copy)
		return -ENOMEM;
	ret = grow(&items, &v->cap, v->count, 2, sizeof(char *));
	v->items = items;
	if (ret < 0) {
		free(copy);
		return ret;
	}
	v->items[v->count++] = copy;
	v->items[v->count] = NULL;
	return 0;
}

int bci_strv_add(struct bci_strv *v, const char *s)
{
	return strv_take(v, strdup(s));
}

int bci_strv_addn(struct bci_strv *v, const char *s, size_t len)
{
	return strv_take(v, strndup(s, len));
}

int bci_strv_addf(struct bci_strv *v, const char *fmt, ...)
{
	va_list ap;
	char *text;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	return strv_take(v, n < 0 ? NULL : text);
}

int bci_strv_split(struct bci_strv *v, const char *text, const char *separators)
{
	int ret = 0;

	for (const char *p = text; *p && !ret;) {
		size_t n;

		p += strspn(p, separators);
		n = strcspn(p, separators);
		if (n)
			ret = bci_strv_addn(v, p, n);
		p += n;
	}
	return ret;
}

bool bci_strv_contains(const struct bci_strv *v, const char *s)
{
	for (size_t i = 0; i < v->count; i++)
		if (!strcmp(v->items[i], s))
			return true;
	return false;
}

char *bci_strv_lines(const struct bci_strv *v)
{
	size_t size = 1, len = 0;
	char *text;

	for (size_t i = 0; i < v->count; i++)
		size += strlen(v->items[i]) + 1;
	if (!(text = malloc(size)))
		return NULL;
	for (size_t i = 0; i < v->count; i++) {
		size_t n = strlen(v->items[i]);

		memcpy(text + len, v->items[i], n);
		text[len + n] = '\n';
		len += n + 1;
	}
	text[len] = '\0';
	return text;
}

void bci_strv_free(struct bci_strv *v)
{
	for (size_t i = 0; i < v->count; i++)
		free(v->items[i]);
	free(v->items);
	v->items = NULL;
	v->count = v->cap = 0;
}

static bool is_name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/* The name of the reference at @name (just after "${"), into @var; its '}' in *@close. */
static int expand_name(const char *in, const char *name, char var[256], const char **close,
		       char *err, size_t err_size)
{
	const char *end = strchr(name, '}');

	if (!end) {
		bci_message(err, err_size, "unterminated '${' in '%s'", in);
		return -EINVAL;
	}
	if (end == name || !is_name_start(*name) || end - name >= 256) {
		bci_message(err, err_size, "bad variable name in '%s'", in);
		return -EINVAL;
	}
	for (const char *c = name; c < end; c++) {
		if (!is_name_char(*c)) {
			bci_message(err, err_size, "bad variable name in '%s'", in);
			return -EINVAL;
		}
	}
	memcpy(var, name, (size_t)(end - name));
	var[end - name] = '\0';
	*close = end;
	return 0;
}

int bci_expand_vars(const char *in, bci_lookup_fn lookup, void *data, char **out, char *err,
		    size_t err_size)
{
	struct bci_str s = { 0 };
	const char *p = in, *dollar, *close = NULL, *value;
	char var[256];
	int ret = 0;

	while (!ret && (dollar = strstr(p, "${"))) {
		ret = bci_str_append(&s, p, (size_t)(dollar - p));
		if (!ret)
			ret = expand_name(in, dollar + 2, var, &close, err, err_size);
		if (ret < 0)
			break;
		value = lookup(var, data);
		if (!value) {
			bci_message(err, err_size, "variable '%s' is not set", var);
			ret = -EINVAL;
			break;
		}
		ret = bci_str_append(&s, value, strlen(value));
		p = close + 1;
	}
	if (!ret)
		ret = bci_str_append(&s, p, strlen(p));
	if (!ret)
		*out = bci_str_steal(&s);
	if (!ret && !*out)
		ret = -ENOMEM;
	if (ret < 0) {
		if (ret == -ENOMEM)
			bci_message(err, err_size, "out of memory");
		bci_str_free(&s);
	}
	return ret;
}

double bci_strtod(const char *s, char **end)
{
	static const double powers[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
	};
	const char *p = s;
	uint64_t mantissa = 0;
	int digits = 0, fraction = 0;

	for (; *p >= '0' && *p <= '9' && digits < 19; p++, digits++)
		mantissa = mantissa * 10 + (uint64_t)(*p - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && digits < 19; p++, digits++, fraction++)
			mantissa = mantissa * 10 + (uint64_t)(*p - '0');
	/* More digits than counted, an exponent, "0x...": strtod's; so is no number at all. */
	if (!digits || (*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' ||
	    *p == 'x' || *p == 'X' || *p == 'p' || *p == 'P' || mantissa > (1ull << 53) ||
	    fraction > 22)
		return strtod(s, end);
	if (end)
		*end = (char *)p;
	return (double)mantissa / powers[fraction];
}

int bci_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
