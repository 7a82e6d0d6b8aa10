// SPDX-License-Identifier: MIT
/*
 * lib/runner_comms.c (igt_runner's socket packets and comms dumps) on
 * packets built here byte by byte from the format documented in
 * runner_comms.h, and the results generator judging job folders from such
 * dumps (lib/resultgen/comms.c) the way igt_results does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fakeroot.h"
#include "resultgen/resultgen.h"
#include "runner_comms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- packets by hand: canary, u32 size, u32 type, i32 pid, i32 tid, payload ---- */

struct bytes {
	unsigned char b[8192];
	size_t len;
};

static void put_u32(struct bytes *d, uint32_t v)
{
	memcpy(d->b + d->len, &v, 4);
	d->len += 4;
}

/* One record of @type whose payload is @n bytes at @payload (cstrings with their NULs). */
static void rec(struct bytes *d, uint32_t type, const void *payload, size_t n)
{
	put_u32(d, 0x49475431u);
	put_u32(d, (uint32_t)(16 + n));
	put_u32(d, type);
	put_u32(d, 4242);
	put_u32(d, 4243);
	memcpy(d->b + d->len, payload, n);
	d->len += n;
}

/* A payload literal with its final NUL: "a\0b" gives a, NUL, b, NUL. */
#define P(lit) (lit), sizeof(lit)

static void exit_rec(struct bytes *d, int32_t status, const char *time)
{
	unsigned char p[64];

	memcpy(p, &status, 4);
	memcpy(p + 4, time, strlen(time) + 1);
	rec(d, 3, p, 4 + strlen(time) + 1);
}

static void log_rec(struct bytes *d, uint8_t stream, const char *text)
{
	unsigned char p[1024];

	p[0] = stream;
	memcpy(p + 1, text, strlen(text) + 1);
	rec(d, 1, p, 1 + strlen(text) + 1);
}

static void comms_decode_fields(void **state)
{
	struct bytes d = { .len = 0 };
	struct bci_comms_packet p;
	size_t pos = 0;

	(void)state;
	log_rec(&d, 2, "Fontconfig? no, a real warning\n");
	rec(&d, 5, P("sub\0SUCCESS\0" "0.125\0"));		/* the reason's NUL only: "" */
	rec(&d, 5, P("sub\0FAIL"));				/* no time, no reason */
	rec(&d, 77, P("later"));				/* a type from a newer IGT */
	exit_rec(&d, -11, "1.500");

	assert_int_equal(bci_comms_next((char *)d.b, d.len, &pos, &p, NULL, 0), 1);
	assert_int_equal(p.type, BCI_COMMS_LOG);
	assert_int_equal(p.pid, 4242);
	assert_int_equal(p.tid, 4243);
	assert_int_equal(p.stream, 2);
	assert_string_equal(p.text, "Fontconfig? no, a real warning\n");
	assert_true(p.complete);

	assert_int_equal(bci_comms_next((char *)d.b, d.len, &pos, &p, NULL, 0), 1);
	assert_true(p.complete);
	assert_string_equal(p.name, "sub");
	assert_string_equal(p.result, "SUCCESS");
	assert_string_equal(p.time, "0.125");
	assert_string_equal(p.reason, "");

	assert_int_equal(bci_comms_next((char *)d.b, d.len, &pos, &p, NULL, 0), 1);
	assert_false(p.complete);
	assert_string_equal(p.name, "sub");
	assert_string_equal(p.result, "FAIL");
	assert_null(p.time);

	assert_int_equal(bci_comms_next((char *)d.b, d.len, &pos, &p, NULL, 0), 1);
	assert_int_equal(p.type, 77);
	assert_false(p.complete);
	assert_string_equal(bci_comms_type_name(p.type), "unknown");

	assert_int_equal(bci_comms_next((char *)d.b, d.len, &pos, &p, NULL, 0), 1);
	assert_int_equal(p.exit_status, -11);
	assert_string_equal(p.time, "1.500");
	assert_int_equal(bci_comms_next((char *)d.b, d.len, &pos, &p, NULL, 0), 0);
	assert_int_equal(pos, d.len);

	/* A datagram whose size field is not its length. */
	assert_int_equal(bci_comms_packet_decode(d.b + 4, 20, &p), -EINVAL);
	assert_int_equal(bci_comms_packet_decode(d.b + 4, 10, &p), -EINVAL);
}

static void comms_damaged_dumps(void **state)
{
	struct bytes d = { .len = 0 };
	struct bci_comms_packet p;
	char err[128];
	size_t pos, whole;

	(void)state;
	rec(&d, 4, P("a"));
	whole = d.len;
	rec(&d, 6, P("dyn"));

	/* Cut inside the second record, at every length: the first record stands. */
	for (size_t cut = whole + 1; cut < d.len; cut++)
		assert_int_equal(bci_comms_valid_prefix((char *)d.b, cut), whole);
	assert_int_equal(bci_comms_valid_prefix((char *)d.b, d.len), d.len);

	pos = whole;
	assert_int_equal(bci_comms_next((char *)d.b, whole + 2, &pos, &p, err, sizeof(err)), -EINVAL);
	assert_int_equal(pos, whole);
	assert_non_null(strstr(err, "canary"));
	pos = whole;
	assert_int_equal(bci_comms_next((char *)d.b, whole + 10, &pos, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "header"));
	pos = whole;
	assert_int_equal(bci_comms_next((char *)d.b, d.len - 1, &pos, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "past the end"));

	/* NUL bytes a crash left, and a size under the header. */
	memset(d.b + whole, 0, d.len - whole);
	assert_int_equal(bci_comms_valid_prefix((char *)d.b, d.len), whole);
	put_u32(&d, 0x49475431u);
	put_u32(&d, 8);
	pos = d.len - 8;
	assert_int_equal(bci_comms_next((char *)d.b, d.len + 16, &pos, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "under its header"));
}

static void comms_encode_is_the_documented_bytes(void **state)
{
	struct bytes hand = { .len = 0 };
	unsigned char buf[256];
	struct bci_comms_packet p = { .type = BCI_COMMS_SUBTEST_RESULT, .name = "sub",
				      .result = "SKIP", .time = "0.000" };
	ssize_t n;

	(void)state;
	rec(&hand, 5, P("sub\0SKIP\0" "0.000\0"));
	n = bci_comms_packet_encode(&p, buf, sizeof(buf));
	assert_int_equal(n, (ssize_t)hand.len - 4);
	/* size and type as written by hand; pid and tid are ours */
	assert_memory_equal(buf, hand.b + 4, 8);
	assert_memory_equal(buf + 16, hand.b + 20, (size_t)n - 16);
	/* Too small a buffer: the size needed, nothing written past it. */
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(bci_comms_packet_encode(&p, buf, 10), n);
	assert_int_equal(buf[10], 0xaa);
	p.type = BCI_COMMS_INVALID;
	assert_int_equal(bci_comms_packet_encode(&p, buf, sizeof(buf)), -EINVAL);

	/* Every encodable type decodes back to what was encoded. */
	for (uint32_t type = 1; type < BCI_COMMS_TYPE_COUNT; type++) {
		struct bci_comms_packet in = { .type = type, .stream = 1, .exit_status = 98,
					       .text = "t", .name = "n", .result = "r",
					       .time = "1.0", .reason = "why" }, out;
		n = bci_comms_packet_encode(&in, buf, sizeof(buf));
		assert_true(n > 16);
		assert_int_equal(bci_comms_packet_decode(buf, (size_t)n, &out), 0);
		assert_true(out.complete);
		assert_int_equal(out.type, type);
	}
}

static void comms_record_write_appends_whole_records(void **state)
{
	char path[] = "/tmp/bootci-comms-XXXXXX", buf[512];
	struct bci_comms_packet p = { .type = BCI_COMMS_SUBTEST_START, .name = "basic" }, q;
	unsigned char packet[64];
	ssize_t n = bci_comms_packet_encode(&p, packet, sizeof(packet));
	size_t pos = 0;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(bci_comms_record_write(fd, packet, (size_t)n), 0);
	assert_int_equal(bci_comms_record_write(fd, packet, (size_t)n), 0);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 2 * (4 + n));
	for (int i = 0; i < 2; i++) {
		assert_int_equal(bci_comms_next(buf, (size_t)(2 * (4 + n)), &pos, &q, NULL, 0), 1);
		assert_string_equal(q.name, "basic");
	}
	close(fd);
	assert_int_equal(bci_comms_record_write(-1, packet, (size_t)n), -EBADF);
}

/* ---- the results generator on comms dumps ---- */

static int setup_tree(void **state)
{
	struct fakeroot *root = calloc(1, sizeof(*root));

	if (!root)
		return -1;
	fakeroot_create(root, "");
	fakeroot_write(root, "/res/metadata.txt", "name : comms\nmultiple_mode : 0\n");
	fakeroot_write(root, "/res/uname.txt", "Linux box\n");
	*state = root;
	return 0;
}

static int teardown_tree(void **state)
{
	fakeroot_remove(*state);
	free(*state);
	return 0;
}

static char generated[1 << 16], error_text[1024], warnings_text[4096];

static int generate(struct fakeroot *root)
{
	struct bci_resultgen_options options = { 0 };
	char dir[PATH_MAX + 8], *buf = NULL, *wbuf = NULL;
	size_t len = 0, wlen = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	assert_non_null(f);
	options.warnings = open_memstream(&wbuf, &wlen);
	snprintf(dir, sizeof(dir), "%s/res", root->dir);
	ret = bci_resultgen_write_options(dir, f, &options, error_text, sizeof(error_text));
	fclose(f);
	fclose(options.warnings);
	assert_true(len < sizeof(generated));
	memcpy(generated, buf, len);
	generated[len] = '\0';
	snprintf(warnings_text, sizeof(warnings_text), "%s", wbuf);
	free(buf);
	free(wbuf);
	return ret;
}

/* The string value of @key in test @test (two-space indentation), \n unescaped. */
static const char *field(const char *test, const char *key)
{
	static char value[4096];
	char pattern[512];
	const char *obj, *end, *p;
	size_t n = 0;

	snprintf(pattern, sizeof(pattern), "\n    \"%s\": {", test);
	obj = strstr(generated, pattern);
	if (!obj)
		return NULL;
	end = strstr(obj + 1, "\n    }");
	snprintf(pattern, sizeof(pattern), "\n      \"%s\": \"", key);
	p = strstr(obj, pattern);
	if (!p || p > end)
		return NULL;
	for (p += strlen(pattern); *p && *p != '"' && n + 1 < sizeof(value); p++) {
		if (p[0] == '\\' && p[1] == 'n') {
			value[n++] = '\n';
			p++;
		} else {
			value[n++] = *p;
		}
	}
	value[n] = '\0';
	return value;
}

static void write_bytes(struct fakeroot *root, const char *rel, const struct bytes *d)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root->dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(d->b, 1, d->len, f), d->len);
	fclose(f);
}

/* Job 0 of binary "bin" with @subtests, the text files as igt_runner leaves them under the socket. */
static void job_files(struct fakeroot *root, const char *subtests, const char *err_txt)
{
	char line[256];

	snprintf(line, sizeof(line), "bin%s%s\n", subtests[0] ? " " : "", subtests);
	fakeroot_write(root, "/res/joblist.txt", line);
	fakeroot_write(root, "/res/0/journal.txt", "");
	fakeroot_write(root, "/res/0/out.txt", "");
	fakeroot_write(root, "/res/0/err.txt", err_txt);
	fakeroot_write(root, "/res/0/dmesg.txt", "");
}

static void resultgen_comms_stray_stderr_is_no_warn(void **state)
{
	struct fakeroot *root = *state;
	struct bytes d = { .len = 0 };

	/* cairo's complaint, then IGT's sentinel copy of the result line (IGT_SENTINEL_ON_STDERR) */
	job_files(root, "sub", "Fontconfig error: Cannot load default config file\n"
		  "Subtest sub: SUCCESS (0.100s)\n");
	rec(&d, 2, P("/t/bin --run-subtest sub"));
	rec(&d, 8, P("IGT-Version: 1.27.1-g0 (x86_64) (Linux: 6.1 x86_64)\n"));
	rec(&d, 4, P("sub"));
	log_rec(&d, 1, "info line\n");
	log_rec(&d, 2, "Subtest sub: SUCCESS (0.100s)\n");
	rec(&d, 5, P("sub\0SUCCESS\0" "0.100\0"));
	exit_rec(&d, 0, "0.200");
	write_bytes(root, "/res/0/comms", &d);

	assert_int_equal(generate(root), 0);
	/* The stray text in err.txt is not the test's err: igt_runner judges from the packets. */
	assert_string_equal(field("igt@bin@sub", "result"), "pass");
	assert_string_equal(field("igt@bin@sub", "out"),
			    "Starting subtest: sub\ninfo line\nSubtest sub: SUCCESS (0.100s)\n");
	assert_string_equal(field("igt@bin@sub", "err"),
			    "Starting subtest: sub\nSubtest sub: SUCCESS (0.100s)\n"
			    "Subtest sub: SUCCESS (0.100s)\n");
	assert_string_equal(field("igt@bin@sub", "igt-version"),
			    "IGT-Version: 1.27.1-g0 (x86_64) (Linux: 6.1 x86_64)\n");
	/* Tests get no time of their own; the binary's runtime is the exit packet's. */
	assert_null(field("igt@bin@sub", "time"));
	assert_null(strstr(generated, "\"time\": {\n          \"__type__\""));
	assert_non_null(strstr(generated, "\"runtimes\": {\n    \"igt@bin\": {\n      \"time\": {"));

	/* A stderr log packet that is not protocol makes the warn. */
	d.len = 0;
	rec(&d, 2, P("/t/bin --run-subtest sub"));
	rec(&d, 4, P("sub"));
	log_rec(&d, 2, "(bin:1) WARNING: something\n");
	rec(&d, 5, P("sub\0SUCCESS\0" "0.100\0"));
	exit_rec(&d, 0, "0.200");
	write_bytes(root, "/res/0/comms", &d);
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@bin@sub", "result"), "warn");

	/* A dump of exec packets only: the text protocol's files judge (the stray text warns). */
	d.len = 0;
	rec(&d, 2, P("/t/bin --run-subtest sub"));
	write_bytes(root, "/res/0/comms", &d);
	fakeroot_write(root, "/res/0/journal.txt", "sub\nexit:0 (0.200s)\n");
	fakeroot_write(root, "/res/0/out.txt", "Starting subtest: sub\nSubtest sub: SUCCESS (0.100s)\n");
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@bin@sub", "result"), "warn");
}

static void resultgen_comms_overrides_and_exits(void **state)
{
	struct fakeroot *root = *state;
	struct bytes d = { .len = 0 };

	/* The runner's timeout: override, then exit. */
	job_files(root, "sub", "");
	rec(&d, 2, P("/t/bin --run-subtest sub"));
	rec(&d, 4, P("sub"));
	rec(&d, 9, P("timeout"));
	exit_rec(&d, -3, "30.000");
	write_bytes(root, "/res/0/comms", &d);
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@bin@sub", "result"), "timeout");

	/* Exit 112 after a finished subtest: that subtest is abort, as igt_results has it. */
	d.len = 0;
	job_files(root, "", "");
	rec(&d, 2, P("/t/bin"));
	rec(&d, 4, P("a"));
	rec(&d, 5, P("a\0SUCCESS\0" "0.1\0"));
	rec(&d, 4, P("b"));
	rec(&d, 5, P("b\0SUCCESS\0" "0.1\0"));
	exit_rec(&d, 112, "0.300");
	write_bytes(root, "/res/0/comms", &d);
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@bin@a", "result"), "pass");
	assert_string_equal(field("igt@bin@b", "result"), "abort");

	/* No subtest came before the exit: the requested subtest gets the exit's result. */
	d.len = 0;
	job_files(root, "wanted", "");
	rec(&d, 2, P("/t/bin --run-subtest wanted"));
	exit_rec(&d, -11, "0.050");
	write_bytes(root, "/res/0/comms", &d);
	/* exec only: the text files judge, from an empty journal: incomplete */
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@bin@wanted", "result"), "incomplete");
	d.len = 0;
	rec(&d, 2, P("/t/bin --run-subtest wanted"));
	log_rec(&d, 2, "Received signal SIGSEGV.\n");
	exit_rec(&d, -11, "0.050");
	write_bytes(root, "/res/0/comms", &d);
	assert_int_equal(generate(root), 0);
	/* igt_results' exit code rule: only 0, 77, 79, 112 and the runner's own are special. */
	assert_string_equal(field("igt@bin@wanted", "result"), "fail");
	assert_string_equal(field("igt@bin@wanted", "err"), "Received signal SIGSEGV.\n");

	/* Fixture skips: results with no start each become a test (multiple mode). */
	d.len = 0;
	job_files(root, "", "");
	rec(&d, 2, P("/t/bin"));
	rec(&d, 5, P("x\0SKIP\0" "0.000\0"));
	rec(&d, 5, P("y\0SKIP\0" "0.000\0"));
	exit_rec(&d, 77, "0.010");
	write_bytes(root, "/res/0/comms", &d);
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@bin@x", "result"), "skip");
	assert_string_equal(field("igt@bin@y", "result"), "skip");

	/* A subtest before exec is no order igt_results accepts. */
	d.len = 0;
	rec(&d, 4, P("a"));
	write_bytes(root, "/res/0/comms", &d);
	assert_int_equal(generate(root), -EINVAL);
	assert_non_null(strstr(error_text, "0/comms: offset 0: subtest start while the binary"));
}

static void resultgen_comms_dynamic_subtests(void **state)
{
	struct fakeroot *root = *state;
	struct bytes d = { .len = 0 };

	job_files(root, "sub", "");
	rec(&d, 2, P("/t/bin --run-subtest sub"));
	rec(&d, 4, P("sub"));
	rec(&d, 6, P("d1"));
	rec(&d, 7, P("d1\0SUCCESS\0" "0.1\0"));
	rec(&d, 6, P("d2"));
	log_rec(&d, 2, "Dynamic subtest d2 failed.\n");
	rec(&d, 7, P("d2\0FAIL\0" "0.1\0"));
	rec(&d, 5, P("sub\0FAIL\0" "0.3\0"));
	exit_rec(&d, 98, "0.400");
	write_bytes(root, "/res/0/comms", &d);
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@bin@sub@d1", "result"), "pass");
	assert_string_equal(field("igt@bin@sub@d2", "result"), "fail");
	/* The first dynamic subtest's texts start with the job's (igt_results' offsets start at 0). */
	assert_string_equal(field("igt@bin@sub@d1", "out"),
			    "Starting subtest: sub\nStarting dynamic subtest: d1\n"
			    "Dynamic subtest d1: SUCCESS (0.1s)\n");
	/* The last dynamic subtest is finished with the job: it keeps the subtest's result line. */
	assert_string_equal(field("igt@bin@sub@d2", "err"),
			    "Starting dynamic subtest: d2\nDynamic subtest d2 failed.\n"
			    "Dynamic subtest d2: FAIL (0.1s)\nSubtest sub: FAIL (0.3s)\n");
}

/*
 * The err of the second subtest: igt_results takes it from the out text's
 * offset with the err's length. Within the err text that is what it gives;
 * past its end igt_results reads beyond its buffer and we give the own err.
 */
static void resultgen_comms_err_window(void **state)
{
	struct fakeroot *root = *state;
	struct bytes d = { .len = 0 };

	job_files(root, "", "");
	rec(&d, 2, P("/t/bin"));
	rec(&d, 4, P("a"));
	log_rec(&d, 2, "a's long stderr line, longer than its stdout\n");
	rec(&d, 5, P("a\0SUCCESS\0" "0.1\0"));
	rec(&d, 4, P("b"));
	rec(&d, 5, P("b\0SUCCESS\0" "0.1\0"));
	exit_rec(&d, 0, "0.2");
	write_bytes(root, "/res/0/comms", &d);
	assert_int_equal(generate(root), 0);
	/*
	 * a's out is 46 bytes ("Starting subtest: a\n", "Subtest a: SUCCESS (0.1s)\n"), its
	 * err 91 (45 more). b's own err is 46 bytes, so igt_results gives err[46, 92):
	 * from inside a's stderr line to the first byte of b's.
	 */
	assert_string_equal(field("igt@bin@b", "err"),
			    "er than its stdout\nSubtest a: SUCCESS (0.1s)\nS");
	/* ... and a's stderr text before a protocol line there makes b a warn, as it does there. */
	assert_string_equal(field("igt@bin@b", "result"), "warn");

	d.len = 0;
	rec(&d, 2, P("/t/bin"));
	rec(&d, 4, P("a"));
	log_rec(&d, 1, "a's long stdout line, longer than its stderr\n");
	rec(&d, 5, P("a\0SUCCESS\0" "0.1\0"));
	rec(&d, 4, P("b"));
	log_rec(&d, 2, "(bin:1) WARNING: b warns\n");
	rec(&d, 5, P("b\0SUCCESS\0" "0.1\0"));
	exit_rec(&d, 0, "0.2");
	write_bytes(root, "/res/0/comms", &d);
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@bin@b", "err"),
			    "Starting subtest: b\n(bin:1) WARNING: b warns\nSubtest b: SUCCESS (0.1s)\n");
	assert_non_null(strstr(warnings_text, "0/comms: igt@bin@b: igt_results reads this test's err "
					      "past the end of its buffer"));
	assert_string_equal(field("igt@bin@b", "result"), "warn");
}

static void resultgen_comms_cut_by_a_crash(void **state)
{
	struct fakeroot *root = *state;
	struct bytes d = { .len = 0 };

	job_files(root, "sub", "");
	rec(&d, 2, P("/t/bin --run-subtest sub"));
	rec(&d, 4, P("sub"));
	log_rec(&d, 1, "going down\n");
	d.len -= 5;	/* the machine died writing the log record */
	write_bytes(root, "/res/0/comms", &d);
	assert_int_equal(generate(root), 0);
	assert_string_equal(field("igt@bin@sub", "result"), "incomplete");
	assert_string_equal(field("igt@bin@sub", "out"), "Starting subtest: sub\n");
	assert_non_null(strstr(warnings_text, "0/comms: offset "));
	assert_non_null(strstr(warnings_text, "past the end of the file"));
	/* Listed under runtimes with no time, as igt_results does for a job with a dump. */
	assert_non_null(strstr(generated, "\"runtimes\": {\n    \"igt@bin\": {}"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(comms_decode_fields),
		cmocka_unit_test(comms_damaged_dumps),
		cmocka_unit_test(comms_encode_is_the_documented_bytes),
		cmocka_unit_test(comms_record_write_appends_whole_records),
		cmocka_unit_test_setup_teardown(resultgen_comms_stray_stderr_is_no_warn, setup_tree,
						teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_comms_overrides_and_exits, setup_tree,
						teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_comms_dynamic_subtests, setup_tree,
						teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_comms_err_window, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(resultgen_comms_cut_by_a_crash, setup_tree,
						teardown_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
