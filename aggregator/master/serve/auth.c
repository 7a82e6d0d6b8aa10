// SPDX-License-Identifier: MIT
/* serve's upload tokens (auth.h): a file of digests, compared in constant time. */
#include "auth.h"
#include "../names.h"
#include "fsutil.h"
#include "manifest.h"
#include "message.h"
#include "sha256.h"
#include "strv.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_FILE_MAX (16 << 20)

struct token_entry {
	char machine[BCI_MANIFEST_WORD_MAX + 1];
	unsigned char digest[32];
};

struct bci_tokens {
	struct token_entry *entries;
	size_t count;
};

/* One non-comment line: "<machine> sha256:<hex>", blanks around the two fields. */
static int parse_line(const char *line, size_t len, struct token_entry *entry, char *why,
		      size_t why_size)
{
	const char *p = line, *end = line + len, *word;
	char hex[BCI_SHA256_HEX_LEN + 1];
	size_t n;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	word = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	n = p - word;
	if (n == 0 || n > BCI_MANIFEST_WORD_MAX) {
		bci_message(why, why_size, "expected '<machine> sha256:<hex>'");
		return -EINVAL;
	}
	memcpy(entry->machine, word, n);
	entry->machine[n] = '\0';
	if (!bci_name_machine_ok(entry->machine)) {
		bci_message(why, why_size, "machine '%s' is not a word ([A-Za-z0-9._-])", entry->machine);
		return -EINVAL;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if ((size_t)(end - p) < 7 + 64 || strncmp(p, "sha256:", 7)) {
		bci_message(why, why_size, "%s: expected 'sha256:' and 64 hex digits", entry->machine);
		return -EINVAL;
	}
	p += 7;
	/* Either case, as sha256sum's output or by hand. */
	if (bci_sha256_hex_read(p, BCI_SHA256_HEX_LEN, hex) < 0 ||
	    bci_sha256_hex_decode(hex, entry->digest) < 0) {
		bci_message(why, why_size, "%s: the digest is not 64 hex digits", entry->machine);
		return -EINVAL;
	}
	for (p += 64; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r') {
			bci_message(why, why_size, "%s: text after the digest", entry->machine);
			return -EINVAL;
		}
	return 0;
}

int bci_tokens_parse(const char *name, const char *text, size_t len, struct bci_tokens **out,
		     char *err, size_t err_size)
{
	struct bci_tokens *tokens = calloc(1, sizeof(*tokens));
	const char *line = text, *end = text + len;
	size_t capacity = 0;
	unsigned lineno = 0;
	int ret = 0;

	if (!tokens)
		return -ENOMEM;
	while (line < end) {
		const char *nl = memchr(line, '\n', end - line), *p;
		size_t line_len = (nl ? nl : end) - line;
		struct token_entry entry;
		char why[200];

		lineno++;
		for (p = line; p < line + line_len && (*p == ' ' || *p == '\t' || *p == '\r'); p++)
			;
		if (p == line + line_len || *p == '#')
			goto next;
		if (memchr(line, '\0', line_len)) {
			bci_message(err, err_size, "%s:%u: a NUL byte", name, lineno);
			ret = -EINVAL;
			break;
		}
		ret = parse_line(line, line_len, &entry, why, sizeof(why));
		if (ret < 0) {
			bci_message(err, err_size, "%s:%u: %s", name, lineno, why);
			break;
		}
		for (size_t i = 0; i < tokens->count; i++)
			if (!strcmp(tokens->entries[i].machine, entry.machine)) {
				bci_message(err, err_size, "%s:%u: machine %s given twice", name, lineno,
					    entry.machine);
				ret = -EINVAL;
				break;
			}
		if (ret < 0)
			break;
		if (tokens->count == capacity) {
			struct token_entry *grown;

			capacity = capacity ? 2 * capacity : 16;
			grown = realloc(tokens->entries, capacity * sizeof(*grown));
			if (!grown) {
				ret = -ENOMEM;
				bci_message(err, err_size, "%s: out of memory", name);
				break;
			}
			tokens->entries = grown;
		}
		tokens->entries[tokens->count++] = entry;
next:
		line += line_len + 1;
	}
	if (ret < 0) {
		bci_tokens_free(tokens);
		return ret;
	}
	*out = tokens;
	return 0;
}

int bci_tokens_load(const char *path, struct bci_tokens **out, char *err, size_t err_size)
{
	size_t len;
	char *text;
	int ret;

	ret = bci_read_file(path, &text, &len, TOKEN_FILE_MAX);
	if (ret < 0) {
		bci_message(err, err_size, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = bci_tokens_parse(path, text, len, out, err, err_size);
	free(text);
	return ret;
}

void bci_tokens_free(struct bci_tokens *tokens)
{
	if (!tokens)
		return;
	if (tokens->entries)
		explicit_bzero(tokens->entries, tokens->count * sizeof(tokens->entries[0]));
	free(tokens->entries);
	free(tokens);
}

size_t bci_tokens_count(const struct bci_tokens *tokens)
{
	return tokens->count;
}

const char *bci_tokens_machine(const struct bci_tokens *tokens, const char *token)
{
	unsigned char digest[BCI_SHA256_SIZE];
	const char *found = NULL;

	bci_sha256_bytes(token, strlen(token), digest);
	/* Every entry is compared in full, whatever matched before. */
	for (size_t i = 0; i < tokens->count; i++) {
		unsigned char diff = 0;
		uintptr_t mask;

		for (int j = 0; j < 32; j++)
			diff |= digest[j] ^ tokens->entries[i].digest[j];
		/* mask: all ones when diff == 0, without a branch on the secret. */
		mask = (uintptr_t)0 - (uintptr_t)(((unsigned)diff - 1) >> 8 & 1);
		found = (const char *)(((uintptr_t)tokens->entries[i].machine & mask) |
				       ((uintptr_t)found & ~mask));
	}
	return found;
}
