// SPDX-License-Identifier: MIT
/*
 * What lib/manifest.c (the manifest, its checks and writer) and
 * lib/manifest_read.c (the reader) share; not for other modules.
 */
#ifndef BCI_MANIFEST_INTERNAL_H
#define BCI_MANIFEST_INTERNAL_H

#include <stddef.h>

/* manifest.h's, which both files include: this header is below it, not beside it. */
struct bci_manifest;

/* Sizes above this are refused as absurd (and stay exact in every JSON reader). */
#define MANIFEST_SIZE_MAX (1ULL << 53)
/* Nesting the format needs is 4; anything deeper is refused by the tokenizer. */
#define MANIFEST_DEPTH 8

/* Grows *@array_ptr (elements of @size) by one zeroed element; returns it or NULL. */
void *bci_manifest_array_grow(void *array_ptr, size_t *count, size_t size);

/* The checks every manifest passes, written or read (manifest.c says which). */
int bci_manifest_check(struct bci_manifest *m, char *err, size_t err_size);

#endif
