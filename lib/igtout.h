/* SPDX-License-Identifier: MIT */
/*
 * Parser of what an IGT test binary prints (its out.txt or err.txt), with
 * igt_runner's rules for cutting it into subtests and dynamic subtests:
 *
 *   IGT-Version: 1.28-g... (x86_64) (Linux: ...)
 *   Starting subtest: NAME
 *   Starting dynamic subtest: DYN
 *   Dynamic subtest DYN: SUCCESS (0.055s)
 *   Subtest NAME: FAIL (0.109s)
 *
 * The parser only indexes the buffer (one mark per protocol line); the
 * spans it hands out are byte ranges of that buffer, so nothing is copied.
 * The caller owns the buffer and keeps it alive while the index is used.
 *
 * Quirks kept on purpose, because results must equal igt_runner's: the text
 * stops at the first NUL byte; a result word is recognised by prefix
 * ("SUCC" is a pass, an empty word too); a protocol line cut short at the
 * end of the buffer still matches; output between a result and the next
 * protocol line belongs to the test that just ended.
 */
#ifndef BCI_IGTOUT_H
#define BCI_IGTOUT_H

#include <stdbool.h>
#include <stddef.h>

enum bci_igtout_kind {
	BCI_IGTOUT_SUBTEST_START,	/* "Starting subtest: " */
	BCI_IGTOUT_SUBTEST_RESULT,	/* "Subtest NAME: " */
	BCI_IGTOUT_DYNAMIC_START,	/* "Starting dynamic subtest: " */
	BCI_IGTOUT_DYNAMIC_RESULT,	/* "Dynamic subtest NAME: " */
};

struct bci_igtout_mark {
	enum bci_igtout_kind kind;
	size_t offset;			/* where the line starts */
};

struct bci_igtout {
	const char *buf;		/* the caller's buffer */
	size_t len;			/* bytes before the first NUL */
	struct bci_igtout_mark *marks;	/* owned; in buffer order */
	size_t mark_count;
	bool has_version;		/* an "IGT-Version: " line was seen */
	size_t version_offset, version_len;	/* that line, without its newline */
};

/* A test's share of the output and what its result line says. */
struct bci_igtout_span {
	size_t begin, end;		/* byte range in the buffer */
	const char *result;		/* pass fail skip crash timeout, or incomplete */
	double time;			/* seconds from "(1.234s)", else 0 */
	/* mark indexes igt_runner's rules work on; -1 when there is none */
	long start_mark, result_mark;
	size_t last_mark;		/* marks [start_mark+1, last_mark) are inside */
};

/* Indexes @len bytes at @buf. Returns 0 or -ENOMEM. */
int bci_igtout_parse(struct bci_igtout *out, const char *buf, size_t len);
void bci_igtout_release(struct bci_igtout *out);

/* The span of subtest @name (as written in the journal). Always succeeds. */
void bci_igtout_subtest(const struct bci_igtout *out, const char *name,
			struct bci_igtout_span *span);

/*
 * Walks the dynamic subtests started inside @subtest, in output order: start
 * with *@cursor = 0; each call returns 1 and fills @name (NUL-terminated,
 * at most @name_size - 1 bytes) and @span, or 0 when there are no more.
 */
int bci_igtout_next_dynamic(const struct bci_igtout *out,
			    const struct bci_igtout_span *subtest, size_t *cursor,
			    char *name, size_t name_size, struct bci_igtout_span *span);

/*
 * Maps the text after "Subtest NAME: " to a piglit result and its time,
 * igt_runner's way: the first word is compared by prefix with SUCCESS,
 * SKIP, FAIL, CRASH, TIMEOUT (unknown words give "incomplete"), then
 * "(SECONDS" right after the one following character gives the time.
 */
const char *bci_igtout_map_result(const char *text, size_t len, double *time);

/*
 * Whether stderr text holds lines of its own (igt_runner turns a pass into
 * "warn" then): true when a line that is not a protocol line comes before
 * the last protocol line. Lines after the last one do not count, as in igt.
 */
bool bci_igtout_err_has_warnings(const char *buf, size_t len);

/*
 * igt_runner's "igt@binary[@subtest]" name: each part lowercased, cut at whitespace.
 * bootci's suspend cycles (binary BCI_IGTOUT_SUSPEND_BINARY, subtest
 * `<state>[_<pm_test>]-<NNNN>`) are named "bootci@suspend[@<state>[_<pm_test>]@<NNNN>]".
 */
#define BCI_IGTOUT_SUSPEND_BINARY "bootci_suspend"
void bci_igtout_piglit_name(const char *binary, const char *subtest, char *name, size_t size);
void bci_igtout_piglit_name_dynamic(const char *subtest_name, const char *dynamic,
				    char *name, size_t size);

#endif
