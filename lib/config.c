// SPDX-License-Identifier: MIT
#include "config.h"
#include "message.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SECONDS (30UL * 24 * 3600)
#define MAX_VALUE 4096

struct bci_config {
	const struct bci_config_key *keys;
	size_t count;
	char **values;
	char **origins;
};


static ssize_t find_key(const struct bci_config *config, const char *name, size_t len)
{
	for (size_t i = 0; i < config->count; i++)
		if (strlen(config->keys[i].name) == len && memcmp(config->keys[i].name, name, len) == 0)
			return (ssize_t)i;
	return -1;
}

static size_t index_of(const struct bci_config *config, const char *key)
{
	ssize_t i = find_key(config, key, strlen(key));

	if (i < 0) {
		fprintf(stderr, "bci_config: no key '%s' in the table\n", key);
		abort();
	}
	return (size_t)i;
}

int bci_parse_seconds(const char *text, unsigned long *seconds)
{
	unsigned long value = 0, unit = 1;
	const char *p = text;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	while (isdigit((unsigned char)*p)) {
		value = value * 10 + (unsigned long)(*p - '0');
		if (value > MAX_SECONDS)
			return -EINVAL;
		p++;
	}
	switch (*p) {
	case '\0':
		break;
	case 's':
		p++;
		break;
	case 'm':
		unit = 60;
		p++;
		break;
	case 'h':
		unit = 3600;
		p++;
		break;
	default:
		return -EINVAL;
	}
	if (*p != '\0' || value == 0 || value * unit > MAX_SECONDS)
		return -EINVAL;
	*seconds = value * unit;
	return 0;
}

int bci_parse_size(const char *text, unsigned long long *bytes)
{
	unsigned long long value = 0, unit = 1;
	const char *p = text;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	while (isdigit((unsigned char)*p)) {
		value = value * 10 + (unsigned long long)(*p - '0');
		if (value > (1ULL << 40))
			return -EINVAL;
		p++;
	}
	switch (*p) {
	case 'K':
		unit = 1ULL << 10;
		p++;
		break;
	case 'M':
		unit = 1ULL << 20;
		p++;
		break;
	case 'G':
		unit = 1ULL << 30;
		p++;
		break;
	default:
		break;
	}
	if (*p != '\0' || value * unit > (1ULL << 40))
		return -EINVAL;
	*bytes = value * unit;
	return 0;
}

int bci_parse_number(const char *text, unsigned long *number)
{
	unsigned long value = 0;

	if (!*text)
		return -EINVAL;
	for (const char *p = text; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		value = value * 10 + (unsigned long)(*p - '0');
		if (value > 1000000)
			return -EINVAL;
	}
	*number = value;
	return 0;
}

static int parse_duration_or_off(const char *text, unsigned long *seconds)
{
	if (strcmp(text, "0") == 0 || strcmp(text, "off") == 0) {
		*seconds = 0;
		return 0;
	}
	return bci_parse_seconds(text, seconds);
}

static bool is_word(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (isspace((unsigned char)*s) || !isprint((unsigned char)*s))
			return false;
	return true;
}

static bool is_choice(const char *value, const char *choices)
{
	size_t len = strlen(value);

	for (const char *p = choices; *p;) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == len && memcmp(p, value, n) == 0)
			return true;
		p += n + (bar ? 1 : 0);
	}
	return false;
}

static bool is_list(const char *value)
{
	/* Words separated by commas; empty items (",,", trailing comma) are mistakes. */
	const char *p = value;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '\0')
		return true;
	for (;;) {
		size_t n = 0;
		while (isspace((unsigned char)*p))
			p++;
		while (p[n] && p[n] != ',' && !isspace((unsigned char)p[n])) {
			if (!isprint((unsigned char)p[n]))
				return false;
			n++;
		}
		if (n == 0)
			return false;
		p += n;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			return true;
		if (*p != ',')
			return false;
		p++;
	}
}

static int check_type(const struct bci_config_key *key, const char *value, const char *origin,
		       char *err, size_t err_size)
{
	unsigned long seconds, number;
	unsigned long long bytes;

	if (strlen(value) > MAX_VALUE) {
		bci_message(err, err_size, "%s: %s: value longer than %d bytes", origin, key->name,
			  MAX_VALUE);
		return -EINVAL;
	}
	for (const char *p = value; *p; p++) {
		if ((unsigned char)*p < 0x20 && *p != '\t') {
			bci_message(err, err_size, "%s: %s: control character in value", origin,
				  key->name);
			return -EINVAL;
		}
	}
	switch (key->type) {
	case BCI_CONFIG_STRING:
		return 0;
	case BCI_CONFIG_WORD:
		if (is_word(value))
			return 0;
		bci_message(err, err_size, "%s: %s: '%s' must be one word (no spaces, not empty)",
			  origin, key->name, value);
		return -EINVAL;
	case BCI_CONFIG_SECONDS:
		if (bci_parse_seconds(value, &seconds) == 0)
			return 0;
		bci_message(err, err_size,
			  "%s: %s: '%s' is not a duration (N, Ns, Nm or Nh; 1s to 30 days)",
			  origin, key->name, value);
		return -EINVAL;
	case BCI_CONFIG_CHOICE:
		if (is_choice(value, key->choices))
			return 0;
		bci_message(err, err_size, "%s: %s: '%s' is not one of %s", origin, key->name, value,
			  key->choices);
		return -EINVAL;
	case BCI_CONFIG_LIST:
		if (is_list(value))
			return 0;
		bci_message(err, err_size, "%s: %s: '%s' is not a comma-separated list of names",
			  origin, key->name, value);
		return -EINVAL;
	case BCI_CONFIG_DURATION_OR_OFF:
		if (parse_duration_or_off(value, &seconds) == 0)
			return 0;
		bci_message(err, err_size,
			  "%s: %s: '%s' is not a duration (N, Ns, Nm or Nh; 1s to 30 days) or off",
			  origin, key->name, value);
		return -EINVAL;
	case BCI_CONFIG_SIZE:
		if (bci_parse_size(value, &bytes) == 0)
			return 0;
		bci_message(err, err_size, "%s: %s: '%s' is not a size (N, NK, NM or NG; at most 1T)",
			  origin, key->name, value);
		return -EINVAL;
	case BCI_CONFIG_NUMBER:
		if (bci_parse_number(value, &number) == 0)
			return 0;
		bci_message(err, err_size, "%s: %s: '%s' is not a whole number from 0 to 1000000",
			  origin, key->name, value);
		return -EINVAL;
	}
	return -EINVAL;
}

static int check_value(const struct bci_config_key *key, const char *value, const char *origin,
		       char *err, size_t err_size)
{
	char why[512];
	int ret = check_type(key, value, origin, err, err_size);

	if (ret < 0 || !key->check)
		return ret;
	ret = key->check(key, value, why, sizeof(why));
	if (ret < 0)
		bci_message(err, err_size, "%s: %s", origin, why);
	return ret;
}

int bci_config_new(const struct bci_config_key *keys, struct bci_config **out)
{
	struct bci_config *config = calloc(1, sizeof(*config));
	char err[256];

	if (!config)
		return -ENOMEM;
	config->keys = keys;
	while (keys[config->count].name)
		config->count++;
	config->values = calloc(config->count, sizeof(char *));
	config->origins = calloc(config->count, sizeof(char *));
	if (!config->values || !config->origins)
		goto fail;
	for (size_t i = 0; i < config->count; i++) {
		/* A default that fails its own check is a bug in the key table. */
		if (bci_config_set(config, keys[i].name, keys[i].default_value, "default", err,
				   sizeof(err)) < 0) {
			fprintf(stderr, "bci_config: bad default: %s\n", err);
			abort();
		}
	}
	*out = config;
	return 0;
fail:
	bci_config_free(config);
	return -ENOMEM;
}

void bci_config_free(struct bci_config *config)
{
	if (!config)
		return;
	for (size_t i = 0; i < config->count; i++) {
		if (config->values)
			free(config->values[i]);
		if (config->origins)
			free(config->origins[i]);
	}
	free(config->values);
	free(config->origins);
	free(config);
}

int bci_config_set(struct bci_config *config, const char *key, const char *value,
		   const char *origin, char *err, size_t err_size)
{
	ssize_t i = find_key(config, key, strlen(key));
	char *v, *o;
	int ret;

	if (i < 0) {
		bci_message(err, err_size, "%s: unknown key '%s'", origin, key);
		return -EINVAL;
	}
	ret = check_value(&config->keys[i], value, origin, err, err_size);
	if (ret < 0)
		return ret;
	v = strdup(value);
	o = strdup(origin);
	if (!v || !o) {
		free(v);
		free(o);
		bci_message(err, err_size, "%s: out of memory", origin);
		return -ENOMEM;
	}
	free(config->values[i]);
	free(config->origins[i]);
	config->values[i] = v;
	config->origins[i] = o;
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

int bci_kv_parse(const char *name, const char *text, size_t len, bci_kv_fn fn, void *data,
		 char *err, size_t err_size)
{
	const char *end = text + len;
	unsigned int lineno = 0;
	int ret = 0;

	for (const char *s = text; s < end && !ret;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		char *line, *key, *eq;

		lineno++;
		if (memchr(s, '\0', n)) {
			bci_message(err, err_size, "%s:%u: NUL byte in the line", name, lineno);
			return -EINVAL;
		}
		line = strndup(s, n);
		if (!line) {
			bci_message(err, err_size, "%s: out of memory", name);
			return -ENOMEM;
		}
		s += n + (nl != NULL);
		key = trim(line);
		eq = strchr(key, '=');
		if (*key == '\0' || *key == '#') {
			ret = 0;
		} else if (!eq) {
			bci_message(err, err_size, "%s:%u: expected 'key = value', got '%.80s'", name,
				    lineno, key);
			ret = -EINVAL;
		} else if (eq == key) {
			bci_message(err, err_size, "%s:%u: missing key before '='", name, lineno);
			ret = -EINVAL;
		} else {
			*eq = '\0';
			ret = fn(trim(key), trim(eq + 1), lineno, data);
		}
		free(line);
	}
	return ret;
}

struct config_file {
	struct bci_config *config;
	const char *name;
	char *err;
	size_t err_size;
};

static int config_file_entry(const char *key, const char *value, unsigned int line, void *data)
{
	struct config_file *f = data;
	char origin[512];

	snprintf(origin, sizeof(origin), "%s:%u", f->name, line);
	return bci_config_set(f->config, key, value, origin, f->err, f->err_size);
}

int bci_config_parse_file(struct bci_config *config, const char *name, const char *text,
			  size_t len, char *err, size_t err_size)
{
	struct config_file f = { config, name, err, err_size };

	return bci_kv_parse(name, text, len, config_file_entry, &f, err, err_size);
}

/*
 * Splits off the next parameter the way the kernel does: white space separates
 * parameters, double quotes group, and the quotes are removed from the value.
 * Returns the start of the rest, or NULL at the end.
 */
static char *next_param(char *args, char **param, char **value)
{
	bool in_quote = false;
	char *p, *out;

	while (isspace((unsigned char)*args))
		args++;
	if (*args == '\0')
		return NULL;
	*param = args;
	*value = NULL;
	for (p = out = args; *p; p++) {
		if (isspace((unsigned char)*p) && !in_quote)
			break;
		if (*p == '"') {
			in_quote = !in_quote;
			continue;
		}
		if (*p == '=' && !*value) {
			*out++ = '\0';
			*value = out;
			continue;
		}
		*out++ = *p;
	}
	if (*p)
		p++;
	*out = '\0';
	return p;
}

int bci_config_parse_cmdline(struct bci_config *config, const char *cmdline, const char *prefix,
			     char *err, size_t err_size)
{
	size_t prefix_len = strlen(prefix);
	char *copy = strdup(cmdline), *rest, *param, *value;
	int ret = 0;

	if (!copy) {
		bci_message(err, err_size, "cmdline: out of memory");
		return -ENOMEM;
	}
	for (rest = copy; (rest = next_param(rest, &param, &value));) {
		char origin[160];

		/* Everything after "--" belongs to init's argv, not to the kernel's parameters. */
		if (strcmp(param, "--") == 0 && !value)
			break;
		if (strncmp(param, prefix, prefix_len) != 0)
			continue;
		snprintf(origin, sizeof(origin), "kernel command line %.100s", param);
		if (!value) {
			bci_message(err, err_size, "%s: expected %s<key>=<value>", origin, prefix);
			ret = -EINVAL;
			break;
		}
		ret = bci_config_set(config, param + prefix_len, value, "kernel command line", err,
				     err_size);
		if (ret < 0)
			break;
	}
	free(copy);
	return ret;
}

const char *bci_config_get(const struct bci_config *config, const char *key)
{
	return config->values[index_of(config, key)];
}

const char *bci_config_origin(const struct bci_config *config, const char *key)
{
	return config->origins[index_of(config, key)];
}

unsigned long bci_config_get_seconds(const struct bci_config *config, const char *key)
{
	unsigned long seconds = 0;

	if (parse_duration_or_off(bci_config_get(config, key), &seconds) < 0)
		abort(); /* checked when set */
	return seconds;
}

unsigned long long bci_config_get_size(const struct bci_config *config, const char *key)
{
	unsigned long long bytes = 0;

	if (bci_parse_size(bci_config_get(config, key), &bytes) < 0)
		abort();
	return bytes;
}

unsigned long bci_config_get_number(const struct bci_config *config, const char *key)
{
	unsigned long number = 0;

	if (bci_parse_number(bci_config_get(config, key), &number) < 0)
		abort();
	return number;
}

int bci_config_get_list(const struct bci_config *config, const char *key, char **storage,
			const char ***items, size_t *count)
{
	char *copy = strdup(bci_config_get(config, key));
	const char **list;
	size_t n = 0, cap = 1;

	if (!copy)
		return -ENOMEM;
	for (char *p = copy; *p; p++)
		cap += *p == ',';
	list = calloc(cap + 1, sizeof(*list));
	if (!list) {
		free(copy);
		return -ENOMEM;
	}
	for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		tok = trim(tok);
		if (*tok)
			list[n++] = tok;
	}
	*storage = copy;
	*items = list;
	*count = n;
	return 0;
}
