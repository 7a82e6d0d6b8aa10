// SPDX-License-Identifier: MIT
/*
 * The inventory's reader (format in inventory.h): one pass over the lines,
 * a section at a time, every value checked where it is read so the error
 * names its line.
 */
#include "inventory.h"

#include "../names.h"

#include "config.h"
#include "fsutil.h"
#include "message.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INVENTORY_MAX_SIZE (4u << 20)
#define POWER_CYCLES_MAX 100

enum section {
	SECTION_NONE,
	SECTION_SCHEDULE,
	SECTION_MACHINE,
	SECTION_TREE,
};

struct parser {
	const char *origin;
	unsigned line;
	struct bci_inventory *inv;
	enum section section;
	unsigned seen;			/* bit per key already set in this section */
	bool schedule_seen;
	char *err;
	size_t err_size;
};

static void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

void bci_inventory_free(struct bci_inventory *inv)
{
	if (!inv)
		return;
	for (size_t i = 0; i < inv->machine_count; i++) {
		free(inv->machines[i].name);
		strv_free(inv->machines[i].tags);
		free(inv->machines[i].shard_group);
		strv_free(inv->machines[i].power);
		bci_inventory_console_clear(&inv->machines[i].console);
		strv_free(inv->machines[i].power_on);
		strv_free(inv->machines[i].power_off);
		strv_free(inv->machines[i].power_status);
		free(inv->machines[i].ipmi.host);
		free(inv->machines[i].ipmi.user);
		free(inv->machines[i].ipmi.password_file);
	}
	free(inv->machines);
	free(inv->ipmitool);
	for (size_t i = 0; i < inv->tree_count; i++) {
		free(inv->trees[i].name);
		free(inv->trees[i].repo);
		free(inv->trees[i].build_command);
	}
	free(inv->trees);
	free(inv);
}

static int fail(struct parser *p, const char *fmt, const char *a, const char *b)
{
	char what[300];

	snprintf(what, sizeof(what), fmt, a, b);
	bci_message(p->err, p->err_size, "%s:%u: %s", p->origin, p->line, what);
	return -EINVAL;
}

int bci_inventory_mac_normalize(const char *text, char out[18])
{
	static const char hex[] = "0123456789abcdef";
	char sep = 0;

	for (int i = 0; i < 6; i++) {
		const char *pair = text + i * 3;

		if (!isxdigit((unsigned char)pair[0]) || !isxdigit((unsigned char)pair[1]))
			return -EINVAL;
		if (i < 5) {
			if (pair[2] != ':' && pair[2] != '-')
				return -EINVAL;
			if (sep && pair[2] != sep)
				return -EINVAL;
			sep = pair[2];
		} else if (pair[2]) {
			return -EINVAL;
		}
		for (int j = 0; j < 2; j++) {
			int c = tolower((unsigned char)pair[j]);

			out[i * 3 + j] = hex[isdigit(c) ? c - '0' : c - 'a' + 10];
		}
		out[i * 3 + 2] = i < 5 ? ':' : '\0';
	}
	return 0;
}

/*
 * Splits @value on @separators into a NULL-terminated vector of words;
 * each must be a tag (bci_name_tag_ok()) unless @any_word.
 */
static int split_words(struct parser *p, const char *key, const char *value, const char *separators,
		       bool any_word, char ***out)
{
	char *copy = strdup(value), *rest, *word, **v = NULL;
	size_t n = 0;
	int ret = -ENOMEM;

	if (!copy)
		return -ENOMEM;
	/* strsep, not strtok: "a,,b" has an empty word, refused; runs of blanks are one separator. */
	for (rest = copy; (word = strsep(&rest, separators));) {
		char **grown;

		if (any_word && !*word)
			continue;

		while (*word == ' ' || *word == '\t')
			word++;
		for (char *end = word + strlen(word); end > word && (end[-1] == ' ' || end[-1] == '\t');)
			*--end = '\0';
		if (!any_word && !bci_name_tag_ok(word)) {
			ret = fail(p, "%s: '%s' is not a word (letters, digits, '.', '_', '-')", key, word);
			goto out;
		}
		if (any_word && strpbrk(word, "'\"\\$`")) {
			ret = fail(p, "%s: '%s': no quoting or shell syntax (the command is run without a shell)",
				   key, word);
			goto out;
		}
		grown = realloc(v, (n + 2) * sizeof(*v));
		if (!grown)
			goto out;
		v = grown;
		if (!(v[n] = strdup(word)))
			goto out;
		v[++n] = NULL;
	}
	if (!n) {
		ret = fail(p, "%s: empty%s", key, "");
		goto out;
	}
	*out = v;
	v = NULL;
	ret = 0;
out:
	strv_free(v);
	free(copy);
	return ret;
}

void bci_inventory_console_clear(struct bci_inventory_console *console)
{
	free(console->spec);
	free(console->address);
	free(console->path);
	memset(console, 0, sizeof(*console));
}

/* The speeds a tty console may be set to (termios' Bnnn constants between them). */
static const unsigned console_speeds[] = {
	1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600,
};

static int console_tcp(const char *rest, struct bci_inventory_console *out, char *why,
		       size_t why_size)
{
	char address[INET6_ADDRSTRLEN + 1];
	unsigned char binary[sizeof(struct in6_addr)];
	const char *colon, *start = rest;
	unsigned long port;
	size_t len;
	char *end;

	if (*rest == '[') {
		colon = strstr(rest, "]:");
		start = rest + 1;
		len = colon ? (size_t)(colon - start) : 0;
		colon = colon ? colon + 1 : NULL;
	} else {
		colon = strrchr(rest, ':');
		len = colon ? (size_t)(colon - rest) : 0;
	}
	if (!colon || !len || len >= sizeof(address)) {
		snprintf(why, why_size, "expected tcp:ADDRESS:PORT (an IPv6 address in brackets)");
		return -EINVAL;
	}
	memcpy(address, start, len);
	address[len] = '\0';
	if (inet_pton(*rest == '[' ? AF_INET6 : AF_INET, address, binary) != 1) {
		snprintf(why, why_size,
			 "'%s' is not a numeric %s address (the reader never waits for a name lookup)",
			 address, *rest == '[' ? "IPv6" : "IPv4");
		return -EINVAL;
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!isdigit((unsigned char)colon[1]) || *end || errno || port < 1 || port > 65535) {
		snprintf(why, why_size, "port '%s': a number from 1 to 65535", colon + 1);
		return -EINVAL;
	}
	out->kind = BCI_CONSOLE_TCP;
	out->port = (unsigned)port;
	return (out->address = strdup(address)) ? 0 : -ENOMEM;
}

static int console_tty(const char *value, struct bci_inventory_console *out, char *why,
		       size_t why_size)
{
	const char *blank = strpbrk(value, " \t");
	size_t len = blank ? (size_t)(blank - value) : strlen(value);

	if (blank) {
		const char *speed = blank + strspn(blank, " \t");
		unsigned long baud;
		char *end;

		errno = 0;
		baud = strtoul(speed, &end, 10);
		for (size_t i = 0; !errno && !*end && isdigit((unsigned char)*speed) &&
				   i < sizeof(console_speeds) / sizeof(console_speeds[0]); i++)
			if (baud == console_speeds[i])
				out->baud = (unsigned)baud;
		if (!out->baud) {
			snprintf(why, why_size, "speed '%s': one of 1200 ... 115200, 230400, 460800, 921600",
				 speed);
			return -EINVAL;
		}
	}
	if (len < 2 || value[len - 1] == '/') {
		snprintf(why, why_size, "'%.*s' is not a tty's absolute path", (int)len, value);
		return -EINVAL;
	}
	out->kind = BCI_CONSOLE_TTY;
	return (out->path = strndup(value, len)) ? 0 : -ENOMEM;
}

int bci_inventory_console_parse(const char *value, struct bci_inventory_console *out, char *why,
				size_t why_size)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if (!strncmp(value, "tcp:", 4))
		ret = console_tcp(value + 4, out, why, why_size);
	else if (value[0] == '/')
		ret = console_tty(value, out, why, why_size);
	else {
		snprintf(why, why_size, "expected tcp:ADDRESS:PORT or a tty's path (/dev/...)");
		ret = -EINVAL;
	}
	if (ret == 0 && !(out->spec = strdup(value)))
		ret = -ENOMEM;
	if (ret < 0)
		bci_inventory_console_clear(out);
	return ret;
}

static int parse_header(struct parser *p, char *line)
{
	struct bci_inventory *inv = p->inv;
	char *end = strchr(line, ']'), *name;

	if (!end || end[1])
		return fail(p, "a section header is [schedule], [machine NAME] or [tree NAME]%s%s", "", "");
	*end = '\0';
	line++;
	p->seen = 0;
	if (!strcmp(line, "schedule")) {
		if (p->schedule_seen)
			return fail(p, "[schedule] given twice%s%s", "", "");
		p->schedule_seen = true;
		p->section = SECTION_SCHEDULE;
		return 0;
	}
	name = strchr(line, ' ');
	if (!name)
		return fail(p, "unknown section [%s]%s", line, "");
	*name++ = '\0';
	if (!strcmp(line, "machine") ? !bci_name_machine_ok(name) : !bci_name_tree_ok(name))
		return fail(p, "'%s' is not a word (letters, digits, '.', '_', '-')", name, "");
	if (!strcmp(line, "machine")) {
		struct bci_inventory_machine *grown, *m;

		if (bci_inventory_by_name(inv, name))
			return fail(p, "machine %s is already defined%s", name, "");
		grown = realloc(inv->machines, (inv->machine_count + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		inv->machines = grown;
		m = &inv->machines[inv->machine_count];
		memset(m, 0, sizeof(*m));
		if (!(m->name = strdup(name)) || !(m->tags = calloc(1, sizeof(*m->tags)))) {
			free(m->name);
			return -ENOMEM;
		}
		m->deadline = BCI_INVENTORY_DEADLINE_DEFAULT;
		m->line = p->line;
		inv->machine_count++;
		p->section = SECTION_MACHINE;
		return 0;
	}
	if (!strcmp(line, "tree")) {
		struct bci_inventory_tree *grown;

		for (size_t i = 0; i < inv->tree_count; i++)
			if (!strcmp(inv->trees[i].name, name))
				return fail(p, "tree %s is already defined%s", name, "");
		grown = realloc(inv->trees, (inv->tree_count + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		inv->trees = grown;
		if (!(inv->trees[inv->tree_count].name = strdup(name)))
			return -ENOMEM;
		inv->trees[inv->tree_count] = (struct bci_inventory_tree){
			.name = inv->trees[inv->tree_count].name, .full = BCI_FULL_GATED,
			.build_timeout = BCI_INVENTORY_BUILD_TIMEOUT_DEFAULT };
		inv->tree_count++;
		p->section = SECTION_TREE;
		return 0;
	}
	return fail(p, "unknown section [%s ...]%s", line, "");
}

/* Marks key number @bit as set in this section; a second time is an error. */
static int once(struct parser *p, unsigned bit, const char *key)
{
	if (p->seen & (1u << bit))
		return fail(p, "%s given twice in this section%s", key, "");
	p->seen |= 1u << bit;
	return 0;
}

/* A command key's value: an absolute program and its words. */
static int parse_command(struct parser *p, const char *key, const char *value, char ***argv)
{
	int ret = split_words(p, key, value, " \t", true, argv);

	if (ret < 0)
		return ret;
	if ((*argv)[0][0] != '/')
		return fail(p, "%s: '%s': the command is an absolute path", key, (*argv)[0]);
	return 0;
}

/* A word handed to ipmitool as an option's value: printable, no blank, no leading '-'. */
static bool ipmi_word_ok(const char *value, size_t max, const char *extra)
{
	size_t len = strlen(value);

	if (!len || len > max || value[0] == '-')
		return false;
	for (const char *c = value; *c; c++)
		if (!(isalnum((unsigned char)*c) || strchr(extra, *c)))
			return false;
	return true;
}

/* The power driver's keys (power.h): the command driver's, then the ipmi driver's. */
static int parse_power_key(struct parser *p, struct bci_inventory_machine *m, const char *key,
			   const char *value)
{
	unsigned long port;
	int ret;

	if (!strcmp(key, "power")) {
		if ((ret = once(p, 10, key)) < 0)
			return ret;
		if (!strcmp(value, "ipmi")) {
			m->power_driver = BCI_POWER_DRIVER_IPMI;
			return 0;
		}
		m->power_driver = BCI_POWER_DRIVER_COMMAND;
		if (value[0] != '/' && !strpbrk(value, " \t/"))
			return fail(p, "power: '%s' is neither a driver (ipmi) nor an absolute command",
				    value, "");
		return parse_command(p, key, value, &m->power);
	}
	if (!strcmp(key, "power-on")) {
		if ((ret = once(p, 11, key)) < 0)
			return ret;
		return parse_command(p, key, value, &m->power_on);
	}
	if (!strcmp(key, "power-off")) {
		if ((ret = once(p, 12, key)) < 0)
			return ret;
		return parse_command(p, key, value, &m->power_off);
	}
	if (!strcmp(key, "power-status")) {
		if ((ret = once(p, 13, key)) < 0)
			return ret;
		return parse_command(p, key, value, &m->power_status);
	}
	if (!strcmp(key, "ipmi-host")) {
		if ((ret = once(p, 14, key)) < 0)
			return ret;
		if (!ipmi_word_ok(value, 253, ".-_:"))
			return fail(p, "ipmi-host: '%s' is not a host name or address%s", value, "");
		return (m->ipmi.host = strdup(value)) ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "ipmi-port")) {
		if ((ret = once(p, 15, key)) < 0)
			return ret;
		if (bci_parse_number(value, &port) < 0 || port < 1 || port > 65535)
			return fail(p, "ipmi-port: '%s' (a port from 1 to 65535)%s", value, "");
		m->ipmi.port = (unsigned)port;
		return 0;
	}
	if (!strcmp(key, "ipmi-user")) {
		if ((ret = once(p, 16, key)) < 0)
			return ret;
		/* IPMI user names are at most 16 bytes. */
		if (!ipmi_word_ok(value, 16, ".-_@"))
			return fail(p, "ipmi-user: '%s' (1 to 16 letters, digits, '.', '-', '_', '@')%s",
				    value, "");
		return (m->ipmi.user = strdup(value)) ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "ipmi-password-file")) {
		if ((ret = once(p, 17, key)) < 0)
			return ret;
		if (value[0] != '/')
			return fail(p, "ipmi-password-file: '%s' is not an absolute path%s", value, "");
		return (m->ipmi.password_file = strdup(value)) ? 0 : -ENOMEM;
	}
	return fail(p, "unknown key '%s' in [machine %s]", key, m->name);
}

static int parse_machine_key(struct parser *p, const char *key, const char *value)
{
	struct bci_inventory *inv = p->inv;
	struct bci_inventory_machine *m = &inv->machines[inv->machine_count - 1];
	int ret;

	if (!strcmp(key, "mac")) {
		if ((ret = once(p, 0, key)) < 0)
			return ret;
		if (bci_inventory_mac_normalize(value, m->mac) < 0)
			return fail(p, "mac: '%s' is not a MAC address (six hex pairs)%s", value, "");
		for (size_t i = 0; i + 1 < inv->machine_count; i++)
			if (!strcmp(inv->machines[i].mac, m->mac))
				return fail(p, "mac %s is already machine %s's", m->mac,
					    inv->machines[i].name);
		return 0;
	}
	if (!strcmp(key, "tags")) {
		if ((ret = once(p, 1, key)) < 0)
			return ret;
		strv_free(m->tags);
		m->tags = NULL;
		return split_words(p, key, value, ",", false, &m->tags);
	}
	if (!strcmp(key, "shard-group")) {
		if ((ret = once(p, 2, key)) < 0)
			return ret;
		if (!bci_name_tag_ok(value))
			return fail(p, "shard-group: '%s' is not a word%s", value, "");
		return (m->shard_group = strdup(value)) ? 0 : -ENOMEM;
	}
	if (!strncmp(key, "power", 5) || !strncmp(key, "ipmi-", 5))
		return parse_power_key(p, m, key, value);
	if (!strcmp(key, "deadline")) {
		if ((ret = once(p, 4, key)) < 0)
			return ret;
		if (bci_parse_seconds(value, &m->deadline) < 0)
			return fail(p, "deadline: '%s' is not a duration (N, Ns, Nm, Nh; 1s to 30 days)",
				    value, "");
		return 0;
	}
	if (!strcmp(key, "console")) {
		char why[200];

		/* A bit of its own, far from the others (the power keys take 10-17). */
		if ((ret = once(p, 24, key)) < 0)
			return ret;
		if ((ret = bci_inventory_console_parse(value, &m->console, why, sizeof(why))) == -EINVAL)
			return fail(p, "console: '%s': %s", value, why);
		return ret;
	}
	return fail(p, "unknown key '%s' in [machine %s]", key, m->name);
}

/* A [tree] key: its full tier's rule, and what a bisection of its builds needs. */
static int parse_tree_key(struct parser *p, struct bci_inventory_tree *t, const char *key,
			  const char *value)
{
	int ret;

	if (!strcmp(key, "full")) {
		if ((ret = once(p, 0, key)) < 0)
			return ret;
		if (!strcmp(value, "gated"))
			t->full = BCI_FULL_GATED;
		else if (!strcmp(value, "always"))
			t->full = BCI_FULL_ALWAYS;
		else if (!strcmp(value, "never"))
			t->full = BCI_FULL_NEVER;
		else
			return fail(p, "full: '%s' (gated, always or never)%s", value, "");
		return 0;
	}
	if (!strcmp(key, "repo")) {
		if ((ret = once(p, 1, key)) < 0)
			return ret;
		if (value[0] != '/' || strpbrk(value, " \t"))
			return fail(p, "repo: '%s' is not an absolute path (the tree's git clone)%s",
				    value, "");
		return (t->repo = strdup(value)) ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "build-command")) {
		if ((ret = once(p, 2, key)) < 0)
			return ret;
		if (value[0] != '/' || strpbrk(value, " \t"))
			return fail(p, "build-command: '%s' is not an absolute command (no arguments)%s",
				    value, "");
		return (t->build_command = strdup(value)) ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "build-timeout")) {
		if ((ret = once(p, 3, key)) < 0)
			return ret;
		if (bci_parse_seconds(value, &t->build_timeout) < 0 || t->build_timeout > 86400)
			return fail(p, "build-timeout: '%s' is not a duration from 1 s to 1 day (N, Ns,"
				    " Nm, Nh)%s", value, "");
		return 0;
	}
	return fail(p, "unknown key '%s' in [tree %s] (full, repo, build-command, build-timeout)",
		    key, t->name);
}

static int parse_key(struct parser *p, const char *key, const char *value)
{
	struct bci_inventory *inv = p->inv;
	int ret;

	switch (p->section) {
	case SECTION_NONE:
		return fail(p, "'%s' before any section%s", key, "");
	case SECTION_MACHINE:
		return parse_machine_key(p, key, value);
	case SECTION_TREE:
		return parse_tree_key(p, &inv->trees[inv->tree_count - 1], key, value);
	case SECTION_SCHEDULE:
		if (!strcmp(key, "power-cycles")) {
			if ((ret = once(p, 0, key)) < 0)
				return ret;
			if (bci_parse_number(value, &inv->power_cycles) < 0 || inv->power_cycles < 1 ||
			    inv->power_cycles > POWER_CYCLES_MAX)
				return fail(p, "power-cycles: '%s' (a number from 1 to 100)%s", value, "");
			return 0;
		}
		if (!strcmp(key, "power-timeout")) {
			if ((ret = once(p, 1, key)) < 0)
				return ret;
			if (bci_parse_seconds(value, &inv->power_timeout) < 0)
				return fail(p, "power-timeout: '%s' is not a duration%s", value, "");
			return 0;
		}
		if (!strcmp(key, "ipmitool")) {
			if ((ret = once(p, 10, key)) < 0)
				return ret;
			if (value[0] != '/')
				return fail(p, "ipmitool: '%s' is not an absolute path%s", value, "");
			free(inv->ipmitool);
			return (inv->ipmitool = strdup(value)) ? 0 : -ENOMEM;
		}
		if (!strcmp(key, "reruns")) {
			if ((ret = once(p, 11, key)) < 0)
				return ret;
			_Static_assert(BCI_INVENTORY_RERUNS_MAX == 10, "the message says 10");
			if (bci_parse_number(value, &inv->reruns) < 0 ||
			    inv->reruns > BCI_INVENTORY_RERUNS_MAX)
				return fail(p, "reruns: '%s' (a number from 0 to 10)%s", value, "");
			return 0;
		}
		if (!strcmp(key, "bisect-steps")) {
			_Static_assert(BCI_INVENTORY_BISECT_STEPS_MAX == 64, "the message says 64");
			if ((ret = once(p, 13, key)) < 0)
				return ret;
			if (bci_parse_number(value, &inv->bisect_steps) < 0 ||
			    inv->bisect_steps > BCI_INVENTORY_BISECT_STEPS_MAX)
				return fail(p, "bisect-steps: '%s' (a number from 0 to 64)%s", value,
					    "");
			return 0;
		}
		if (!strcmp(key, "rerun-budget")) {
			size_t n = strlen(value);
			char number[32];

			_Static_assert(BCI_INVENTORY_RERUN_BUDGET_MAX == 1000, "the message says 1000%");
			if ((ret = once(p, 12, key)) < 0)
				return ret;
			if (n < 2 || n >= sizeof(number) || value[n - 1] != '%')
				return fail(p, "rerun-budget: '%s' (a percentage of the fast tier's time:"
					    " 10%%)%s", value, "");
			memcpy(number, value, n - 1);
			number[n - 1] = '\0';
			if (bci_parse_number(number, &inv->rerun_budget) < 0 || inv->rerun_budget < 1 ||
			    inv->rerun_budget > BCI_INVENTORY_RERUN_BUDGET_MAX)
				return fail(p, "rerun-budget: '%s' (from 1%% to 1000%%)%s", value, "");
			return 0;
		}
		return fail(p, "unknown key '%s' in [schedule]%s", key, "");
	}
	return -EINVAL;
}

static void trim(char **start, char **end)
{
	while (*start < *end && (**start == ' ' || **start == '\t'))
		(*start)++;
	while (*end > *start && ((*end)[-1] == ' ' || (*end)[-1] == '\t' || (*end)[-1] == '\r'))
		(*end)--;
	**end = '\0';
}

static int parse_line(struct parser *p, char *line, char *end)
{
	char *eq, *key_end, *value;

	trim(&line, &end);
	if (!*line || *line == '#')
		return 0;
	if (*line == '[')
		return parse_header(p, line);
	eq = strchr(line, '=');
	if (!eq)
		return fail(p, "expected 'key = value' or a [section]%s%s", "", "");
	key_end = eq;
	value = eq + 1;
	trim(&line, &key_end);
	trim(&value, &end);
	if (!*line)
		return fail(p, "a value without a key%s%s", "", "");
	if (!*value)
		return fail(p, "%s: empty value%s", line, "");
	return parse_key(p, line, value);
}

/* A machine's power keys together: each of its driver, the driver's required ones there. */
static int check_power(struct parser *p, struct bci_inventory_machine *m)
{
	const char *stray = NULL;

	if (m->power_driver != BCI_POWER_DRIVER_COMMAND)
		stray = m->power_on ? "power-on" : m->power_off ? "power-off"
			: m->power_status ? "power-status" : NULL;
	if (stray)
		return fail(p, "machine %s: %s is for the command driver (power = COMMAND ...)",
			    m->name, stray);
	if (m->power_driver != BCI_POWER_DRIVER_IPMI)
		stray = m->ipmi.host ? "ipmi-host" : m->ipmi.port ? "ipmi-port" : m->ipmi.user
			? "ipmi-user" : m->ipmi.password_file ? "ipmi-password-file" : NULL;
	if (stray)
		return fail(p, "machine %s: %s is for the ipmi driver (power = ipmi)", m->name, stray);
	if (m->power_driver != BCI_POWER_DRIVER_IPMI)
		return 0;
	stray = !m->ipmi.host ? "ipmi-host" : !m->ipmi.user ? "ipmi-user"
		: !m->ipmi.password_file ? "ipmi-password-file" : NULL;
	if (stray)
		return fail(p, "machine %s: power = ipmi needs %s", m->name, stray);
	if (!m->ipmi.port)
		m->ipmi.port = BCI_INVENTORY_IPMI_PORT_DEFAULT;
	return 0;
}

/* What a section needs once it is complete. */
static int check_machines(struct parser *p)
{
	for (size_t i = 0; i < p->inv->machine_count; i++) {
		int ret;

		p->line = p->inv->machines[i].line;
		if (!p->inv->machines[i].mac[0])
			return fail(p, "machine %s has no mac%s", p->inv->machines[i].name, "");
		if ((ret = check_power(p, &p->inv->machines[i])) < 0)
			return ret;
	}
	return 0;
}

int bci_inventory_parse(const char *origin, const char *text, size_t len,
			struct bci_inventory **out, char *err, size_t err_size)
{
	struct parser p = { .origin = origin, .err = err, .err_size = err_size };
	char *copy, *line;
	int ret = 0;

	if (memchr(text, '\0', len)) {
		bci_message(err, err_size, "%s: a NUL byte (not a text file)", origin);
		return -EINVAL;
	}
	p.inv = calloc(1, sizeof(*p.inv));
	copy = malloc(len + 1);
	if (!p.inv || !copy) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	p.inv->power_cycles = BCI_INVENTORY_POWER_CYCLES_DEFAULT;
	p.inv->power_timeout = BCI_INVENTORY_POWER_TIMEOUT_DEFAULT;
	p.inv->reruns = BCI_INVENTORY_RERUNS_DEFAULT;
	p.inv->rerun_budget = BCI_INVENTORY_RERUN_BUDGET_DEFAULT;
	p.inv->bisect_steps = BCI_INVENTORY_BISECT_STEPS_DEFAULT;
	if (!(p.inv->ipmitool = strdup(BCI_INVENTORY_IPMITOOL_DEFAULT))) {
		ret = -ENOMEM;
		goto out;
	}
	for (line = copy; line && *line && ret == 0;) {
		char *newline = strchr(line, '\n'), *end = newline ? newline : line + strlen(line);

		p.line++;
		ret = parse_line(&p, line, end);
		line = newline ? newline + 1 : NULL;
	}
	if (ret == 0)
		ret = check_machines(&p);
	if (ret == -ENOMEM)
		bci_message(err, err_size, "%s:%u: out of memory", origin, p.line);
out:
	free(copy);
	if (ret < 0) {
		bci_inventory_free(p.inv);
		return ret;
	}
	*out = p.inv;
	return 0;
}

int bci_inventory_load(const char *path, struct bci_inventory **out, char *err, size_t err_size)
{
	char *text = NULL;
	size_t len;
	int ret;

	ret = bci_read_file(path, &text, &len, INVENTORY_MAX_SIZE);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", path,
			    ret == -EFBIG ? "larger than 4 MiB" : strerror(-ret));
		return ret;
	}
	ret = bci_inventory_parse(path, text, len, out, err, err_size);
	free(text);
	return ret;
}

const struct bci_inventory_machine *bci_inventory_by_mac(const struct bci_inventory *inv,
							 const char *mac)
{
	char normal[18];

	if (bci_inventory_mac_normalize(mac, normal) < 0)
		return NULL;
	for (size_t i = 0; i < inv->machine_count; i++)
		if (!strcmp(inv->machines[i].mac, normal))
			return &inv->machines[i];
	return NULL;
}

const struct bci_inventory_machine *bci_inventory_by_name(const struct bci_inventory *inv,
							  const char *name)
{
	for (size_t i = 0; i < inv->machine_count; i++)
		if (!strcmp(inv->machines[i].name, name))
			return &inv->machines[i];
	return NULL;
}

const struct bci_inventory_tree *bci_inventory_tree(const struct bci_inventory *inv,
					       const char *tree)
{
	for (size_t i = 0; i < inv->tree_count; i++)
		if (!strcmp(inv->trees[i].name, tree))
			return &inv->trees[i];
	return NULL;
}

enum bci_full_rule bci_inventory_full_rule(const struct bci_inventory *inv, const char *tree)
{
	for (size_t i = 0; i < inv->tree_count; i++)
		if (!strcmp(inv->trees[i].name, tree))
			return inv->trees[i].full;
	return BCI_FULL_GATED;
}
