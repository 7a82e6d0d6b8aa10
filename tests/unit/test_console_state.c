// SPDX-License-Identifier: MIT
/* aggregator/master/serve/console_state.c: a console reader's state file, written, read, shown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/serve/console_state.h"
#include "fsutil.h"
#include "jsonw.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 2026-12-06T09:00:00Z */
#define T0 ((time_t)1796547600)

static int setup(void **state)
{
	char *dir = malloc(64);

	snprintf(dir, 64, "/tmp/bootci-console-state-XXXXXX");
	assert_non_null(mkdtemp(dir));
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	bci_remove_tree(*state);
	free(*state);
	return 0;
}

static void line_of(const struct bci_console_state *s, time_t now, const char *expected)
{
	char line[600];

	bci_console_state_line(s, now, line, sizeof(line));
	assert_string_equal(line, expected);
}

static void round_trip(void **state)
{
	const char *dir = *state;
	struct bci_console_state s = {
		.console = "tcp:127.0.0.1:7001",
		.link = BCI_CONSOLE_RECONNECTING,
		.since = T0,
		.reason = "Connection refused\nsecond line",
		.boot = 12,
		.flooding = true,
		.flooded_boots = 2,
		.last_flooded_boot = 12,
		.last_dropped = 5000000000ULL,
		.updated = T0 + 30,
	}, back;
	char err[400] = "";

	assert_int_equal(bci_console_state_read(dir, &back, err, sizeof(err)), 0);
	assert_int_equal(bci_console_state_write(dir, &s), 0);
	assert_int_equal(bci_console_state_read(dir, &back, err, sizeof(err)), 1);
	assert_string_equal(back.console, s.console);
	assert_int_equal(back.link, BCI_CONSOLE_RECONNECTING);
	assert_int_equal(back.since, T0);
	/* A reason stays on its line. */
	assert_string_equal(back.reason, "Connection refused second line");
	assert_int_equal(back.last_output, 0);
	assert_int_equal(back.boot, 12);
	assert_true(back.flooding);
	assert_int_equal(back.flooded_boots, 2);
	assert_int_equal(back.last_flooded_boot, 12);
	assert_int_equal(back.last_dropped, 5000000000ULL);
	assert_int_equal(back.updated, T0 + 30);

	s.link = BCI_CONSOLE_SILENT;
	s.last_output = T0 + 5;
	assert_int_equal(bci_console_state_write(dir, &s), 0);
	assert_int_equal(bci_console_state_read(dir, &back, err, sizeof(err)), 1);
	assert_int_equal(back.link, BCI_CONSOLE_SILENT);
	assert_string_equal(back.reason, "");
	assert_int_equal(back.last_output, T0 + 5);
}

static void lines(void **state)
{
	struct bci_console_state s = {
		.console = "tcp:10.0.0.5:7001",
		.link = BCI_CONSOLE_CONNECTED,
		.since = T0,
		.last_output = T0 + 100,
		.boot = 3,
		.updated = T0 + 100,
	};

	(void)state;
	line_of(&s, T0 + 120, "connected since 2026-12-06T09:00:00Z (tcp:10.0.0.5:7001), boot 3, "
			      "last output 2026-12-06T09:01:40Z");
	s.link = BCI_CONSOLE_SILENT;
	s.since = T0 + 100;
	line_of(&s, T0 + 200, "silent since 2026-12-06T09:01:40Z (tcp:10.0.0.5:7001), boot 3");
	s.link = BCI_CONSOLE_RECONNECTING;
	snprintf(s.reason, sizeof(s.reason), "closed by the console server");
	line_of(&s, T0 + 200, "reconnecting since 2026-12-06T09:01:40Z (tcp:10.0.0.5:7001): closed by "
			      "the console server, boot 3");
	s.link = BCI_CONSOLE_CONNECTED;
	s.flooding = true;
	s.flooded_boots = 1;
	s.last_flooded_boot = 3;
	s.last_dropped = 4096;
	line_of(&s, T0 + 200, "connected since 2026-12-06T09:01:40Z (tcp:10.0.0.5:7001), boot 3, "
			      "last output 2026-12-06T09:01:40Z; boot 3 flooding (4096 bytes dropped so far)");
	s.flooding = false;
	s.flooded_boots = 2;
	s.boot = 4;
	line_of(&s, T0 + 200, "connected since 2026-12-06T09:01:40Z (tcp:10.0.0.5:7001), boot 4, "
			      "last output 2026-12-06T09:01:40Z; 2 boots flooded, the last boot 3 (4096 "
			      "bytes dropped)");
	/* Not rewritten for longer than BCI_CONSOLE_STATE_STALE: no serve reads it. */
	s.flooded_boots = 0;
	line_of(&s, T0 + 100 + BCI_CONSOLE_STATE_STALE + 1,
		"not read by serve since 2026-12-06T09:01:40Z: connected since 2026-12-06T09:01:40Z "
		"(tcp:10.0.0.5:7001), boot 4, last output 2026-12-06T09:01:40Z");
}

static void json(void **state)
{
	struct bci_console_state s = {
		.console = "/dev/ttyUSB1 115200",
		.link = BCI_CONSOLE_RECONNECTING,
		.since = T0,
		.reason = "No such file or directory",
		.updated = T0,
	};
	char *text = NULL;
	size_t len = 0;
	struct bci_jsonw w;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	bci_jsonw_init(&w, out, 0);
	bci_console_state_json(&w, &s, T0 + BCI_CONSOLE_STATE_STALE + 1);
	assert_int_equal(bci_jsonw_finish(&w), 0);
	fclose(out);
	assert_non_null(strstr(text, "\"state\":\"stale\""));
	assert_non_null(strstr(text, "\"link\":\"reconnecting\""));
	assert_non_null(strstr(text, "\"reason\":\"No such file or directory\""));
	assert_non_null(strstr(text, "\"last_output\":null"));
	assert_non_null(strstr(text, "\"last_flooded_boot\":null"));
	assert_non_null(strstr(text, "\"since\":1796547600"));
	assert_non_null(strstr(text, "\"line\":\"not read by serve since "));
	free(text);
}

static void bad_files(void **state)
{
	static const struct {
		const char *text, *error;
	} cases[] = {
		{ "console x\nstate asleep\nupdated 1\n", "line 2: 'state' is no key and value" },
		{ "console x\nsince -1\nupdated 1\n", "line 2: 'since' is no key" },
		{ "console x\nflooding 2\nupdated 1\n", "line 2: 'flooding'" },
		{ "console x\nboot 99999999999\nupdated 1\n", "line 2: 'boot'" },
		{ "console x\nnovalue\nupdated 1\n", "line 2: 'novalue'" },
		{ "state connected\n", "no console or updated line" },
		{ "console x\nupdated 1\0\n", "a NUL byte" },
	};
	const char *dir = *state;
	char path[PATH_MAX], err[PATH_MAX + 200];
	struct bci_console_state s;

	snprintf(path, sizeof(path), "%s/state", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].text) + (strstr(cases[i].error, "NUL") ? 2 : 0);

		assert_int_equal(bci_write_file_atomic(path, cases[i].text, len, 0644), 0);
		err[0] = '\0';
		assert_int_equal(bci_console_state_read(dir, &s, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].error) || !strstr(err, path))
			fail_msg("case %zu: '%s'", i, err);
	}
	/* Keys it does not know are skipped (a newer serve's). */
	assert_int_equal(bci_write_file_atomic(path, "console x\nnew_key 1 2\nupdated 7\n", 32, 0644), 0);
	assert_int_equal(bci_console_state_read(dir, &s, err, sizeof(err)), 1);
	assert_int_equal(s.updated, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
		cmocka_unit_test(lines),
		cmocka_unit_test(json),
		cmocka_unit_test_setup_teardown(bad_files, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
