/* SPDX-License-Identifier: MIT */
/*
 * serve's upload tokens. The token file holds one line per machine:
 *
 *   # comment
 *   <machine> sha256:<64 hex digits of sha256(token)>
 *
 * Only the tokens' digests are stored, so the file gives nobody a token. A
 * machine's name is a word (names.h, bci_name_machine_ok()) and appears once.
 * A presented token is hashed and compared with every entry in constant
 * time: how long a check takes says nothing about how much of a digest
 * matched, nor which entry.
 *
 * Make a line with: printf %s "$TOKEN" | sha256sum, then "lab-01 sha256:" before the digest.
 */
#ifndef BCI_SERVE_AUTH_H
#define BCI_SERVE_AUTH_H

#include <stddef.h>

struct bci_tokens;

/* Parses the token file text @text (@len bytes) named @name; errors say name:line. */
int bci_tokens_parse(const char *name, const char *text, size_t len, struct bci_tokens **out,
		     char *err, size_t err_size);
int bci_tokens_load(const char *path, struct bci_tokens **out, char *err, size_t err_size);
void bci_tokens_free(struct bci_tokens *tokens);
size_t bci_tokens_count(const struct bci_tokens *tokens);

/*
 * The machine whose token @token is (owned by @tokens), or NULL when it is
 * nobody's.
 */
const char *bci_tokens_machine(const struct bci_tokens *tokens, const char *token);

#endif
