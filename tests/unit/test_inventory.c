// SPDX-License-Identifier: MIT
/* aggregator/master/schedule/inventory.c: the lab's machines.conf, read and refused line by line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../aggregator/master/schedule/inventory.h"

#include <errno.h>
#include <string.h>

static const char sample[] =
	"# the lab\n"
	"[schedule]\n"
	"power-cycles = 2\n"
	"power-timeout = 30s\n"
	"reruns = 2\n"
	"rerun-budget = 250%\n"
	"bisect-steps = 5\n"
	"\n"
	"[machine shard-a]\n"
	"mac = 52:54:00:AA:bb:01\n"
	"tags = tgl, gen12\n"
	"shard-group = tgl\n"
	"power = /usr/local/bin/pdu cycle 4\n"
	"deadline = 45m\n"
	"[machine solo]\n"
	"  mac=52-54-00-aa-bb-02  \r\n"
	"[tree drm-tip]\n"
	"full = always\n";

static struct bci_inventory *parse_ok(const char *text)
{
	struct bci_inventory *inv = NULL;
	char err[256] = "";

	if (bci_inventory_parse("machines.conf", text, strlen(text), &inv, err, sizeof(err)) < 0)
		fail_msg("refused: %s", err);
	return inv;
}

static void expect_error(const char *text, const char *message)
{
	struct bci_inventory *inv = NULL;
	char err[256] = "";

	assert_int_equal(bci_inventory_parse("machines.conf", text, strlen(text), &inv, err,
					     sizeof(err)), -EINVAL);
	assert_null(inv);
	if (!strstr(err, message))
		fail_msg("expected '%s' in '%s'", message, err);
}

static void test_sample(void **state)
{
	struct bci_inventory *inv = parse_ok(sample);
	const struct bci_inventory_machine *m;

	(void)state;
	assert_int_equal(inv->machine_count, 2);
	assert_int_equal(inv->power_cycles, 2);
	assert_int_equal(inv->power_timeout, 30);
	assert_int_equal(inv->reruns, 2);
	assert_int_equal(inv->rerun_budget, 250);
	assert_int_equal(inv->bisect_steps, 5);
	m = &inv->machines[0];
	assert_string_equal(m->name, "shard-a");
	assert_string_equal(m->mac, "52:54:00:aa:bb:01");
	assert_string_equal(m->tags[0], "tgl");
	assert_string_equal(m->tags[1], "gen12");
	assert_null(m->tags[2]);
	assert_string_equal(m->shard_group, "tgl");
	assert_string_equal(m->power[0], "/usr/local/bin/pdu");
	assert_string_equal(m->power[2], "4");
	assert_null(m->power[3]);
	assert_int_equal(m->deadline, 45 * 60);
	m = &inv->machines[1];
	assert_string_equal(m->mac, "52:54:00:aa:bb:02");
	assert_null(m->tags[0]);
	assert_null(m->shard_group);
	assert_null(m->power);
	assert_int_equal(m->deadline, BCI_INVENTORY_DEADLINE_DEFAULT);
	assert_ptr_equal(bci_inventory_by_mac(inv, "52-54-00-AA-BB-02"), m);
	assert_null(bci_inventory_by_mac(inv, "52:54:00:aa:bb:03"));
	assert_null(bci_inventory_by_mac(inv, "nonsense"));
	assert_ptr_equal(bci_inventory_by_name(inv, "shard-a"), &inv->machines[0]);
	assert_int_equal(bci_inventory_full_rule(inv, "drm-tip"), BCI_FULL_ALWAYS);
	assert_int_equal(bci_inventory_full_rule(inv, "other"), BCI_FULL_GATED);
	bci_inventory_free(inv);
}

static void test_empty(void **state)
{
	struct bci_inventory *inv = parse_ok("# no machines yet\n");

	(void)state;
	assert_int_equal(inv->machine_count, 0);
	assert_int_equal(inv->power_cycles, BCI_INVENTORY_POWER_CYCLES_DEFAULT);
	assert_int_equal(inv->reruns, BCI_INVENTORY_RERUNS_DEFAULT);
	assert_int_equal(inv->rerun_budget, BCI_INVENTORY_RERUN_BUDGET_DEFAULT);
	assert_int_equal(inv->bisect_steps, BCI_INVENTORY_BISECT_STEPS_DEFAULT);
	bci_inventory_free(inv);
}

static void test_refused(void **state)
{
	(void)state;
	expect_error("mac = 52:54:00:00:00:01\n", "machines.conf:1: 'mac' before any section");
	expect_error("[machine a]\nmac = 52:54:00:00:00:1\n", ":2: mac: '52:54:00:00:00:1' is not a MAC");
	expect_error("[machine a]\nmac = 52:54-00:00:00:01\n", ":2: mac:");
	expect_error("[machine a]\nmac = 52:54:00:00:00:01:02\n", ":2: mac:");
	expect_error("[machine a]\nmac = 52:54:00:00:00:01\n[machine b]\nmac = 52:54:00:00:00:01\n",
		     ":4: mac 52:54:00:00:00:01 is already machine a's");
	expect_error("[machine a]\nmac = 52:54:00:00:00:01\n[machine a]\n", ":3: machine a is already defined");
	expect_error("[machine a]\ntags = x\n", ":1: machine a has no mac");
	expect_error("[machine a]\nmac = 52:54:00:00:00:01\nmac = 52:54:00:00:00:02\n",
		     ":3: mac given twice");
	expect_error("[machine a]\nmac = 52:54:00:00:00:01\ncolour = red\n", ":3: unknown key 'colour'");
	/* The reruns of possible new issues (issue 37). */
	expect_error("[schedule]\nreruns = 11\n", ":2: reruns: '11' (a number from 0 to 10)");
	expect_error("[schedule]\nreruns = -1\n", ":2: reruns: '-1'");
	expect_error("[schedule]\nrerun-budget = 10\n", ":2: rerun-budget: '10' (a percentage");
	expect_error("[schedule]\nrerun-budget = 0%\n", ":2: rerun-budget: '0%' (from 1% to 1000%)");
	expect_error("[schedule]\nrerun-budget = 1001%\n", ":2: rerun-budget: '1001%'");
	expect_error("[schedule]\nrerun-budget = %\n", ":2: rerun-budget: '%'");
	expect_error("[schedule]\nreruns = 1\nreruns = 2\n", ":3: reruns given twice");
	expect_error("[schedule]\nbisect-steps = 65\n", ":2: bisect-steps: '65' (a number from 0 to 64)");
	expect_error("[schedule]\nbisect-steps = four\n", ":2: bisect-steps: 'four'");
	expect_error("[machine a b]\n", ":1: 'a b' is not a word");
	expect_error("[machine ../x]\n", "is not a word");
	expect_error("[rack 1]\n", ":1: unknown section [rack");
	expect_error("[schedule\n", ":1: a section header");
	expect_error("[machine a]\nmac = 52:54:00:00:00:01\ntags = a,,b\n", ":3: tags: '' is not a word");
	expect_error("[machine a]\nmac = 52:54:00:00:00:01\npower = pdu cycle\n",
		     ":3: power: 'pdu': the command is an absolute path");
	expect_error("[machine a]\nmac = 52:54:00:00:00:01\npower = /bin/sh -c 'reboot'\n",
		     ":3: power: ''reboot'': no quoting");
	expect_error("[machine a]\nmac = 52:54:00:00:00:01\ndeadline = 0\n", ":3: deadline: '0'");
	expect_error("[machine a]\nmac = 52:54:00:00:00:01\ndeadline =\n", ":3: deadline: empty value");
	expect_error("[machine a]\nmac 52:54:00:00:00:01\n", ":2: expected 'key = value'");
	expect_error("[tree t]\nfull = sometimes\n", ":2: full: 'sometimes'");
	/* What a tree's bisection needs (issue 37). */
	expect_error("[tree t]\nrepo = linux.git\n", ":2: repo: 'linux.git' is not an absolute path");
	expect_error("[tree t]\nbuild-command = /bin/build x\n",
		     ":2: build-command: '/bin/build x' is not an absolute command (no arguments)");
	expect_error("[tree t]\nbuild-timeout = 2d\n", ":2: build-timeout: '2d'");
	expect_error("[tree t]\nbuild-timeout = 25h\n", ":2: build-timeout: '25h' is not a duration");
	expect_error("[tree t]\nrepo = /a\nrepo = /b\n", ":3: repo given twice");
	expect_error("[tree t]\nbranch = master\n", ":2: unknown key 'branch' in [tree t]");
	expect_error("[schedule]\npower-cycles = 0\n", ":2: power-cycles: '0'");
	expect_error("[schedule]\n[schedule]\n", ":2: [schedule] given twice");
}

/* A tree's keys: its full tier's rule and what bisects its builds; defaults without them. */
static void test_tree(void **state)
{
	static const char text[] = "[tree a]\nfull = never\nrepo = /srv/linux.git\n"
				   "build-command = /usr/local/bin/build-series\nbuild-timeout = 90m\n"
				   "[tree b]\n";
	struct bci_inventory *inv = NULL;
	const struct bci_inventory_tree *t;
	char err[256];

	(void)state;
	assert_int_equal(bci_inventory_parse("machines.conf", text, strlen(text), &inv, err,
					     sizeof(err)), 0);
	t = bci_inventory_tree(inv, "a");
	assert_non_null(t);
	assert_int_equal(t->full, BCI_FULL_NEVER);
	assert_string_equal(t->repo, "/srv/linux.git");
	assert_string_equal(t->build_command, "/usr/local/bin/build-series");
	assert_int_equal(t->build_timeout, 90 * 60);
	t = bci_inventory_tree(inv, "b");
	assert_non_null(t);
	assert_null(t->repo);
	assert_null(t->build_command);
	assert_int_equal(t->build_timeout, BCI_INVENTORY_BUILD_TIMEOUT_DEFAULT);
	assert_null(bci_inventory_tree(inv, "c"));
	bci_inventory_free(inv);
}

static void test_console(void **state)
{
	struct bci_inventory *inv = parse_ok("[machine a]\nmac = 52:54:00:00:00:01\n"
					     "console = tcp:127.0.0.1:7001\n"
					     "[machine b]\nmac = 52:54:00:00:00:02\n"
					     "console = tcp:[::1]:65535\n"
					     "[machine c]\nmac = 52:54:00:00:00:03\n"
					     "console = /dev/ttyUSB0   115200\n"
					     "[machine d]\nmac = 52:54:00:00:00:04\n"
					     "console = /dev/ttyS1\n"
					     "[machine e]\nmac = 52:54:00:00:00:05\n");

	(void)state;
	assert_int_equal(inv->machines[0].console.kind, BCI_CONSOLE_TCP);
	assert_string_equal(inv->machines[0].console.address, "127.0.0.1");
	assert_int_equal(inv->machines[0].console.port, 7001);
	assert_string_equal(inv->machines[0].console.spec, "tcp:127.0.0.1:7001");
	assert_int_equal(inv->machines[1].console.kind, BCI_CONSOLE_TCP);
	assert_string_equal(inv->machines[1].console.address, "::1");
	assert_int_equal(inv->machines[1].console.port, 65535);
	assert_int_equal(inv->machines[2].console.kind, BCI_CONSOLE_TTY);
	assert_string_equal(inv->machines[2].console.path, "/dev/ttyUSB0");
	assert_int_equal(inv->machines[2].console.baud, 115200);
	assert_int_equal(inv->machines[3].console.kind, BCI_CONSOLE_TTY);
	assert_string_equal(inv->machines[3].console.path, "/dev/ttyS1");
	assert_int_equal(inv->machines[3].console.baud, 0);
	assert_int_equal(inv->machines[4].console.kind, BCI_CONSOLE_NONE);
	bci_inventory_free(inv);

#define MACHINE "[machine a]\nmac = 52:54:00:00:00:01\n"
	expect_error(MACHINE "console = tcp:127.0.0.1\n", ":3: console: 'tcp:127.0.0.1': expected tcp:ADDRESS:PORT");
	expect_error(MACHINE "console = tcp:127.0.0.1:0\n", ":3: console: 'tcp:127.0.0.1:0': port '0'");
	expect_error(MACHINE "console = tcp:127.0.0.1:65536\n", "port '65536'");
	expect_error(MACHINE "console = tcp:127.0.0.1:70x\n", "port '70x'");
	expect_error(MACHINE "console = tcp:consoles.lab:7001\n",
		     "'consoles.lab' is not a numeric IPv4 address");
	expect_error(MACHINE "console = tcp:::1:7001\n", "is not a numeric IPv4 address");
	expect_error(MACHINE "console = tcp:[127.0.0.1]:7001\n", "is not a numeric IPv6 address");
	expect_error(MACHINE "console = tcp:[::1]7001\n", "expected tcp:ADDRESS:PORT");
	expect_error(MACHINE "console = ttyUSB0\n", ":3: console: 'ttyUSB0': expected tcp:ADDRESS:PORT or a tty");
	expect_error(MACHINE "console = /dev/ttyUSB0 115201\n", "speed '115201'");
	expect_error(MACHINE "console = /dev/ttyUSB0 fast\n", "speed 'fast'");
	expect_error(MACHINE "console = /dev/\n", "'/dev/' is not a tty's absolute path");
	expect_error(MACHINE "console = /dev/ttyS0\nconsole = /dev/ttyS1\n", ":4: console given twice");
#undef MACHINE
}

/* The power drivers' keys: the command driver's four commands, the ipmi driver's BMC. */
static void test_power_drivers(void **state)
{
	struct bci_inventory *inv = parse_ok(
		"[schedule]\nipmitool = /opt/ipmitool/bin/ipmitool\n"
		"[machine pdu]\nmac = 52:54:00:00:00:01\npower = /usr/bin/pdu cycle 4\n"
		"power-on = /usr/bin/pdu on 4\npower-off = /usr/bin/pdu off 4\n"
		"power-status = /usr/bin/pdu status 4\n"
		"[machine bmc]\nmac = 52:54:00:00:00:02\npower = ipmi\nipmi-host = 10.0.0.21\n"
		"ipmi-user = admin\nipmi-password-file = /etc/bootci/bmc/bmc\n"
		"[machine lab]\nmac = 52:54:00:00:00:03\nipmi-port = 9623\nipmi-host = 127.0.0.1\n"
		"ipmi-user = admin\nipmi-password-file = /tmp/lab/bmc.pass\npower = ipmi\n"
		"[machine bare]\nmac = 52:54:00:00:00:04\n");
	const struct bci_inventory_machine *m;

	(void)state;
	assert_string_equal(inv->ipmitool, "/opt/ipmitool/bin/ipmitool");
	m = &inv->machines[0];
	assert_int_equal(m->power_driver, BCI_POWER_DRIVER_COMMAND);
	assert_string_equal(m->power[1], "cycle");
	assert_string_equal(m->power_on[1], "on");
	assert_string_equal(m->power_off[1], "off");
	assert_string_equal(m->power_status[1], "status");
	assert_null(m->ipmi.host);
	m = &inv->machines[1];
	assert_int_equal(m->power_driver, BCI_POWER_DRIVER_IPMI);
	assert_null(m->power);
	assert_string_equal(m->ipmi.host, "10.0.0.21");
	assert_int_equal(m->ipmi.port, BCI_INVENTORY_IPMI_PORT_DEFAULT);
	assert_string_equal(m->ipmi.user, "admin");
	assert_string_equal(m->ipmi.password_file, "/etc/bootci/bmc/bmc");
	/* The driver's keys in any order around power = ipmi. */
	m = &inv->machines[2];
	assert_int_equal(m->power_driver, BCI_POWER_DRIVER_IPMI);
	assert_int_equal(m->ipmi.port, 9623);
	m = &inv->machines[3];
	assert_int_equal(m->power_driver, BCI_POWER_DRIVER_NONE);
	assert_null(m->power);
	bci_inventory_free(inv);
	inv = parse_ok("[machine a]\nmac = 52:54:00:00:00:01\n");
	assert_string_equal(inv->ipmitool, BCI_INVENTORY_IPMITOOL_DEFAULT);
	bci_inventory_free(inv);
}

#define MACHINE_A "[machine a]\nmac = 52:54:00:00:00:01\n"
#define IPMI_KEYS "ipmi-host = h\nipmi-user = u\nipmi-password-file = /p\n"

static void test_power_refused(void **state)
{
	(void)state;
	expect_error(MACHINE_A "power = ipmitool\n",
		     ":3: power: 'ipmitool' is neither a driver (ipmi) nor an absolute command");
	expect_error(MACHINE_A "power = ipmi\npower = ipmi\n", ":4: power given twice");
	expect_error(MACHINE_A "power = /bin/cycle\npower-on = on.sh\n",
		     ":4: power-on: 'on.sh': the command is an absolute path");
	expect_error(MACHINE_A "power = /bin/cycle\npower-status = /bin/st \"x\"\n",
		     ":4: power-status: '\"x\"': no quoting");
	expect_error(MACHINE_A "power-off = /bin/off\n",
		     ":1: machine a: power-off is for the command driver (power = COMMAND ...)");
	expect_error(MACHINE_A "power = ipmi\n" IPMI_KEYS "power-status = /bin/st\n",
		     ":1: machine a: power-status is for the command driver");
	expect_error(MACHINE_A "power = /bin/cycle\nipmi-host = h\n",
		     ":1: machine a: ipmi-host is for the ipmi driver (power = ipmi)");
	expect_error(MACHINE_A "ipmi-port = 623\n", ":1: machine a: ipmi-port is for the ipmi driver");
	expect_error(MACHINE_A "power = ipmi\nipmi-user = u\nipmi-password-file = /p\n",
		     ":1: machine a: power = ipmi needs ipmi-host");
	expect_error(MACHINE_A "power = ipmi\nipmi-host = h\nipmi-password-file = /p\n",
		     ":1: machine a: power = ipmi needs ipmi-user");
	expect_error(MACHINE_A "power = ipmi\nipmi-host = h\nipmi-user = u\n",
		     ":1: machine a: power = ipmi needs ipmi-password-file");
	expect_error(MACHINE_A "power = ipmi\nipmi-host = -oProxyCommand=x\n",
		     ":4: ipmi-host: '-oProxyCommand=x' is not a host name or address");
	expect_error(MACHINE_A "power = ipmi\nipmi-host = a b\n", ":4: ipmi-host: 'a b'");
	expect_error(MACHINE_A "ipmi-port = 0\n", ":3: ipmi-port: '0' (a port from 1 to 65535)");
	expect_error(MACHINE_A "ipmi-port = 65536\n", ":3: ipmi-port: '65536'");
	expect_error(MACHINE_A "ipmi-user = a-user-name-of-17c\n", ":3: ipmi-user: 'a-user-name-of-17c'");
	expect_error(MACHINE_A "ipmi-user = -E\n", ":3: ipmi-user: '-E'");
	expect_error(MACHINE_A "ipmi-password-file = bmc.pass\n",
		     ":3: ipmi-password-file: 'bmc.pass' is not an absolute path");
	expect_error(MACHINE_A "ipmi-password = secret\n", ":3: unknown key 'ipmi-password' in [machine a]");
	expect_error("[schedule]\nipmitool = ipmitool\n", ":2: ipmitool: 'ipmitool' is not an absolute path");
}

static void test_nul_refused(void **state)
{
	static const char text[] = "[machine a]\nmac = 52:54:00:00:00:01\n\0x";
	struct bci_inventory *inv = NULL;
	char err[256];

	(void)state;
	assert_int_equal(bci_inventory_parse("m", text, sizeof(text) - 1, &inv, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "NUL"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_console),
		cmocka_unit_test(test_power_drivers),
		cmocka_unit_test(test_power_refused),
		cmocka_unit_test(test_nul_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
