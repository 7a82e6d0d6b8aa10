/* SPDX-License-Identifier: MIT */
/*
 * The hash of test names for the open-addressing tables (the report's name
 * numbers, aggregator/master/report/name_numbers.h, and the results
 * generator's). Eight bytes a step, then mixed so that
 * every byte reaches the low bits the tables index by: the report looks up
 * every test name of every run, and a byte a step (FNV-1a) showed in its
 * profile (tests/bench/README.md).
 */
#ifndef BCI_HASH_H
#define BCI_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t bci_hash_bytes(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	if (n) {
		w = 0;
		memcpy(&w, p, n);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	/* MurmurHash3's finalizer: high bits down into the low ones. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static inline uint64_t bci_hash_str(const char *s)
{
	return bci_hash_bytes(s, strlen(s));
}

#endif
