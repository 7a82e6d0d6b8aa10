/* SPDX-License-Identifier: MIT */
/*
 * A small streaming JSON writer: values go straight to a FILE as they are
 * given, so a document far larger than memory (a results.json of a whole
 * run) costs only what the caller holds for the value being written.
 *
 * Errors are sticky, like a FILE's: every call returns 0 or the first -errno
 * met (-EINVAL for a misuse such as a value where a key is expected), and
 * once an error is recorded nothing more is written. bci_jsonw_finish()
 * reports whether the whole document came out complete.
 *
 * Strings are bytes, not necessarily UTF-8: test output is whatever a test
 * printed. Two ways to make them valid JSON (see enum bci_jsonw_bytes).
 */
#ifndef BCI_JSONW_H
#define BCI_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define BCI_JSONW_MAX_DEPTH 32

enum bci_jsonw_bytes {
	/*
	 * Well-formed UTF-8 sequences pass through; every byte that is not part
	 * of one is taken as the Latin-1 character of that value (0xE9 -> "é"),
	 * so the output is always valid UTF-8 and nothing is dropped.
	 */
	BCI_JSONW_UTF8 = 0,
	/*
	 * Every byte >= 0x80 is taken as a Latin-1 character, even inside valid
	 * UTF-8. This is what igt_runner's results generator does with test
	 * output; bci_resultgen uses it so its strings equal igt_runner's.
	 */
	BCI_JSONW_LATIN1 = 1,
};

struct bci_jsonw {
	FILE *out;
	int indent;			/* spaces per level, 0 for one line */
	int error;			/* first -errno, sticky */
	unsigned depth;
	bool in_string;			/* between string_begin and string_end */
	bool after_key;			/* a key was written, its value is due */
	enum bci_jsonw_bytes bytes;	/* mode of the string being written */
	unsigned char pending[4];	/* an incomplete UTF-8 sequence across appends */
	unsigned pending_len;
	/* per open container: 'o' object or 'a' array, and whether it has members */
	char kind[BCI_JSONW_MAX_DEPTH];
	bool has_members[BCI_JSONW_MAX_DEPTH];
	char *buf;			/* bci_jsonw_buffer()'s, or NULL: straight to out */
	size_t buf_len, buf_cap;
};

/* Starts a document on @out (not owned). @indent: spaces per level, 0 = compact. */
void bci_jsonw_init(struct bci_jsonw *w, FILE *out, int indent);

/*
 * Gathers the output in @buf (@size bytes, the caller's, kept until the
 * end) and hands it to the FILE a buffer at a time: a document of many
 * small pieces then costs few calls into stdio. What is gathered reaches
 * the FILE at bci_jsonw_finish() or bci_jsonw_flush().
 */
void bci_jsonw_buffer(struct bci_jsonw *w, char *buf, size_t size);
/* Hands what bci_jsonw_buffer() gathered to the FILE (no fflush). 0 or -errno. */
int bci_jsonw_flush(struct bci_jsonw *w);
int bci_jsonw_object_begin(struct bci_jsonw *w);
int bci_jsonw_object_end(struct bci_jsonw *w);
int bci_jsonw_array_begin(struct bci_jsonw *w);
int bci_jsonw_array_end(struct bci_jsonw *w);

/* A member name inside an object; @len bytes, escaped like a string. */
int bci_jsonw_key(struct bci_jsonw *w, const char *key);
int bci_jsonw_key_n(struct bci_jsonw *w, const char *key, size_t len, enum bci_jsonw_bytes bytes);

int bci_jsonw_string(struct bci_jsonw *w, const char *s);
int bci_jsonw_string_n(struct bci_jsonw *w, const char *s, size_t len, enum bci_jsonw_bytes bytes);
/* A string given in pieces (for text too large to hold at once). */
int bci_jsonw_string_begin(struct bci_jsonw *w, enum bci_jsonw_bytes bytes);
int bci_jsonw_string_append(struct bci_jsonw *w, const char *s, size_t len);
int bci_jsonw_string_end(struct bci_jsonw *w);

int bci_jsonw_int(struct bci_jsonw *w, long long v);
/* Shortest decimal form that reads back as the same double; null if not finite. */
int bci_jsonw_double(struct bci_jsonw *w, double v);
int bci_jsonw_bool(struct bci_jsonw *w, bool v);
int bci_jsonw_null(struct bci_jsonw *w);

/*
 * Ends the document: a newline, a flush, and a check that every container
 * was closed and the stream saw no error. Returns 0 or -errno.
 */
int bci_jsonw_finish(struct bci_jsonw *w);

/*
 * Formats @v as bci_jsonw_double() would into @buf (at least 32 bytes).
 * Exposed for tests and for writers of other formats.
 */
void bci_jsonw_format_double(double v, char *buf, size_t size);

#endif
