// SPDX-License-Identifier: MIT
/*
 * aggregator/master/schedule/power.c: the two power drivers against stand-ins
 * in a temporary folder. The ipmi driver runs a fake ipmitool (a shell
 * script that prints what the real one prints: the state, a refusal, no
 * answer, or nothing at all) which records its arguments, so the tests see
 * the calls made and that no password is among them; the command driver
 * runs small scripts. tests/aggregator/power-ipmi.t runs the real ipmitool
 * against OpenIPMI's ipmi_sim.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/schedule/power.h"
#include "fsutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fixture {
	char dir[PATH_MAX];
	char ipmitool[PATH_MAX + 16], password[PATH_MAX + 16];
	char *commands[4][3];		/* cycle, on, off, status: argv of one word */
	struct bci_inventory_machine machine;
	struct bci_power power;
	struct bci_power_result result;
};

static void write_file(struct fixture *f, const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX + 64];
	FILE *file;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	file = fopen(path, "w");
	assert_non_null(file);
	fputs(text, file);
	assert_int_equal(fclose(file), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* What a file of the fixture holds ("" when it does not exist); the caller frees it. */
static char *read_back(struct fixture *f, const char *name)
{
	char path[PATH_MAX + 64], *text = NULL;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	if (bci_read_file(path, &text, &len, 1 << 20) < 0)
		return strdup("");
	return text;
}

static size_t count(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *hit = text; (hit = strstr(hit, needle)); hit++)
		n++;
	return n;
}

/*
 * The fake BMC: its chassis state in DIR/state, how it answers in DIR/mode
 * (ok, refuse, down, hang, fail: every call fails once in session, stuck: actions
 * leave the state as it is); every
 * call's arguments appended to DIR/calls.
 */
static const char fake_ipmitool[] =
	"#!/bin/sh\n"
	"dir=$(dirname \"$0\")\n"
	"echo \"$*\" >>\"$dir/calls\"\n"
	"mode=$(cat \"$dir/mode\")\n"
	"case $mode in\n"
	"refuse) echo 'Loading IANA PEN Registry...' >&2; echo '> RAKP 2 HMAC is invalid' >&2\n"
	"        echo 'Error: Unable to establish IPMI v2 / RMCP+ session' >&2; exit 1 ;;\n"
	"down) echo 'Get Auth Capabilities error' >&2\n"
	"      echo 'Error: Unable to establish IPMI v2 / RMCP+ session' >&2; exit 1 ;;\n"
	"hang) exec sleep 30 ;;\n"
	"fail) echo 'Set Session Privilege Level to ADMINISTRATOR' >&2\n"
	"      echo 'Set Chassis Power Control to Up/On failed: Invalid data field in request' >&2\n"
	"      exit 1 ;;\n"
	"esac\n"
	"for verb; do :; done\n"
	"case $verb in\n"
	"status) echo \"Chassis Power is $(cat \"$dir/state\")\" ;;\n"
	"on|cycle) [ $mode = stuck ] || echo on >\"$dir/state\"; echo 'Chassis Power Control: Up/On' ;;\n"
	"off) [ $mode = stuck ] || echo off >\"$dir/state\"; echo 'Chassis Power Control: Down/Off' ;;\n"
	"esac\n";

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/bootci-power-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	write_file(f, "ipmitool", fake_ipmitool, 0755);
	write_file(f, "mode", "ok\n", 0644);
	write_file(f, "state", "off\n", 0644);
	write_file(f, "bmc.pass", "s3cret-word\n", 0600);
	snprintf(f->ipmitool, sizeof(f->ipmitool), "%s/ipmitool", f->dir);
	snprintf(f->password, sizeof(f->password), "%s/bmc.pass", f->dir);
	f->machine = (struct bci_inventory_machine){
		.name = "m1", .power_driver = BCI_POWER_DRIVER_IPMI,
		.ipmi = { .host = "127.0.0.1", .port = 9623, .user = "admin",
			  .password_file = f->password },
	};
	f->power = (struct bci_power){ .machine = &f->machine, .ipmitool = f->ipmitool,
				       .timeout = 5 };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[PATH_MAX + 16];

	for (int i = 0; i < 4; i++)
		free(f->commands[i][0]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static int act(struct fixture *f, enum bci_power_action action)
{
	return bci_power_act(&f->power, action, &f->result);
}

static void expect_in(const char *text, const char *needle)
{
	if (!strstr(text, needle))
		fail_msg("expected '%s' in '%s'", needle, text);
}

/* on, status, off, cycle from off and from on; each read back; the password never an argument. */
static void test_ipmi_actions(void **state)
{
	struct fixture *f = *state;
	char *calls;

	assert_int_equal(act(f, BCI_POWER_STATUS), 0);
	assert_int_equal(f->result.state, BCI_POWER_IS_OFF);
	assert_int_equal(act(f, BCI_POWER_ON), 0);
	assert_int_equal(f->result.state, BCI_POWER_IS_ON);
	expect_in(f->result.why, "BMC 127.0.0.1:9623: chassis power on (it was off); reads on");
	assert_int_equal(act(f, BCI_POWER_OFF), 0);
	assert_int_equal(f->result.state, BCI_POWER_IS_OFF);
	/* A cycle of a chassis that is off is a power on. */
	assert_int_equal(act(f, BCI_POWER_CYCLE), 0);
	assert_int_equal(f->result.state, BCI_POWER_IS_ON);
	expect_in(f->result.why, "chassis power on (it was off); reads on");
	assert_int_equal(act(f, BCI_POWER_CYCLE), 0);
	expect_in(f->result.why, "chassis power cycle (it was on); reads on");
	/* On when on already: nothing but the reads. */
	assert_int_equal(act(f, BCI_POWER_ON), 0);
	expect_in(f->result.why, "on already");
	calls = read_back(f, "calls");
	expect_in(calls, "-I lanplus -C 3 -N 2 -R 1 -v -H 127.0.0.1 -p 9623 -U admin -f ");
	expect_in(calls, "/bmc.pass chassis power status\n");
	assert_int_equal(count(calls, "chassis power on\n"), 2);
	assert_int_equal(count(calls, "chassis power off\n"), 1);
	assert_int_equal(count(calls, "chassis power cycle\n"), 1);
	assert_null(strstr(calls, "s3cret"));
	assert_null(strstr(calls, " -P "));
	free(calls);
}

/* Wrong credentials: refused at once, with ipmitool's reason, and never tried again. */
static void test_ipmi_refused(void **state)
{
	struct fixture *f = *state;
	char *calls;

	write_file(f, "mode", "refuse\n", 0644);
	assert_int_equal(act(f, BCI_POWER_CYCLE), -EIO);
	assert_int_equal(f->result.fault, BCI_POWER_REFUSED);
	assert_true(bci_power_fault_takes_out(f->result.fault));
	assert_string_equal(f->result.why,
			    "BMC 127.0.0.1:9623 refuses user admin: RAKP 2 HMAC is invalid");
	calls = read_back(f, "calls");
	assert_int_equal(count(calls, "\n"), 1);
	free(calls);
}

/* A chassis command the BMC answered with an error: a failed attempt, not a refusal. */
static void test_ipmi_command_failed(void **state)
{
	struct fixture *f = *state;

	write_file(f, "mode", "fail\n", 0644);
	assert_int_equal(act(f, BCI_POWER_ON), -EIO);
	assert_int_equal(f->result.fault, BCI_POWER_FAILED);
	assert_false(bci_power_fault_takes_out(f->result.fault));
	assert_string_equal(f->result.why, "BMC 127.0.0.1:9623: Set Chassis Power Control to Up/On"
					   " failed: Invalid data field in request");
}

/* A BMC that does not answer: asked BCI_POWER_IPMI_CALLS times, then said so. */
static void test_ipmi_no_answer(void **state)
{
	struct fixture *f = *state;
	char *calls;

	write_file(f, "mode", "down\n", 0644);
	assert_int_equal(act(f, BCI_POWER_ON), -EIO);
	assert_int_equal(f->result.fault, BCI_POWER_NO_ANSWER);
	assert_true(bci_power_fault_takes_out(f->result.fault));
	assert_string_equal(f->result.why,
			    "BMC 127.0.0.1:9623 does not answer (2 calls of 2 tries, 2 s each)");
	calls = read_back(f, "calls");
	assert_int_equal(count(calls, "\n"), BCI_POWER_IPMI_CALLS);
	free(calls);
	/* An ipmitool that never returns is stopped at the power timeout. */
	write_file(f, "mode", "hang\n", 0644);
	f->power.timeout = 1;
	assert_int_equal(act(f, BCI_POWER_STATUS), -EIO);
	assert_int_equal(f->result.fault, BCI_POWER_NO_ANSWER);
	expect_in(f->result.why, "does not answer (ipmitool still waiting after 1 s)");
}

/* The BMC takes the action, the state stays: not taken, said with the state read. */
static void test_ipmi_not_taken(void **state)
{
	struct fixture *f = *state;

	write_file(f, "mode", "stuck\n", 0644);
	f->power.timeout = 1;
	assert_int_equal(act(f, BCI_POWER_CYCLE), -EIO);
	assert_int_equal(f->result.fault, BCI_POWER_NOT_TAKEN);
	assert_string_equal(f->result.why, "BMC 127.0.0.1:9623: chassis power on (it was off), "
					   "yet it still reads off after 1 s");
}

/* What this master lacks: the password file, ipmitool. */
static void test_ipmi_unusable(void **state)
{
	struct fixture *f = *state;
	char missing[PATH_MAX + 16];
	char *calls;

	snprintf(missing, sizeof(missing), "%s/no-such.pass", f->dir);
	f->machine.ipmi.password_file = missing;
	assert_int_equal(act(f, BCI_POWER_CYCLE), -EIO);
	assert_int_equal(f->result.fault, BCI_POWER_UNUSABLE);
	expect_in(f->result.why, "BMC 127.0.0.1:9623: password file ");
	expect_in(f->result.why, "/no-such.pass: No such file or directory");
	f->power.ipmitool = "/nonexistent/ipmitool";
	assert_int_equal(act(f, BCI_POWER_CYCLE), -EIO);
	assert_int_equal(f->result.fault, BCI_POWER_UNUSABLE);
	assert_string_equal(f->result.why, "ipmitool /nonexistent/ipmitool: No such file or directory");
	calls = read_back(f, "calls");
	assert_string_equal(calls, "");
	free(calls);
}

/* The command driver: each action's command, its output on the log, power-status read back. */
static void test_command_driver(void **state)
{
	struct fixture *f = *state;
	static const char *const names[] = { "cycle.sh", "on.sh", "off.sh", "status.sh" };
	char *log_text = NULL, *calls;
	size_t log_len = 0;

	write_file(f, "cycle.sh", "#!/bin/sh\necho cycle >>\"$(dirname \"$0\")/calls\"\n"
				  "echo on >\"$(dirname \"$0\")/state\"\necho 'pdu: socket 4 cycled'\n",
		   0755);
	write_file(f, "on.sh", "#!/bin/sh\necho on >>\"$(dirname \"$0\")/calls\"\n"
			       "echo on >\"$(dirname \"$0\")/state\"\n", 0755);
	write_file(f, "off.sh", "#!/bin/sh\necho 'pdu: socket 4 is jammed' >&2\nexit 3\n", 0755);
	write_file(f, "status.sh", "#!/bin/sh\ncat \"$(dirname \"$0\")/state\"\n", 0755);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(asprintf(&f->commands[i][0], "%s/%s", f->dir, names[i]) > 0, 1);
		f->commands[i][1] = NULL;
	}
	f->machine = (struct bci_inventory_machine){ .name = "m1",
						    .power_driver = BCI_POWER_DRIVER_COMMAND,
						    .power = f->commands[0] };
	f->power.log = open_memstream(&log_text, &log_len);
	/* Without power-status the state is not read back: unknown, said so. */
	assert_int_equal(act(f, BCI_POWER_CYCLE), 0);
	assert_int_equal(f->result.state, BCI_POWER_UNKNOWN);
	assert_string_equal(f->result.why, "power ran; state not read back (no power-status)");
	/* Without power-on, on is the cycle command; without power-off, off cannot be done. */
	assert_int_equal(act(f, BCI_POWER_ON), 0);
	assert_int_equal(act(f, BCI_POWER_OFF), -ENOTSUP);
	assert_string_equal(f->result.why, "no power-off command");
	f->machine.power_on = f->commands[1];
	f->machine.power_off = f->commands[2];
	f->machine.power_status = f->commands[3];
	write_file(f, "state", "off\n", 0644);
	assert_int_equal(act(f, BCI_POWER_STATUS), 0);
	assert_int_equal(f->result.state, BCI_POWER_IS_OFF);
	assert_int_equal(act(f, BCI_POWER_ON), 0);
	assert_int_equal(f->result.state, BCI_POWER_IS_ON);
	assert_string_equal(f->result.why, "power-on ran; reads on");
	/* A command that fails is a failed attempt (counted by the caller), not a take-out. */
	assert_int_equal(act(f, BCI_POWER_OFF), -EIO);
	assert_int_equal(f->result.fault, BCI_POWER_FAILED);
	assert_false(bci_power_fault_takes_out(f->result.fault));
	expect_in(f->result.why, "power-off (");
	expect_in(f->result.why, "off.sh): exit status 3: pdu: socket 4 is jammed");
	/* A status command that says neither on nor off. */
	write_file(f, "state", "maybe\n", 0644);
	assert_int_equal(act(f, BCI_POWER_STATUS), -EIO);
	assert_string_equal(f->result.why, "power-status printed 'maybe', not on or off");
	fclose(f->power.log);
	expect_in(log_text, "pdu: socket 4 cycled\n");
	expect_in(log_text, "pdu: socket 4 is jammed\n");
	free(log_text);
	calls = read_back(f, "calls");
	assert_string_equal(calls, "cycle\ncycle\non\n");
	free(calls);
	f->machine.power_driver = BCI_POWER_DRIVER_NONE;
	assert_int_equal(act(f, BCI_POWER_CYCLE), -ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ipmi_actions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipmi_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipmi_command_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipmi_no_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipmi_not_taken, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipmi_unusable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_command_driver, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
