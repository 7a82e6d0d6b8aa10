// SPDX-License-Identifier: MIT
/*
 * A job judged from its `comms` dump (runner_comms.h), as igt_results 1.27
 * does: when the dump holds any packet besides exec ones, it alone gives the
 * job's tests, their out, err, igt-version and results, and journal.txt,
 * out.txt and err.txt are not read at all (what the test wrote on fd 1 and 2
 * itself is not protocol); dmesg.txt, the overrides, pruning and totals then
 * follow as for any job. A dump with only exec packets (a test that does not
 * speak the socket, or igt_runner's text protocol) leaves the job to the
 * text files.
 *
 * igt_results walks the packets through a small state machine; this is the
 * same machine, state for state, with its quirks kept where they decide
 * bytes of results.json:
 *  - a test's out and err are what its log packets carried, with the start
 *    and result lines the runner no longer sees written back in
 *    ("Starting subtest: X", "Subtest X: SUCCESS (0.1s)"), cut at 511 bytes;
 *  - tests get no "time" (only the binary's runtime, from the exit packet);
 *  - a result override packet sets the running test's result, and the
 *    (dynamic) subtest result packet keeps an earlier one;
 *  - an exit with status 112 (abort) or -1 (graceful stop) makes the last
 *    subtest and dynamic subtest abort or notrun, even a finished one;
 *  - the err of a subtest after the first of a job starts at the offset its
 *    out starts at, with the length its err should have (igt_results indexes
 *    the err buffer with the out buffer's offset). Where that window lies
 *    within the err text we take it as igt_results does; where it runs past
 *    the end, igt_results reads beyond its buffer (heap bytes, stale text or
 *    binary: tests/lab/igt-compare.py's runner-binary-err), and we take the
 *    subtest's own err instead, with a warning naming the test;
 *  - a dynamic subtest still open when a resumed exec comes is left without
 *    a result (the overrides make it incomplete), and its result word can
 *    carry over to the next dynamic subtest.
 * Deliberate differences, all on dumps igt_runner never writes (igt_results
 * crashes or refuses the run on them): a dump cut inside a record (the
 * machine died mid-write) is used up to the cut, with a warning; a packet
 * that lacks a field of its type is skipped with a warning (an exit packet
 * without its time counts 0 s); a packet order igt_results rejects (a
 * subtest before exec or after exit, a dynamic subtest outside a subtest) is
 * an error naming the packet's offset.
 */
#include "internal.h"

#include "igt_output_strings.h"
#include "results_dir.h"
#include "runner_comms.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* igt_results formats its injected lines into 512-byte buffers. */
#define INJECTED_MAX 512

enum comms_state {
	STATE_INITIAL,
	STATE_AFTER_EXEC,
	STATE_SUBTEST_STARTED,
	STATE_DYNAMIC_STARTED,
	STATE_BETWEEN_DYNAMIC,
	STATE_BETWEEN_SUBTESTS,
	STATE_EXITED,
};

struct comms {
	struct gen *g;
	const char *rel;
	size_t offset;			/* of the packet being handled, for messages */
	enum comms_state state;
	struct test *test, *dynamic;	/* the (dynamic) subtest collecting logs */
	long subtest_index;		/* igt_results' "current subtest": the last added */
	char *subtest_name, *dynamic_name;
	struct bci_str out, err;
	size_t out_at, next_out_at, err_at, next_err_at;
	size_t dyn_out_at, next_dyn_out_at, dyn_err_at, next_dyn_err_at;
	struct bci_results_text version;
	const char *subtest_result, *dynamic_result;	/* kept by the job (blobs) or static */
};

/* A copy of @len bytes at @p the job keeps until its tests are handed out. */
static int keep_copy(struct gen *g, const char *p, size_t len, struct bci_results_text *t)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, p, len);
	copy[len] = '\0';
	*t = (struct bci_results_text){ copy, len };
	return keep_blob(g, copy);
}

static int keep_string(struct gen *g, const char *s, const char **out)
{
	struct bci_results_text t;
	int ret = keep_copy(g, s, strlen(s), &t);

	*out = ret == 0 ? t.ptr : NULL;
	return ret;
}

static int append(struct bci_str *b, const char *text)
{
	return bci_str_append(b, text, strlen(text));
}

/* [begin, len) of @b, empty when @begin is past its end. */
static int keep_tail(struct gen *g, const struct bci_str *b, size_t begin, struct bci_results_text *t)
{
	if (begin >= b->len)
		return keep_copy(g, "", 0, t);
	return keep_copy(g, b->data + begin, b->len - begin, t);
}

static int finish_subtest(struct comms *c)
{
	struct gen *g = c->g;
	struct test *t = c->test;
	size_t own = c->err.len > c->err_at ? c->err.len - c->err_at : 0;
	int ret;

	if (!t)
		return 0;
	ret = keep_tail(g, &c->out, c->out_at, &t->out);
	/* igt_results' window: err from out's offset, err's own length (see the top). */
	if (ret == 0 && c->out_at <= c->err.len && own <= c->err.len - c->out_at)
		ret = keep_copy(g, c->err.data ? c->err.data + c->out_at : "", own, &t->err);
	else if (ret == 0) {
		/* Said, so that a comparison with igt_results knows where it cannot agree. */
		gen_warn(g, "%s/%s: %s: igt_results reads this test's err past the end of its buffer; "
			 "its own err is given", g->dir, c->rel, t->name);
		ret = keep_tail(g, &c->err, c->err_at, &t->err);
	}
	if (ret < 0)
		return ret;
	if (c->version.ptr)
		t->version = c->version;
	t->from_comms = true;
	t->result = c->subtest_result ? c->subtest_result : "incomplete";
	c->subtest_result = NULL;
	c->test = NULL;
	c->out_at = c->next_out_at;
	c->err_at = c->next_err_at;
	return 0;
}

static int finish_dynamic(struct comms *c)
{
	struct test *t = c->dynamic;
	int ret;

	if (!t)
		return 0;
	ret = keep_tail(c->g, &c->out, c->dyn_out_at, &t->out);
	if (ret == 0)
		ret = keep_tail(c->g, &c->err, c->dyn_err_at, &t->err);
	if (ret < 0)
		return ret;
	if (c->version.ptr)
		t->version = c->version;
	t->from_comms = true;
	t->result = c->dynamic_result ? c->dynamic_result : "incomplete";
	c->dynamic_result = NULL;
	c->dynamic = NULL;
	c->dyn_out_at = c->next_dyn_out_at;
	c->dyn_err_at = c->next_dyn_err_at;
	return 0;
}

static int replace_name(char **slot, const char *name)
{
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	free(*slot);
	*slot = copy;
	return 0;
}

static int new_subtest(struct comms *c, const char *name)
{
	struct gen *g = c->g;
	char piglit[NAME_SIZE];
	int ret = add_subtest(g, name);

	if (ret < 0)
		return ret;
	/* igt_results' current subtest is the list's last, even when @name was there already. */
	c->subtest_index = (long)g->sub_count - 1;
	piglit_name(g, name, piglit);
	c->test = get_test(g, piglit);
	if (!c->test)
		return -ENOMEM;
	return replace_name(&c->subtest_name, name);
}

static int new_dynamic(struct comms *c, const char *name)
{
	struct gen *g = c->g;
	char piglit[NAME_SIZE], dynamic[NAME_SIZE];
	int ret = 0;

	if (c->subtest_index >= 0)
		ret = add_dynamic(&g->subs[c->subtest_index], name);
	if (ret < 0)
		return ret;
	piglit_name(g, c->subtest_name ? c->subtest_name : "", piglit);
	bci_igt_piglit_name_dynamic(piglit, name, dynamic, NAME_SIZE);
	c->dynamic = get_test(g, dynamic);
	if (!c->dynamic)
		return -ENOMEM;
	return replace_name(&c->dynamic_name, name);
}

/* A line igt_results writes into both texts, formatted as it does (cut at 511 bytes). */
static int inject(struct comms *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int inject(struct comms *c, const char *fmt, ...)
{
	char msg[INJECTED_MAX];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ret = append(&c->out, msg);
	return ret < 0 ? ret : append(&c->err, msg);
}

/* A note about a test bug, into err only. */
static int note(struct comms *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int note(struct comms *c, const char *fmt, ...)
{
	char msg[INJECTED_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return append(&c->err, msg);
}

static int refuse(struct comms *c, const char *what)
{
	return gen_error(c->g, -EINVAL, "%s/%s: offset %zu: %s", c->g->dir, c->rel, c->offset, what);
}

static const char *or_null(const char *s)
{
	return s ? s : "(null)";
}

static int on_exec_packet(struct comms *c)
{
	int ret = 0;

	switch (c->state) {
	case STATE_INITIAL:
		break;
	case STATE_AFTER_EXEC:
		/* A resume that ran no subtest: its logs belong nowhere. */
		c->out.len = c->err.len = 0;
		c->out_at = c->err_at = c->next_out_at = c->next_err_at = 0;
		break;
	default:
		/* A resumed exec: the subtest collecting so far ends here. */
		ret = finish_subtest(c);
		break;
	}
	c->state = STATE_AFTER_EXEC;
	return ret;
}

static int on_exit_packet(struct comms *c, const struct bci_comms_packet *p)
{
	struct gen *g = c->g;
	const struct job *job = g->job;
	char piglit[NAME_SIZE];
	const char *subtest = NULL;
	int ret = 0;

	if (c->state == STATE_AFTER_EXEC) {
		/* No subtest came: the job's requested one, or the binary, gets the exit's result. */
		if (job->requested_count > 0) {
			subtest = job->requested[0];
			ret = add_subtest(g, subtest);
			if (ret < 0)
				return ret;
		}
		piglit_name(g, subtest, piglit);
		c->test = get_test(g, piglit);
		if (!c->test)
			return -ENOMEM;
		if (!c->subtest_result)
			c->subtest_result = bci_job_journal_result(p->exit_status);
	} else if (p->exit_status == BCI_IGT_EXIT_ABORT || p->exit_status == BCI_RESULTS_EXIT_GRACEFUL) {
		c->subtest_result = c->dynamic_result =
			p->exit_status == BCI_IGT_EXIT_ABORT ? "abort" : "notrun";
	}
	ret = add_binary_runtime(g, p->time ? strtod(p->time, NULL) : 0.0);
	c->state = STATE_EXITED;
	return ret;
}

static int on_subtest_start(struct comms *c, const struct bci_comms_packet *p)
{
	int ret = 0;

	switch (c->state) {
	case STATE_INITIAL:
	case STATE_EXITED:
		return refuse(c, "subtest start while the binary was not running");
	case STATE_SUBTEST_STARTED:
	case STATE_DYNAMIC_STARTED:
	case STATE_BETWEEN_DYNAMIC:
		ret = note(c, BCI_IGT_RUNNER_SUBTEST_ALREADY_RUNNING, or_null(c->subtest_name), p->name);
		/* fallthrough */
	case STATE_BETWEEN_SUBTESTS:
		if (ret == 0)
			ret = finish_dynamic(c);
		if (ret == 0)
			ret = finish_subtest(c);
		/* fallthrough */
	case STATE_AFTER_EXEC:
		if (ret == 0)
			ret = new_subtest(c, p->name);
		if (ret == 0)
			ret = inject(c, BCI_IGT_STARTING_SUBTEST "%s\n", p->name);
		break;
	}
	c->state = STATE_SUBTEST_STARTED;
	return ret;
}

static int on_subtest_result(struct comms *c, const struct bci_comms_packet *p)
{
	double unused;
	int ret = 0;

	switch (c->state) {
	case STATE_INITIAL:
	case STATE_EXITED:
		return refuse(c, "subtest result while the binary was not running");
	case STATE_DYNAMIC_STARTED:
		ret = note(c, BCI_IGT_RUNNER_DYNAMIC_STILL_RUNNING, or_null(c->dynamic_name), p->name);
		if (ret == 0)
			ret = finish_dynamic(c);
		break;
	case STATE_BETWEEN_SUBTESTS:
		/* A result with no start (skipped in igt_fixture) after another subtest. */
		ret = finish_subtest(c);
		if (ret == 0)
			ret = new_subtest(c, p->name);
		break;
	case STATE_AFTER_EXEC:
		ret = new_subtest(c, p->name);
		break;
	case STATE_SUBTEST_STARTED:
	case STATE_BETWEEN_DYNAMIC:
		break;
	}
	if (ret == 0)
		ret = inject(c, BCI_IGT_SUBTEST_RESULT "%s: %s (%ss)\n", p->name, p->result, or_null(p->time));
	if (ret < 0)
		return ret;
	c->next_out_at = c->out.len;
	c->next_err_at = c->err.len;
	/* A result already set came from an override, which wins. */
	if (!c->subtest_result)
		c->subtest_result = bci_igt_result_from_word(p->result, strlen(p->result), &unused);
	c->state = STATE_BETWEEN_SUBTESTS;
	return 0;
}

static int on_dynamic_start(struct comms *c, const struct bci_comms_packet *p)
{
	int ret = 0;

	switch (c->state) {
	case STATE_INITIAL:
	case STATE_EXITED:
		return refuse(c, "dynamic subtest start while the binary was not running");
	case STATE_AFTER_EXEC:
		return refuse(c, "dynamic subtest start while no subtest was running");
	case STATE_BETWEEN_SUBTESTS:
		/* Nowhere to put it: a note in the previous subtest's err, and on. */
		return note(c, BCI_IGT_RUNNER_DYNAMIC_OUTSIDE_SUBTEST, p->name);
	case STATE_DYNAMIC_STARTED:
		ret = note(c, BCI_IGT_RUNNER_DYNAMIC_ALREADY_RUNNING, or_null(c->dynamic_name), p->name);
		/* fallthrough */
	case STATE_BETWEEN_DYNAMIC:
		if (ret == 0)
			ret = finish_dynamic(c);
		/* fallthrough */
	case STATE_SUBTEST_STARTED:
		if (ret == 0)
			ret = new_dynamic(c, p->name);
		if (ret == 0)
			ret = inject(c, BCI_IGT_STARTING_DYNAMIC_SUBTEST "%s\n", p->name);
		break;
	}
	c->state = STATE_DYNAMIC_STARTED;
	return ret;
}

static int on_dynamic_result(struct comms *c, const struct bci_comms_packet *p)
{
	double unused;
	int ret = 0;

	switch (c->state) {
	case STATE_INITIAL:
	case STATE_EXITED:
		return refuse(c, "dynamic subtest result while the binary was not running");
	case STATE_AFTER_EXEC:
		return refuse(c, "dynamic subtest result while no subtest was running");
	case STATE_BETWEEN_SUBTESTS:
		return note(c, BCI_IGT_RUNNER_DYNAMIC_RESULT_OUTSIDE_SUBTEST, p->name);
	case STATE_BETWEEN_DYNAMIC:
		ret = finish_dynamic(c);
		/* fallthrough */
	case STATE_SUBTEST_STARTED:
		if (ret == 0)
			ret = new_dynamic(c, p->name);
		break;
	case STATE_DYNAMIC_STARTED:
		break;
	}
	if (ret == 0)
		ret = inject(c, BCI_IGT_DYNAMIC_SUBTEST_RESULT "%s: %s (%ss)\n", p->name, p->result,
			     or_null(p->time));
	if (ret < 0)
		return ret;
	c->next_dyn_out_at = c->out.len;
	c->next_dyn_err_at = c->err.len;
	if (!c->dynamic_result)
		c->dynamic_result = bci_igt_result_from_word(p->result, strlen(p->result), &unused);
	c->state = STATE_BETWEEN_DYNAMIC;
	return 0;
}

static int on_override(struct comms *c, const struct bci_comms_packet *p)
{
	const char *result;
	int ret = keep_string(c->g, p->result, &result);

	if (ret < 0)
		return ret;
	if (c->dynamic)
		c->dynamic_result = result;
	c->subtest_result = result;
	return 0;
}

static int on_packet(struct comms *c, const struct bci_comms_packet *p)
{
	if (!p->complete && p->type != BCI_COMMS_EXIT && p->type < BCI_COMMS_TYPE_COUNT &&
	    p->type != BCI_COMMS_INVALID) {
		gen_warn(c->g, "%s/%s: offset %zu: %s packet without all its fields: skipped",
			 c->g->dir, c->rel, c->offset, bci_comms_type_name(p->type));
		return 0;
	}
	switch (p->type) {
	case BCI_COMMS_LOG:
		return append(p->stream == 1 ? &c->out : &c->err, p->text);
	case BCI_COMMS_EXEC:
		return on_exec_packet(c);
	case BCI_COMMS_EXIT:
		return on_exit_packet(c, p);
	case BCI_COMMS_SUBTEST_START:
		return on_subtest_start(c, p);
	case BCI_COMMS_SUBTEST_RESULT:
		return on_subtest_result(c, p);
	case BCI_COMMS_DYNAMIC_START:
		return on_dynamic_start(c, p);
	case BCI_COMMS_DYNAMIC_RESULT:
		return on_dynamic_result(c, p);
	case BCI_COMMS_VERSION:
		return keep_copy(c->g, p->text, strlen(p->text), &c->version);
	case BCI_COMMS_RESULT_OVERRIDE:
		return on_override(c, p);
	default:
		/* igt_results skips a type it does not know, with a warning on stdout. */
		return 0;
	}
}

/* Whether the dump holds any packet but exec: the test spoke the socket. */
static bool spoke_socket(const char *buf, size_t len)
{
	struct bci_comms_packet p;
	size_t pos = 0;

	while (bci_comms_next(buf, len, &pos, &p, NULL, 0) == 1)
		if (p.type != BCI_COMMS_EXEC)
			return true;
	return false;
}

static int walk_packets(struct comms *c, const char *buf, size_t len)
{
	struct bci_comms_packet p;
	size_t pos = 0;
	int ret;

	for (;;) {
		c->offset = pos;
		if (bci_comms_next(buf, len, &pos, &p, NULL, 0) != 1)
			break;
		ret = on_packet(c, &p);
		if (ret < 0)
			return ret;
	}
	ret = finish_dynamic(c);
	return ret < 0 ? ret : finish_subtest(c);
}

/* The records of the dump up to the first damaged one, which is said. */
static size_t whole_records(struct gen *g, const char *rel, const char *buf, size_t len)
{
	size_t good = bci_comms_valid_prefix(buf, len), pos = good;
	struct bci_comms_packet p;
	char why[128];

	if (good < len && bci_comms_next(buf, len, &pos, &p, why, sizeof(why)) < 0)
		/* What a crash mid-write leaves: the records before it still stand. */
		gen_warn(g, "%s/%s: %s: the rest of the file (%zu bytes) is left out", g->dir, rel,
			 why, len - good);
	return good;
}

int fill_from_comms(struct gen *g, size_t index, bool *used)
{
	struct comms c = { .g = g, .subtest_index = -1 };
	char rel[48];
	struct gen_file f;
	const char *data = NULL;
	void *map = MAP_FAILED;
	size_t len, size = 0;
	int ret;

	*used = false;
	(void)index;
	gen_job_rel(g, BCI_RESULTS_JOB_COMMS, rel, sizeof(rel));
	c.rel = rel;
	ret = gen_open(g, rel, true, &f);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		return ret;
	/* A dump there, even empty, lists the binary under "runtimes", as igt_results does. */
	ret = list_binary_runtime(g);
	size = (size_t)f.size;
	if (ret < 0 || size == 0)
		goto out;
	if (f.fd >= 0) {
		map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, f.fd, 0);
		if (map == MAP_FAILED) {
			ret = gen_error(g, -errno, "%s/%s: %s", g->dir, rel, strerror(errno));
			goto out;
		}
		data = map;
	} else {
		data = f.data;
	}
	len = whole_records(g, rel, data, size);
	if (!spoke_socket(data, len))
		goto out;
	*used = true;
	ret = walk_packets(&c, data, len);
out:
	if (map != MAP_FAILED)
		munmap(map, size);
	gen_close(g, &f);
	bci_str_free(&c.out);
	bci_str_free(&c.err);
	free(c.subtest_name);
	free(c.dynamic_name);
	return ret;
}
