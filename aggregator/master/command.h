/* SPDX-License-Identifier: MIT */
/*
 * What every command of bootci-aggregator shares (commands.h lists the
 * commands): the usage and its exits, and the prologue of a command that
 * opens the store. A command returns the process's exit code: 0 success,
 * 1 failure (a message on stderr), 2 usage error.
 *
 * The store prologue, the same for every command:
 *
 *	struct bci_command_store cs;
 *
 *	bci_command_store_init(&cs, "report");		(the environment's)
 *	while ((opt = getopt_long(...)) != -1)
 *		if (!bci_command_store_option(&cs, opt, optarg))
 *			switch (opt) { ... }		(the command's own)
 *	if (bci_command_store_open(&cs, &store))
 *		return 1;
 *
 * --store URL, else $BOOTCI_STORE, else the data folder's SQLite database
 * (store.h); --data DIR, else $BOOTCI_DATA, else BCI_COMMAND_DEFAULT_DATA.
 */
#ifndef BCI_MASTER_COMMAND_H
#define BCI_MASTER_COMMAND_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

struct bci_store;

/* The master's data folder when neither --data nor $BOOTCI_DATA names one. */
#define BCI_COMMAND_DEFAULT_DATA "/var/lib/bootci"

/* The long options bci_command_store_option() takes, for a command's option table. */
#define BCI_COMMAND_STORE_OPTIONS \
	{ "store", required_argument, NULL, 's' }, \
	{ "data", required_argument, NULL, 'd' }

struct bci_command_store {
	const char *command;	/* its name in messages: "bootci-aggregator COMMAND: ..." */
	const char *url;	/* NULL or "": the data folder's SQLite database */
	const char *data_dir;	/* NULL or "": BCI_COMMAND_DEFAULT_DATA */
};

/* @cs for @command, from $BOOTCI_STORE and $BOOTCI_DATA. */
void bci_command_store_init(struct bci_command_store *cs, const char *command);
/* Takes getopt's 's' (--store) and 'd' (--data): true when @opt was one of them. */
bool bci_command_store_option(struct bci_command_store *cs, int opt, const char *arg);
/* The data folder the options and the environment name, or the default. */
const char *bci_command_data_dir(const struct bci_command_store *cs);
/*
 * Opens the store into *@store: 0, or 1 (the exit code) after
 * "bootci-aggregator COMMAND: store: WHY" on stderr.
 */
int bci_command_store_open(const struct bci_command_store *cs, struct bci_store **store);

/* Prints the usage of every command to @out. */
void bci_command_usage(FILE *out);
/* The command about to run (main.c): bci_command_usage_exit() prints its usage only. */
void bci_command_usage_select(const char *command);
/*
 * The exit of a command whose getopt() handed back @opt: -h prints the
 * selected command's usage (every command's when none is) on stdout (0),
 * anything else is a usage error (usage on stderr, 2). A bad operand count
 * passes '?'.
 */
int bci_command_usage_exit(int opt);

#endif
