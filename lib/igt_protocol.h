/* SPDX-License-Identifier: MIT */
/*
 * The IGT protocol: what an IGT test binary prints on stdout/stderr (out.txt,
 * err.txt), what its exit code means, and the names results carry. This is
 * the one definition bootci has; the executor (live, line by line) and the
 * results generator (afterwards, on whole files) both classify through it,
 * so they cannot disagree about a line. The strings themselves are in
 * igt_output_strings.h, with every other string of IGT's.
 *
 * The lines, as igt_runner's resultgen.c reads them:
 *
 *   IGT-Version: 1.28-g... (x86_64) (Linux: ...)      BCI_IGT_LINE_VERSION
 *   Starting subtest: NAME                            BCI_IGT_LINE_SUBTEST_START
 *   Starting dynamic subtest: DYN                     BCI_IGT_LINE_DYNAMIC_START
 *   Dynamic subtest DYN: SUCCESS (0.055s)             BCI_IGT_LINE_DYNAMIC_RESULT
 *   Subtest NAME: FAIL (0.109s)                       BCI_IGT_LINE_SUBTEST_RESULT
 *
 * A start line is its prefix followed by anything (the name may be empty).
 * A result line must name the test with [A-Za-z0-9_-]+ right after the
 * prefix, then ": "; "Subtest foo failed." and "Subtest a b: FAIL" are
 * ordinary output. The result word is compared by prefix with SUCCESS,
 * SKIP, FAIL, CRASH, TIMEOUT ("SUCC" is a pass, an empty word too; any
 * other word gives "incomplete"); "(SECONDSs)" after one separating
 * character gives the time. Every other line is ordinary output.
 *
 * In the kernel log (dmesg.txt), IGT announces its subtests with
 * BCI_IGT_STARTING_SUBTEST_DMESG / BCI_IGT_STARTING_DYNAMIC_SUBTEST_DMESG and
 * adds ignore regexes with BCI_IGT_ADD_IGNORED_REGEX_DMESG anywhere in a
 * record's text.
 *
 * The output parser (bci_igt_output_*) only indexes a buffer (one mark per
 * protocol line); the spans it hands out are byte ranges of that buffer, so
 * nothing is copied. The caller owns the buffer and keeps it alive while the
 * index is used. Quirks kept on purpose, because results must equal
 * igt_runner's: the text stops at the first NUL byte; a protocol line cut
 * short at the end of the buffer still matches; output between a result and
 * the next protocol line belongs to the test that just ended.
 */
#ifndef BCI_IGT_PROTOCOL_H
#define BCI_IGT_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>

/* ---- exit codes (igt_core.h) and the results they give ---- */

#define BCI_IGT_EXIT_SUCCESS 0
#define BCI_IGT_EXIT_SKIP 77
#define BCI_IGT_EXIT_INVALID 79		/* no such subtest: igt_runner calls it a skip */
#define BCI_IGT_EXIT_FAILURE 98
#define BCI_IGT_EXIT_ABORT 112

/*
 * The piglit result of a job that ended with exit code @code and no subtest
 * result of its own: skip, pass, abort, or fail for anything else. The
 * journal's two pseudo codes (results_dir.h) give incomplete and notrun.
 */
const char *bci_igt_result_from_exit(int code);

/* ---- result names ---- */

/* igt_runner's totals keys, in its order: crash pass dmesg-fail ... warn. */
#define BCI_IGT_RESULT_COUNT 11
extern const char *const bci_igt_result_names[BCI_IGT_RESULT_COUNT];
/* The index of @result in bci_igt_result_names, or -1. */
int bci_igt_result_index(const char *result);

/* ---- one line ---- */

enum bci_igt_line_kind {
	BCI_IGT_LINE_OTHER = 0,		/* ordinary output */
	BCI_IGT_LINE_SUBTEST_START,	/* "Starting subtest: " */
	BCI_IGT_LINE_SUBTEST_RESULT,	/* "Subtest NAME: " */
	BCI_IGT_LINE_DYNAMIC_START,	/* "Starting dynamic subtest: " */
	BCI_IGT_LINE_DYNAMIC_RESULT,	/* "Dynamic subtest NAME: " */
	BCI_IGT_LINE_VERSION,		/* "IGT-Version: " */
};

/* What a line says; pointers are into the caller's line. */
struct bci_igt_line {
	enum bci_igt_line_kind kind;
	const char *name;	/* starts: the rest of the line; results: NAME */
	size_t name_len;
	const char *text;	/* results: what follows "NAME: " (the result word...) */
	size_t text_len;
};

/*
 * Classifies the line at @line, @len bytes with or without its newline
 * (bytes after the first newline are ignored). The one answer: the output
 * parser below uses it on every line of a file.
 */
enum bci_igt_line_kind bci_igt_line_classify(const char *line, size_t len);
/* The same, with the name and result text cut out in @out. */
enum bci_igt_line_kind bci_igt_line_parse(const char *line, size_t len, struct bci_igt_line *out);

/*
 * Maps the text after "Subtest NAME: " to a piglit result (pass fail skip
 * crash timeout, or incomplete) and its time in *@time (untouched when the
 * line has none).
 */
const char *bci_igt_result_from_word(const char *text, size_t len, double *time);

/*
 * The writer's side: formats "Subtest NAME: WORD (SECONDSs)\n" (or the
 * "Dynamic subtest" line when @dynamic) into @buf, WORD being SUCCESS, SKIP,
 * FAIL, CRASH or TIMEOUT. Returns snprintf's count.
 */
int bci_igt_line_format_result(char *buf, size_t size, bool dynamic, const char *name,
			       const char *word, double seconds);
/* Formats "Starting subtest: NAME\n" (or "Starting dynamic subtest: ..."). snprintf's count. */
int bci_igt_line_format_start(char *buf, size_t size, bool dynamic, const char *name);

/* ---- a whole out.txt / err.txt ---- */

enum bci_igt_mark_kind {
	BCI_IGT_MARK_SUBTEST_START,
	BCI_IGT_MARK_SUBTEST_RESULT,
	BCI_IGT_MARK_DYNAMIC_START,
	BCI_IGT_MARK_DYNAMIC_RESULT,
};

struct bci_igt_mark {
	enum bci_igt_mark_kind kind;
	size_t offset;			/* where the line starts */
};

struct bci_igt_output {
	const char *buf;		/* the caller's buffer */
	size_t len;			/* bytes before the first NUL */
	struct bci_igt_mark *marks;	/* owned; in buffer order */
	size_t mark_count;
	bool has_version;		/* an "IGT-Version: " line was seen */
	size_t version_offset, version_len;	/* the first one, without its newline */
	/* Subtest lines by name, so that finding each of N subtests is not N scans. */
	size_t *index;			/* hash slots: 1 + mark, 0 empty; index_cap of them */
	size_t index_cap;
	size_t *next_same;		/* per mark: 1 + the next mark of the same key, or 0 (in index's block) */
};

/* A test's share of the output and what its result line says. */
struct bci_igt_span {
	size_t begin, end;		/* byte range in the buffer */
	const char *result;		/* pass fail skip crash timeout, or incomplete */
	double time;			/* seconds from "(1.234s)", else 0 */
	/* mark indexes igt_runner's rules work on; -1 when there is none */
	long start_mark, result_mark;
	size_t last_mark;		/* marks [start_mark+1, last_mark) are inside */
};

/* Indexes @len bytes at @buf. Returns 0 or -ENOMEM. */
int bci_igt_output_parse(struct bci_igt_output *out, const char *buf, size_t len);
void bci_igt_output_release(struct bci_igt_output *out);

/* The span of subtest @name (as written in the journal). Always succeeds. */
void bci_igt_output_subtest(const struct bci_igt_output *out, const char *name,
			    struct bci_igt_span *span);

/*
 * Walks the dynamic subtests started inside @subtest, in output order: start
 * with *@cursor = 0; each call returns 1 and fills @name (NUL-terminated,
 * at most @name_size - 1 bytes) and @span, or 0 when there are no more.
 */
int bci_igt_output_next_dynamic(const struct bci_igt_output *out,
				const struct bci_igt_span *subtest, size_t *cursor,
				char *name, size_t name_size, struct bci_igt_span *span);

/*
 * Whether stderr text holds lines of its own (igt_runner turns a pass into
 * "warn" then): true when a line that is not a protocol line comes before
 * the last protocol line. Lines after the last one do not count, as in igt.
 */
bool bci_igt_err_has_warnings(const char *buf, size_t len);

/* ---- piglit names ---- */

/*
 * igt_runner's "igt@binary[@subtest]" name: each part lowercased, cut at
 * white space, at most 255 bytes. bootci's suspend cycles (binary
 * BCI_IGT_SUSPEND_BINARY, subtest `<state>[_<pm_test>]-<NNNN>`, see
 * testlist.h) are named "bootci@suspend[@<state>[_<pm_test>]@<NNNN>]".
 */
#define BCI_IGT_SUSPEND_BINARY "bootci_suspend"
#define BCI_IGT_NAME_SIZE 256
void bci_igt_piglit_name(const char *binary, const char *subtest, char *name, size_t size);
void bci_igt_piglit_name_dynamic(const char *subtest_name, const char *dynamic,
				 char *name, size_t size);

#endif
