// SPDX-License-Identifier: MIT
/* lib/config.c: typed keys from a file and from the kernel command line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "config.h"
#include "executor.h"
#include "executor_keys.h"
#include "fakeroot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A key whose values the type cannot check alone: even numbers only. */
static int check_even(const struct bci_config_key *key, const char *value, char *why, size_t size)
{
	if ((value[strlen(value) - 1] - '0') % 2 == 0)
		return 0;
	snprintf(why, size, "%s: '%s' is odd", key->name, value);
	return -EINVAL;
}

static const struct bci_config_key keys[] = {
	{ "name", BCI_CONFIG_WORD, "default", NULL, "a word", NULL },
	{ "text", BCI_CONFIG_STRING, "", NULL, "free text", NULL },
	{ "wait", BCI_CONFIG_SECONDS, "30", NULL, "a duration", NULL },
	{ "action", BCI_CONFIG_CHOICE, "reboot", "reboot|poweroff", "a choice", NULL },
	{ "modules", BCI_CONFIG_LIST, "", NULL, "a list", NULL },
	{ "timeout", BCI_CONFIG_DURATION_OR_OFF, "off", NULL, "a duration or off", NULL },
	{ "limit", BCI_CONFIG_SIZE, "64M", NULL, "a size", NULL },
	{ "cap", BCI_CONFIG_NUMBER, "3", NULL, "a number", NULL },
	{ "even", BCI_CONFIG_NUMBER, "4", NULL, "an even number", check_even },
	{ NULL, 0, NULL, NULL, NULL, NULL },
};

static int setup(void **state)
{
	struct bci_config *config;

	assert_int_equal(bci_config_new(keys, &config), 0);
	*state = config;
	return 0;
}

static int teardown(void **state)
{
	bci_config_free(*state);
	return 0;
}

static void defaults_apply(void **state)
{
	struct bci_config *c = *state;

	assert_string_equal(bci_config_get(c, "name"), "default");
	assert_string_equal(bci_config_get(c, "text"), "");
	assert_int_equal(bci_config_get_seconds(c, "wait"), 30);
	assert_string_equal(bci_config_origin(c, "action"), "default");
}

static void file_sets_values_and_origins(void **state)
{
	static const char text[] = "# comment\n\n  name = lab1  \n"
				   "text=two words here\n"
				   "wait=5m\n\taction\t=\tpoweroff\n"
				   "modules = ext4, virtio_blk ,efivarfs\n";
	struct bci_config *c = *state;
	char err[256] = "";
	const char **items;
	char *storage;
	size_t count;

	assert_int_equal(bci_config_parse_file(c, "x.conf", text, strlen(text), err, sizeof(err)), 0);
	assert_string_equal(bci_config_get(c, "name"), "lab1");
	assert_string_equal(bci_config_get(c, "text"), "two words here");
	assert_int_equal(bci_config_get_seconds(c, "wait"), 300);
	assert_string_equal(bci_config_get(c, "action"), "poweroff");
	assert_string_equal(bci_config_origin(c, "action"), "x.conf:6");
	assert_int_equal(bci_config_get_list(c, "modules", &storage, &items, &count), 0);
	assert_int_equal(count, 3);
	assert_string_equal(items[0], "ext4");
	assert_string_equal(items[1], "virtio_blk");
	assert_string_equal(items[2], "efivarfs");
	free(items);
	free(storage);
}

struct bad_case {
	const char *text;
	const char *message;
};

static void file_errors_name_the_line(void **state)
{
	static const struct bad_case cases[] = {
		{ "name=a\nbogus=1\n", "x.conf:2: unknown key 'bogus'" },
		{ "\n\nwait=soon\n", "x.conf:3: wait: 'soon' is not a duration" },
		{ "wait=0\n", "x.conf:1: wait: '0' is not a duration" },
		{ "wait=99999999999999999999\n", "x.conf:1: wait: '99999999999999999999' is not a duration" },
		{ "wait=5d\n", "x.conf:1: wait: '5d' is not a duration" },
		{ "action=halt\n", "x.conf:1: action: 'halt' is not one of reboot|poweroff" },
		{ "name=two words\n", "x.conf:1: name: 'two words' must be one word" },
		{ "name=\n", "x.conf:1: name: '' must be one word" },
		{ "modules=a,,b\n", "x.conf:1: modules: 'a,,b' is not a comma-separated list" },
		{ "modules=a b\n", "x.conf:1: modules: 'a b' is not a comma-separated list" },
		{ "just words\n", "x.conf:1: expected 'key = value'" },
	};
	struct bci_config *c = *state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		assert_int_equal(bci_config_parse_file(c, "x.conf", cases[i].text,
						       strlen(cases[i].text), err, sizeof(err)),
				 -EINVAL);
		if (strncmp(err, cases[i].message, strlen(cases[i].message)) != 0)
			fail_msg("case %zu: got '%s', want prefix '%s'", i, err, cases[i].message);
	}
	/* A bad value leaves the previous one in place. */
	assert_int_equal(bci_config_get_seconds(c, "wait"), 30);
}

static void file_with_nul_is_rejected(void **state)
{
	static const char text[] = "name=a\0b\n";
	char err[256] = "";

	assert_int_equal(bci_config_parse_file(*state, "x.conf", text, sizeof(text) - 1, err,
					       sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "x.conf:1: NUL byte in the line");
}

static void cmdline_overrides_with_kernel_quoting(void **state)
{
	struct bci_config *c = *state;
	char err[256] = "";

	assert_int_equal(bci_config_parse_cmdline(c,
						  "BOOT_IMAGE=/vmlinuz console=ttyS0 bootci.name=x "
						  "bootci.text=\"a b  c\" \"bootci.wait=2m\" quiet "
						  "bootcix.name=no -- bootci.name=initarg",
						  "bootci.", err, sizeof(err)),
			 0);
	assert_string_equal(bci_config_get(c, "name"), "x");
	assert_string_equal(bci_config_get(c, "text"), "a b  c");
	assert_int_equal(bci_config_get_seconds(c, "wait"), 120);
	assert_string_equal(bci_config_origin(c, "name"), "kernel command line");
}

static void cmdline_errors(void **state)
{
	struct bci_config *c = *state;
	char err[256] = "";

	assert_int_equal(bci_config_parse_cmdline(c, "quiet bootci.nope=1", "bootci.", err,
						  sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "kernel command line: unknown key 'nope'");
	assert_int_equal(bci_config_parse_cmdline(c, "bootci.name", "bootci.", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "kernel command line bootci.name: expected bootci.<key>=<value>");
	assert_int_equal(bci_config_parse_cmdline(c, "bootci.action=halt", "bootci.", err,
						  sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "kernel command line: action: 'halt' is not one of reboot|poweroff");
}

static void seconds_units(void **state)
{
	unsigned long s;

	(void)state;
	assert_int_equal(bci_parse_seconds("45", &s), 0);
	assert_int_equal(s, 45);
	assert_int_equal(bci_parse_seconds("45s", &s), 0);
	assert_int_equal(s, 45);
	assert_int_equal(bci_parse_seconds("3m", &s), 0);
	assert_int_equal(s, 180);
	assert_int_equal(bci_parse_seconds("2h", &s), 0);
	assert_int_equal(s, 7200);
	assert_int_equal(bci_parse_seconds("720h", &s), 0);
	assert_int_equal(bci_parse_seconds("721h", &s), -EINVAL);
	assert_int_equal(bci_parse_seconds("", &s), -EINVAL);
	assert_int_equal(bci_parse_seconds("-1", &s), -EINVAL);
	assert_int_equal(bci_parse_seconds("1.5", &s), -EINVAL);
	assert_int_equal(bci_parse_seconds("10ms", &s), -EINVAL);
}

static void typed_values(void **state)
{
	struct bci_config *c = *state;
	char err[256] = "";

	assert_int_equal(bci_config_get_seconds(c, "timeout"), 0);
	assert_int_equal(bci_config_get_size(c, "limit"), 64ULL << 20);
	assert_int_equal(bci_config_get_number(c, "cap"), 3);
	assert_int_equal(bci_config_parse_cmdline(c, "bootci.timeout=90s bootci.limit=512K bootci.cap=0",
						  "bootci.", err, sizeof(err)),
			 0);
	assert_int_equal(bci_config_get_seconds(c, "timeout"), 90);
	assert_int_equal(bci_config_get_size(c, "limit"), 512ULL << 10);
	assert_int_equal(bci_config_get_number(c, "cap"), 0);
	assert_int_equal(bci_config_set(c, "timeout", "0", "t", err, sizeof(err)), 0);
	assert_int_equal(bci_config_get_seconds(c, "timeout"), 0);
	assert_int_equal(bci_config_set(c, "limit", "2T", "t", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t: limit: '2T' is not a size (N, NK, NM or NG; at most 1T)");
	assert_int_equal(bci_config_set(c, "limit", "1025G", "t", err, sizeof(err)), -EINVAL);
	assert_int_equal(bci_config_set(c, "cap", "-1", "t", err, sizeof(err)), -EINVAL);
	assert_int_equal(bci_config_set(c, "cap", "1000001", "t", err, sizeof(err)), -EINVAL);
	assert_int_equal(bci_config_set(c, "timeout", "never", "t", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "t: timeout: 'never' is not a duration (N, Ns, Nm or Nh; 1s to 30 days) or off");
}

/* ---- the executor's suspend cycle keys (executor/settings.c) ---- */

/*
 * Loads the executor's settings on a fake root made with @cmdline (and
 * executor.conf @conf unless NULL): bci_settings_load()'s result, with what
 * it said on the console in @said.
 */
static int load_settings(const char *cmdline, const char *conf, char *said, size_t size)
{
	struct bci_executor ex = { .sys = &bci_sys_dry, .signal_fd = -1, .watchdog_fd = -1 };
	struct fakeroot root;
	FILE *console = tmpfile();
	int saved, ret;
	size_t n;

	assert_non_null(console);
	fakeroot_create(&root, cmdline);
	if (conf)
		fakeroot_write(&root, "/etc/bootci/executor.conf", conf);
	ex.root = root.dir;
	fflush(stderr);
	saved = dup(2);
	assert_true(saved >= 0 && dup2(fileno(console), 2) == 2);
	ret = bci_settings_load(&ex);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(console);
	n = fread(said, 1, size - 1, console);
	said[n] = '\0';
	fclose(console);
	bci_config_free(ex.config);
	fakeroot_remove(&root);
	return ret;
}

static void suspend_cycle_keys_take_specs(void **state)
{
	char said[1024];

	(void)state;
	assert_int_equal(load_settings("bootci.testlist=/t.txt bootci.suspend_before=mem@2 "
				       "bootci.suspend_between=freeze_devices@1 "
				       "bootci.suspend_after=\"mem@1 disk_core@3\"",
				       NULL, said, sizeof(said)),
			 0);
	assert_string_equal(said, "");
	/* Empty by default: no testlist needed. */
	assert_int_equal(load_settings("quiet", NULL, said, sizeof(said)), 0);
}

static void bad_suspend_cycle_keys_name_key_and_value(void **state)
{
	char said[1024];

	(void)state;
	assert_int_equal(load_settings("bootci.testlist=/t.txt bootci.suspend_between=mem@0", NULL,
				       said, sizeof(said)),
			 -EINVAL);
	assert_non_null(strstr(said, "error: kernel command line: suspend_between: 'mem@0': expected "
				     "<state>[_<pm_test>]@<count> (count 1-100000)\n"));
	assert_int_equal(load_settings("bootci.testlist=/t.txt", "suspend_after = mem@1 hibernate@2\n",
				       said, sizeof(said)),
			 -EINVAL);
	assert_non_null(strstr(said, ": suspend_after: 'hibernate@2': unknown state or pm_test level"));
	assert_non_null(strstr(said, "error: /etc/bootci/executor.conf:1: suspend_after"));
	assert_int_equal(load_settings("bootci.testlist=/t.txt bootci.suspend_before=mem_nap@1", NULL,
				       said, sizeof(said)),
			 -EINVAL);
	assert_non_null(strstr(said, "suspend_before: 'mem_nap@1': unknown state or pm_test level"));
	/* The single test program mode has no jobs to put cycles between. */
	assert_int_equal(load_settings("bootci.test=/bin/true bootci.suspend_before=mem@1", NULL,
				       said, sizeof(said)),
			 -EINVAL);
	assert_non_null(strstr(said, "suspend_before: 'mem@1' needs a testlist"));
}

/* A key's own check runs after its type's, its message behind the origin. */
static void key_checks_run_after_the_type(void **state)
{
	struct bci_config *c = *state;
	char err[256];

	assert_int_equal(bci_config_set(c, "even", "8", "f:1", err, sizeof(err)), 0);
	assert_int_equal(bci_config_set(c, "even", "7", "f:2", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "f:2: even: '7' is odd");
	assert_int_equal(bci_config_set(c, "even", "x", "f:3", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "f:3: even: 'x' is not a whole number from 0 to 1000000");
	assert_string_equal(bci_config_get(c, "even"), "8");
}

/* ---- lib/executor_keys.c: the table the executor and the builder share ---- */

static void executor_config_file_then_cmdline(void **state)
{
	const char *conf = "# the image's\nrun_id = image\nper_test_timeout = 5m\n";
	struct bci_config *c = NULL;
	char err[512];

	(void)state;
	assert_int_equal(bci_executor_config_load("e.conf", conf, strlen(conf),
						  "quiet bootci.run_id=lab other.run_id=no", &c, err,
						  sizeof(err)),
			 0);
	assert_string_equal(bci_config_get(c, "run_id"), "lab");
	assert_string_equal(bci_config_origin(c, "run_id"), "kernel command line");
	assert_int_equal(bci_config_get_seconds(c, "per_test_timeout"), 300);
	assert_string_equal(bci_config_origin(c, "per_test_timeout"), "e.conf:3");
	bci_config_free(c);
	/* No file, no command line: the table's defaults, each of which passes its own check. */
	assert_int_equal(bci_executor_config_load(NULL, NULL, 0, NULL, &c, err, sizeof(err)), 0);
	for (const struct bci_config_key *k = bci_executor_keys; k->name; k++)
		assert_string_equal(bci_config_get(c, k->name), k->default_value);
	bci_config_free(c);
}

static void executor_config_errors_name_line_key_value(void **state)
{
	static const struct {
		const char *file, *cmdline, *message;
	} cases[] = {
		{ "run_id = a\ntset = b\n", NULL, "e.conf:2: unknown key 'tset'" },
		{ "dmesg_warn_level = 8\n", NULL,
		  "e.conf:1: dmesg_warn_level: '8' is not a kernel log level (0-7) nor auto" },
		{ "abort_on = lockdep,oops\n", NULL,
		  "e.conf:1: abort_on: unknown condition 'oops' (taint, lockdep)" },
		{ "suspend_before = mem\n", NULL, "e.conf:1: suspend_before: 'mem': expected" },
		{ "test_poweroff_status = 256\n", NULL,
		  "e.conf:1: test_poweroff_status: 256 is not an exit status (0 for none, 1-255)" },
		{ "", "bootci.on_error=halt",
		  "kernel command line: on_error: 'halt' is not one of reboot|poweroff" },
		{ "suspend_between = mem@2\n", "bootci.test=/bin/true",
		  "e.conf:1: suspend_between: 'mem@2' needs a testlist" },
	};
	struct bci_config *c = NULL;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(bci_executor_config_load("e.conf", cases[i].file,
							  strlen(cases[i].file), cases[i].cmdline,
							  &c, err, sizeof(err)),
				 -EINVAL);
		if (strncmp(err, cases[i].message, strlen(cases[i].message)) != 0)
			fail_msg("case %zu: '%s' does not start with '%s'", i, err, cases[i].message);
		bci_config_free(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(defaults_apply, setup, teardown),
		cmocka_unit_test_setup_teardown(file_sets_values_and_origins, setup, teardown),
		cmocka_unit_test_setup_teardown(file_errors_name_the_line, setup, teardown),
		cmocka_unit_test_setup_teardown(file_with_nul_is_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(cmdline_overrides_with_kernel_quoting, setup, teardown),
		cmocka_unit_test_setup_teardown(cmdline_errors, setup, teardown),
		cmocka_unit_test(seconds_units),
		cmocka_unit_test_setup_teardown(typed_values, setup, teardown),
		cmocka_unit_test(suspend_cycle_keys_take_specs),
		cmocka_unit_test(bad_suspend_cycle_keys_name_key_and_value),
		cmocka_unit_test_setup_teardown(key_checks_run_after_the_type, setup, teardown),
		cmocka_unit_test(executor_config_file_then_cmdline),
		cmocka_unit_test(executor_config_errors_name_line_key_value),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
