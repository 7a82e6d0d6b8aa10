// SPDX-License-Identifier: MIT
/*
 * The addresses of serve's pages as the reply (mbox.c), KCIDB and JUnit
 * (export.c) give them, written in one place; serve/pages.c's
 * bci_serve_pages_route() is their reader:
 *
 *   BASE/builds/BUILD                          the build's matrix
 *   BASE/builds/BUILD?test=REGEX[&status=changed]
 *                                              the matrix showing the rows
 *                                              whose test REGEX matches (and
 *                                              that a change marks)
 *   BASE/machines/M/runs/R/results/T           a result with its out, err
 *                                              and dmesg
 *
 * BASE is serve's address as given (http://master:8080), a trailing '/'
 * dropped. Each name is one path segment and the regex one query value,
 * percent-encoded by bci_html_url_escape().
 */
#include "report.h"
#include "strv.h"

#include <stdbool.h>
#include <string.h>

/* @base without its trailing slashes. */
static int base_append(struct bci_str *b, const char *base)
{
	size_t n = strlen(base);

	while (n && base[n - 1] == '/')
		n--;
	return bci_str_append(b, base, n);
}

int bci_link_build(struct bci_str *b, const char *base, const char *build)
{
	int ret = base_append(b, base);

	if (ret >= 0)
		ret = bci_str_append(b, "/builds/", 8);
	if (ret >= 0)
		ret = bci_html_url_escape(b, build);
	return ret;
}

int bci_link_build_tests(struct bci_str *b, const char *base, const char *build,
			 const char *test_prefix, bool whole, bool changed)
{
	struct bci_str regex = { 0 };
	int ret = bci_str_append(&regex, "^", 1);

	/* The test name as the regex's literal text: every character JavaScript's RegExp gives a meaning escaped. */
	for (const char *p = test_prefix; *p && ret >= 0; p++) {
		if (strchr("\\^$.|?*+()[]{}/", *p))
			ret = bci_str_append(&regex, "\\", 1);
		if (ret >= 0)
			ret = bci_str_append(&regex, p, 1);
	}
	if (ret >= 0 && whole)
		ret = bci_str_append(&regex, "$", 1);
	if (ret >= 0)
		ret = bci_link_build(b, base, build);
	if (ret >= 0)
		ret = bci_str_append(b, "?test=", 6);
	if (ret >= 0)
		ret = bci_html_url_escape(b, regex.data);
	if (ret >= 0 && changed)
		ret = bci_str_append(b, "&status=changed", 15);
	bci_str_free(&regex);
	return ret;
}

int bci_link_result(struct bci_str *b, const char *base, const char *machine, const char *run_id,
		    const char *test)
{
	int ret = base_append(b, base);

	if (ret >= 0)
		ret = bci_str_append(b, "/machines/", 10);
	if (ret >= 0)
		ret = bci_html_url_escape(b, machine);
	if (ret >= 0)
		ret = bci_str_append(b, "/runs/", 6);
	if (ret >= 0)
		ret = bci_html_url_escape(b, run_id);
	if (ret >= 0)
		ret = bci_str_append(b, "/results/", 9);
	if (ret >= 0)
		ret = bci_html_url_escape(b, test);
	return ret;
}
