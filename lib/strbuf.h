/* SPDX-License-Identifier: MIT */
/*
 * A growable byte string, always NUL-terminated once anything was appended
 * (an empty buffer has p == NULL). The buffer owns p until
 * bci_strbuf_steal() hands it to the caller.
 */
#ifndef BCI_STRBUF_H
#define BCI_STRBUF_H

#include <stddef.h>

struct bci_strbuf {
	char *p;
	size_t len, cap;
};

/* Appends @len bytes of @s. 0 or -ENOMEM (the buffer is unchanged then). */
int bci_strbuf_append(struct bci_strbuf *b, const char *s, size_t len);
int bci_strbuf_appendf(struct bci_strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Makes room for @cap bytes and the NUL. 0 or -ENOMEM. */
int bci_strbuf_reserve(struct bci_strbuf *b, size_t cap);
/* Empties the text, keeping the memory. */
void bci_strbuf_reset(struct bci_strbuf *b);
/* Frees the memory. */
void bci_strbuf_release(struct bci_strbuf *b);
/* Hands the text (NULL if nothing was appended) to the caller, who frees it; the buffer is emptied. */
char *bci_strbuf_steal(struct bci_strbuf *b, size_t *len);

#endif
