/* SPDX-License-Identifier: MIT */
/*
 * The lab's inventory: DATA/machines.conf on the CI master, the machines the
 * scheduler hands jobs to, and per-tree scheduling rules. Its format:
 *
 *   # comment (whole lines only); blank lines ignored
 *   [schedule]                    optional, once
 *   power-cycles = 3              failed power cycles before a machine is taken out (1..100)
 *   power-timeout = 60s           how long a power command (one ipmitool call) may run,
 *                                 and how long a state may take to read back (N, Ns, Nm, Nh)
 *   ipmitool = /usr/bin/ipmitool  optional: the ipmitool the ipmi driver runs (absolute)
 *   reruns = 3                    times each possible new issue of a fast tier is run
 *                                 again, on its machine and on another of its shard
 *                                 group, before the reply (0..10; 0: never)
 *   rerun-budget = 10%            how long the reply waits for those reruns: a share of
 *                                 the fast tier's time (1%..1000%); past it the ones
 *                                 not back are named unconfirmed
 *   bisect-steps = 8              most steps of a bisection of a series' possible new
 *                                 issues (0..64; 0: no bisection started on its own)
 *
 *   [machine NAME]                NAME: a word (as a run's machine name)
 *   mac = 52:54:00:12:34:56       required, unique; six hex pairs, ':' or '-'
 *   tags = tgl, gen12             optional, comma-separated words
 *   shard-group = tgl-shards      optional word: the machines of a group share
 *                                 a full testlist between them
 *   power = /usr/bin/pdu cycle 4  optional, the power driver (power.h). A command
 *                                 (the command driver): what power cycles the
 *                                 machine, argv split on blanks (no shell, no
 *                                 quoting: wrap anything fancier in a script)
 *   power-on = /usr/bin/pdu on 4  command driver, optional: what powers it on
 *                                 (else the cycle command does)
 *   power-off = /usr/bin/pdu off 4   command driver, optional: what powers it off
 *   power-status = /usr/bin/pdu status 4   command driver, optional: prints
 *                                 "on" or "off" (its first word): the state is
 *                                 read back after each action
 *   power = ipmi                  the ipmi driver: IPMI-over-LAN to the BMC with
 *   ipmi-host = 10.0.0.21           required: host name or address
 *   ipmi-port = 623                 optional (default 623)
 *   ipmi-user = admin               required
 *   ipmi-password-file = /etc/bootci/bmc/m1   required, absolute: read by ipmitool
 *                                   (-f), so the password is never on a command line
 *   deadline = 45m                optional (default 1h): silence (no job asked
 *                                 for, no run uploaded) after which it is
 *                                 power cycled
 *   console = tcp:127.0.0.1:7001  optional: the machine's serial console, read by
 *                                 serve: tcp:ADDRESS:PORT of a console server
 *                                 (ser2net, conserver; an IPv6 address in
 *                                 brackets: tcp:[::1]:7001), or a local tty
 *                                 (/dev/ttyUSB0, optionally followed by a
 *                                 speed: /dev/ttyUSB0 115200)
 *
 *   [tree NAME]                   optional, per kernel tree
 *   full = gated                  gated (default): the full tier is queued once
 *                                 the fast tier found no possible new issue;
 *                                 always: with the fast tier; never
 *   repo = /srv/linux.git         optional: the tree's git clone on the master, for
 *                                 a bisection of its builds (`bisect start BUILD`):
 *                                 the commits since its baseline build's
 *   build-command = /usr/local/lib/bootci/build-series   optional, absolute:
 *                                 what builds a bisection's candidate, as
 *                                 patchwork.conf's (MBOX BASE BRANCH OUT: an empty
 *                                 MBOX, BASE the repo, BRANCH the commit)
 *   build-timeout = DURATION      the longest a candidate's build may take (its default
 *                                 and bounds: BCI_INVENTORY_BUILD_TIMEOUT_DEFAULT, a day)
 *
 * Everything is strict: an unknown section or key, a key twice, a machine
 * or MAC twice, a missing mac, a bad value are errors naming the line; a
 * power key that is not its driver's, or a driver's required key missing,
 * an error naming the machine's line.
 */
#ifndef BCI_SCHEDULE_INVENTORY_H
#define BCI_SCHEDULE_INVENTORY_H

#include <stddef.h>

#define BCI_INVENTORY_FILE "machines.conf"
#define BCI_INVENTORY_DEADLINE_DEFAULT 3600
#define BCI_INVENTORY_POWER_CYCLES_DEFAULT 3
#define BCI_INVENTORY_POWER_TIMEOUT_DEFAULT 60
#define BCI_INVENTORY_IPMI_PORT_DEFAULT 623
#define BCI_INVENTORY_IPMITOOL_DEFAULT "/usr/bin/ipmitool"
#define BCI_INVENTORY_RERUNS_DEFAULT 3
#define BCI_INVENTORY_RERUNS_MAX 10
#define BCI_INVENTORY_RERUN_BUDGET_DEFAULT 10
#define BCI_INVENTORY_RERUN_BUDGET_MAX 1000
#define BCI_INVENTORY_BISECT_STEPS_DEFAULT 8
#define BCI_INVENTORY_BISECT_STEPS_MAX 64
#define BCI_INVENTORY_BUILD_TIMEOUT_DEFAULT 3600

enum bci_full_rule {
	BCI_FULL_GATED,
	BCI_FULL_ALWAYS,
	BCI_FULL_NEVER,
};

enum bci_console_kind {
	BCI_CONSOLE_NONE,
	BCI_CONSOLE_TCP,
	BCI_CONSOLE_TTY,
};

/* A machine's console (the console key); the strings are the inventory's. */
struct bci_inventory_console {
	enum bci_console_kind kind;
	char *spec;			/* the value as written, for messages */
	char *address;			/* TCP: a numeric IPv4 or IPv6 address (no brackets) */
	unsigned port;			/* TCP: 1..65535 */
	char *path;			/* TTY: an absolute path */
	unsigned baud;			/* TTY: 0 (leave the line as it is) or a speed */
};

enum bci_power_driver {
	BCI_POWER_DRIVER_NONE,		/* no power key: silence is only counted */
	BCI_POWER_DRIVER_COMMAND,	/* power = COMMAND ... */
	BCI_POWER_DRIVER_IPMI,		/* power = ipmi */
};

/* The ipmi driver's BMC (power = ipmi): every field set. */
struct bci_inventory_ipmi {
	char *host;
	unsigned port;
	char *user;
	char *password_file;		/* absolute */
};

struct bci_inventory_machine {
	char *name;
	char mac[18];			/* lowercase, ':'-separated */
	char **tags;			/* NULL-terminated (empty: no tags) */
	char *shard_group;		/* NULL: runs every testlist alone */
	enum bci_power_driver power_driver;
	char **power;			/* command driver: the cycle command's NULL-terminated
					   argv; NULL with any other driver */
	char **power_on, **power_off, **power_status;	/* command driver, each optional */
	struct bci_inventory_ipmi ipmi;	/* ipmi driver; all NULL otherwise */
	unsigned long deadline;		/* seconds */
	struct bci_inventory_console console;	/* kind NONE: no console key */
	unsigned line;			/* of its [machine] header */
};

struct bci_inventory_tree {
	char *name;
	enum bci_full_rule full;
	char *repo;			/* NULL: its builds cannot be bisected */
	char *build_command;		/* likewise */
	unsigned long build_timeout;	/* seconds */
};

struct bci_inventory {
	struct bci_inventory_machine *machines;	/* in file order */
	size_t machine_count;
	struct bci_inventory_tree *trees;
	size_t tree_count;
	unsigned long power_cycles;
	unsigned long power_timeout;	/* seconds */
	char *ipmitool;			/* absolute path */
	unsigned long reruns;		/* of each possible new issue (0: none) */
	unsigned long rerun_budget;	/* percent of the fast tier's time */
	unsigned long bisect_steps;	/* a bisection's most steps (0: none on its own) */
};

/*
 * Parses @text (@len bytes, NULs refused) named @origin in messages
 * ("machines.conf:12: ..."). Returns 0 with a new inventory in *@out (the
 * caller frees it), or -EINVAL / -ENOMEM with @err set.
 */
int bci_inventory_parse(const char *origin, const char *text, size_t len,
			struct bci_inventory **out, char *err, size_t err_size);
/* Reads and parses @path (at most 4 MiB). */
int bci_inventory_load(const char *path, struct bci_inventory **out, char *err, size_t err_size);
void bci_inventory_free(struct bci_inventory *inventory);

/* The machine of @mac (any case, ':' or '-'), or NULL. */
const struct bci_inventory_machine *bci_inventory_by_mac(const struct bci_inventory *inventory,
							 const char *mac);
const struct bci_inventory_machine *bci_inventory_by_name(const struct bci_inventory *inventory,
							  const char *name);
/* @tree's [tree] section, or NULL. */
const struct bci_inventory_tree *bci_inventory_tree(const struct bci_inventory *inventory,
					       const char *tree);
/* The full-tier rule of @tree (gated unless a [tree] section says otherwise). */
enum bci_full_rule bci_inventory_full_rule(const struct bci_inventory *inventory, const char *tree);
/*
 * Parses a console key's @value into @out (its strings malloc'ed; freed with
 * bci_inventory_console_clear()). -EINVAL with @why (no line number) when it
 * is not one, -ENOMEM.
 */
int bci_inventory_console_parse(const char *value, struct bci_inventory_console *out, char *why,
				size_t why_size);
void bci_inventory_console_clear(struct bci_inventory_console *console);
/* A MAC in any accepted spelling into lowercase aa:bb:cc:dd:ee:ff; -EINVAL if it is not one. */
int bci_inventory_mac_normalize(const char *text, char out[18]);

#endif
