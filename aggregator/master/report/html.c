// SPDX-License-Identifier: MIT
/*
 * What every page of the report shares (report.h): the one escaper, the
 * style, and a section holding a log.
 *
 * Escaping: every byte that comes from a test or the store goes through
 * bci_html_escape(): the five HTML specials as entities, control bytes as their
 * visible Control Pictures (U+2400...), bytes that are not well-formed UTF-8
 * as the Latin-1 character of that value, so no output can open a tag,
 * close the <pre>, or break the page's encoding; names in links are
 * percent-encoded (bci_html_url_escape()). Plain HTML and CSS.
 */
#include "report.h"
#include "../store/store.h"
#include "strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How much of one log a page shows. */
#define HTML_LOG_MAX (1 << 20)

static int utf8_length(const unsigned char *s, size_t left)
{
	int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;

	if (!n || (size_t)n > left)
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void bci_html_escape(struct bci_str *b, const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];
		int n;

		if (c == '&')
			bci_str_append(b, "&amp;", 5);
		else if (c == '<')
			bci_str_append(b, "&lt;", 4);
		else if (c == '>')
			bci_str_append(b, "&gt;", 4);
		else if (c == '"')
			bci_str_append(b, "&quot;", 6);
		else if (c == '\'')
			bci_str_append(b, "&#39;", 5);
		else if (c == '\n' || c == '\t')
			bci_str_append(b, (const char *)&s[i], 1);
		else if (c < 0x20 || c == 0x7f)
			bci_str_appendf(b, "&#x%X;", c == 0x7f ? 0x2421 : 0x2400 + c);
		else if (c < 0x80)
			bci_str_append(b, (const char *)&s[i], 1);
		else if ((n = utf8_length(s + i, len - i))) {
			bci_str_append(b, (const char *)&s[i], n);
			i += n - 1;
		} else {
			bci_str_appendf(b, "&#x%X;", c);
		}
	}
}

void bci_html_escape_str(struct bci_str *b, const char *s)
{
	bci_html_escape(b, s ? s : "", s ? strlen(s) : 0);
}

int bci_html_url_escape(struct bci_str *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int ret = 0;

	for (; s && *s && ret >= 0; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~@", c)) {
			ret = bci_str_append(b, s, 1);
		} else {
			char esc[3] = { '%', hex[c >> 4], hex[c & 15] };

			ret = bci_str_append(b, esc, 3);
		}
	}
	return ret;
}

const char bci_html_style[] =
	"<style>\n"
	"body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}\n"
	"td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}th{background:#eee}\n"
	"td.t{font-family:monospace;text-align:left}td a{color:inherit;text-decoration:none}\n"
	".pass{background:#9f9}.dmesg-warn{background:#fd6}.warn{background:#ff9}\n"
	".dmesg-fail{background:#f96}.fail{background:#f66}.crash{background:#c3c}\n"
	".timeout{background:#69f}.abort{background:#666;color:#fff}.incomplete{background:#936;color:#fff}\n"
	".skip{background:#ddd}.notrun{background:#fff;color:#999}\n"
	"td.new{outline:3px solid #c00;outline-offset:-3px}td.known{outline:2px dashed #06c;outline-offset:-2px}\n"
	"td.flaky{outline:2px dotted #960;outline-offset:-2px}td.fixed{outline:2px solid #080;outline-offset:-2px}\n"
	"pre{background:#f6f6f6;border:1px solid #ddd;padding:6px;white-space:pre-wrap}\n"
	"form.filters{margin:.5em 0}input.bad{background:#fcc}svg text{font-size:11px}\n"
	"</style>\n";

/* Appends a section with @text read from @fd (closed here; < 0: @why it is not available). */
void bci_html_file_section(struct bci_str *b, const char *title, int fd, const char *why)
{
	char *text = fd >= 0 ? malloc(HTML_LOG_MAX) : NULL;
	size_t len = 0;
	ssize_t got;

	bci_str_appendf(b, "<h2>");
	bci_html_escape_str(b, title);
	bci_str_appendf(b, "</h2>\n");
	if (fd < 0 || !text) {
		bci_str_appendf(b, "<p>not available: ");
		bci_html_escape_str(b, fd < 0 ? why : "out of memory");
		bci_str_appendf(b, "</p>\n");
		if (fd >= 0)
			close(fd);
		return;
	}
	while (len < HTML_LOG_MAX && (got = read(fd, text + len, HTML_LOG_MAX - len)) > 0)
		len += got;
	bci_str_append(b, "<pre>", 5);
	bci_html_escape(b, text, len);
	bci_str_append(b, "</pre>\n", 7);
	if (len == HTML_LOG_MAX && read(fd, text, 1) > 0)
		bci_str_appendf(b, "<p>(cut at %d bytes)</p>\n", HTML_LOG_MAX);
	close(fd);
	free(text);
}

void bci_html_log_section(struct bci_str *b, struct bci_store *store, const char *data_dir,
			  const char *machine, const char *run_id, const char *test, const char *which)
{
	char err[512] = "";
	int fd = bci_store_test_log_open(store, data_dir, machine, run_id, test, which, err,
					 sizeof(err));

	bci_html_file_section(b, which, fd, err);
}
