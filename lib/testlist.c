// SPDX-License-Identifier: MIT
#include "testlist.h"
#include "igt_protocol.h"
#include "message.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The suspend-cycle grammar's complaint, with what it accepts. */
#define UNKNOWN_KIND                                                                       \
	"unknown state or pm_test level (states " BCI_TESTLIST_SUSPEND_STATES "; pm_test "  \
	BCI_TESTLIST_SUSPEND_PM_TESTS ")"


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

/*
 * A cycle spec, `<state>[_<pm_test>]@<count>` (count 1-100000), as a testlist's
 * bootci@suspend items and the suspend_* configuration keys write it: 0 with
 * the state part in @cycle, or -EINVAL. The state itself is the planner's check.
 */
static int cycle_spec_parse(const char *text, char *cycle, size_t size, unsigned long *count)
{
	const char *at = strchr(text, '@');
	char *rest;

	if (!at || at == text || (size_t)(at - text) >= size || !isdigit((unsigned char)at[1]))
		return -EINVAL;
	*count = strtoul(at + 1, &rest, 10);
	if (*count == 0 || *rest || *count > BCI_TESTLIST_CYCLE_COUNT_MAX)
		return -EINVAL;
	memcpy(cycle, text, (size_t)(at - text));
	cycle[at - text] = '\0';
	return 0;
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
		unsigned long count;
		if (cycle_spec_parse(copy + 15, name->subtest, sizeof(name->subtest), &count) < 0) {
			bci_message(err, err_size,
				    "'%s': expected bootci@suspend@<state>[_<pm_test>]@<count> (count 1-100000)",
				    copy);
			return -EINVAL;
		}
		snprintf(name->binary, sizeof(name->binary), "%s", BCI_IGT_SUSPEND_BINARY);
		snprintf(name->dynamic, sizeof(name->dynamic), "%lu", count);
		if (!bci_igt_name_valid(name->subtest, 1)) {
			bci_message(err, err_size, "'%s': bad suspend state '%s'", copy, name->subtest);
			return -EINVAL;
		}
		if (!bci_testlist_cycle_kind_valid(name->subtest)) {
			bci_message(err, err_size, "'%s': " UNKNOWN_KIND, copy);
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

static void entry_free(struct bci_joblist_entry *e)
{
	for (size_t j = 0; j < e->count; j++)
		free(e->subtests[j]);
	free(e->subtests);
	free(e->binary);
}

void bci_joblist_clear(struct bci_joblist *list)
{
	for (size_t i = 0; i < list->count; i++)
		entry_free(&list->entries[i]);
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

/* ---- suspend cycles from the configuration ---- */

static const char *const suspend_states[] = { "freeze", "standby", "mem", "disk" };
static const char *const suspend_pm_tests[] = { "freezer", "devices", "platform", "processors",
						 "core" };

static bool in_list(const char *word, size_t len, const char *const *list, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (strlen(list[i]) == len && memcmp(list[i], word, len) == 0)
			return true;
	return false;
}

/* `<state>[_<pm_test>]` in the @len bytes at @kind, split at its first '_'. */
static bool kind_valid(const char *kind, size_t len, size_t *state_len)
{
	const char *plus = memchr(kind, '_', len);

	*state_len = plus ? (size_t)(plus - kind) : len;
	if (!in_list(kind, *state_len, suspend_states,
		     sizeof(suspend_states) / sizeof(suspend_states[0])))
		return false;
	return !plus || in_list(plus + 1, len - *state_len - 1, suspend_pm_tests,
				sizeof(suspend_pm_tests) / sizeof(suspend_pm_tests[0]));
}

int bci_testlist_cycle_kind_valid(const char *kind)
{
	size_t state_len;

	return kind_valid(kind, strlen(kind), &state_len);
}

int bci_testlist_cycle_name_parse(const char *cycle, struct bci_testlist_cycle_name *name)
{
	const char *dash = strrchr(cycle, '-');
	unsigned long number = 0;
	size_t state_len, digits;

	memset(name, 0, sizeof(*name));
	if (!dash)
		return -EINVAL;
	digits = strlen(dash + 1);
	if (digits < 4 || digits > 9)
		return -EINVAL;
	for (const char *p = dash + 1; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		number = number * 10 + (unsigned long)(*p - '0');
	}
	if (number == 0 || !kind_valid(cycle, (size_t)(dash - cycle), &state_len))
		return -EINVAL;
	snprintf(name->state, sizeof(name->state), "%.*s", (int)state_len, cycle);
	if (cycle[state_len] == '_')
		snprintf(name->pm_test, sizeof(name->pm_test), "%.*s",
			 (int)(dash - cycle - (long)state_len - 1), cycle + state_len + 1);
	name->number = (unsigned)number;
	return 0;
}

int bci_testlist_cycles_parse(const char *key, const char *value, struct bci_testlist_cycle *specs,
			      size_t *count, char *err, size_t err_size)
{
	const char *p = value;

	*count = 0;
	for (;;) {
		struct bci_testlist_cycle *spec = &specs[*count];
		char token[300];
		size_t n;

		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			return 0;
		if (*count == BCI_TESTLIST_CYCLE_SPECS_MAX) {
			bci_message(err, err_size, "%s: '%s': more than %d cycle specs", key, value,
				    BCI_TESTLIST_CYCLE_SPECS_MAX);
			return -EINVAL;
		}
		n = strcspn(p, " \t\n\v\f\r");
		snprintf(token, sizeof(token), "%.*s", (int)n, p);
		p += n;
		if (n >= sizeof(token) ||
		    cycle_spec_parse(token, spec->cycle, sizeof(spec->cycle), &spec->count) < 0) {
			bci_message(err, err_size,
				    "%s: '%s': expected <state>[_<pm_test>]@<count> (count 1-%d)", key,
				    token, BCI_TESTLIST_CYCLE_COUNT_MAX);
			return -EINVAL;
		}
		if (!bci_igt_name_valid(spec->cycle, 1)) {
			bci_message(err, err_size, "%s: '%s': bad suspend state '%s'", key, token,
				    spec->cycle);
			return -EINVAL;
		}
		if (!bci_testlist_cycle_kind_valid(spec->cycle)) {
			bci_message(err, err_size, "%s: '%s': " UNKNOWN_KIND, key, token);
			return -EINVAL;
		}
		(*count)++;
	}
}

/* A cycle job as the planner writes it: one subtest `<state>[_<pm_test>]-<NNNN>`. */
static bool is_cycle_job(const struct bci_joblist_entry *e)
{
	const char *dash;

	if (strcmp(e->binary, BCI_IGT_SUSPEND_BINARY) != 0 || e->count != 1)
		return false;
	dash = strrchr(e->subtests[0], '-');
	return dash && dash > e->subtests[0] &&
	       (size_t)(dash - e->subtests[0]) < sizeof(((struct bci_testlist_cycle *)0)->cycle);
}

/* The new plan, and the next number of every <state>[_<pm_test>] seen so far. */
struct cycle_plan {
	struct bci_joblist_entry *entries; /* room for all jobs, allocated up front */
	size_t used;
	struct bci_testlist_cycle *next;   /* .count is the next number */
	size_t kinds;
};

/* Appends the cycle job `<cycle>-<NNNN>` (@cycle is @len characters), the next number of its kind. */
static int plan_cycle(struct cycle_plan *plan, const char *cycle, size_t len)
{
	struct bci_joblist_entry *e = &plan->entries[plan->used];
	struct bci_testlist_cycle *kind = NULL;
	char name[300];

	for (size_t i = 0; i < plan->kinds && !kind; i++)
		if (strlen(plan->next[i].cycle) == len && strncmp(plan->next[i].cycle, cycle, len) == 0)
			kind = &plan->next[i];
	if (!kind) {
		struct bci_testlist_cycle *more = realloc(plan->next, (plan->kinds + 1) * sizeof(*more));
		if (!more)
			return -ENOMEM;
		plan->next = more;
		kind = &more[plan->kinds++];
		snprintf(kind->cycle, sizeof(kind->cycle), "%.*s", (int)len, cycle);
		kind->count = 1;
	}
	snprintf(name, sizeof(name), "%s-%04lu", kind->cycle, kind->count);
	e->binary = strdup(BCI_IGT_SUSPEND_BINARY);
	e->subtests = calloc(2, sizeof(char *));
	if (!e->binary || !e->subtests || !(e->subtests[0] = strdup(name))) {
		free(e->subtests);
		free(e->binary);
		return -ENOMEM;
	}
	e->count = 1;
	kind->count++;
	plan->used++;
	return 0;
}

static int plan_cycles(struct cycle_plan *plan, const struct bci_testlist_cycle *specs, size_t count)
{
	int ret = 0;

	for (size_t i = 0; i < count; i++)
		for (unsigned long n = 0; n < specs[i].count && ret == 0; n++)
			ret = plan_cycle(plan, specs[i].cycle, strlen(specs[i].cycle));
	return ret;
}

int bci_joblist_add_cycles(struct bci_joblist *jobs, const char *before, const char *between,
			   const char *after, char *err, size_t err_size)
{
	static const char *const keys[3] = { "suspend_before", "suspend_between", "suspend_after" };
	const char *values[3] = { before, between, after };
	struct bci_testlist_cycle specs[3][BCI_TESTLIST_CYCLE_SPECS_MAX];
	unsigned long long cycles[3] = { 0, 0, 0 }, added;
	struct cycle_plan plan = { 0 };
	size_t counts[3], tests = 0;
	bool seen_test = false;
	int ret;

	for (int k = 0; k < 3; k++) {
		ret = bci_testlist_cycles_parse(keys[k], values[k], specs[k], &counts[k], err, err_size);
		if (ret < 0)
			return ret;
		for (size_t i = 0; i < counts[k]; i++)
			cycles[k] += specs[k][i].count;
	}
	for (size_t i = 0; i < jobs->count; i++)
		tests += !is_cycle_job(&jobs->entries[i]);
	added = cycles[0] + cycles[2] + (tests > 1 ? (tests - 1) * cycles[1] : 0);
	if (added == 0)
		return 0;
	if (added > BCI_TESTLIST_CYCLE_COUNT_MAX) {
		bci_message(err, err_size,
			    "suspend_before, suspend_between, suspend_after: %llu cycles for %zu tests, more than %d",
			    added, tests, BCI_TESTLIST_CYCLE_COUNT_MAX);
		return -E2BIG;
	}
	plan.entries = calloc(jobs->count + added, sizeof(*plan.entries));
	if (!plan.entries)
		return -ENOMEM;

	ret = plan_cycles(&plan, specs[0], counts[0]);
	for (size_t i = 0; i < jobs->count && ret == 0; i++) {
		const struct bci_joblist_entry *e = &jobs->entries[i];
		if (is_cycle_job(e)) {
			/* Renumbered in plan order: the cycles before it may be new. */
			ret = plan_cycle(&plan, e->subtests[0],
					 (size_t)(strrchr(e->subtests[0], '-') - e->subtests[0]));
			continue;
		}
		if (seen_test)
			ret = plan_cycles(&plan, specs[1], counts[1]);
		seen_test = true;
		if (ret == 0)
			plan.entries[plan.used++] = *e; /* moved: its strings change owner below */
	}
	if (ret == 0)
		ret = plan_cycles(&plan, specs[2], counts[2]);
	free(plan.next);

	/* The cycle jobs of each plan are its own copies; test jobs belong to the old one until the swap. */
	if (ret < 0) {
		for (size_t i = 0; i < plan.used; i++)
			if (is_cycle_job(&plan.entries[i]))
				entry_free(&plan.entries[i]);
		free(plan.entries);
		return ret;
	}
	for (size_t i = 0; i < jobs->count; i++)
		if (is_cycle_job(&jobs->entries[i]))
			entry_free(&jobs->entries[i]);
	free(jobs->entries);
	jobs->entries = plan.entries;
	jobs->count = plan.used;
	return 0;
}
