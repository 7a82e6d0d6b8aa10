/* SPDX-License-Identifier: MIT */
/*
 * Typed key=value configuration: a table of keys with defaults, filled from a
 * file (`key = value` lines, `#` comments) and then from the kernel command
 * line (`<prefix><key>=<value>` parameters, the kernel's quoting rules).
 * Every value is checked when it is set; a bad one is an error naming where
 * it came from (file:line or cmdline), the key and the value.
 */
#ifndef BCI_CONFIG_H
#define BCI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

enum bci_config_type {
	BCI_CONFIG_STRING,  /* any text, may be empty */
	BCI_CONFIG_WORD,    /* non-empty, no white space */
	BCI_CONFIG_SECONDS, /* duration: N, Ns, Nm or Nh; at least 1 s, at most 30 days */
	BCI_CONFIG_CHOICE,  /* one of the words in `choices`, separated by '|' */
	BCI_CONFIG_LIST,    /* comma-separated words (white space around them ignored) */
	BCI_CONFIG_DURATION_OR_OFF, /* as SECONDS, or "0"/"off" for none */
	BCI_CONFIG_SIZE,    /* bytes: N, NK, NM or NG (binary units), at most 1T */
	BCI_CONFIG_NUMBER,  /* a whole number from 0 to 1000000 */
};

struct bci_config_key {
	const char *name;
	enum bci_config_type type;
	const char *default_value;
	const char *choices; /* BCI_CONFIG_CHOICE only */
	const char *help;    /* one line, for --help-config and the man page */
	/*
	 * What the type cannot say (NULL: nothing): 0, or -EINVAL with
	 * "<key>: <what is wrong>" in @why. Called after the type's check.
	 */
	int (*check)(const struct bci_config_key *key, const char *value, char *why,
		     size_t why_size);
};

struct bci_config;

/*
 * The `key = value` line format of executor.conf and of the builder's recipes:
 * '#' starts a comment line, blank lines are ignored, white space around the
 * key and the value is trimmed (a '\r' too), the value may be empty and hold
 * '='. Calls @fn for every entry with its 1-based line number; stops at the
 * first negative return of @fn (which fills @err itself). A NUL byte, a line
 * without '=' or an empty key is -EINVAL with "<name>:<line>: what" in @err.
 */
typedef int (*bci_kv_fn)(const char *key, const char *value, unsigned int line, void *data);
int bci_kv_parse(const char *name, const char *text, size_t len, bci_kv_fn fn, void *data,
		 char *err, size_t err_size);

/* @keys is terminated by an entry with a NULL name and must outlive the config. */
int bci_config_new(const struct bci_config_key *keys, struct bci_config **out);
void bci_config_free(struct bci_config *config);

/*
 * Each of these stops at the first bad entry, writes a one-line message into
 * @err and returns -EINVAL (or -ENOMEM); values set before it stay set.
 */
int bci_config_set(struct bci_config *config, const char *key, const char *value,
		   const char *origin, char *err, size_t err_size);
int bci_config_parse_file(struct bci_config *config, const char *name, const char *text,
			  size_t len, char *err, size_t err_size);
int bci_config_parse_cmdline(struct bci_config *config, const char *cmdline, const char *prefix,
			     char *err, size_t err_size);

/* Getters: the value is owned by the config. Asking for an unknown key is a bug (abort). */
const char *bci_config_get(const struct bci_config *config, const char *key);
const char *bci_config_origin(const struct bci_config *config, const char *key);
/* SECONDS and DURATION_OR_OFF (0 for off) */
unsigned long bci_config_get_seconds(const struct bci_config *config, const char *key);
unsigned long long bci_config_get_size(const struct bci_config *config, const char *key);
unsigned long bci_config_get_number(const struct bci_config *config, const char *key);
/* Splits a LIST value: fills @items (pointers into @storage, a copy owned by the caller). */
int bci_config_get_list(const struct bci_config *config, const char *key, char **storage,
			const char ***items, size_t *count);

/* Parse as the types above do; 0 on success, -EINVAL otherwise. */
int bci_parse_seconds(const char *text, unsigned long *seconds);
int bci_parse_size(const char *text, unsigned long long *bytes);
int bci_parse_number(const char *text, unsigned long *number);

#endif
