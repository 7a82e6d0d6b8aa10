// SPDX-License-Identifier: MIT
#include "testlist.h"
#include "igtout.h"
#include "message.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int bci_igt_name_valid(const char *name, int subtest)
{
	if (!*name)
		return 0;
	for (const char *p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (isalnum(c) || c == '_' || c == '-')
			continue;
		if (subtest && (c == '.' || c == '+' || c == ':'))
			continue;
		return 0;
	}
	return 1;
}

/* Copies the @-separated field starting at @p into @out; returns the end. */
static const char *field(const char *p, char *out, size_t size, int *too_long)
{
	size_t n = strcspn(p, "@");

	if (n >= size) {
		*too_long = 1;
		n = size - 1;
	}
	memcpy(out, p, n);
	out[n] = '\0';
	return p + strcspn(p, "@");
}

int bci_testlist_parse_line(const char *line, struct bci_test_name *name, char *err,
			    size_t err_size)
{
	const char *p = line, *end;
	int too_long = 0;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '\0' || *p == '#')
		return 0;
	end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	if (end - p > 1000) {
		bci_message(err, err_size, "test name longer than 1000 characters");
		return -EINVAL;
	}
	char copy[1024];
	memcpy(copy, p, (size_t)(end - p));
	copy[end - p] = '\0';

	memset(name, 0, sizeof(*name));
	/* bootci's own plan items: bootci@suspend@<state>[_<pm_test>]@<count>. */
	if (strncmp(copy, "bootci@suspend@", 15) == 0) {
		const char *spec = copy + 15, *at = strchr(spec, '@');
		char *rest;
		unsigned long count;
		if (!at || at == spec || (size_t)(at - spec) >= sizeof(name->subtest) ||
		    !at[1] || (count = strtoul(at + 1, &rest, 10)) == 0 || *rest || count > 100000) {
			bci_message(err, err_size,
				    "'%s': expected bootci@suspend@<state>[_<pm_test>]@<count> (count 1-100000)",
				    copy);
			return -EINVAL;
		}
		snprintf(name->binary, sizeof(name->binary), "%s", BCI_IGTOUT_SUSPEND_BINARY);
		memcpy(name->subtest, spec, (size_t)(at - spec));
		snprintf(name->dynamic, sizeof(name->dynamic), "%lu", count);
		if (!bci_igt_name_valid(name->subtest, 1)) {
			bci_message(err, err_size, "'%s': bad suspend state '%s'", copy, name->subtest);
			return -EINVAL;
		}
		return 1;
	}
	if (strncmp(copy, "igt@", 4) != 0) {
		bci_message(err, err_size, "'%s' is not an IGT test name (igt@<binary>[@<subtest>[@<dynamic>]])", copy);
		return -EINVAL;
	}
	p = field(copy + 4, name->binary, sizeof(name->binary), &too_long);
	if (*p == '@')
		p = field(p + 1, name->subtest, sizeof(name->subtest), &too_long);
	if (*p == '@')
		p = field(p + 1, name->dynamic, sizeof(name->dynamic), &too_long);
	if (*p != '\0' || too_long) {
		bci_message(err, err_size, "'%s': %s", copy, too_long ? "a part is too long" : "more than three parts after igt@");
		return -EINVAL;
	}
	if (!bci_igt_name_valid(name->binary, 0)) {
		bci_message(err, err_size, "'%s': bad binary name '%s'", copy, name->binary);
		return -EINVAL;
	}
	/* Empty parts ("igt@bin@", "igt@bin@sub@") are mistakes, not wildcards. */
	int parts = 1;
	for (const char *q = copy + 4; *q; q++)
		parts += *q == '@';
	if (parts >= 2 && !bci_igt_name_valid(name->subtest, 1)) {
		bci_message(err, err_size, "'%s': bad subtest name '%s'", copy, name->subtest);
		return -EINVAL;
	}
	if (parts == 3 && !bci_igt_name_valid(name->dynamic, 1)) {
		bci_message(err, err_size, "'%s': bad dynamic subtest name '%s'", copy, name->dynamic);
		return -EINVAL;
	}
	return 1;
}

int bci_testlist_parse(const char *origin, const char *text, size_t len,
		       int (*fn)(const struct bci_test_name *name, void *data), void *data,
		       char *err, size_t err_size)
{
	unsigned lineno = 0;
	const char *p = text, *end = text + len;

	if (memchr(text, '\0', len)) {
		bci_message(err, err_size, "%s: NUL byte in the file", origin);
		return -EINVAL;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[1100], msg[512];
		struct bci_test_name name;
		int ret;

		lineno++;
		if (n >= sizeof(line)) {
			bci_message(err, err_size, "%s:%u: line longer than %zu characters", origin, lineno,
				  sizeof(line) - 1);
			return -EINVAL;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (nl ? 1 : 0);
		ret = bci_testlist_parse_line(line, &name, msg, sizeof(msg));
		if (ret < 0) {
			bci_message(err, err_size, "%s:%u: %s", origin, lineno, msg);
			return ret;
		}
		if (ret == 0)
			continue;
		ret = fn(&name, data);
		if (ret < 0) {
			bci_message(err, err_size, "%s:%u: %s", origin, lineno, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int bci_joblist_add(struct bci_joblist *list, const char *binary, const char *const *subtests,
		    size_t count)
{
	struct bci_joblist_entry *entries, *e;

	entries = realloc(list->entries, (list->count + 1) * sizeof(*entries));
	if (!entries)
		return -ENOMEM;
	list->entries = entries;
	e = &entries[list->count];
	memset(e, 0, sizeof(*e));
	e->binary = strdup(binary);
	e->subtests = calloc(count + 1, sizeof(char *));
	if (!e->binary || !e->subtests)
		goto fail;
	for (size_t i = 0; i < count; i++) {
		e->subtests[i] = strdup(subtests[i]);
		if (!e->subtests[i])
			goto fail;
		e->count++;
	}
	list->count++;
	return 0;
fail:
	for (size_t i = 0; i < e->count; i++)
		free(e->subtests[i]);
	free(e->subtests);
	free(e->binary);
	return -ENOMEM;
}

void bci_joblist_clear(struct bci_joblist *list)
{
	for (size_t i = 0; i < list->count; i++) {
		for (size_t j = 0; j < list->entries[i].count; j++)
			free(list->entries[i].subtests[j]);
		free(list->entries[i].subtests);
		free(list->entries[i].binary);
	}
	free(list->entries);
	list->entries = NULL;
	list->count = 0;
}

/* Is @s a valid joblist subtest: "<subtest>" or "<subtest>@<dynamic>"? */
static int job_subtest_valid(const char *s)
{
	char copy[600];
	char *at;

	if (strlen(s) >= sizeof(copy))
		return 0;
	strcpy(copy, s);
	at = strchr(copy, '@');
	if (at) {
		*at = '\0';
		if (!bci_igt_name_valid(at + 1, 1))
			return 0;
	}
	return bci_igt_name_valid(copy, 1);
}

int bci_joblist_parse(const char *origin, const char *text, size_t len, struct bci_joblist *list,
		      char *err, size_t err_size)
{
	char *copy, *line, *next;
	unsigned lineno = 0;
	int ret = 0;

	if (memchr(text, '\0', len)) {
		bci_message(err, err_size, "%s: NUL byte in the file", origin);
		return -EINVAL;
	}
	copy = strndup(text, len);
	if (!copy)
		return -ENOMEM;
	for (line = copy; line && *line; line = next) {
		const char *subs[1024];
		size_t count = 0;
		char *space, *save = NULL;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		space = strchr(line, ' ');
		if (space)
			*space++ = '\0';
		if (!bci_igt_name_valid(line, 0)) {
			bci_message(err, err_size, "%s:%u: bad binary name '%.100s'", origin, lineno, line);
			ret = -EINVAL;
			break;
		}
		if (space) {
			for (char *tok = strtok_r(space, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (count == sizeof(subs) / sizeof(subs[0]) || !job_subtest_valid(tok)) {
					bci_message(err, err_size, "%s:%u: bad subtest '%.100s'", origin,
						  lineno, tok);
					ret = -EINVAL;
					break;
				}
				subs[count++] = tok;
			}
			if (ret < 0)
				break;
			if (count == 0) {
				bci_message(err, err_size, "%s:%u: no subtest after the binary", origin, lineno);
				ret = -EINVAL;
				break;
			}
		}
		ret = bci_joblist_add(list, line, subs, count);
		if (ret < 0)
			break;
	}
	free(copy);
	if (ret < 0)
		bci_joblist_clear(list);
	return ret;
}

int bci_joblist_format(const struct bci_joblist *list, char **text, size_t *len)
{
	size_t size = 1;
	char *buf, *p;

	for (size_t i = 0; i < list->count; i++) {
		size += strlen(list->entries[i].binary) + 2;
		for (size_t j = 0; j < list->entries[i].count; j++)
			size += strlen(list->entries[i].subtests[j]) + 1;
	}
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	p = buf;
	for (size_t i = 0; i < list->count; i++) {
		const struct bci_joblist_entry *e = &list->entries[i];
		p += sprintf(p, "%s", e->binary);
		for (size_t j = 0; j < e->count; j++)
			p += sprintf(p, "%c%s", j == 0 ? ' ' : ',', e->subtests[j]);
		*p++ = '\n';
	}
	*p = '\0';
	*text = buf;
	*len = (size_t)(p - buf);
	return 0;
}
