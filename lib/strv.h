/* SPDX-License-Identifier: MIT */
/*
 * Growable strings and string lists, and ${VAR} expansion: the small
 * allocation helpers every parser and process launcher needs, written once.
 *
 * Both structures start zeroed (`struct bci_str s = { 0 };`), own their
 * memory and are emptied by their _free(). Functions return 0 or -ENOMEM; on
 * -ENOMEM the structure is unchanged.
 */
#ifndef BCI_STRV_H
#define BCI_STRV_H

#include <stdbool.h>
#include <stddef.h>

/* A NUL-terminated string that grows: data is NULL until the first append. */
struct bci_str {
	char *data;
	size_t len, cap;
};

int bci_str_append(struct bci_str *s, const char *text, size_t len);
int bci_str_appendf(struct bci_str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Room for a string of @len bytes and its NUL, for a caller that writes into data. */
int bci_str_reserve(struct bci_str *s, size_t len);
/* Empties the string, keeping its memory for the next text. */
void bci_str_reset(struct bci_str *s);
/* Hands the text to the caller (free()); "" for an empty string; NULL on ENOMEM. */
char *bci_str_steal(struct bci_str *s);
void bci_str_free(struct bci_str *s);

/*
 * A list of owned strings, always NULL-terminated once not empty, so that
 * items can be given to execve() as argv or envp.
 */
struct bci_strv {
	char **items;
	size_t count, cap;
};

int bci_strv_add(struct bci_strv *v, const char *s);
/* Adds the first @len bytes of @s. */
int bci_strv_addn(struct bci_strv *v, const char *s, size_t len);
int bci_strv_addf(struct bci_strv *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds each run of characters of @text not in @separators (empty runs skipped). */
int bci_strv_split(struct bci_strv *v, const char *text, const char *separators);
bool bci_strv_contains(const struct bci_strv *v, const char *s);
/* @v's strings, each followed by a newline, as one malloc'ed text ("" when empty); NULL: no memory. */
char *bci_strv_lines(const struct bci_strv *v);
void bci_strv_free(struct bci_strv *v);

/*
 * ${NAME} expansion: NAME is [A-Za-z_][A-Za-z0-9_]* (at most 255 characters);
 * a '$' not followed by '{' stays as it is. @lookup answers a name (NULL: not
 * set). 0 with a malloc'ed *@out owned by the caller; -EINVAL with "what is
 * wrong in '<in>'" in @err (no origin: the caller prefixes its file:line);
 * -ENOMEM.
 */
/* The value of one hexadecimal digit (either case), or -1 for any other character. */
int bci_hex_digit(char c);

/*
 * strtod() in the C locale, the same value and *@end (NULL: not wanted) for
 * any text: a plain decimal ("12", "0.031", ".5") small enough to be exact
 * as a 53-bit integer over a power of ten up to 10^22 is divided directly
 * (one correctly rounded division, as strtod rounds); anything else
 * (signs, spaces, exponents, hex, inf, long digit runs) is strtod's.
 * IGT's times ("(0.123s)"), thousands a run, took strtod's general path.
 */
double bci_strtod(const char *s, char **end);

typedef const char *(*bci_lookup_fn)(const char *name, void *data);
int bci_expand_vars(const char *in, bci_lookup_fn lookup, void *data, char **out, char *err,
		    size_t err_size);

#endif
