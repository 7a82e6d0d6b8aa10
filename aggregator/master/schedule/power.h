/* SPDX-License-Identifier: MIT */
/*
 * A machine's power, through the driver its inventory entry names
 * (inventory.h): recovery power cycles a silent machine with it, and
 * `schedule return` powers a machine back on with it.
 *
 *   command  the inventory's commands, run without a shell, each at most
 *            power-timeout: power (cycle), power-on, power-off, power-status
 *            (prints "on" or "off"). A PDU, a Redfish tool, the lab's script.
 *   ipmi     IPMI-over-LAN: `ipmitool -I lanplus -C 3 -H HOST -p PORT -U USER
 *            -f PASSWORD_FILE chassis power on|off|cycle|status`, each call at
 *            most power-timeout, ipmitool's own retries inside it
 *            (BCI_POWER_IPMI_TRY_SECONDS, BCI_POWER_IPMI_RETRIES), and a call
 *            the BMC did not answer made once more. The password is read by
 *            ipmitool from its file: never on a command line `ps` shows.
 *
 * Every action reads the state back (the BMC's, or power-status's) until it
 * is the one asked for or power-timeout has passed. A cycle brings the
 * machine back on from whatever state it is in: a machine that is off (it
 * powered itself off, or was) is powered on, never "cycled" (a BMC refuses
 * to cycle a chassis that is off).
 *
 * Faults, each with one line saying what happened (bci_power_result.why):
 * a command that failed is a failed attempt, as a silent machine is (the
 * caller counts it); a BMC that does not answer, a BMC that refuses the
 * credentials, a driver that cannot run (no ipmitool, the password file
 * unreadable) and an action the state read back says did not take are
 * faults no further cycle can mend (bci_power_fault_takes_out()).
 */
#ifndef BCI_SCHEDULE_POWER_H
#define BCI_SCHEDULE_POWER_H

#include "inventory.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ipmitool -N: how long one try waits for the BMC's answer. */
#define BCI_POWER_IPMI_TRY_SECONDS 2
/* ipmitool -R: tries after the first within one call. */
#define BCI_POWER_IPMI_RETRIES 1
/* Calls the BMC did not answer before it is said not to answer. */
#define BCI_POWER_IPMI_CALLS 2

enum bci_power_action {
	BCI_POWER_ON,
	BCI_POWER_OFF,
	BCI_POWER_CYCLE,	/* back on, from on (a cycle) or from off (on) */
	BCI_POWER_STATUS,
};

enum bci_power_state {
	BCI_POWER_UNKNOWN,	/* the driver cannot read it (no power-status) */
	BCI_POWER_IS_OFF,
	BCI_POWER_IS_ON,
};

enum bci_power_fault {
	BCI_POWER_OK,
	BCI_POWER_FAILED,	/* a command failed (exit status, timeout): one failed attempt */
	BCI_POWER_NO_ANSWER,	/* the BMC does not answer */
	BCI_POWER_REFUSED,	/* the BMC refuses the user or password (or the cipher suite) */
	BCI_POWER_UNUSABLE,	/* the driver cannot run here: ipmitool, the password file */
	BCI_POWER_NOT_TAKEN,	/* the action was taken, the state read back is not the one asked */
};

struct bci_power {
	const struct bci_inventory_machine *machine;	/* borrowed */
	const char *ipmitool;		/* the inventory's */
	unsigned long timeout;		/* seconds: one call, and the read back */
	FILE *log;			/* a command's output goes there; NULL: nowhere */
};

struct bci_power_result {
	enum bci_power_fault fault;
	enum bci_power_state state;	/* the state read back (after the action) */
	char why[320];			/* one line: what went wrong, or what was done */
};

/*
 * Takes @action on @power's machine and reads its state back. 0 with
 * @result's state (and a line saying what was done in why), -EIO with its
 * fault and why, -ENOTSUP when the machine has no driver or its driver no
 * command for @action (power-off missing: why says so), -ENOMEM.
 */
int bci_power_act(const struct bci_power *power, enum bci_power_action action,
		  struct bci_power_result *result);

/* Whether @fault is one no further power cycle can mend: the machine is taken out. */
bool bci_power_fault_takes_out(enum bci_power_fault fault);

/* "on", "off", "unknown" */
const char *bci_power_state_name(enum bci_power_state state);
/* "on", "off", "cycle", "status" */
const char *bci_power_action_name(enum bci_power_action action);

#endif
