// SPDX-License-Identifier: MIT
/* aggregator/serve: routing, header parsing, tokens and archive checks, without a socket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/serve/auth.h"
#include "../../aggregator/master/serve/http.h"
#include "../../aggregator/master/serve/server.h"
#include "../../aggregator/master/serve/validate.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void route_ok(const char *method, const char *url, enum bci_route_kind kind)
{
	struct bci_route route;
	char err[256] = "";
	int status = bci_http_route(method, url, &route, err, sizeof(err));

	if (status)
		fail_msg("%s %s: %d %s", method, url, status, err);
	assert_int_equal(route.kind, kind);
}

static void route_refused(const char *method, const char *url, int expected, const char *message)
{
	struct bci_route route;
	char err[256] = "";
	int status = bci_http_route(method, url, &route, err, sizeof(err));

	if (status != expected)
		fail_msg("%s %s: %d (%s), expected %d", method, url, status, err, expected);
	if (!strstr(err, message))
		fail_msg("%s %s: '%s' does not say '%s'", method, url, err, message);
}

static void test_routes(void **state)
{
	struct bci_route route;
	char err[256];

	(void)state;
	route_ok("GET", "/api/v1/health", BCI_ROUTE_HEALTH);
	route_ok("HEAD", "/api/v1/health", BCI_ROUTE_HEALTH);
	route_ok("PUT", "/api/v1/machines/m1/runs/run-1.a_b", BCI_ROUTE_RUN);
	route_ok("GET", "/api/v1/machines/m1/runs/run1", BCI_ROUTE_RUN);
	route_ok("GET", "/api/v1/machines/m1/runs/r/results/igt@kms_flip@basic/dmesg", BCI_ROUTE_RESULT);
	route_ok("GET", "/api/v1/machines/m1/runs/r.1/manifest", BCI_ROUTE_MANIFEST);
	route_ok("PUT", "/api/v1/machines/m1/fault", BCI_ROUTE_FAULT);
	route_ok("PUT", "/api/v1/machines/m1/hello", BCI_ROUTE_HELLO);
	assert_int_equal(bci_http_route("GET", "/api/v1/machines/m1/runs/r.1/manifest", &route, err,
					sizeof(err)), 0);
	assert_string_equal(route.run_id, "r.1");
	assert_int_equal(bci_http_route("PUT", "/api/v1/machines/lab-02/fault", &route, err,
					sizeof(err)), 0);
	assert_string_equal(route.machine, "lab-02");

	assert_int_equal(bci_http_route("PUT", "/api/v1/machines/lab-01/runs/igt7", &route, err,
					sizeof(err)), 0);
	assert_true(route.put);
	assert_string_equal(route.machine, "lab-01");
	assert_string_equal(route.run_id, "igt7");
	assert_int_equal(bci_http_route("GET", "/api/v1/machines/m/runs/r/results/igt@a@b/out",
					&route, err, sizeof(err)), 0);
	assert_string_equal(route.test, "igt@a@b");
	assert_string_equal(route.stream, "out");
	/* The unescaper: %XX decoded, a NUL never (it would cut the name), bad escapes kept. */
	{
		char s[] = "/tests/igt@a%2Fb%C3%a9%00x%0A%2%zz%", t[] = "%41+%";

		assert_int_equal(bci_http_unescape(s), strlen("/tests/igt@a/b\xc3\xa9\x01x\n%2%zz%"));
		assert_string_equal(s, "/tests/igt@a/b\xc3\xa9\x01x\n%2%zz%");
		assert_int_equal(bci_http_unescape(t), 3);
		assert_string_equal(t, "A+%");
	}
	/* A test name with '/' (sent as %2F) and UTF-8: everything up to the stream. */
	assert_int_equal(bci_http_route("GET", "/api/v1/machines/m/runs/r/results/igt@a@b/caf\xc3\xa9/err",
					&route, err, sizeof(err)), 0);
	assert_string_equal(route.test, "igt@a@b/caf\xc3\xa9");
	assert_string_equal(route.stream, "err");

	route_refused("PUT", "/api/v1/machines/m1/runs/..", 400, "run id '..' is not a word");
	route_refused("PUT", "/api/v1/machines/m1/runs/.", 400, "is not a word");
	route_refused("PUT", "/api/v1/machines/m1/runs/a/b", 400, "run id 'a/b'");
	route_refused("PUT", "/api/v1/machines/m1/runs/../../x", 400, "is not a word");
	route_refused("PUT", "/api/v1/machines/m1/runs/", 400, "run id ''");
	route_refused("PUT", "/api/v1/machines/../runs/x", 400, "machine '..'");
	route_refused("PUT", "/api/v1/machines//runs/x", 400, "machine ''");
	route_refused("PUT", "/api/v1/machines/m 1/runs/x", 400, "machine 'm 1'");
	route_refused("DELETE", "/api/v1/machines/m1/runs/x", 405, "PUT or GET");
	route_refused("PUT", "/api/v1/health", 405, "takes GET");
	route_refused("PUT", "/api/v1/machines/m/runs/r/results/t/out", 405, "takes GET");
	route_refused("GET", "/", 404, "no such path");
	route_refused("GET", "/api/v1/machines/m1", 404, "no such path");
	route_refused("GET", "/api/v1/machines/m1/jobs/x", 404, "no such path");
	route_refused("GET", "/api/v1/machines/m/runs/r/results/t/core", 404, "out, err or dmesg");
	route_refused("GET", "/api/v1/machines/m/runs/r/results/../out", 400, "not a test name");
	route_refused("GET", "/api/v1/machines/m/runs/r/results//out", 404, "no such path");
	route_refused("PUT", "/api/v1/machines/m/runs/r/manifest", 405, "takes GET");
	route_refused("GET", "/api/v1/machines/m/runs/r/manifests", 400, "run id 'r/manifests'");
	route_refused("GET", "/api/v1/machines/m1/fault", 405, "takes PUT");
	route_refused("POST", "/api/v1/machines/m1/hello", 405, "a machine's hello takes PUT");
	route_refused("PUT", "/api/v1/machines/a b/hello", 400, "machine 'a b'");
	route_refused("PUT", "/api/v1/machines/../fault", 400, "machine '..'");

	char long_run[300];
	memset(long_run, 'r', sizeof(long_run));
	snprintf(long_run, sizeof(long_run), "/api/v1/machines/m/runs/%0250d", 1);
	route_refused("PUT", long_run, 400, "is not a word");
}

static void test_headers(void **state)
{
	char err[256], token[BCI_HTTP_TOKEN_MAX + 1], hex[BCI_SHA256_HEX_LEN + 1];
	uint64_t start, end, total, length;

	(void)state;
	assert_int_equal(bci_http_content_range("bytes 100-199/200", &start, &end, &total, err,
						sizeof(err)), 0);
	assert_int_equal(start, 100);
	assert_int_equal(end, 199);
	assert_int_equal(total, 200);
	assert_int_equal(bci_http_content_range("bytes 0-0/1", &start, &end, &total, err, sizeof(err)), 0);
	static const char *const bad_ranges[] = {
		"bytes 5-4/10", "bytes 0-10/10", "bytes */10", "bytes -1-2/3", "bytes 1-2", "items 0-1/2",
		"bytes 0-1/2x", "bytes  0-1/2", "bytes 0-18446744073709551616/18446744073709551617", "",
	};
	for (size_t i = 0; i < sizeof(bad_ranges) / sizeof(bad_ranges[0]); i++)
		if (bci_http_content_range(bad_ranges[i], &start, &end, &total, err, sizeof(err)) != -EINVAL)
			fail_msg("accepted Content-Range '%s'", bad_ranges[i]);

	assert_int_equal(bci_http_bearer("Bearer abc-DEF_123", token, err, sizeof(err)), 0);
	assert_string_equal(token, "abc-DEF_123");
	assert_int_equal(bci_http_bearer("bearer   x", token, err, sizeof(err)), 0);
	assert_string_equal(token, "x");
	assert_int_equal(bci_http_bearer("Basic dXNlcjpwYXNz", token, err, sizeof(err)), -EINVAL);
	assert_int_equal(bci_http_bearer("Bearer ", token, err, sizeof(err)), -EINVAL);
	assert_int_equal(bci_http_bearer("Bearer a b", token, err, sizeof(err)), -EINVAL);
	char long_token[400] = "Bearer ";
	memset(long_token + 7, 'x', 300);
	long_token[307] = '\0';
	assert_int_equal(bci_http_bearer(long_token, token, err, sizeof(err)), -EINVAL);

	assert_int_equal(bci_http_sha256("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
					 hex, err, sizeof(err)), 0);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_int_equal(bci_http_sha256("e3b0", hex, err, sizeof(err)), -EINVAL);
	assert_int_equal(bci_http_sha256("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b8550",
					 hex, err, sizeof(err)), -EINVAL);
	assert_int_equal(bci_http_sha256("g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
					 hex, err, sizeof(err)), -EINVAL);

	assert_int_equal(bci_http_length("0", &length), 0);
	assert_int_equal(bci_http_length("18446744073709551615", &length), 0);
	assert_int_equal(bci_http_length("18446744073709551616", &length), -EINVAL);
	assert_int_equal(bci_http_length("-1", &length), -EINVAL);
	assert_int_equal(bci_http_length("1 ", &length), -EINVAL);
	assert_int_equal(bci_http_length("", &length), -EINVAL);
}

static void test_tokens(void **state)
{
	char text[512], err[256];
	struct bci_tokens *tokens;
	char h1[65], h2[65];

	(void)state;
	/* Digests computed here, so the test does not trust a constant. */
	FILE *p = popen("printf %s token-of-m1 | sha256sum", "r");
	assert_non_null(p);
	assert_non_null(fgets(h1, sizeof(h1), p));
	pclose(p);
	p = popen("printf %s token-of-m2 | sha256sum", "r");
	assert_non_null(p);
	assert_non_null(fgets(h2, sizeof(h2), p));
	pclose(p);
	snprintf(text, sizeof(text), "# machines\n\nm1 sha256:%s\n  m2\tsha256:%s  \n", h1, h2);
	assert_int_equal(bci_tokens_parse("tokens", text, strlen(text), &tokens, err, sizeof(err)), 0);
	assert_int_equal(bci_tokens_count(tokens), 2);
	assert_string_equal(bci_tokens_machine(tokens, "token-of-m1"), "m1");
	assert_string_equal(bci_tokens_machine(tokens, "token-of-m2"), "m2");
	assert_null(bci_tokens_machine(tokens, "token-of-m3"));
	assert_null(bci_tokens_machine(tokens, ""));
	/* The file holds digests: the digest itself is no token. */
	assert_null(bci_tokens_machine(tokens, h1));
	bci_tokens_free(tokens);

	snprintf(text, sizeof(text), "m1 sha256:%s\nm1 sha256:%s\n", h1, h2);
	assert_int_equal(bci_tokens_parse("tokens", text, strlen(text), &tokens, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "tokens:2: machine m1 given twice");
	snprintf(text, sizeof(text), "\nm/1 sha256:%s\n", h1);
	assert_int_equal(bci_tokens_parse("tokens", text, strlen(text), &tokens, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "tokens:2: machine 'm/1' is not a word"));
	assert_int_equal(bci_tokens_parse("t", "m1 token-in-clear\n", 18, &tokens, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t:1: m1: expected 'sha256:'"));
	snprintf(text, sizeof(text), "m1 sha256:%.63sz\n", h1);
	assert_int_equal(bci_tokens_parse("t", text, strlen(text), &tokens, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not 64 hex digits"));
	snprintf(text, sizeof(text), "m1 sha256:%s extra\n", h1);
	assert_int_equal(bci_tokens_parse("t", text, strlen(text), &tokens, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "text after the digest"));
}

/* ---- archives built in memory with libarchive (a deployed collect's writer) ---- */

struct entry {
	const char *path;
	const char *data;	/* regular file content; NULL for other kinds */
	mode_t type;
	const char *link;	/* symlink target or hardlink target */
};

static size_t build(const struct entry *entries, size_t count, char *buf, size_t size)
{
	struct archive *a = archive_write_new();
	size_t used = 0;

	assert_int_equal(archive_write_add_filter_zstd(a), ARCHIVE_OK);
	assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
	assert_int_equal(archive_write_open_memory(a, buf, size, &used), ARCHIVE_OK);
	for (size_t i = 0; i < count; i++) {
		struct archive_entry *e = archive_entry_new();

		archive_entry_set_pathname(e, entries[i].path);
		archive_entry_set_filetype(e, entries[i].type);
		archive_entry_set_perm(e, 0644);
		if (entries[i].type == AE_IFLNK)
			archive_entry_set_symlink(e, entries[i].link);
		else if (entries[i].link)
			archive_entry_set_hardlink(e, entries[i].link);
		if (entries[i].data)
			archive_entry_set_size(e, (la_int64_t)strlen(entries[i].data));
		assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
		if (entries[i].data)
			archive_write_data(a, entries[i].data, strlen(entries[i].data));
		archive_entry_free(e);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	return used;
}

#define HASH_A "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
#define MANIFEST(machine, run, files)                                                            \
	"{\"format\": \"bootci-manifest\", \"format_version\": 1, \"run_id\": \"" run "\", "        \
	"\"image_id\": \"\", \"machine\": \"" machine "\", \"kernel\": \"\", \"cmdline\": \"\", "     \
	"\"versions\": {\"igt\": \"\", \"bootci\": \"\"}, \"boots\": {}, "                          \
	"\"efi\": {\"boot_current\": null, \"boot_order\": [], \"entries\": []}, \"files\": [" files "]}"
#define FILE_A "{\"path\": \"d/a\", \"size\": 1, \"sha256\": \"" HASH_A "\"}"
#define EMPTY(p) ", {\"path\": \"" p "\", \"size\": 0, \"sha256\": " \
	"\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"}"

static void validate_expect(const struct entry *entries, size_t count, const char *message)
{
	static char buf[1 << 20];
	struct bci_run_archive_limits limits;
	char err[512] = "";
	size_t len = build(entries, count, buf, sizeof(buf));
	int ret;

	bci_run_archive_limits_default(&limits);
	limits.max_entries = 8;
	ret = bci_archive_validate_memory(buf, len, &limits, "m1", "r1", err, sizeof(err));
	if (!message) {
		if (ret)
			fail_msg("refused: %s", err);
		return;
	}
	if (ret != -EINVAL)
		fail_msg("accepted, expected '%s'", message);
	if (!strstr(err, message))
		fail_msg("'%s' does not say '%s'", err, message);
}

/*
 * serve's check: the run archive's reader and rules (lib/run_archive, tested
 * there), serve's limits, and the URL's machine and run.
 */
static void test_validate(void **state)
{
	const struct entry manifest = { "manifest.json", MANIFEST("m1", "r1", FILE_A), AE_IFREG, NULL };
	const struct entry file_a = { "d/a", "a", AE_IFREG, NULL };

	(void)state;
	validate_expect((struct entry[]){ manifest, file_a }, 2, NULL);
	validate_expect((struct entry[]){ { "manifest.json", MANIFEST("m1", "r2", FILE_A), AE_IFREG, NULL },
		file_a }, 2, "manifest.json: run_id 'r2', but uploaded as 'r1'");
	validate_expect((struct entry[]){ { "manifest.json", MANIFEST("m2", "r1", FILE_A), AE_IFREG, NULL },
		file_a }, 2, "manifest.json: machine 'm2', but uploaded as 'm1'");
	validate_expect((struct entry[]){ file_a, manifest }, 2,
			"entry 1 'd/a': the first entry must be manifest.json");
	validate_expect((struct entry[]){ manifest }, 1, "'d/a': in the manifest but not in the archive");
	validate_expect((struct entry[]){ manifest, file_a, { "d/l", NULL, AE_IFLNK, "../../x" } }, 3,
			"entry 3 'd/l': a symlink to '../../x', outside the run");
	validate_expect((struct entry[]){ manifest, { "d/", NULL, AE_IFDIR, NULL }, file_a }, 3,
			"entry 2 'd/': a folder");
	validate_expect((struct entry[]){ { "manifest.json", MANIFEST("m1", "r1", FILE_A EMPTY("t")
		EMPTY("u") EMPTY("v") EMPTY("w") EMPTY("x") EMPTY("y") EMPTY("z")), AE_IFREG, NULL },
		file_a, { "x", "", AE_IFREG, NULL },
		{ "y", "", AE_IFREG, NULL }, { "z", "", AE_IFREG, NULL }, { "w", "", AE_IFREG, NULL },
		{ "v", "", AE_IFREG, NULL }, { "u", "", AE_IFREG, NULL }, { "t", "", AE_IFREG, NULL } }, 9,
			"entry 9: more than 8 entries (the limit)");

	char err[256];
	struct bci_run_archive_limits limits;

	bci_run_archive_limits_default(&limits);
	assert_int_equal(bci_archive_validate_memory("not a tar at all, not zstd either", 33, &limits,
						     "m1", "r1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a zstd frame"));
	assert_int_equal(bci_archive_validate_memory("", 0, &limits, "m1", "r1", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "an empty file"));
}

/* serve's default workers follow the CPUs the process may run on: one more than them. */
static void test_default_workers(void **state)
{
	struct bci_serve_config config;
	cpu_set_t all, one;
	int first = -1;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	bci_serve_config_default(&config);
	assert_int_equal(config.workers, CPU_COUNT(&all) + 1 > 16 ? 16 : CPU_COUNT(&all) + 1);
	/* Held to one CPU (a cpuset, taskset): two workers. */
	for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
		if (CPU_ISSET(i, &all))
			first = i;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	assert_int_equal(bci_serve_default_workers(), 2);
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
	assert_int_equal(bci_serve_default_workers(), CPU_COUNT(&all) + 1 > 16 ? 16 : CPU_COUNT(&all) + 1);
}

/* The gate's scan: complete only at the empty line; the bearer token found in any case. */
static void test_head_scan(void **state)
{
	static const char full[] = "PUT /api/v1/machines/m1/runs/r HTTP/1.1\r\nHost: x\r\n"
				   "authorization:   Bearer tok-1  \r\nContent-Length: 3\r\n\r\nabc";
	struct bci_http_head head;

	(void)state;
	for (size_t len = 0; len < strlen(full) - 3; len++)
		assert_int_equal(bci_http_head_scan(full, len, &head), 0);
	assert_int_equal(bci_http_head_scan(full, strlen(full) - 3, &head), 1);
	assert_true(head.has_token);
	assert_string_equal(head.token, "tok-1");
	assert_int_equal(bci_http_head_scan("GET / HTTP/1.0\n\n", 16, &head), 1);
	assert_false(head.has_token);
	assert_int_equal(bci_http_head_scan("GET / HTTP/1.1\r\nAuthorization: Basic eA==\r\n\r\n",
					    46, &head), 1);
	assert_false(head.has_token);
	/* A header line that only starts like one, or a token in the body, is not the token. */
	assert_int_equal(bci_http_head_scan("GET / HTTP/1.1\r\nX-Authorization: Bearer t\r\n\r\n"
					    "Authorization: Bearer u\r\n\r\n", 73, &head), 1);
	assert_false(head.has_token);
	assert_int_equal(bci_http_head_scan("GET / HTTP/1.1\r\nHost: x\r\nX: y", 31, &head), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_default_workers),
		cmocka_unit_test(test_head_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
